//! Calls on files and file systems the standard library lacks: cache drops, holes,
//! preallocation, free space, direct-I/O alignment.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A new open file description of what `file` has open, with its status flags (O_DIRECT,
/// O_DSYNC, O_SYNC, O_NOATIME and its access mode; O_EXCL is not one: the first descriptor's
/// claim stays the only one) and O_CLOEXEC, opened through /proc/self/fd, never by path. Unlike
/// a `dup`, it shares no file offset or reference count with `file`.
pub fn reopen(file: &File) -> io::Result<File> {
    // SAFETY: F_GETFL reads the descriptor's flags and takes no pointer; fd is open for the call.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let path =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
    let keep = libc::O_ACCMODE | libc::O_DIRECT | libc::O_DSYNC | libc::O_SYNC | libc::O_NOATIME;
    // SAFETY: path is a NUL-terminated string that outlives the call; open takes no other pointer.
    let fd = unsafe { libc::open(path.as_ptr(), (flags & keep) | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by open and is owned by nothing else.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Drops the cached pages of `file` (a regular file or a block device): POSIX_FADV_DONTNEED
/// over the whole of it.
pub fn drop_cache(file: &File) -> io::Result<()> {
    drop_cache_range(file, 0, 0)
}

/// Drops the cached pages of `len` bytes of `file` from `off` (len 0: to the end).
pub fn drop_cache_range(file: &File, off: u64, len: u64) -> io::Result<()> {
    // SAFETY: posix_fadvise only reads its integer arguments; fd is open for the call's duration.
    let rc = unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            off as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Bytes of `[start, end)` in `file` that hold data, found with lseek's SEEK_DATA and
/// SEEK_HOLE: holes (never written, or allocated but unwritten extents, both read as zeros
/// without touching the disk) are left out. A file system that tracks no holes reports the
/// whole file as data. The walk stops after `max_extents` data extents, and what lies past
/// that counts as data. It moves `file`'s offset: pass a descriptor of your own, not one that
/// reads or writes without positions.
pub fn data_bytes(file: &File, start: u64, end: u64, max_extents: usize) -> io::Result<u64> {
    let x = data_extents(file, start, end, max_extents)?;
    let data: u64 = x.extents.iter().map(|e| e.1).sum();
    Ok(data + end.saturating_sub(x.walked))
}

/// The data extents of `[start, end)` in `file`, (offset, length) in order, from SEEK_DATA
/// and SEEK_HOLE; at most `max_extents` of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataExtents {
    pub extents: Vec<(u64, u64)>,
    /// How far the walk got: `end` when every extent was found, where it stopped otherwise.
    pub walked: u64,
}

/// [`DataExtents`] of `[start, end)` in `file`. It moves `file`'s offset, as [`data_bytes`].
pub fn data_extents(
    file: &File,
    start: u64,
    end: u64,
    max_extents: usize,
) -> io::Result<DataExtents> {
    let fd = file.as_raw_fd();
    let seek = |pos: u64, whence: libc::c_int| -> io::Result<Option<u64>> {
        // SAFETY: integer arguments only; fd is open for the call's duration (borrowed from
        // `file`). lseek moves that open file's offset and nothing else.
        let r = unsafe { libc::lseek(fd, pos as libc::off_t, whence) };
        if r >= 0 {
            return Ok(Some(r as u64));
        }
        let e = io::Error::last_os_error();
        // ENXIO: no data at or after pos (SEEK_DATA), or pos is past the end.
        if e.raw_os_error() == Some(libc::ENXIO) {
            Ok(None)
        } else {
            Err(e)
        }
    };
    let mut extents = Vec::new();
    let mut pos = start;
    let done = |extents| DataExtents {
        extents,
        walked: end,
    };
    for _ in 0..max_extents {
        if pos >= end {
            return Ok(done(extents));
        }
        let Some(d) = seek(pos, libc::SEEK_DATA)? else {
            return Ok(done(extents));
        };
        if d >= end {
            return Ok(done(extents));
        }
        let h = seek(d, libc::SEEK_HOLE)?.unwrap_or(end).max(d + 1);
        extents.push((d, h.min(end) - d));
        pos = h;
    }
    if pos >= end {
        return Ok(done(extents));
    }
    Ok(DataExtents {
        extents,
        walked: pos,
    })
}

/// For tests over a sparse file of `len` bytes in `dir`: whether its file system tracks holes.
/// One that does not (SEEK_DATA's generic fallback says data everywhere, which is what the
/// never-written finding must then assume) makes the caller skip, with the reason printed, or
/// fail when BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1.
#[cfg(test)]
pub(crate) fn tracks_holes(file: &File, len: u64, dir: &Path) -> bool {
    if data_bytes(file, 0, len, 1000).unwrap() < len {
        return true;
    }
    super::skip(&format!(
        "the file system of {} tracks no holes",
        dir.display()
    ));
    false
}

/// Allocates `len` bytes for `file` (posix_fallocate), so a write test overwrites blocks that
/// exist instead of measuring the file system's allocator.
pub fn preallocate(file: &File, len: u64) -> io::Result<()> {
    // SAFETY: integer arguments only; fd is open for the call's duration.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Bytes an unprivileged user may still write on the file system holding `path`
/// (statvfs: f_bavail x f_frsize).
pub fn fs_available(path: &Path) -> io::Result<u64> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: c is a valid NUL-terminated path; st is writable memory of the right size.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs succeeded and filled the struct.
    let st = unsafe { st.assume_init() };
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The fundamental block size of the file system holding `file` (fstatvfs: f_frsize, or
/// f_bsize where that is 0): the unit it allocates and zeroes in.
pub fn fs_block_size(file: &std::fs::File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: the descriptor is open for the call's duration; st is writable memory of the
    // right size.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: fstatvfs succeeded and filled the struct.
    let st = unsafe { st.assume_init() };
    let size = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    (size > 0).then_some(size)
}

/// The O_DIRECT alignment the kernel reports for a file (statx STATX_DIOALIGN, Linux 6.1+):
/// (memory alignment, offset alignment). `None` when the kernel or file system does not say.
pub fn dio_alignment(path: &Path) -> Option<(u32, u32)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: c is a valid NUL-terminated path; st is writable memory of the right size.
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            st.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: statx succeeded and filled the struct (zeroed before in any case).
    let st = unsafe { st.assume_init() };
    if st.stx_mask & libc::STATX_DIOALIGN == 0 || st.stx_dio_offset_align == 0 {
        return None;
    }
    Some((st.stx_dio_mem_align, st.stx_dio_offset_align))
}

/// Mounts tracefs at `path` (where the kernel has it but nothing mounted it: a rescue system,
/// a minimal container), as `mount -t tracefs nodev PATH` does.
pub fn mount_tracefs(path: &Path) -> io::Result<()> {
    let target = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; no data is
    // passed.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reopened_file_keeps_its_flags_and_shares_no_offset() {
        use std::io::{Read, Seek, Write};
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(b"abcdefgh")
            .unwrap();
        let mut first = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DSYNC)
            .open(&path)
            .unwrap();
        let flags = |f: &File| {
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{}", f.as_raw_fd())).unwrap();
            let octal = info.lines().find_map(|l| l.strip_prefix("flags:")).unwrap();
            i32::from_str_radix(octal.trim(), 8).unwrap()
        };
        let mut second = reopen(&first).unwrap();
        let keep = libc::O_ACCMODE | libc::O_DSYNC | libc::O_CLOEXEC;
        println!("first {:o}, second {:o}", flags(&first), flags(&second));
        assert_eq!(
            flags(&second) & keep,
            libc::O_RDWR | libc::O_DSYNC | libc::O_CLOEXEC
        );
        // A dup would have moved with the first: its own description stays at 0.
        first.seek(std::io::SeekFrom::Start(4)).unwrap();
        let mut two = [0u8; 2];
        second.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"ab");
    }

    #[test]
    fn data_bytes_leaves_holes_out() {
        use std::os::unix::fs::FileExt;
        // 8 MiB, with data only at [1 MiB, 2 MiB) and [6 MiB, 6 MiB + 4 KiB).
        let dir = tempfile::tempdir().unwrap();
        let f = File::create(dir.path().join("sparse")).unwrap();
        f.set_len(8 << 20).unwrap();
        f.write_all_at(&vec![0xa5; 1 << 20], 1 << 20).unwrap();
        f.write_all_at(&[0x5a; 4096], 6 << 20).unwrap();
        f.sync_all().unwrap();
        if !tracks_holes(&f, 8 << 20, dir.path()) {
            return;
        }
        let whole = data_bytes(&f, 0, 8 << 20, 1000).unwrap();
        // Allocation may round to the file system's block (4 KiB here); never less than written.
        assert!(
            ((1 << 20) + 4096..=(1 << 20) + 4096 + 2 * 65536).contains(&whole),
            "data in the whole file: {whole}"
        );
        let middle = data_bytes(&f, 1536 << 10, 7 << 20, 1000).unwrap();
        assert!(
            ((512 << 10) + 4096..=(512 << 10) + 4096 + 65536).contains(&middle),
            "data in [1.5 MiB, 7 MiB): {middle}"
        );
        assert_eq!(data_bytes(&f, 3 << 20, 5 << 20, 1000).unwrap(), 0, "a hole");
        // The walk stops after one extent: the rest counts as data.
        let capped = data_bytes(&f, 0, 8 << 20, 1).unwrap();
        assert!(capped >= (1 << 20) + (6 << 20), "capped walk: {capped}");
    }
}

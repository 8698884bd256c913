//! The one module where blkscope uses `unsafe`: aligned I/O buffers, an io_uring queue with
//! registered buffers, and thin wrappers over system calls the standard library lacks.
//! Everything exported from here is safe to call; each `unsafe` block says why it is sound.
#![allow(unsafe_code)]

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::NonNull;
use std::time::Duration;

use io_uring::{IoUring, opcode, types};

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// The page size (the page cache's block size on Linux 6.x for buffered block-device I/O).
pub fn page_size() -> u64 {
    // SAFETY: sysconf only reads its integer argument.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 { v as u64 } else { 4096 }
}

/// A zeroed heap buffer whose address is a multiple of `align` (O_DIRECT needs this).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>; moving it to another
// thread moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Panics only if `len` is 0 or `align` is not a power of two (programming errors).
    pub fn new(len: usize, align: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), align.max(1)).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Self { ptr, layout }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialised (zeroed at allocation) and borrowed
        // immutably for the lifetime of &self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was returned by alloc_zeroed with this very layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// User and system CPU time of this process so far.
pub fn cpu_times() -> (Duration, Duration) {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: ru points to writable memory of the right size; RUSAGE_SELF is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    // SAFETY: getrusage succeeded, so it filled the struct (and it was zeroed before anyway).
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    (tv(ru.ru_utime), tv(ru.ru_stime))
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

/// Sets up a ring for one thread that submits and reaps itself: SINGLE_ISSUER with
/// DEFER_TASKRUN (completion work runs when we wait, not through wake-ups and IPIs) and
/// COOP_TASKRUN, as fio does, dropping each where the kernel refuses it (EINVAL).
fn build_ring(entries: u32, sqpoll: bool, iopoll: bool) -> io::Result<IoUring> {
    let attempts: [(bool, bool); 3] = [(true, true), (false, true), (false, false)];
    let mut last = None;
    for (defer, coop) in attempts {
        let mut b = IoUring::builder();
        if iopoll {
            b.setup_iopoll();
        }
        if sqpoll {
            b.setup_sqpoll(50);
        } else {
            if defer {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            if coop {
                b.setup_coop_taskrun();
            }
        }
        match b.build(entries) {
            Ok(r) => return Ok(r),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

/// Whether an I/O reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// One finished I/O: the slot it used and the kernel's result (bytes, or -errno).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: usize,
    pub result: i32,
}

/// An io_uring with one buffer per slot, registered with the kernel (READ_FIXED/WRITE_FIXED),
/// and the target file registered too. The queue owns the buffers and a handle on the file, and
/// never lets a buffer be touched or freed while the kernel may still use it: a slot in flight
/// cannot be borrowed or resubmitted, and dropping the queue first waits for every I/O in flight.
pub struct UringQueue {
    ring: IoUring,
    bufs: Vec<AlignedBuf>,
    in_flight: Vec<bool>,
    pending: usize,
    fixed_buffers: bool,
    _file: File,
}

impl UringQueue {
    /// Sets up a ring of `depth` entries over `file` with `depth` buffers of `buf_len` bytes.
    /// Fails like io_uring_setup(2) (ENOSYS, EPERM, ...) so the caller can fall back.
    pub fn new(
        file: &File,
        depth: u32,
        buf_len: usize,
        sqpoll: bool,
        iopoll: bool,
    ) -> io::Result<Self> {
        let ring = build_ring(depth.next_power_of_two().max(1), sqpoll, iopoll)?;
        let file = file.try_clone()?;
        let mut bufs: Vec<AlignedBuf> =
            (0..depth).map(|_| AlignedBuf::new(buf_len, 4096)).collect();
        let iovecs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the iovecs describe buffers owned by `bufs`, which live inside the returned
        // queue at least as long as the ring (fields drop in declaration order: ring first) and
        // are never moved (heap allocations; the Vec is never grown).
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        ring.submitter().register_files(&[file.as_raw_fd()])?;
        Ok(Self {
            ring,
            in_flight: vec![false; bufs.len()],
            bufs,
            pending: 0,
            fixed_buffers,
            _file: file,
        })
    }

    /// Whether the buffers could be registered (else plain READ/WRITE are used).
    pub fn fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    pub fn in_flight(&self) -> usize {
        self.pending
    }

    /// The buffer of a free slot, to fill before a write. Panics if the slot is in flight.
    pub fn buf_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        self.bufs[slot].as_mut_slice()
    }

    /// Queues an I/O of `len` bytes at `offset` using slot `slot`'s buffer. Panics if the slot is
    /// in flight or `len` exceeds its buffer (programming errors).
    pub fn push(&mut self, slot: usize, dir: Dir, offset: u64, len: u32) {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        assert!(len as usize <= self.bufs[slot].len());
        let ptr = self.bufs[slot].as_mut_ptr();
        let fd = types::Fixed(0);
        let entry = match (dir, self.fixed_buffers) {
            (Dir::Read, true) => opcode::ReadFixed::new(fd, ptr, len, slot as u16)
                .offset(offset)
                .build(),
            (Dir::Write, true) => opcode::WriteFixed::new(fd, ptr, len, slot as u16)
                .offset(offset)
                .build(),
            (Dir::Read, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (Dir::Write, false) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
        }
        .user_data(slot as u64);
        // The submission queue has as many entries as there are slots, and a slot is pushed only
        // when free, so it cannot be full; submit first if it ever is.
        loop {
            // SAFETY: the entry points at a buffer owned by self that stays valid and untouched
            // until its completion is reaped (in_flight guards it; Drop drains the ring).
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                break;
            }
            let _ = self.ring.submit();
        }
        self.in_flight[slot] = true;
        self.pending += 1;
    }

    /// Submits what was queued and waits for at least `want` completions, or until `timeout`
    /// passes, when there is one (so a caller can notice a cancel request while a slow device
    /// works). Arming a timeout costs a kernel timer set and cancelled on every wait (in a VM,
    /// traps to the hypervisor): callers leave it out while waits are short.
    pub fn submit_and_wait(&mut self, want: usize, timeout: Option<Duration>) -> io::Result<()> {
        let r = match timeout {
            Some(t) => {
                let ts = types::Timespec::new()
                    .sec(t.as_secs())
                    .nsec(t.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submit_and_wait(want),
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Moves finished I/Os into `out` and frees their slots.
    pub fn reap(&mut self, out: &mut Vec<Completion>) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            if slot < self.in_flight.len() && self.in_flight[slot] {
                self.in_flight[slot] = false;
                self.pending -= 1;
                out.push(Completion {
                    slot,
                    result: cqe.result(),
                });
            }
        }
    }
}

impl Drop for UringQueue {
    fn drop(&mut self) {
        // The kernel may still be reading into or writing from our buffers: wait for every I/O in
        // flight before the buffers are freed. Give up only if the ring itself fails.
        let mut sink = Vec::new();
        while self.pending > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                break;
            }
            sink.clear();
            self.reap(&mut sink);
        }
        // The kernel tears a ring down asynchronously after its fd is closed, and until then
        // the registered file keeps the target open, and with it the O_EXCL claim on a block
        // device: the next opener would see EBUSY. Unregistering is synchronous.
        let _ = self.ring.submitter().unregister_files();
        if self.fixed_buffers {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

/// Whether a process runs (a zombie, killed but not reaped, does not).
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_aligned_and_zeroed() {
        let mut b = AlignedBuf::new(8192, 4096);
        assert_eq!(b.as_slice().as_ptr() as usize % 4096, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[8191] = 7;
        assert_eq!(b.as_slice()[8191], 7);
    }

    #[test]
    fn cpu_time_moves() {
        let (u0, s0) = cpu_times();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let (u1, s1) = cpu_times();
        assert!(u1 + s1 > u0 + s0);
    }

    #[test]
    fn uring_round_trip_on_a_file() {
        let mut f = tempfile::tempfile().unwrap();
        use std::io::Write;
        f.write_all(&[0xAB; 8192]).unwrap();
        let mut q = match UringQueue::new(&f, 2, 4096, false, false) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("SKIPPED: io_uring unavailable here: {e}");
                return;
            }
        };
        q.buf_mut(1).fill(0xCD);
        q.push(1, Dir::Write, 4096, 4096);
        q.push(0, Dir::Read, 0, 4096);
        let mut done = Vec::new();
        while done.len() < 2 {
            q.submit_and_wait(1, Some(Duration::from_millis(100)))
                .unwrap();
            q.reap(&mut done);
        }
        assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
        assert!(q.buf_mut(0).iter().all(|&b| b == 0xAB));
        let mut back = [0u8; 4096];
        use std::os::unix::fs::FileExt;
        f.read_exact_at(&mut back, 4096).unwrap();
        assert!(back.iter().all(|&b| b == 0xCD));
    }
}

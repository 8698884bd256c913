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

/// The highest CPU number a `cpu_set_t` can hold, plus one (glibc's CPU_SETSIZE).
pub const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// A `cpu_set_t` holding `cpus`; numbers at or past [`MAX_CPUS`] are left out (callers check).
fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain array of bits; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < MAX_CPUS) {
        // SAFETY: c is below CPU_SETSIZE, so the bit lies inside `set`.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

/// The CPUs the calling thread may run on (sched_getaffinity(2)), in ascending order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most size_of::<cpu_set_t>() bytes into `set`.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: every c is below CPU_SETSIZE, inside `set`.
    Ok((0..MAX_CPUS)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Binds the calling thread to `cpus` (sched_setaffinity(2) on this thread only).
pub fn bind_thread(cpus: &[usize]) -> io::Result<()> {
    let set = cpu_set(cpus);
    // SAFETY: the kernel reads size_of::<cpu_set_t>() bytes from `set`; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was returned by alloc_zeroed with this very layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The I/O buffers of one queue: `slots` page-aligned buffers of `slot_len` bytes, one after
/// another in one anonymous mapping. When the whole is 2 MiB or more, the mapping starts on a
/// 2 MiB boundary and is advised as transparent huge pages before anything touches it (the
/// kernel's THP setting is "madvise" on most distributions, so nothing else gets them). Why: a
/// 1 MiB buffer on 4 KiB pages is up to 256 scattered pages, each its own segment of the request,
/// which the block layer then splits by the device's segment limits (a loop device allows 128);
/// on a huge page it is a few large segments. Where THP is off or no huge page is free, the
/// buffers are ordinary pages and nothing else changes.
pub struct BufferArena {
    ptr: NonNull<u8>,
    map_len: usize,
    slot_len: usize,
    slots: usize,
    huge: bool,
}

// SAFETY: the arena owns its mapping exclusively, like a Box<[u8]>; moving it to another thread
// moves that ownership.
unsafe impl Send for BufferArena {}

const HUGE_PAGE: usize = 2 << 20;

impl BufferArena {
    /// Maps `slots` buffers of `len` bytes each (rounded up to whole pages), zero-filled.
    pub fn new(slots: usize, len: usize) -> io::Result<Self> {
        let page = page_size() as usize;
        let slot_len = len.max(1).div_ceil(page) * page;
        let want = slot_len
            .checked_mul(slots.max(1))
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        let huge = want >= HUGE_PAGE;
        let map_len = if huge {
            want.div_ceil(HUGE_PAGE) * HUGE_PAGE
        } else {
            want
        };
        // Over-map by one huge page so that a 2 MiB boundary lies inside, then unmap the slop.
        let raw_len = if huge { map_len + HUGE_PAGE } else { map_len };
        // SAFETY: a fresh private anonymous mapping; no existing memory is referenced.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                raw_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = raw as usize;
        let start = if huge {
            base.div_ceil(HUGE_PAGE) * HUGE_PAGE
        } else {
            base
        };
        let head = start - base;
        let tail = raw_len - head - map_len;
        // SAFETY: both ranges lie inside the mapping just made and nothing points into them; a
        // failure leaves them mapped, which wastes address space but is not unsound.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((start + map_len) as *mut libc::c_void, tail);
            }
        }
        if huge {
            // SAFETY: advice on our own mapping, which nothing has touched yet; it changes how
            // the kernel backs the pages, never their contents. Refused advice (THP not built
            // in) leaves ordinary pages.
            unsafe {
                libc::madvise(start as *mut libc::c_void, map_len, libc::MADV_HUGEPAGE);
            }
        }
        Ok(Self {
            ptr: NonNull::new(start as *mut u8).expect("mmap returned a null mapping"),
            map_len,
            slot_len,
            slots: slots.max(1),
            huge,
        })
    }

    /// Whether the mapping was advised as huge pages (2 MiB or more in all).
    pub fn huge(&self) -> bool {
        self.huge
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The bytes of one slot (its length rounded up to whole pages).
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// The address of the whole mapping (for tests that look it up in /proc/self/smaps).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots, "slot {slot} out of {}", self.slots);
        // SAFETY: slot < slots, so the offset stays inside the mapping of slots * slot_len bytes.
        unsafe { self.ptr.as_ptr().add(slot * self.slot_len) }
    }

    pub fn slot(&self, slot: usize) -> &[u8] {
        // SAFETY: the slot's range is inside the mapping, initialised (anonymous memory is
        // zero-filled) and borrowed immutably for the lifetime of &self.
        unsafe { std::slice::from_raw_parts(self.slot_ptr(slot), self.slot_len) }
    }

    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }
}

impl Drop for BufferArena {
    fn drop(&mut self) {
        // SAFETY: the range is exactly what new() kept mapped, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.map_len);
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds, as one integer: the clock `Instant` reads on Linux, without
/// its checked arithmetic over seconds and nanoseconds (a subtraction was ~74 instructions).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; CLOCK_MONOTONIC exists on every Linux, so the
    // call cannot fail (and ts stays zero if it somehow did).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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

/// Bytes of `[start, end)` in `file` that hold data, found with lseek's SEEK_DATA and
/// SEEK_HOLE: holes (never written, or allocated but unwritten extents, both read as zeros
/// without touching the disk) are left out. A file system that tracks no holes reports the
/// whole file as data. The walk stops after `max_extents` data extents, and what lies past
/// that counts as data. It moves `file`'s offset: pass a descriptor of your own, not one that
/// reads or writes without positions.
pub fn data_bytes(file: &File, start: u64, end: u64, max_extents: usize) -> io::Result<u64> {
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
    let (mut pos, mut data) = (start, 0u64);
    for _ in 0..max_extents {
        if pos >= end {
            return Ok(data);
        }
        let Some(d) = seek(pos, libc::SEEK_DATA)? else {
            return Ok(data);
        };
        if d >= end {
            return Ok(data);
        }
        let h = seek(d, libc::SEEK_HOLE)?.unwrap_or(end).max(d + 1);
        data += h.min(end) - d;
        pos = h;
    }
    Ok(data + end.saturating_sub(pos))
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
    skip(&format!(
        "the file system of {} tracks no holes",
        dir.display()
    ));
    false
}

/// For a library test that cannot run here: says why and returns, so the caller can skip; a
/// failure when BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 (CI), as the integration tests' `require`.
#[cfg(test)]
pub(crate) fn skip(why: &str) {
    assert!(
        std::env::var("BLKSCOPE_REQUIRE_PRIVILEGED_TESTS").as_deref() != Ok("1"),
        "BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 but {why}"
    );
    eprintln!("SKIPPED: {why}");
}

/// For tests: a ring whose calling thread had one read run by an io-wq worker (IOSQE_ASYNC
/// sends it there whatever the file), completed. The worker stays while the ring is open (and
/// a few seconds idle).
#[cfg(test)]
pub(crate) fn ring_with_a_read_run_by_io_wq() -> io::Result<IoUring> {
    let mut ring = IoUring::new(2)?;
    let f = File::open("/proc/self/stat")?;
    let mut buf = vec![0u8; 64];
    let read = opcode::Read::new(types::Fd(f.as_raw_fd()), buf.as_mut_ptr(), buf.len() as u32)
        .build()
        .flags(io_uring::squeue::Flags::ASYNC);
    // SAFETY: the buffer and the descriptor outlive the read: it completes (the wait below)
    // before either is dropped.
    unsafe { ring.submission().push(&read) }.map_err(io::Error::other)?;
    ring.submit_and_wait(1)?;
    let cqe = ring
        .completion()
        .next()
        .ok_or_else(|| io::Error::other("no completion"))?;
    if cqe.result() < 0 {
        return Err(io::Error::from_raw_os_error(-cqe.result()));
    }
    Ok(ring)
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

/// io_uring_rsrc_update, as IORING_(UN)REGISTER_RING_FDS take it.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

const IORING_REGISTER_RING_FDS: libc::c_long = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_long = 21;
const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_REGISTERED_RING: u32 = 16;

/// Registers a ring's own descriptor with the calling thread (Linux 5.18), so that
/// io_uring_enter can name it by index and skip the descriptor-table lookup and the reference
/// count on the file that a multi-threaded process pays on every call. The io-uring crate keeps
/// the index in a Submitter, which borrows the ring and so cannot live beside it in a queue.
fn register_ring_fd(fd: i32) -> Option<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: fd as u64,
    };
    // SAFETY: io_uring_register reads and writes exactly one io_uring_rsrc_update, which `up`
    // is (repr(C), the kernel's layout), and keeps no pointer to it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            IORING_REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1,
        )
    };
    (rc == 1).then_some(up.offset)
}

fn unregister_ring_fd(index: u32) {
    let up = RsrcUpdate {
        offset: index,
        resv: 0,
        data: 0,
    };
    // SAFETY: as above; the kernel only reads `up`.
    unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            -1,
            IORING_UNREGISTER_RING_FDS,
            &up as *const RsrcUpdate,
            1,
        );
    }
}

/// io_uring_enter on a registered ring: submit `to_submit` queued entries and wait for `want`.
fn enter_registered(index: u32, to_submit: u32, want: u32) -> io::Result<usize> {
    // SAFETY: no memory is passed (the argument pointer is null with size 0); the kernel reads
    // the submission ring, which the IoUring owning this index keeps mapped.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            index,
            to_submit,
            want,
            IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING,
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
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
    bufs: BufferArena,
    buf_len: usize,
    in_flight: Vec<bool>,
    pending: usize,
    fixed_buffers: bool,
    /// The ring's index among this thread's registered ring descriptors, if it could be
    /// registered (and the ring has no SQ poller): io_uring_enter then skips the fd lookup.
    ring_index: Option<u32>,
    /// The thread that registered it: the index means nothing (or another ring) elsewhere.
    owner: std::thread::ThreadId,
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
        cpus: Option<&[usize]>,
    ) -> io::Result<Self> {
        let ring = build_ring(depth.next_power_of_two().max(1), sqpoll, iopoll)?;
        // io-wq workers (where the kernel runs the I/O it cannot issue without blocking) are
        // bound to the job's CPUs explicitly (IORING_REGISTER_IOWQ_AFF, Linux 5.14). On 6.18
        // they inherit the bound thread's CPUs anyway (tests/cpus.rs passes without this), but
        // older kernels set each new worker to its NUMA node's or the cpuset's CPUs, and
        // `--cpus` would then bind only half of each I/O. A kernel without it refuses; the
        // thread itself is still bound.
        if let Some(cpus) = cpus {
            let _ = ring.submitter().register_iowq_aff(&cpu_set(cpus));
        }
        let file = file.try_clone()?;
        let bufs = BufferArena::new(depth as usize, buf_len)?;
        let iovecs: Vec<libc::iovec> = (0..bufs.slots())
            .map(|s| libc::iovec {
                iov_base: bufs.slot_ptr(s).cast(),
                iov_len: bufs.slot_len(),
            })
            .collect();
        // SAFETY: the iovecs describe the slots of `bufs`, a mapping owned by the returned queue
        // that lives at least as long as the ring (fields drop in declaration order: ring first)
        // and never moves.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        ring.submitter().register_files(&[file.as_raw_fd()])?;
        // Pinned to one CPU on a filled zram, 4K reads at QD1, 8 alternating pairs: 155.0K IOPS
        // registered against 152.5K, higher at every rank; QD32 unpinned the same (t/io_uring
        // registers its ring by default too). With SQPOLL the crate's path wakes the poller.
        let ring_index = if sqpoll {
            None
        } else {
            register_ring_fd(ring.as_raw_fd())
        };
        Ok(Self {
            ring,
            in_flight: vec![false; bufs.slots()],
            buf_len,
            bufs,
            pending: 0,
            fixed_buffers,
            ring_index,
            owner: std::thread::current().id(),
            _file: file,
        })
    }

    /// Whether the ring's descriptor is registered with this thread (io_uring_enter by index).
    pub fn ring_registered(&self) -> bool {
        self.registered_here().is_some()
    }

    /// The registered index, when called from the thread that registered it (a queue moved to
    /// another thread goes through the plain descriptor).
    fn registered_here(&self) -> Option<u32> {
        self.ring_index
            .filter(|_| std::thread::current().id() == self.owner)
    }

    /// Whether the buffers could be registered (else plain READ/WRITE are used).
    pub fn fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    pub fn in_flight(&self) -> usize {
        self.pending
    }

    /// The buffer of a free slot, holding what its last read brought. Panics if the slot is in
    /// flight.
    pub fn buf(&self, slot: usize) -> &[u8] {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        &self.bufs.slot(slot)[..self.buf_len]
    }

    /// The buffer of a free slot, to fill before a write. Panics if the slot is in flight.
    pub fn buf_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        let len = self.buf_len;
        &mut self.bufs.slot_mut(slot)[..len]
    }

    /// The buffers' mapping (whether it is on huge pages, where it lies).
    pub fn buffers(&self) -> &BufferArena {
        &self.bufs
    }

    /// Queues an I/O of `len` bytes at `offset` using slot `slot`'s buffer. Panics if the slot is
    /// in flight or `len` exceeds its buffer (programming errors).
    pub fn push(&mut self, slot: usize, dir: Dir, offset: u64, len: u32) {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        assert!(len as usize <= self.buf_len);
        let ptr = self.bufs.slot_ptr(slot);
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
            None => match self.registered_here() {
                Some(index) => {
                    let to_submit = self.ring.submission().len() as u32;
                    enter_registered(index, to_submit, want as u32)
                }
                None => self.ring.submit_and_wait(want),
            },
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
        if let Some(index) = self.registered_here() {
            unregister_ring_fd(index);
        }
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

    /// A temporary file holding `fill` (`len` bytes) and a queue over it, or None (printed) where
    /// io_uring is unavailable.
    fn queue_over(fill: u8, len: usize, depth: u32, buf_len: usize) -> Option<(File, UringQueue)> {
        let mut f = tempfile::tempfile().unwrap();
        use std::io::Write;
        f.write_all(&vec![fill; len]).unwrap();
        match UringQueue::new(&f, depth, buf_len, false, false, None) {
            Ok(q) => Some((f, q)),
            Err(e) => {
                eprintln!("SKIPPED: io_uring unavailable here: {e}");
                None
            }
        }
    }

    #[test]
    fn uring_round_trip_on_a_file() {
        let Some((f, mut q)) = queue_over(0xAB, 8192, 2, 4096) else {
            return;
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

    /// The smaps block of the mapping that starts at `addr`.
    fn smaps_of(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut out = String::new();
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, _)) = head.split_once('-')
                && !head.contains(':')
                && a.chars().all(|c| c.is_ascii_hexdigit())
            {
                inside = usize::from_str_radix(a, 16) == Ok(addr);
            }
            if inside {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn large_buffers_are_advised_as_huge_pages_on_a_huge_page_boundary() {
        let mut a = BufferArena::new(8, 1 << 20).unwrap();
        assert!(a.huge());
        assert_eq!(a.addr() % HUGE_PAGE, 0, "address {:#x}", a.addr());
        assert_eq!((a.slots(), a.slot_len()), (8, 1 << 20));
        for s in 0..8 {
            assert!(a.slot(s).iter().all(|&b| b == 0));
            a.slot_mut(s).fill(s as u8 + 1);
        }
        for s in 0..8 {
            assert!(a.slot(s).iter().all(|&b| b == s as u8 + 1), "slot {s}");
        }
        let block = smaps_of(a.addr());
        eprintln!("{block}");
        let flags = block
            .lines()
            .find_map(|l| l.strip_prefix("VmFlags:"))
            .unwrap_or_else(|| panic!("no VmFlags for {:#x} in:\n{block}", a.addr()));
        // "hg" is the VMA flag MADV_HUGEPAGE sets; the kernel reports it whether or not a huge
        // page could be had (that depends on free memory, so it is printed, not asserted).
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        match thp {
            Ok(t) if !t.contains("[never]") => assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "VmFlags:{flags} (THP {t:?})"
            ),
            other => eprintln!("THP is off here ({other:?}): only the layout is checked"),
        }
    }

    #[test]
    fn small_buffers_stay_on_ordinary_pages_and_round_up_to_a_page() {
        let a = BufferArena::new(32, 512).unwrap();
        assert!(!a.huge());
        assert_eq!(a.slot_len(), page_size() as usize);
        assert_eq!(a.addr() % page_size() as usize, 0);
        let block = smaps_of(a.addr());
        let flags = block.lines().find_map(|l| l.strip_prefix("VmFlags:"));
        assert!(
            flags.is_some_and(|f| !f.split_whitespace().any(|x| x == "hg")),
            "{block}"
        );
    }

    #[test]
    fn a_queue_hands_out_exactly_the_block_size_of_each_slot() {
        let Some((f, mut q)) = queue_over(0, 0, 4, 512) else {
            return;
        };
        assert_eq!(q.buf_mut(3).len(), 512);
        assert!(!q.buffers().huge());
        let q = UringQueue::new(&f, 8, 1 << 20, false, false, None).unwrap();
        assert!(q.buffers().huge());
    }

    #[test]
    fn a_registered_ring_submits_and_waits_by_index() {
        let Some((f, mut q)) = queue_over(0x5A, 16384, 4, 4096) else {
            return;
        };
        // Linux 5.18 and later register ring descriptors; CI's kernel is newer.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        eprintln!("kernel {release}");
        assert!(q.ring_registered(), "ring not registered on {release}");
        for s in 0..4 {
            q.push(s, Dir::Read, s as u64 * 4096, 4096);
        }
        let mut done = Vec::new();
        while done.len() < 4 {
            q.submit_and_wait(4 - done.len(), None).unwrap();
            q.reap(&mut done);
        }
        assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
        assert!((0..4).all(|s| q.buf_mut(s).iter().all(|&b| b == 0x5A)));
        // A second queue in the same thread gets its own index.
        let q2 = UringQueue::new(&f, 1, 4096, false, false, None).unwrap();
        assert!(q2.ring_registered());
        assert_ne!(q.ring_index, q2.ring_index);
        // Moved to another thread, the index is not used there (it would name that thread's
        // rings), and dropping the queue there unregisters nothing of that thread's.
        let other = std::thread::spawn(move || {
            let seen = q.ring_registered();
            drop(q);
            seen
        })
        .join()
        .unwrap();
        assert!(!other);
        assert!(q2.ring_registered());
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

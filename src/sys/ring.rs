//! The io_uring queue: its ring, registered buffers and file, and its registered descriptor.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use io_uring::{IoUring, opcode, types};

use super::{BufferArena, cpu_set};

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
    /// Every I/O goes to io-wq at once (IOSQE_ASYNC): [`UringQueue::send_to_workers`].
    to_workers: bool,
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
        // Registered, as t/io_uring does (docs/architecture.md, "Smaller costs"). With SQPOLL
        // the crate's path wakes the poller.
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
            to_workers: false,
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

    /// From now on, hands every I/O to the kernel's io-wq workers as it is submitted
    /// (IOSQE_ASYNC, fio's `--force_async=1`), for a file the kernel cannot issue I/O to
    /// without blocking: it would try each I/O without blocking first, fail and hand it over
    /// anyway. Forced work also starts another worker when none is idle, where otherwise one
    /// worker runs everything for as long as it never blocks. The workers are held to `cpus`,
    /// the CPUs the thread may use ([`UringQueue::hold_workers`]; io-wq's own limit is four a
    /// CPU for the bounded kind and the process limit for the other, which forced I/O on a
    /// registered file is counted as: docs/architecture.md, "Handing I/O to io-wq").
    pub fn send_to_workers(&mut self, cpus: usize) {
        self.hold_workers(cpus);
        self.to_workers = true;
    }

    /// Holds the io-wq workers of this ring's thread to `n` of each kind
    /// (IORING_REGISTER_IOWQ_MAX_WORKERS, Linux 5.15); workers already running stay until
    /// idle. A kernel without it refuses: the workers are then io-wq's usual number at most.
    pub fn hold_workers(&mut self, n: usize) {
        let n = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        let mut limits = [n, n];
        let _ = self.ring.submitter().register_iowq_max_workers(&mut limits);
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
        let entry = if self.to_workers {
            entry.flags(io_uring::squeue::Flags::ASYNC)
        } else {
            entry
        };
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

    /// On a ring with an SQ poller: hands what was queued to it (a system call only where it
    /// has gone to sleep) and polls the completion ring in this thread, with no system call,
    /// until `out` holds `want` or `limit` has passed. With SQPOLL the poller runs the
    /// completions' work, so they appear in the ring without this thread entering the kernel,
    /// as fio's io_uring engine reaps with `--sqthread_poll`.
    pub fn poll_completions(
        &mut self,
        out: &mut Vec<Completion>,
        want: usize,
        limit: Duration,
    ) -> io::Result<()> {
        self.ring.submit()?;
        let from = std::time::Instant::now();
        let mut rounds = 0u32;
        loop {
            self.reap(out);
            if out.len() >= want {
                return Ok(());
            }
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(256) && from.elapsed() >= limit {
                return Ok(());
            }
            std::hint::spin_loop();
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

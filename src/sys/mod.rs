//! The one module where blkscope uses `unsafe`: aligned I/O buffers, an io_uring queue with
//! registered buffers, and thin wrappers over system calls the standard library lacks.
//! Everything exported from here is safe to call; each `unsafe` block says why it is sound.
//!
//! - `buf`: aligned buffers and the huge-page arena the queue registers;
//! - `file`: calls on files and file systems (cache drops, holes, preallocation, free space,
//!   direct-I/O alignment);
//! - `ring`: the io_uring queue, its ring set-up and its registered descriptor;
//! - `bpf`: the bpf(2) calls that load a program, its maps and its raw tracepoint;
//! - here: the process and its threads (ids, CPUs and affinity, clocks, CPU time).
#![allow(unsafe_code)]

pub mod bpf;
mod buf;
mod file;
mod ring;

pub use buf::{AlignedBuf, BufferArena};
#[cfg(test)]
pub(crate) use file::tracks_holes;
pub use file::{
    DataExtents, data_bytes, data_extents, dio_alignment, drop_cache, drop_cache_range,
    fs_available, fs_block_size, mount_tracefs, preallocate, reopen,
};
#[cfg(test)]
pub(crate) use ring::ring_with_a_read_run_by_io_wq;
pub use ring::{Completion, Dir, UringQueue};

use std::io;
use std::time::Duration;

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

/// CLOCK_MONOTONIC in nanoseconds, as one integer: the clock `Instant` reads on Linux, without
/// its checked arithmetic over seconds and nanoseconds (a subtraction was ~74 instructions).
#[inline]
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time so far (user and system), in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// A clock that every Linux has (CLOCK_MONOTONIC; CLOCK_THREAD_CPUTIME_ID since 2.6.12) in
/// nanoseconds.
#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; the callers pass clocks every Linux has, so the
    // call cannot fail (and ts stays zero if it somehow did).
    unsafe { libc::clock_gettime(clock, &mut ts) };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

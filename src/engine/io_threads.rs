//! The kernel's io_uring threads of this process, told apart by their names: the io-wq workers
//! a thread's I/O is handed to, and those of its ring's SQ poller (`--sqpoll`).

/// The io-wq workers of the calling thread: the threads io_uring hands that thread's I/O to
/// when it cannot issue it without blocking (a driver without NOWAIT support, such as zram).
/// The kernel names them `iou-wrk-TID` after the thread whose I/O they run, so another job's
/// workers (or another ring's in the same process) are not counted. They stay for a few
/// seconds after their last I/O, so counted before the ring goes they tell whether the job's
/// I/O went through them. Where the thread's id cannot be read (/proc/thread-self), every
/// `iou-wrk-*` of the process counts.
pub fn io_worker_threads() -> usize {
    match this_thread() {
        Some(tid) => threads_named(&format!("iou-wrk-{tid}")).len(),
        None => threads_named("iou-wrk-").len(),
    }
}

/// The io-wq workers of the SQ poller of the calling thread's ring (`--sqpoll`): with SQPOLL
/// the kernel thread `iou-sqp-TID` issues the I/O, and where it cannot without blocking it
/// hands it to workers named after itself.
pub fn sq_poller_workers() -> usize {
    let Some(tid) = this_thread() else {
        return 0;
    };
    threads_named(&format!("iou-sqp-{tid}"))
        .iter()
        .map(|poller| threads_named(&format!("iou-wrk-{poller}")).len())
        .sum()
}

/// The calling thread's id, from /proc/thread-self.
fn this_thread() -> Option<String> {
    let p = std::fs::read_link("/proc/thread-self").ok()?;
    Some(p.file_name()?.to_str()?.to_string())
}

/// The ids of this process's threads named `name`, which may be longer than the 15 bytes the
/// kernel keeps of a name (then those 15 are compared), or end in `-` (then it is a prefix).
fn threads_named(name: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let kept = &name[..name.len().min(15)];
    dir.flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| {
                let c = c.trim_end();
                if name.ends_with('-') {
                    c.starts_with(name)
                } else {
                    c == kept
                }
            })
        })
        .filter_map(|t| t.file_name().to_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_wq_workers_are_counted_for_the_thread_whose_io_they_run() {
        // A thread that had a read run by io-wq (IOSQE_ASYNC): its worker is its own, and the
        // test's thread, which has a ring of its own too, sees none of it.
        let mine = crate::sys::ring_with_a_read_run_by_io_wq();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let ring = crate::sys::ring_with_a_read_run_by_io_wq();
            tx.send((ring.is_ok(), io_worker_threads())).unwrap();
            // The ring (and its worker) stay until the test has counted.
            let _ = done_rx.recv();
            drop(ring);
        });
        let (other_ok, other_count) = rx.recv().unwrap();
        let here = io_worker_threads();
        let all: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|c| c.trim_end().to_string())
            .filter(|c| c.starts_with("iou-wrk-"))
            .collect();
        done_tx.send(()).unwrap();
        other.join().unwrap();
        println!("process: {all:?}; this thread counts {here}, the other {other_count}");
        match (mine, other_ok) {
            (Ok(_), true) => {
                assert_eq!(here, 1, "this thread's own worker: {all:?}");
                assert_eq!(other_count, 1, "the other thread's own worker: {all:?}");
                // Other tests' rings may add workers of their own: at least these two.
                assert!(all.len() >= 2, "two threads, one worker each: {all:?}");
            }
            (e, _) => {
                // No io_uring here (ENOSYS, kernel.io_uring_disabled): nothing to tell apart.
                crate::sys::skip(&format!("io_uring unavailable: {:?}", e.err()));
            }
        }
    }
}

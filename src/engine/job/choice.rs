//! The engine a job runs on when it asks for none (`--engine auto`, the default): the path with
//! the least overhead for the job, by rule, and the words that say why.

use super::{EngineKind, Job};

/// The engine that will run a job and, when blkscope chose it, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub engine: EngineKind,
    /// Set when the job left the choice to blkscope.
    pub why: Option<&'static str>,
}

impl Job {
    /// The engine this job runs on. A job that names one gets it; `auto` picks by rule:
    /// io_uring where only io_uring can do what was asked (polled completions, a polling
    /// submission thread) or where more than one I/O is kept in flight per job; a pread/pwrite
    /// loop for one I/O at a time, where a ring only adds work (fill a slot, enter, reap; on a
    /// device that takes no non-blocking I/O, such as zram, a hand-off to a kernel worker for
    /// every I/O). docs/architecture.md has the measurements behind the rule.
    pub fn engine_to_use(&self) -> Choice {
        let chosen = |engine, why| Choice {
            engine,
            why: Some(why),
        };
        match self.engine {
            EngineKind::Auto if self.hipri => chosen(
                EngineKind::Uring,
                "--hipri: polled completions need io_uring",
            ),
            EngineKind::Auto if self.sqpoll => chosen(
                EngineKind::Uring,
                "--sqpoll: a submission thread needs io_uring",
            ),
            EngineKind::Auto if self.iodepth <= 1 => chosen(
                EngineKind::Psync,
                "one I/O in flight per job: a pread/pwrite loop costs least",
            ),
            EngineKind::Auto => chosen(
                EngineKind::Uring,
                "several I/Os in flight per job: io_uring keeps them queued",
            ),
            named => Choice {
                engine: named,
                why: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(iodepth: u32, hipri: bool, sqpoll: bool) -> Choice {
        Job {
            engine: EngineKind::Auto,
            iodepth,
            hipri,
            sqpoll,
            ..Job::default()
        }
        .engine_to_use()
    }

    #[test]
    fn auto_takes_the_sync_loop_at_qd1_and_the_ring_at_depth_or_when_polling() {
        for (qd, hipri, sqpoll, want) in [
            (1, false, false, EngineKind::Psync),
            (2, false, false, EngineKind::Uring),
            (128, false, false, EngineKind::Uring),
            (1, true, false, EngineKind::Uring),
            (1, false, true, EngineKind::Uring),
        ] {
            let c = auto(qd, hipri, sqpoll);
            println!("QD{qd} hipri={hipri} sqpoll={sqpoll}: {c:?}");
            assert_eq!(c.engine, want);
            assert!(c.why.is_some_and(|w| !w.is_empty()));
        }
    }

    #[test]
    fn a_named_engine_is_kept_and_needs_no_reason() {
        for e in [EngineKind::Uring, EngineKind::Psync, EngineKind::Null] {
            let c = Job {
                engine: e,
                iodepth: 1,
                ..Job::default()
            }
            .engine_to_use();
            println!("{e:?}: {c:?}");
            assert_eq!(
                c,
                Choice {
                    engine: e,
                    why: None
                }
            );
        }
    }
}

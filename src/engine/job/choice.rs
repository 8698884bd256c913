//! The engine a job runs on when it asks for none (`--engine auto`, the default): the path with
//! the least overhead for the job, by rule, and the words that say why.

use super::{EngineKind, Job, Mode};

/// Blocks of this many bytes and more at depth keep `auto`'s ring without a probe: the ring's
/// hand-off to an io-wq worker costs a microsecond or two an I/O, where each such I/O's own
/// work is a hundred or more, and the workers run several at once (docs/architecture.md, "The
/// probe's cost where the ring wins anyway").
pub const RING_FROM_BS: u64 = 1 << 20;

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
            EngineKind::Auto if self.bs >= RING_FROM_BS => chosen(
                EngineKind::Uring,
                "several I/Os of 1 MiB or more in flight per job: io_uring keeps them queued, \
                 and a hand-off to a kernel worker, where the device needs one, is a small part \
                 of each I/O's work",
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

    /// Whether `auto`'s ring may lose to a pread/pwrite loop, so that a run probes both where
    /// io_uring hands the target's I/O to io-wq (`engine::probe`): at depth, direct I/O (the
    /// hand-over to io-wq is made only for it), and not polling (only the ring polls). A job
    /// that writes only when it runs for a time at random offsets: a probe of one pass over a
    /// size would write more than the job asked for, and sequential writes on a host-managed
    /// zoned device would move its write pointers (random writes are refused there before).
    /// Blocks of [`RING_FROM_BS`] and more keep the ring unprobed.
    pub fn may_probe_engine(&self) -> bool {
        self.engine == EngineKind::Auto
            && self.iodepth > 1
            && self.bs < RING_FROM_BS
            && !self.hipri
            && !self.sqpoll
            && self.mode == Mode::Direct
            && (!self.op.writes() || (self.op.is_random() && self.runtime.is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

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
    fn only_auto_at_depth_on_direct_io_without_polling_may_probe_and_writes_only_for_a_time() {
        let base = Job {
            op: Op::Randread,
            engine: EngineKind::Auto,
            bs: 4096,
            iodepth: 8,
            mode: Mode::Direct,
            ..Job::default()
        };
        assert!(base.may_probe_engine());
        for (what, j) in [
            (
                "QD1",
                Job {
                    iodepth: 1,
                    ..base.clone()
                },
            ),
            (
                "named",
                Job {
                    engine: EngineKind::Uring,
                    ..base.clone()
                },
            ),
            (
                "hipri",
                Job {
                    hipri: true,
                    ..base.clone()
                },
            ),
            (
                "sqpoll",
                Job {
                    sqpoll: true,
                    ..base.clone()
                },
            ),
            (
                "buffered",
                Job {
                    mode: Mode::Fdatasync,
                    ..base.clone()
                },
            ),
            (
                "random writes, one pass",
                Job {
                    op: Op::Randwrite,
                    ..base.clone()
                },
            ),
            (
                "blocks of 1 MiB",
                Job {
                    bs: RING_FROM_BS,
                    ..base.clone()
                },
            ),
            (
                "sequential writes for a time",
                Job {
                    op: Op::Write,
                    runtime: Some(std::time::Duration::from_secs(1)),
                    ..base.clone()
                },
            ),
        ] {
            println!("{what}: {}", j.may_probe_engine());
            assert!(!j.may_probe_engine(), "{what}");
        }
        let timed_mix = Job {
            op: Op::Randrw,
            runtime: Some(std::time::Duration::from_secs(1)),
            ..base.clone()
        };
        assert!(timed_mix.may_probe_engine(), "random writes for a time");
    }

    #[test]
    fn blocks_of_a_mebibyte_at_depth_keep_the_ring_and_say_why() {
        let job = |bs: u64, iodepth: u32| Job {
            engine: EngineKind::Auto,
            bs,
            iodepth,
            ..Job::default()
        };
        let big = job(RING_FROM_BS, 4).engine_to_use();
        let small = job(RING_FROM_BS / 2, 4).engine_to_use();
        let one = job(RING_FROM_BS, 1).engine_to_use();
        println!("1M QD4: {big:?}\n512K QD4: {small:?}\n1M QD1: {one:?}");
        assert_eq!(big.engine, EngineKind::Uring);
        assert!(big.why.unwrap().contains("1 MiB or more"), "{big:?}");
        assert_eq!(small.engine, EngineKind::Uring);
        assert!(!small.why.unwrap().contains("1 MiB"), "{small:?}");
        assert_eq!(one.engine, EngineKind::Psync, "QD1 stays the loop");
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

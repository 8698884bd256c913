//! The built-in tests the TUI offers (and suites build on): each a named [`Job`] with a line
//! saying what it measures. Sized by time (ten seconds) so they finish on any device.

use std::time::Duration;

use crate::engine::job::{Job, Mode, Op};

#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub id: &'static str,
    pub name: &'static str,
    pub about: &'static str,
    pub job: Job,
}

/// The built-in tests for a target whose logical block size is `lbs`.
pub fn builtin(lbs: u64) -> Vec<Preset> {
    let ten = Some(Duration::from_secs(10));
    let base = Job {
        runtime: ten,
        mode: Mode::Direct,
        ..Job::default()
    };
    vec![
        Preset {
            id: "seq-write",
            name: "Seq write",
            about: "dd-style throughput: 1 MiB writes one after another, O_DIRECT",
            job: Job {
                op: Op::Write,
                bs: 1 << 20,
                ..base.clone()
            },
        },
        Preset {
            id: "seq-read",
            name: "Seq read",
            about: "1 MiB reads one after another, O_DIRECT (hdparm -t --direct)",
            job: Job {
                op: Op::Read,
                bs: 1 << 20,
                ..base.clone()
            },
        },
        Preset {
            id: "sync-latency",
            name: "Sync latency",
            about: "one logical block at a time with O_DSYNC: what a database commit waits for",
            job: Job {
                op: Op::Write,
                bs: lbs.max(512),
                mode: Mode::Dsync,
                ..base.clone()
            },
        },
        Preset {
            id: "rand-read",
            name: "Random read",
            about: "4 KiB reads at random offsets, 32 in flight: IOPS",
            job: Job {
                op: Op::Randread,
                bs: 4096.max(lbs),
                iodepth: 32,
                ..base.clone()
            },
        },
        Preset {
            id: "rand-write",
            name: "Random write",
            about: "4 KiB writes at random offsets, 32 in flight: IOPS",
            job: Job {
                op: Op::Randwrite,
                bs: 4096.max(lbs),
                iodepth: 32,
                ..base.clone()
            },
        },
        Preset {
            id: "two-writers",
            name: "Two writers",
            about: "two sequential writers at different offsets (dd seek=), per stream and total",
            job: Job {
                op: Op::Write,
                bs: 1 << 20,
                jobs: 2,
                ..base.clone()
            },
        },
        Preset {
            id: "two-readers",
            name: "Two readers",
            about: "two sequential readers at different offsets (dd skip=), per stream and total",
            job: Job {
                op: Op::Read,
                bs: 1 << 20,
                jobs: 2,
                ..base
            },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::TargetFacts;

    #[test]
    fn every_builtin_is_valid_on_512_and_4096_byte_devices() {
        for lbs in [512, 4096] {
            let facts = TargetFacts {
                size: 1 << 30,
                direct_align: lbs,
                is_block: true,
            };
            for p in builtin(lbs) {
                assert!(p.job.validate(&facts).is_ok(), "{} on {lbs}", p.id);
            }
        }
        assert_eq!(builtin(4096)[2].job.bs, 4096);
        assert_eq!(builtin(512)[0].id, "seq-write");
    }
}

//! Host-managed zoned devices (ZNS namespaces, SMR disks): the writes they refuse, said before
//! a test starts.

use super::job::{Job, Mode};

/// Why a write job would fail on a host-managed zoned device (ZNS, SMR), said before it starts:
/// such a device takes writes only at each zone's write pointer, in order, with O_DIRECT. `zone`
/// is the zone size in bytes (0: unknown); `scheduler` the device's.
pub fn refusals(job: &Job, zone: u64, scheduler: Option<&str>) -> Vec<String> {
    let head = "a host-managed zoned device takes writes only in order at each zone's write \
                pointer";
    let mut v = Vec::new();
    if job.op.is_random() {
        v.push(format!(
            "{head}: --op {} writes at random offsets, which it refuses (EIO); use --op write \
             on empty zones (blkzone reset)",
            job.op.as_str()
        ));
    }
    if !matches!(job.mode, Mode::Direct | Mode::Dsync) {
        v.push(format!(
            "{head}: --mode {} goes through the page cache, whose writeback is not in order; \
             use --mode direct or dsync",
            job.mode.as_str()
        ));
    }
    if zone > 0 && !job.offset.is_multiple_of(zone) {
        v.push(format!(
            "{head}: --offset {} is not at a zone's start (zones are {} bytes); use a multiple \
             of it, on zones emptied with blkzone reset",
            job.offset, zone
        ));
    }
    let in_flight = job.iodepth as u64 * job.jobs.max(1) as u64;
    if in_flight > 1 && !job.op.is_random() && scheduler.is_some_and(|s| s != "mq-deadline") {
        v.push(format!(
            "{head}: {in_flight} writes in flight can reach it out of order without \
             mq-deadline's zone write locking (the scheduler is {}); use --iodepth 1 --jobs 1, \
             or echo mq-deadline > /sys/block/NAME/queue/scheduler",
            scheduler.unwrap_or("")
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::Op;

    #[test]
    fn writes_a_zoned_device_refuses_are_refused_before_they_start() {
        let zone = 4 << 20;
        let seq = Job {
            op: Op::Write,
            bs: 64 << 10,
            mode: Mode::Direct,
            ..Job::default()
        };
        let none = Some("none");
        assert!(
            refusals(&seq, zone, none).is_empty(),
            "in order, O_DIRECT, QD1"
        );
        for (job, sched, want) in [
            (
                Job {
                    op: Op::Randwrite,
                    ..seq.clone()
                },
                none,
                "random offsets",
            ),
            (
                Job {
                    op: Op::Randrw,
                    ..seq.clone()
                },
                none,
                "random offsets",
            ),
            (
                Job {
                    mode: Mode::Buffered,
                    ..seq.clone()
                },
                none,
                "page cache",
            ),
            (
                Job {
                    mode: Mode::Fdatasync,
                    ..seq.clone()
                },
                none,
                "page cache",
            ),
            (
                Job {
                    offset: 1 << 20,
                    ..seq.clone()
                },
                none,
                "not at a zone's start",
            ),
            (
                Job {
                    iodepth: 8,
                    ..seq.clone()
                },
                none,
                "out of order",
            ),
            (
                Job {
                    jobs: 2,
                    ..seq.clone()
                },
                none,
                "out of order",
            ),
        ] {
            let r = refusals(&job, zone, sched);
            println!("{:?} {:?} {}: {r:?}", job.op, job.mode, job.iodepth);
            assert_eq!(r.len(), 1, "{r:?}");
            assert!(
                r[0].contains(want) && r[0].starts_with("a host-managed zoned"),
                "{r:?}"
            );
        }
        // mq-deadline keeps writes in order per zone: a deep queue is fine there.
        let deep = Job {
            iodepth: 8,
            ..seq.clone()
        };
        assert!(refusals(&deep, zone, Some("mq-deadline")).is_empty());
        assert!(
            refusals(
                &Job {
                    mode: Mode::Dsync,
                    ..seq
                },
                zone,
                none
            )
            .is_empty()
        );
    }
}

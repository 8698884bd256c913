//! Findings from what a read test read that held nothing: regions never written
//! (`never_written`, where the store tells: zram, holes in a file or a loop device's backing
//! file) and blocks sampled from its reads that were all zeros (`zeros_read`, on any device).

use super::{Evidence, Finding, Kind};
use crate::analysis::unwritten::Unwritten;
use crate::device::Store;
use crate::engine::job::Job;
use crate::engine::zeros::ZeroSampler;
use crate::units::{exact_size, fmt_size};

/// The finding when enough of what a read test reads was never written
/// ([`Unwritten::worth_saying`]): that share of its reads cost the device nothing.
pub fn finding(job: &Job, target: &str, store: &Store, u: &Unwritten) -> Option<Finding> {
    if !job.op.reads() || !u.worth_saying() {
        return None;
    }
    let share = u.unwritten_bytes as f64 / u.region_bytes as f64;
    let pct = format!("{:.0}%", share * 100.0);
    let (region, unwritten) = (fmt_size(u.region_bytes), fmt_size(u.unwritten_bytes));
    let fill = fill_command(
        job,
        target,
        u.region_bytes,
        matches!(store, Store::File { .. }),
    );
    let (device, what) = match store {
        Store::Zram { device } => (
            device.clone(),
            format!(
                "{device} stored {} when the test began, and the test reads {region}: at least \
                 {unwritten} of that ({pct}) was never written (or was discarded). zram answers a \
                 read of such a page with zeros without touching its store",
                match u.stored_bytes.unwrap_or(0) {
                    0 => "nothing".to_string(),
                    b => fmt_size(b),
                }
            ),
        ),
        Store::BackingFile { device, file, .. } => (
            device.clone(),
            format!(
                "{unwritten} ({pct}) of the {region} the test reads on {device} is holes in its \
                 backing file {}: never written, or allocated but unwritten. The file system \
                 answers a read of a hole with zeros without reading the disk below",
                file.display()
            ),
        ),
        Store::File { path } => (
            String::new(),
            format!(
                "{unwritten} ({pct}) of the {region} the test reads in {} is holes: never \
                 written, or allocated but unwritten. The file system answers a read of a hole \
                 with zeros without reading the disk",
                path.display()
            ),
        ),
        Store::Unknown => return None,
    };
    let e = Evidence::from([
        ("region_bytes", u.region_bytes as f64),
        ("unwritten_bytes", u.unwritten_bytes as f64),
        ("unwritten_share", share),
    ]);
    let e = match u.stored_bytes {
        Some(s) => e.with("stored_bytes", s as f64),
        None => e,
    };
    Some(
        Finding::new(Kind::NeverWritten, e, |_| {
            format!(
                "{what}, so those reads flatter the result (fio and dd alike). Fill the region \
                 with data first ({fill}) and measure again."
            )
        })
        .on(device),
    )
}

/// A write test over the same region as `job`: 1M writes where the region allows them, and
/// `--force` for a file (which a write test overwrites only when told).
fn fill_command(job: &Job, target: &str, region: u64, file: bool) -> String {
    let bs = if job.offset.is_multiple_of(1 << 20) && region.is_multiple_of(1 << 20) {
        1 << 20
    } else {
        job.bs
    };
    let mut fill = format!("blkscope run {target} --op write --bs {}", exact_size(bs));
    if job.offset > 0 {
        fill += &format!(" --offset {}", exact_size(job.offset));
    }
    fill += &format!(" --size {}", exact_size(region));
    if file {
        fill += " --force";
    }
    fill
}

/// The finding when at least a tenth of the blocks sampled from a read test's reads (and 8
/// were sampled) were all zeros, on any device: where blkscope cannot see which blocks were
/// written ([`finding`] says more where it can, and this one is then left out). `file`: the
/// target is a file.
pub fn zeros_finding(
    job: &Job,
    target: &str,
    device: &str,
    file: bool,
    region: u64,
    zeros: &ZeroSampler,
) -> Option<Finding> {
    if !job.op.reads() || zeros.sampled < 8 || zeros.zero * 10 < zeros.sampled {
        return None;
    }
    let share = zeros.zero as f64 / zeros.sampled as f64;
    let fill = fill_command(job, target, region, file);
    let e = Evidence::from([
        ("sampled_blocks", zeros.sampled as f64),
        ("zero_blocks", zeros.zero as f64),
        ("zero_share", share),
        ("sample_every_bytes", zeros.every as f64),
    ]);
    Some(
        Finding::new(Kind::ZerosRead, e, |e| {
            format!(
                "{} of the {} blocks sampled from the test's reads (one every {} read) were all \
                 zeros ({:.0}%). Blocks never written, discarded (TRIM) or written as zeros \
                 often come back without the device reading its medium (an SSD, a thin volume, \
                 zram, a sparse file), so such reads flatter the result (fio and dd alike). \
                 Unless zeros are what it should hold, fill the region with data first ({fill}) \
                 and measure again.",
                e.count("zero_blocks"),
                e.count("sampled_blocks"),
                fmt_size(e.count("sample_every_bytes")),
                e.num("zero_share") * 100.0
            )
        })
        .on(device),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::Op;

    fn job(op: Op) -> Job {
        Job {
            op,
            bs: 4096,
            ..Job::default()
        }
    }

    fn zram() -> Store {
        Store::Zram {
            device: "zram1".into(),
        }
    }

    #[test]
    fn a_read_of_an_empty_zram_is_a_finding_with_its_numbers() {
        let u = Unwritten {
            region_bytes: 1 << 30,
            unwritten_bytes: (1 << 30) - (4 << 20),
            stored_bytes: Some(4 << 20),
        };
        let f = finding(&job(Op::Randread), "/dev/zram1", &zram(), &u).expect("a finding");
        println!("{}", f.message);
        assert_eq!(f.kind, "never_written");
        assert_eq!(f.device(), "zram1");
        assert_eq!(f.numbers["stored_bytes"], (4 << 20) as f64);
        assert_eq!(f.numbers["unwritten_bytes"], ((1 << 30) - (4 << 20)) as f64);
        assert!(
            f.message
                .contains("blkscope run /dev/zram1 --op write --bs 1M --size 1G"),
            "{}",
            f.message
        );
        assert!(f.message.contains("at least 1020M"), "{}", f.message);
    }

    #[test]
    fn no_finding_for_a_write_test_a_filled_region_or_a_few_holes() {
        let empty = Unwritten {
            region_bytes: 1 << 30,
            unwritten_bytes: 1 << 30,
            stored_bytes: Some(0),
        };
        assert_eq!(
            finding(&job(Op::Randwrite), "/dev/zram1", &zram(), &empty),
            None
        );
        assert!(finding(&job(Op::Randrw), "/dev/zram1", &zram(), &empty).is_some());
        // Under a tenth of the region, or under 64 KiB: left out.
        let few = Unwritten {
            unwritten_bytes: (1 << 30) / 11,
            ..empty.clone()
        };
        assert_eq!(finding(&job(Op::Read), "/dev/zram1", &zram(), &few), None);
        let tiny = Unwritten {
            region_bytes: 256 << 10,
            unwritten_bytes: 60 << 10,
            stored_bytes: Some(0),
        };
        assert_eq!(finding(&job(Op::Read), "/dev/zram1", &zram(), &tiny), None);
        assert_eq!(
            finding(&job(Op::Read), "x", &Store::Unknown, &empty),
            None,
            "an unknown store says nothing"
        );
    }

    #[test]
    fn the_fill_command_keeps_the_test_region() {
        let j = Job {
            offset: 12 << 10,
            ..job(Op::Randread)
        };
        let u = Unwritten {
            region_bytes: 8 << 20,
            unwritten_bytes: 8 << 20,
            stored_bytes: None,
        };
        let store = Store::File {
            path: "/srv/f".into(),
        };
        let f = finding(&j, "/srv/f", &store, &u).unwrap();
        assert!(
            f.message
                .contains("blkscope run /srv/f --op write --bs 4k --offset 12k --size 8M --force"),
            "{}",
            f.message
        );
        assert_eq!(f.device(), "");
    }

    #[test]
    fn zeros_read_needs_eight_samples_and_a_tenth_of_them_zero() {
        let z = |sampled: u64, zero: u64| {
            let (mut s, blank, data) = (ZeroSampler::default(), [0u8; 4096], [1u8; 4096]);
            for k in 0..sampled {
                // One sample per 4 MiB read.
                s.see(4 << 20, || if k < zero { &blank } else { &data });
            }
            s
        };
        let j = job(Op::Randread);
        let f = zeros_finding(&j, "/dev/sdx", "sdx", false, 1 << 30, &z(20, 20)).unwrap();
        println!("{}", f.message);
        assert_eq!(f.kind, "zeros_read");
        assert_eq!(f.numbers["zero_blocks"], 20.0);
        assert!(
            f.message.contains("20 of the 20 blocks")
                && f.message
                    .contains("blkscope run /dev/sdx --op write --bs 1M --size 1G"),
            "{}",
            f.message
        );
        assert!(zeros_finding(&j, "x", "", false, 1 << 30, &z(20, 2)).is_some());
        assert_eq!(zeros_finding(&j, "x", "", false, 1 << 30, &z(20, 1)), None);
        assert_eq!(zeros_finding(&j, "x", "", false, 1 << 30, &z(7, 7)), None);
        let w = job(Op::Write);
        assert_eq!(zeros_finding(&w, "x", "", false, 1 << 30, &z(20, 20)), None);
    }
}

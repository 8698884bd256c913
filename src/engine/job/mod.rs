//! What a test does: the job description (serde, so it reads from TOML and JSON too), and
//! validation that runs before anything is opened ([`validate`]). Sizes and durations are read as
//! [`crate::units`] reads them.

mod choice;
mod validate;

pub use choice::Choice;
pub use validate::*;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::units::Sized;
use crate::units::{parse_duration, parse_size_or_percent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Read, Op::Write, Op::Randread, Op::Randwrite, Op::Randrw];

    pub fn is_random(self) -> bool {
        matches!(self, Op::Randread | Op::Randwrite | Op::Randrw)
    }
    pub fn writes(self) -> bool {
        matches!(self, Op::Write | Op::Randwrite | Op::Randrw)
    }
    pub fn reads(self) -> bool {
        matches!(self, Op::Read | Op::Randread | Op::Randrw)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Randread => "randread",
            Op::Randwrite => "randwrite",
            Op::Randrw => "randrw",
        }
    }
    /// The op named by [`Op::as_str`] (as a result records it), if any.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// How the target is opened and synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// O_DIRECT: around the page cache.
    Direct,
    /// O_DSYNC: every write waits for the data to be stable.
    Dsync,
    /// O_SYNC: every write waits for data and metadata.
    Sync,
    /// Buffered, with fdatasync at the end inside the timed region (dd conv=fdatasync).
    Fdatasync,
    /// Buffered without any sync: measures the page cache (reported as a trap).
    Buffered,
    /// Buffered reads after the target's cached pages are dropped.
    Nocache,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Dsync => "dsync",
            Mode::Sync => "sync",
            Mode::Fdatasync => "fdatasync",
            Mode::Buffered => "buffered",
            Mode::Nocache => "nocache",
        }
    }

    /// Extra open(2) flags.
    pub fn open_flags(self) -> i32 {
        match self {
            Mode::Direct => libc::O_DIRECT,
            Mode::Dsync => libc::O_DSYNC,
            Mode::Sync => libc::O_SYNC,
            Mode::Fdatasync | Mode::Buffered | Mode::Nocache => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Data {
    /// Incompressible, and different in every block so deduplication cannot fold it.
    Random,
    /// Zeros: compressing storage flatters them.
    Zero,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// The default: blkscope picks the path with the least overhead for the job
    /// ([`Job::engine_to_use`]).
    Auto,
    Uring,
    Psync,
    /// No I/O at all, with every step of submission and completion bookkeeping: the
    /// harness's own ceiling (fio's `--ioengine=null`).
    Null,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Uring => "uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
        }
    }

    /// The engine [`EngineKind::as_str`] names.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Auto, Self::Uring, Self::Psync, Self::Null]
            .into_iter()
            .find(|e| e.as_str() == name)
    }
}

/// One test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Job {
    pub op: Op,
    /// Block size in bytes.
    pub bs: u64,
    pub iodepth: u32,
    /// Threads; job j works in its own region starting at offset + j * region.
    pub jobs: u32,
    /// Where the first region starts, in bytes.
    pub offset: u64,
    /// Total bytes over all jobs (or a percentage). With `runtime`, the region size.
    pub size: Option<SizeSpec>,
    /// Run for this long instead of once over the size (wrapping around in the regions).
    #[serde(with = "opt_duration")]
    pub runtime: Option<Duration>,
    /// Excluded from results.
    #[serde(with = "opt_duration")]
    pub ramp: Option<Duration>,
    pub mode: Mode,
    pub data: Data,
    pub engine: EngineKind,
    /// For randrw: percent of I/Os that read.
    pub rwmixread: u8,
    /// io_uring SQPOLL (costs a core).
    pub sqpoll: bool,
    /// Interval between live samples.
    #[serde(with = "opt_duration")]
    pub interval: Option<Duration>,
    /// Drop the target's cached pages before the run (a cold cache).
    pub drop_cache_first: bool,
    /// After the writes, read every written sector back and check it (`--verify`).
    #[serde(default)]
    pub verify: bool,
    /// io_uring IOPOLL (`--hipri`): the kernel polls the device's queue for completions instead
    /// of waiting for an interrupt. Needs O_DIRECT and a device with poll queues.
    #[serde(default)]
    pub hipri: bool,
    /// With `verify`: stop reading back after this many I/O errors (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_errors: Option<u64>,
    /// The CPUs the job threads and their io_uring worker threads may run on (`--cpus`,
    /// fio's `cpus_allowed`); all of this process's CPUs when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<super::cpus::CpuList>,
}

/// A size as written by a user: bytes or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Bytes(u64),
    Text(#[serde(with = "size_text")] Sized),
}

impl Job {
    /// A short name such as `seq write 1M QD1 x1 direct`.
    pub fn label(&self) -> String {
        format!(
            "{} {} QD{} x{} {}",
            self.op.as_str(),
            crate::units::fmt_size(self.bs),
            self.iodepth,
            self.jobs,
            self.mode.as_str()
        )
    }
}

impl SizeSpec {
    pub fn resolve(self, whole: u64) -> u64 {
        match self {
            SizeSpec::Bytes(b) | SizeSpec::Text(Sized::Bytes(b)) => b,
            SizeSpec::Text(Sized::Percent(p)) => ((whole as f64) * p / 100.0) as u64,
        }
    }
}

mod size_text {
    use super::{Sized, parse_size_or_percent};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Sized, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Sized::Bytes(b) => s.serialize_str(&b.to_string()),
            Sized::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Sized, D::Error> {
        let t = String::deserialize(d)?;
        parse_size_or_percent(&t).map_err(serde::de::Error::custom)
    }
}

mod opt_duration {
    use super::parse_duration;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_str(&format!("{}ms", d.as_millis())),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let t: Option<String> = Option::deserialize(d)?;
        t.map(|t| parse_duration(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_is_found_by_the_name_a_result_records() {
        for o in Op::ALL {
            assert_eq!(Op::from_name(o.as_str()), Some(o), "{}", o.as_str());
        }
        assert_eq!(Op::from_name("trim"), None);
    }

    fn facts(size: u64, align: u64) -> TargetFacts {
        TargetFacts {
            size,
            direct_align: align,
            is_block: true,
        }
    }

    #[test]
    fn direct_needs_aligned_block_size() {
        let j = Job {
            bs: 512,
            ..Job::default()
        };
        let e = j.validate(&facts(1 << 30, 4096)).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(
            e[0].0.contains("multiple of the logical block size 4k"),
            "{}",
            e[0]
        );
        assert!(e[0].0.contains("512 bytes is not; use --bs 4k"));
        // A file's alignment is its file system's (btrfs: 4K on a 512-byte device).
        let file = TargetFacts {
            is_block: false,
            ..facts(1 << 30, 4096)
        };
        let e = j.validate(&file).unwrap_err();
        assert!(
            e[0].0
                .contains("multiple of the file system's direct I/O alignment 4k: 512 bytes"),
            "{}",
            e[0]
        );
        // Buffered may use it.
        let j = Job {
            bs: 512,
            mode: Mode::Buffered,
            ..Job::default()
        };
        assert!(j.validate(&facts(1 << 30, 4096)).is_ok());
    }

    #[test]
    fn size_must_fit_and_jobs_split_it() {
        let j = Job {
            size: Some(SizeSpec::Bytes(2 << 30)),
            ..Job::default()
        };
        let e = j.validate(&facts(1 << 30, 512)).unwrap_err();
        assert!(e[0].0.contains("does not fit"), "{}", e[0]);
        let j = Job {
            jobs: 2,
            size: Some(SizeSpec::Bytes(200 << 20)),
            ..Job::default()
        };
        assert_eq!(
            j.validate(&facts(1 << 30, 512)),
            Ok(Plan {
                region: 100 << 20,
                total: 200 << 20
            })
        );
        let j = Job {
            jobs: 4,
            bs: 1 << 20,
            size: Some(SizeSpec::Bytes(2 << 20)),
            ..Job::default()
        };
        assert!(j.validate(&facts(1 << 30, 512)).is_err());
        let j = Job {
            size: Some(SizeSpec::Text(Sized::Percent(10.0))),
            ..Job::default()
        };
        assert_eq!(
            j.validate(&facts(1000 << 20, 512)).unwrap().total,
            100 << 20
        );
    }

    #[test]
    fn ranges_and_modes() {
        let j = Job {
            iodepth: 0,
            ..Job::default()
        };
        assert!(j.validate(&facts(1 << 30, 512)).is_err());
        let j = Job {
            iodepth: 5000,
            ..Job::default()
        };
        assert!(
            j.validate(&facts(1 << 30, 512)).unwrap_err()[0]
                .0
                .contains("1 to 4096")
        );
        let j = Job {
            mode: Mode::Nocache,
            op: Op::Write,
            ..Job::default()
        };
        assert!(j.validate(&facts(1 << 30, 512)).is_err());
    }

    /// Typos get one line each with the value that would work, and no line that only follows
    /// from another.
    #[test]
    fn typos_get_their_own_fix() {
        let f = facts(1 << 30, 4096);
        let j = Job {
            runtime: Some(Duration::ZERO),
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert!(
            e.len() == 1 && e[0].0.contains("runtime 0 runs nothing"),
            "{e:?}"
        );
        let j = Job {
            offset: 2 << 30,
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        // In the unit the user typed sizes in, and one the option reads back exactly.
        assert_eq!(
            e[0].0,
            "offset 2G is past the end of the target (1G): use an --offset below 1G"
        );
        let j = Job {
            size: Some(SizeSpec::Bytes((1 << 30) + 4096)),
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert_eq!(
            e[0].0,
            "size 1048580k does not fit: the target has 1G from offset 0; use --size 1G or less"
        );
        let j = Job {
            offset: 5000,
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert_eq!(
            e[0].0,
            "with direct I/O, offset must be a multiple of 4k: 5000 bytes is not; use --offset 4k \
             or 8k"
        );
        let j = Job {
            jobs: 8,
            bs: 4096,
            size: Some(SizeSpec::Bytes(16 << 10)),
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert!(
            e[0].0.starts_with("8 jobs do not fit in 16k at bs 4k:")
                && e[0].0.contains("use --jobs 4 or fewer"),
            "{e:?}"
        );
        // One job whose one block is larger than the region: the fix is the block size.
        let j = Job {
            bs: 512 << 20,
            size: Some(SizeSpec::Bytes(256 << 20)),
            ..Job::default()
        };
        let e = j.validate(&f).unwrap_err();
        assert_eq!(
            e[0].0,
            "bs 512M is larger than the 256M the test covers: use --bs 256M or less (or a \
             larger --size)",
            "{e:?}"
        );
        // A region smaller than one logical block, with direct I/O: no block size fits, so the
        // fix is the size ("use --bs 2k or less" would be refused in turn).
        let j = Job {
            bs: 4096,
            size: Some(SizeSpec::Bytes(3 << 10)),
            ..Job::default()
        };
        let f4k = TargetFacts {
            direct_align: 4096,
            ..f.clone()
        };
        let e = j.validate(&f4k).unwrap_err();
        assert_eq!(
            e[0].0,
            "the 3k the test covers is less than one 4k block, the least direct I/O moves here \
             (the logical block size): use --size 4k or more",
            "{e:?}"
        );
        // 100000 jobs: the range, not a memory figure with a fix that still has 100000 jobs.
        let j = Job {
            jobs: 100_000,
            ..Job::default()
        };
        assert!(j.check_memory(1 << 30).is_ok());
        let e = j.validate(&f).unwrap_err();
        assert!(e[0].0.contains("use 1 to 256"), "{e:?}");
        let j = Job {
            jobs: 256,
            iodepth: 4096,
            ..Job::default()
        };
        assert!(j.check_memory(1 << 30).is_err());
    }

    #[test]
    fn jobs_read_from_toml() {
        let j: Job = toml::from_str(
            r#"
            op = "randread"
            bs = 4096
            iodepth = 32
            size = "10%"
            runtime = "5s"
            mode = "direct"
            "#,
        )
        .unwrap();
        assert_eq!(j.op, Op::Randread);
        assert_eq!(j.iodepth, 32);
        assert_eq!(j.runtime, Some(Duration::from_secs(5)));
        assert_eq!(j.size, Some(SizeSpec::Text(Sized::Percent(10.0))));
        let e = toml::from_str::<Job>("op = \"read\"\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }
}

//! What a test does: the job description (serde, so it reads from TOML and JSON too), size and
//! duration parsing, and validation that runs before anything is opened.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::exact_size;

/// A size in a message: in the unit that divides it (`512M`), else in bytes (`4095 bytes`).
fn said(b: u64) -> String {
    let s = exact_size(b);
    if s.bytes().all(|c| c.is_ascii_digit()) {
        format!("{s} bytes")
    } else {
        s
    }
}

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
    Uring,
    Psync,
    /// No I/O at all, with every step of submission and completion bookkeeping: the
    /// harness's own ceiling (fio's `--ioengine=null`).
    Null,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Uring => "uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
        }
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

impl Default for Job {
    fn default() -> Self {
        Self {
            op: Op::Write,
            bs: 1 << 20,
            iodepth: 1,
            jobs: 1,
            offset: 0,
            size: None,
            runtime: None,
            ramp: None,
            mode: Mode::Direct,
            data: Data::Random,
            engine: EngineKind::Uring,
            rwmixread: 50,
            sqpoll: false,
            interval: None,
            drop_cache_first: false,
            verify: false,
            hipri: false,
            max_errors: None,
            cpus: None,
        }
    }
}

/// A size as written by a user: bytes or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Bytes(u64),
    Text(#[serde(with = "size_text")] Sized),
}

/// A parsed size string (`4k`, `1G`, `50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sized {
    Bytes(u64),
    Percent(f64),
}

impl Serialize for Sized {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Sized::Bytes(b) => s.serialize_u64(*b),
            Sized::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
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

/// Parses a size the way dd and fio read them: a number with an optional suffix. `K`, `M`, `G`,
/// `T` (and `KiB`, `MiB`, ...) are powers of 1024; `KB`, `MB`, `GB`, `TB` are powers of 1000
/// (as in dd); `b` alone is 512-byte blocks is *not* supported, to avoid surprises; a bare
/// number is bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{s}' is not a size: write a number with an optional unit, like 4k, 1M or 1G"
        ));
    }
    let mult: u64 = match unit.trim() {
        "" | "B" | "c" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" => 1 << 40,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        u => {
            return Err(format!(
                "'{s}': unknown unit '{u}'; use K, M, G, T (powers of 1024) or KB, MB, GB, TB (powers of 1000)"
            ));
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size: '{num}' is not a number"))?;
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("'{s}' is too large"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// A size, or a percentage such as `50%`.
pub fn parse_size_or_percent(s: &str) -> Result<Sized, String> {
    if let Some(p) = s.trim().strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a percentage"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(format!(
                "'{s}': a percentage must be above 0 and at most 100"
            ));
        }
        return Ok(Sized::Percent(v));
    }
    parse_size(s).map(Sized::Bytes)
}

/// Parses `10s`, `500ms`, `2m`, `1h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration: write e.g. 10s, 500ms or 2m"))?;
    let secs = match unit {
        "" | "s" | "sec" => v,
        "ms" => v / 1000.0,
        "us" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        u => {
            return Err(format!("'{s}': unknown unit '{u}'; use ms, s, m or h"));
        }
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("'{s}' is not a duration"));
    }
    // A year is longer than any test; far beyond it, Duration would overflow.
    if secs > 366.0 * 86400.0 {
        return Err(format!("'{s}' is too long: use at most a year (8784h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A sampling interval: a duration of at least 1 ms (0 would sample in a busy loop).
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < Duration::from_millis(1) {
        return Err(format!(
            "'{s}' is too short for an interval: use at least 1ms (e.g. 100ms or 1s)"
        ));
    }
    Ok(d)
}

/// Without --size or --runtime a job covers this much (or the whole target if smaller).
pub const DEFAULT_SIZE: u64 = 1 << 30;

/// The deepest queue a job may ask for (`--iodepth 1` to this).
pub const MAX_IODEPTH: u32 = 4096;

/// The most job threads a test may ask for (`--jobs 1` to this).
pub const MAX_JOBS: u32 = 256;

/// Facts about the target that validation needs.
#[derive(Debug, Clone)]
pub struct TargetFacts {
    /// Bytes available to the job (device size, or the file size to create).
    pub size: u64,
    /// Required alignment of O_DIRECT offsets and lengths.
    pub direct_align: u64,
    pub is_block: bool,
}

/// The largest power of two at most `x` (x > 0): a block size to suggest that fits in `x`.
fn floor_pow2(x: u64) -> u64 {
    1 << x.ilog2()
}

/// One thing wrong with a job, with the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The resolved geometry of a valid job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Bytes each job thread covers.
    pub region: u64,
    /// Total bytes over all regions.
    pub total: u64,
}

impl Job {
    /// The job's total in bytes as planned, before a target resolves it: its size when given
    /// in bytes, else the default size.
    pub fn planned_bytes(&self) -> u64 {
        match self.size {
            Some(SizeSpec::Bytes(b)) | Some(SizeSpec::Text(Sized::Bytes(b))) => b,
            _ => DEFAULT_SIZE,
        }
    }

    /// Checks the job against the target before anything is opened. Returns every problem.
    pub fn validate(&self, t: &TargetFacts) -> Result<Plan, Vec<Invalid>> {
        if t.is_block && t.size == 0 {
            return Err(vec![Invalid(
                "the device has nothing to test: its size is 0 (an unattached loop device, an \
                 unconfigured zram, or no medium)"
                    .into(),
            )]);
        }
        let mut errs = self.check_params(t.direct_align, t.is_block);
        // A block size or job count out of range says so; how much fits follows from it.
        let ranges_ok = errs.is_empty();
        let mut bad = |s: String| errs.push(Invalid(s));
        if self.offset >= t.size && t.size > 0 {
            // Said once, with its fix: the size that cannot fit after it follows from it.
            bad(format!(
                "offset {} is past the end of the target ({}): use an --offset below {}",
                said(self.offset),
                said(t.size),
                exact_size(t.size)
            ));
            return Err(errs);
        }
        let avail = t.size.saturating_sub(self.offset);
        let total = match (self.size, self.runtime) {
            (Some(s), _) => s.resolve(t.size),
            (None, Some(_)) => avail,
            (None, None) => avail.min(DEFAULT_SIZE),
        };
        if total == 0 {
            bad("size is 0: give --size (e.g. 1G or 10%)".into());
        } else if total > avail {
            bad(format!(
                "size {} does not fit: the target has {} from offset {}; use --size {} or less",
                said(total),
                said(avail),
                exact_size(self.offset),
                exact_size(avail)
            ));
        }
        let jobs = self.jobs.max(1) as u64;
        let bs = self.bs.max(1);
        let region = (total / jobs) / bs * bs;
        if ranges_ok && total > 0 && region == 0 {
            let align = if self.mode == Mode::Direct {
                t.direct_align.max(1)
            } else {
                1
            };
            if bs > total && total < align {
                // Not one block that direct I/O allows fits: only a larger region helps.
                bad(format!(
                    "the {} the test covers is less than one {} block, the least direct I/O \
                     moves here (the logical block size): use --size {} or more",
                    said(total),
                    said(align),
                    exact_size(align)
                ));
            } else if bs > total {
                // Not one block fits: the block size is the mistake, whatever the job count.
                let fit = floor_pow2(total);
                let larger = if self.size.is_some() && avail > total {
                    " (or a larger --size)"
                } else {
                    ""
                };
                bad(format!(
                    "bs {} is larger than the {} the test covers: use --bs {} or less{larger}",
                    said(bs),
                    said(total),
                    exact_size(fit)
                ));
            } else {
                bad(format!(
                    "{} jobs do not fit in {} at bs {}: each job needs at least one block; use \
                     --jobs {} or fewer, or a larger --size",
                    self.jobs,
                    said(total),
                    said(bs),
                    total / bs
                ));
            }
        }
        if errs.is_empty() {
            Ok(Plan {
                region,
                total: region * jobs,
            })
        } else {
            Err(errs)
        }
    }

    /// What is wrong with the job's own parameters, whatever the target: ranges, combinations,
    /// and, when `direct_align` is above 1, the alignment O_DIRECT needs (a block device's logical
    /// block size, or with `is_block` false a file system's). A suite or sweep
    /// checks every test with it before the first one runs.
    pub fn check_params(&self, direct_align: u64, is_block: bool) -> Vec<Invalid> {
        let mut errs = Vec::new();
        let mut bad = |s: String| errs.push(Invalid(s));
        if self.bs == 0 {
            bad("bs must be at least 1 byte; try --bs 4k".into());
        }
        if self.bs > u32::MAX as u64 / 2 {
            bad(format!(
                "bs {} is too large: one I/O can move at most 1 GiB; use --bs 1G or less",
                said(self.bs)
            ));
        }
        if !(1..=MAX_IODEPTH).contains(&self.iodepth) {
            bad(format!(
                "iodepth {} is out of range: use 1 to {MAX_IODEPTH}",
                self.iodepth
            ));
        }
        if !(1..=MAX_JOBS).contains(&self.jobs) {
            bad(format!(
                "jobs {} is out of range: use 1 to {MAX_JOBS}",
                self.jobs
            ));
        }
        if self.runtime.is_some_and(|r| r.is_zero()) {
            bad(
                "runtime 0 runs nothing: give a --runtime above 0 (e.g. 10s), or leave it out to \
                 move --size once"
                    .into(),
            );
        }
        if self.rwmixread > 100 {
            bad(format!(
                "rwmixread {} is not a percentage: use 0 to 100",
                self.rwmixread
            ));
        }
        if self.verify {
            if !self.op.writes() {
                bad(
                    "--verify reads back what a test wrote: use it with --op write or randwrite"
                        .into(),
                );
            } else if self.op == Op::Randrw {
                bad("--verify cannot check a mixed test (its reads overwrite the write buffers): use --op write or randwrite".into());
            }
            if self.data == Data::Zero {
                bad("--verify needs --data random: zeros carry no stamp to check".into());
            }
        }
        if self.hipri && (self.mode != Mode::Direct || self.engine != EngineKind::Uring) {
            bad(
                "--hipri polls io_uring completions: it needs --mode direct and --engine uring"
                    .into(),
            );
        }
        if self.hipri && self.sqpoll {
            bad("--hipri and --sqpoll together are not supported: choose one".into());
        }
        if let Some(cpus) = &self.cpus
            && let Err(e) = super::cpus::check_allowed(cpus)
        {
            bad(e);
        }
        if self.mode == Mode::Nocache && self.op.writes() {
            bad(
                "--mode nocache is for reads; for writes use --mode direct, dsync, sync or \
                 fdatasync"
                    .into(),
            );
        }
        if self.mode == Mode::Direct && self.bs > 0 && direct_align > 1 {
            let a = direct_align;
            if !self.bs.is_multiple_of(a) {
                let up = self.bs.div_ceil(a) * a;
                // A file's alignment is its file system's (statx STATX_DIOALIGN): btrfs asks
                // for its 4K sector on a 512-byte device.
                let unit = if is_block {
                    "the logical block size"
                } else {
                    "the file system's direct I/O alignment"
                };
                bad(format!(
                    "with direct I/O, bs must be a multiple of {unit} {}: {} is not; use --bs {} \
                     (or a buffered mode)",
                    said(a),
                    said(self.bs),
                    exact_size(up)
                ));
            }
            if !self.offset.is_multiple_of(a) {
                let down = self.offset / a * a;
                bad(format!(
                    "with direct I/O, offset must be a multiple of {}: {} is not; use --offset \
                     {} or {}",
                    said(a),
                    said(self.offset),
                    exact_size(down),
                    exact_size(down + a)
                ));
            }
        }
        errs
    }

    /// Bytes of I/O buffers the job allocates: bs for each I/O in flight (io_uring: iodepth per
    /// job; pread/pwrite: one per job), for every job.
    pub fn buffer_bytes(&self) -> u64 {
        let depth = match self.engine {
            EngineKind::Uring => self.iodepth.max(1) as u64,
            EngineKind::Psync => 1,
            EngineKind::Null => 0,
        };
        self.bs
            .saturating_mul(depth)
            .saturating_mul(self.jobs.max(1) as u64)
    }

    /// Checks the buffers against the memory available (`MemAvailable`) before anything is
    /// allocated: at most half of it, so that a typo (`--bs 1G --iodepth 64`) cannot push the
    /// machine into the OOM killer. Says how much it needs and what fits.
    pub fn check_memory(&self, mem_available: u64) -> Result<(), Invalid> {
        // A depth or job count out of range is refused by `validate`, with its range; a
        // memory figure and a fix computed from it would only mislead.
        if !(1..=MAX_IODEPTH).contains(&self.iodepth) || !(1..=MAX_JOBS).contains(&self.jobs) {
            return Ok(());
        }
        let need = self.buffer_bytes();
        let budget = mem_available / 2;
        if need <= budget {
            return Ok(());
        }
        let per_io = self.bs.max(1);
        let depth = match self.engine {
            EngineKind::Uring => self.iodepth.max(1) as u64,
            EngineKind::Psync | EngineKind::Null => 1,
        };
        let jobs = self.jobs.max(1) as u64;
        let fit_depth = budget / per_io / jobs;
        let fit_bs = budget / depth / jobs;
        let mut fixes = Vec::new();
        if fit_depth >= 1 && depth > 1 {
            fixes.push(format!("--iodepth {}", fit_depth.min(MAX_IODEPTH as u64)));
        }
        if fit_bs >= 4096 {
            let bs = floor_pow2(fit_bs);
            fixes.push(format!("--bs {}", crate::units::fmt_size(bs)));
        }
        let fix = if fixes.is_empty() {
            "use a smaller --bs, --iodepth or --jobs".to_string()
        } else {
            format!("use {}", fixes.join(" or "))
        };
        Err(Invalid(format!(
            "bs {} x iodepth {depth} x {jobs} job(s) needs {} of I/O buffers, more than half of \
             the {} of memory available: {fix}",
            crate::units::fmt_size(self.bs),
            crate::units::fmt_size(need),
            crate::units::fmt_size(mem_available),
        )))
    }

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

    #[test]
    fn sizes_like_dd_and_fio() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5M"), Ok(1572864));
        assert!(parse_size("1X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
        assert_eq!(parse_size_or_percent("50%"), Ok(Sized::Percent(50.0)));
        assert!(parse_size_or_percent("150%").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3 fortnights").is_err());
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

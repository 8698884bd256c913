//! What a job may do on a target, checked before anything is opened, read or allocated: sizes
//! that fit, alignment for direct I/O, ranges of every setting, and the memory its buffers need.
//! Each refusal names the problem and the fix.

use super::*;
use crate::units::exact_size;
use std::fmt;

/// A size in a message: in the unit that divides it (`512M`), else in bytes (`4095 bytes`).
pub(super) fn said(b: u64) -> String {
    let s = exact_size(b);
    if s.bytes().all(|c| c.is_ascii_digit()) {
        format!("{s} bytes")
    } else {
        s
    }
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
pub(super) fn floor_pow2(x: u64) -> u64 {
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
            engine: EngineKind::Auto,
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
        if self.hipri
            && (self.mode != Mode::Direct || self.engine_to_use().engine != EngineKind::Uring)
        {
            bad(
                "--hipri polls io_uring completions: it needs --mode direct and --engine uring"
                    .into(),
            );
        }
        if self.hipri && self.sqpoll {
            bad("--hipri and --sqpoll together are not supported: choose one".into());
        }
        if let Some(cpus) = &self.cpus
            && let Err(e) = crate::engine::cpus::check_allowed(cpus)
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
        let depth = match self.engine_to_use().engine {
            EngineKind::Uring | EngineKind::Auto => self.iodepth.max(1) as u64,
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
        let depth = match self.engine_to_use().engine {
            EngineKind::Uring | EngineKind::Auto => self.iodepth.max(1) as u64,
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
}

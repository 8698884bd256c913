//! The `dd` and `fio` command lines that match a job, generated from the same [`Job`] that runs,
//! so they cannot disagree with what ran.

use crate::engine::job::{Data, EngineKind, Job, Mode, Op, SizeSpec, Sized};

use crate::units::exact_size;

/// fio's spelling of sizes (k/m/g are powers of 1024 with fio's default kb_base).
fn fio_size(b: u64) -> String {
    exact_size(b)
}

/// Bytes of the job when its size is known in bytes.
fn bytes_of(job: &Job) -> Option<u64> {
    match job.size {
        Some(SizeSpec::Bytes(b)) | Some(SizeSpec::Text(Sized::Bytes(b))) => Some(b),
        _ => None,
    }
}

/// The three command lines that match a job: blkscope's own, dd's (or why dd cannot do it)
/// and fio's. Every view that shows command lines takes them from here.
#[derive(Debug, Clone, PartialEq)]
pub struct Commands {
    pub blkscope: String,
    pub dd: Result<String, String>,
    pub fio: String,
}

/// The command lines for `job` on `target` (a device, or the file a directory target gets),
/// where `total` is the job's resolved total size.
pub fn commands(job: &Job, target: &str, total: u64) -> Commands {
    Commands {
        blkscope: blkscope_command(job, target, total),
        dd: dd_command(job, target, total),
        fio: fio_command(job, target, total),
    }
}

/// The `blkscope run` line for `job`: every setting that differs from `run`'s defaults, so the
/// line runs the same job again.
pub fn blkscope_command(job: &Job, target: &str, total: u64) -> String {
    let mut run = format!(
        "blkscope run {target} --op {} --bs {} --iodepth {} --jobs {} --mode {}",
        job.op.as_str(),
        exact_size(job.bs),
        job.iodepth,
        job.jobs,
        job.mode.as_str()
    );
    if job.offset > 0 {
        run.push_str(&format!(" --offset {}", exact_size(job.offset)));
    }
    if let Some(s) = job.size {
        run.push_str(&format!(" --size {}", exact_size(s.resolve(0).max(total))));
    }
    if let Some(r) = job.runtime {
        run.push_str(&format!(" --runtime {}", exact_duration(r)));
    }
    if let Some(r) = job.ramp {
        run.push_str(&format!(" --ramp {}", exact_duration(r)));
    }
    if job.op == Op::Randrw {
        run.push_str(&format!(" --rwmixread {}", job.rwmixread));
    }
    if job.data == Data::Zero {
        run.push_str(" --data zero");
    }
    if job.engine != EngineKind::Auto {
        run.push_str(&format!(" --engine {}", job.engine.as_str()));
    }
    if job.sqpoll {
        run.push_str(" --sqpoll");
    }
    if job.hipri {
        run.push_str(" --hipri");
    }
    if let Some(c) = &job.cpus {
        run.push_str(&format!(" --cpus {c}"));
    }
    run
}

/// A duration as the shortest exact spelling that blkscope and fio both read: `10s`, `1500ms`.
fn exact_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms > 0 && ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The dd line for a finished run, "(no dd equivalent: why)" when there is none. dd runs over a
/// size, not for a time: for a timed test it covers what the run moved (`moved` bytes), but
/// never more than one pass over each job's region of the target (`total` bytes from the
/// offset): dd would stop with "No space left on device" where blkscope wrapped around.
pub fn dd_line_for_run(job: &Job, target: &str, total: u64, moved: Option<u64>) -> String {
    let mut dd_job = job.clone();
    let mut note = String::new();
    if dd_job.runtime.is_some()
        && let Some(moved) = moved
    {
        let jobs = dd_job.jobs.max(1) as u64;
        let bs = dd_job.bs.max(1);
        let region = (total / jobs) / bs * bs;
        let per = moved / jobs / bs * bs;
        let pass = if region > 0 { per.min(region) } else { per };
        dd_job.runtime = None;
        dd_job.size = Some(SizeSpec::Bytes(pass * jobs));
        note = if region > 0 && per > region {
            format!(
                "  # one pass over the region: blkscope wrapped around it {} times in its \
                 runtime, and dd cannot run for a time",
                per / region
            )
        } else {
            "  # as much as this run moved".to_string()
        };
    }
    dd_command(&dd_job, target, total)
        .map(|c| format!("{c}{note}"))
        .unwrap_or_else(|why| format!("(no dd equivalent: {why})"))
}

/// The fio line for a run that took place: as [`fio_command`] with the engine that ran
/// (`engine`, the result's), with `--hipri` where it polled for its completions (`polled`:
/// `auto` on a device with poll queues), and with `--force_async=1` when the run sent its I/O
/// to io-wq as submitted (`to_workers` in its result), as fio then must to run the same way.
pub fn fio_command_as_run(
    job: &Job,
    filename: &str,
    total: u64,
    engine: EngineKind,
    polled: bool,
    to_workers: bool,
) -> String {
    let ran = Job {
        engine,
        hipri: job.hipri || polled,
        ..job.clone()
    };
    let fio = fio_command(&ran, filename, total);
    if to_workers && engine == EngineKind::Uring {
        format!("{fio} --force_async=1")
    } else {
        fio
    }
}

/// The fio command line for `job` on `filename` (a device or a file; for a directory target
/// pass the file the test would create). `total` is the job's resolved total size.
pub fn fio_command(job: &Job, filename: &str, total: u64) -> String {
    // The job's own size when it has one; else what the target gives it.
    let total = match job.size {
        Some(s) => s.resolve(total),
        None => total,
    };
    let jobs = job.jobs.max(1) as u64;
    let region = (total / jobs) / job.bs.max(1) * job.bs.max(1);
    let engine = job.engine_to_use().engine;
    let mut a: Vec<String> = vec![
        "fio".into(),
        "--name=blkscope".into(),
        format!("--filename={filename}"),
        format!("--rw={}", job.op.as_str()),
        format!("--bs={}", fio_size(job.bs)),
        format!(
            "--ioengine={}",
            match engine {
                EngineKind::Uring | EngineKind::Auto => "io_uring",
                EngineKind::Psync => "psync",
                EngineKind::Null => "null",
            }
        ),
    ];
    if engine == EngineKind::Uring {
        a.push(format!("--iodepth={}", job.iodepth));
        a.push("--fixedbufs".into());
        a.push("--registerfiles".into());
        if job.hipri {
            a.push("--hipri".into());
        }
        if job.sqpoll {
            a.push("--sqthread_poll".into());
        }
    }
    if engine == EngineKind::Null {
        a.push(format!("--iodepth={}", job.iodepth));
    }
    if job.op == Op::Randrw {
        a.push(format!("--rwmixread={}", job.rwmixread));
    }
    if job.op.is_random() {
        // blkscope draws a new random order for every run; fio repeats the same offsets run
        // after run unless told otherwise, and a device or host with a cache then serves the
        // repeats from it.
        a.push("--randrepeat=0".into());
    }
    a.push(format!("--size={}", fio_size(region.max(job.bs))));
    if job.offset > 0 {
        a.push(format!("--offset={}", job.offset));
    }
    if jobs > 1 {
        a.push(format!("--numjobs={jobs}"));
        a.push(format!("--offset_increment={}", fio_size(region)));
        a.push("--group_reporting".into());
    }
    match job.mode {
        Mode::Direct => a.push("--direct=1".into()),
        Mode::Dsync => a.push("--sync=dsync".into()),
        Mode::Sync => a.push("--sync=sync".into()),
        Mode::Fdatasync => a.push("--end_fsync=1".into()),
        Mode::Buffered => a.push("--direct=0".into()),
        Mode::Nocache => a.push("--invalidate=1".into()),
    }
    if job.data == Data::Zero {
        a.push("--zero_buffers".into());
    }
    if let Some(r) = job.runtime {
        a.push(format!("--runtime={}", exact_duration(r)));
        a.push("--time_based".into());
    }
    if let Some(r) = job.ramp {
        a.push(format!("--ramp_time={}", exact_duration(r)));
    }
    if let Some(c) = &job.cpus {
        a.push(format!("--cpus_allowed={c}"));
    }
    a.join(" ")
}

/// The dd command line(s) for `job`, or why dd cannot express it.
pub fn dd_command(job: &Job, target: &str, total: u64) -> Result<String, String> {
    if job.engine == EngineKind::Null {
        return Err("the null engine does no I/O; dd has no such mode".into());
    }
    if job.op.is_random() {
        return Err(
            "dd only reads and writes sequentially; random I/O needs fio or blkscope".into(),
        );
    }
    if job.iodepth > 1 && job.engine_to_use().engine == EngineKind::Uring {
        return Err(format!(
            "dd has one I/O in flight at a time; iodepth {} needs fio or blkscope",
            job.iodepth
        ));
    }
    if job.runtime.is_some() {
        return Err("dd runs over a size, not for a time; set a size instead of a runtime".into());
    }
    if !job.offset.is_multiple_of(job.bs) {
        return Err(
            "dd's seek=/skip= count whole blocks; the offset is not a multiple of bs".into(),
        );
    }
    let jobs = job.jobs.max(1) as u64;
    let region = (bytes_of(job).unwrap_or(total) / jobs) / job.bs * job.bs;
    let count = region / job.bs;
    let bs = exact_size(job.bs);
    let data = DdData::of(job, region);
    let one = |j: u64| {
        let start_blocks = job.offset / job.bs + j * count;
        match job.op {
            Op::Write => {
                let mut s = format!("dd if={} of={target} bs={bs} count={count}", data.source());
                if start_blocks > 0 {
                    s.push_str(&format!(" seek={start_blocks}"));
                }
                match job.mode {
                    Mode::Direct => s.push_str(" oflag=direct conv=notrunc"),
                    Mode::Dsync => s.push_str(" oflag=dsync conv=notrunc"),
                    Mode::Sync => s.push_str(" oflag=sync conv=notrunc"),
                    Mode::Fdatasync => s.push_str(" conv=fdatasync,notrunc"),
                    Mode::Buffered | Mode::Nocache => s.push_str(" conv=notrunc"),
                }
                s
            }
            _ => {
                let mut s = format!("dd if={target} of=/dev/null bs={bs} count={count}");
                if start_blocks > 0 {
                    s.push_str(&format!(" skip={start_blocks}"));
                }
                match job.mode {
                    Mode::Direct => s.push_str(" iflag=direct"),
                    Mode::Nocache => s.push_str(" iflag=nocache"),
                    _ => {}
                }
                s
            }
        }
    };
    // taskset keeps dd (one thread, no io_uring workers) on the job's CPUs.
    let one = |j: u64| match &job.cpus {
        Some(c) => format!("taskset -c {c} {}", one(j)),
        None => one(j),
    };
    let dd = if jobs == 1 {
        one(0)
    } else {
        let parts: Vec<String> = (0..jobs).map(|j| format!("{} &", one(j))).collect();
        format!("{} wait", parts.join(" "))
    };
    Ok(data.around(dd))
}

/// Where a write's dd reads its data. Never /dev/urandom itself: at about 250 MB/s here it is
/// slower than most devices, and the line would measure it (a 1.2 GB/s write test's line gave
/// 167 MB/s). Random data is made in RAM first, one job's region of it (every job's dd reads
/// the same file); above [`MOST_RANDOM_IN_RAM`], zeros, and the line says what they flatter.
enum DdData {
    Zeros,
    RandomFile(u64),
    ZerosForRandom(u64),
}

/// The file in RAM (tmpfs) a random write's dd line reads.
pub const DD_RANDOM_FILE: &str = "/dev/shm/blkscope.rnd";

/// The most random data a dd line makes in RAM first; a bigger write reads /dev/zero.
pub const MOST_RANDOM_IN_RAM: u64 = 1 << 30;

impl DdData {
    fn of(job: &Job, region: u64) -> Self {
        match job.data {
            _ if !job.op.writes() => Self::Zeros,
            Data::Zero => Self::Zeros,
            Data::Random if region <= MOST_RANDOM_IN_RAM => Self::RandomFile(region),
            Data::Random => Self::ZerosForRandom(region),
        }
    }

    fn source(&self) -> &'static str {
        match self {
            Self::RandomFile(_) => DD_RANDOM_FILE,
            Self::Zeros | Self::ZerosForRandom(_) => "/dev/zero",
        }
    }

    /// The dd command(s) with what makes the data before and removes it after.
    fn around(&self, dd: String) -> String {
        match self {
            Self::Zeros => dd,
            Self::RandomFile(len) => format!(
                "head -c {} /dev/urandom > {DD_RANDOM_FILE} && {dd}; rm -f {DD_RANDOM_FILE}",
                exact_size(*len)
            ),
            Self::ZerosForRandom(len) => format!(
                "{dd}  # zeros: {} of random data would have to be made in RAM first; a \
                 compressing device or file system is flattered by them",
                exact_size(*len)
            ),
        }
    }
}

/// What the flags in the dd and fio lines of `job` do, one line each.
pub fn flag_notes(job: &Job) -> Vec<String> {
    let mut v = Vec::new();
    match job.mode {
        Mode::Direct => v.push(
            "oflag=direct / iflag=direct / --direct=1: O_DIRECT, around the page cache, so the \
             device is measured, not RAM"
                .into(),
        ),
        Mode::Dsync => v.push(
            "oflag=dsync / --sync=dsync: O_DSYNC, each write returns only when its data is \
             stable (a cache flush per write on drives with a volatile write cache)"
                .into(),
        ),
        Mode::Sync => v.push(
            "oflag=sync / --sync=sync: O_SYNC, like dsync and also waits for metadata".into(),
        ),
        Mode::Fdatasync => v.push(
            "conv=fdatasync / --end_fsync=1: buffered writes, then one flush at the end, inside \
             the timing: the device's speed, not RAM's"
                .into(),
        ),
        Mode::Buffered => v.push(
            "(no flag) / --direct=0: buffered through the page cache with no sync: this \
             measures memory"
                .into(),
        ),
        Mode::Nocache => v.push(
            "iflag=nocache / --invalidate=1: the target's cached pages are dropped first, so \
             reads come from the device"
                .into(),
        ),
    }
    if job.op.writes() {
        match job.data {
            Data::Random => v.push(format!(
                "head -c N /dev/urandom > {DD_RANDOM_FILE} first: incompressible data made \
                     in RAM, so that dd measures the device and not /dev/urandom (slower than \
                     many devices); above {} it reads /dev/zero instead and says so. fio's \
                     buffers are random by default",
                exact_size(MOST_RANDOM_IN_RAM)
            )),
            Data::Zero => v.push(
                "if=/dev/zero / --zero_buffers: zeros, which compressing storage shrinks to \
                 nothing"
                    .into(),
            ),
        }
        v.push("conv=notrunc: dd must not truncate a file target".into());
    }
    if job.iodepth > 1 {
        v.push(format!(
            "--iodepth={}: that many I/Os in flight at once (dd always has one)",
            job.iodepth
        ));
    }
    if job.jobs > 1 {
        v.push(format!(
            "--numjobs={} --offset_increment: {} concurrent streams, each in its own region \
             (several dd with seek=/skip=, started with &)",
            job.jobs, job.jobs
        ));
    }
    if job.runtime.is_some() {
        v.push("--time_based --runtime: run for a time, wrapping around the region".into());
    }
    if job.op.is_random() {
        v.push(
            "--randrepeat=0: a new random order each run, as blkscope draws; fio otherwise \
             repeats the last run's offsets, which a cache in the drive or the host then serves"
                .into(),
        );
    }
    let choice = job.engine_to_use();
    if choice.engine == EngineKind::Psync {
        v.push(format!(
            "--ioengine=psync: one pread/pwrite at a time, fio's default engine{}",
            choice
                .why
                .map(|w| format!("; blkscope's choice here ({w})"))
                .unwrap_or_default()
        ));
    }
    if choice.engine == EngineKind::Uring {
        v.push(
            "--ioengine=io_uring --fixedbufs --registerfiles: io_uring with registered buffers \
             and file, as blkscope runs it; a run whose first I/Os the kernel handed to its \
             io-wq workers (a driver without NOWAIT, such as zram) sends the rest there at once, \
             and its fio line adds --force_async=1 to do the same"
                .into(),
        );
    }
    if job.may_probe_engine() {
        v.push(
            "where io_uring hands the I/O to io-wq (zram), blkscope's default engine first runs \
             60 ms on the ring and 60 ms on pread/pwrite and takes the one that does more I/Os \
             for its CPU (the faster, unless its CPU per I/O grows more than its rate); a run \
             that took pread/pwrite says so, and its fio line is --ioengine=psync"
                .into(),
        );
    }
    if let Some(c) = &job.cpus {
        v.push(format!(
            "--cpus_allowed={c} / taskset -c {c}: the job runs only on CPU(s) {c}; blkscope keeps \
             the kernel threads io_uring hands I/O to (io-wq) there too, so that at a low queue \
             depth an I/O does not wait for another CPU to wake"
        ));
    }
    v
}

/// The traps of the seed articles this job avoids, or walks into on purpose.
pub fn traps(job: &Job) -> Vec<String> {
    let mut v = Vec::new();
    match job.mode {
        Mode::Buffered if job.op.writes() => v.push(
            "walks into the page-cache trap on purpose: without a sync the number is RAM's \
             (articles 001, 002)"
                .into(),
        ),
        Mode::Buffered | Mode::Fdatasync if job.op.reads() => v.push(
            "buffered reads can come from the page cache: drop caches first or use direct \
             (article 002)"
                .into(),
        ),
        _ => v.push("avoids the page-cache trap (articles 001, 002)".into()),
    }
    if job.op.writes() {
        v.push(match job.data {
            Data::Zero => "writes zeros: compressing storage will flatter it (article 001)".into(),
            Data::Random => {
                "writes random data, so compression cannot flatter it (article 001)".into()
            }
        });
    }
    if job.mode != Mode::Direct && job.op.writes() && !job.bs.is_multiple_of(4096) {
        v.push(format!(
            "bs {} is below (or not a multiple of) the 4 KiB page-cache block: expect \
             read-modify-write reads (article 003)",
            job.bs
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dd_for_the_classic_tests() {
        let job = Job {
            op: Op::Write,
            bs: 1 << 20,
            mode: Mode::Direct,
            data: Data::Zero,
            size: Some(SizeSpec::Bytes(1 << 30)),
            ..Job::default()
        };
        assert_eq!(
            dd_command(&job, "/dev/sdb", 1 << 30).unwrap(),
            "dd if=/dev/zero of=/dev/sdb bs=1M count=1024 oflag=direct conv=notrunc"
        );
        let job = Job {
            op: Op::Read,
            jobs: 2,
            size: Some(SizeSpec::Bytes(400 << 20)),
            mode: Mode::Nocache,
            ..Job::default()
        };
        assert_eq!(
            dd_command(&job, "/dev/sdb", 400 << 20).unwrap(),
            "dd if=/dev/sdb of=/dev/null bs=1M count=200 iflag=nocache & \
             dd if=/dev/sdb of=/dev/null bs=1M count=200 skip=200 iflag=nocache & wait"
        );
        let job = Job {
            op: Op::Randread,
            ..Job::default()
        };
        assert!(dd_command(&job, "/dev/sdb", 1 << 30).is_err());
    }

    #[test]
    fn fio_uses_the_jobs_own_size_and_dd_one_conv() {
        let job = Job {
            op: Op::Write,
            bs: 65536,
            mode: Mode::Fdatasync,
            size: Some(SizeSpec::Bytes(16 << 20)),
            ..Job::default()
        };
        let fio = fio_command(&job, "/dev/loop1", 256 << 20);
        assert!(fio.contains("--size=16M"), "{fio}");
        let dd = dd_command(&job, "/dev/loop1", 256 << 20).unwrap();
        assert!(dd.contains("count=256 conv=fdatasync,notrunc; "), "{dd}");
    }

    #[test]
    fn a_random_writes_dd_reads_data_made_in_ram_never_urandom_itself() {
        let job = |jobs, size: u64| Job {
            op: Op::Write,
            bs: 1 << 20,
            jobs,
            size: Some(SizeSpec::Bytes(size)),
            ..Job::default()
        };
        // One job: its region made first, read by dd, removed after.
        let dd = dd_command(&job(1, 256 << 20), "/dev/loop1", 1 << 30).unwrap();
        println!("{dd}");
        assert_eq!(
            dd,
            "head -c 256M /dev/urandom > /dev/shm/blkscope.rnd && dd if=/dev/shm/blkscope.rnd \
             of=/dev/loop1 bs=1M count=256 oflag=direct conv=notrunc; rm -f /dev/shm/blkscope.rnd"
        );
        // Two jobs read the same region's worth, each its own part of the target.
        let dd = dd_command(&job(2, 512 << 20), "/dev/loop1", 1 << 30).unwrap();
        println!("{dd}");
        assert!(dd.starts_with("head -c 256M /dev/urandom > /dev/shm/blkscope.rnd && "));
        assert_eq!(dd.matches("if=/dev/shm/blkscope.rnd").count(), 2, "{dd}");
        assert!(dd.ends_with("& wait; rm -f /dev/shm/blkscope.rnd"), "{dd}");
        // Too much to make in RAM: zeros, said.
        let dd = dd_command(&job(1, 4 << 30), "/dev/sdb", 8 << 30).unwrap();
        println!("{dd}");
        assert!(dd.starts_with("dd if=/dev/zero of=/dev/sdb"), "{dd}");
        assert!(dd.contains("# zeros: 4G of random data"), "{dd}");
        // No line reads /dev/urandom with dd.
        for d in [Data::Random, Data::Zero] {
            for size in [4 << 20, 256 << 20, 4 << 30] {
                let j = Job {
                    data: d,
                    ..job(1, size)
                };
                let line = dd_command(&j, "/dev/sdb", 8 << 30).unwrap();
                assert!(!line.contains("if=/dev/urandom"), "{line}");
            }
        }
    }

    #[test]
    fn fio_for_random_reads() {
        let job = Job {
            op: Op::Randread,
            bs: 4096,
            iodepth: 32,
            runtime: Some(Duration::from_secs(10)),
            ..Job::default()
        };
        assert_eq!(
            fio_command(&job, "/dev/sdb", 1 << 30),
            "fio --name=blkscope --filename=/dev/sdb --rw=randread --bs=4k --ioengine=io_uring \
             --iodepth=32 --fixedbufs --registerfiles --randrepeat=0 --size=1G --direct=1 \
             --runtime=10s --time_based"
        );
    }

    #[test]
    fn random_jobs_tell_fio_not_to_repeat_its_offsets_and_say_why() {
        for op in [Op::Randread, Op::Randwrite, Op::Randrw] {
            let job = Job {
                op,
                ..Job::default()
            };
            let fio = fio_command(&job, "/dev/sdb", 1 << 30);
            assert!(fio.contains(" --randrepeat=0 "), "{op:?}: {fio}");
            let notes = flag_notes(&job);
            assert!(
                notes.iter().any(|n| n.starts_with("--randrepeat=0:")),
                "{op:?}: {notes:?}"
            );
        }
        // Sequential jobs have no random order to repeat.
        let job = Job {
            op: Op::Read,
            ..Job::default()
        };
        let fio = fio_command(&job, "/dev/sdb", 1 << 30);
        assert!(!fio.contains("randrepeat"), "{fio}");
        assert!(
            !flag_notes(&job).iter().any(|n| n.contains("randrepeat")),
            "{:?}",
            flag_notes(&job)
        );
    }

    #[test]
    fn a_timed_run_that_wrapped_gets_one_dd_pass() {
        // 10 s of 1M writes on a 128 MiB device moved 58 GiB: dd gets 128 blocks, and a note.
        let job = Job {
            op: Op::Write,
            bs: 1 << 20,
            runtime: Some(std::time::Duration::from_secs(10)),
            ..Job::default()
        };
        let line = dd_line_for_run(&job, "/dev/loop1", 128 << 20, Some(59532 << 20));
        assert!(line.contains("count=128 "), "{line}");
        assert!(line.contains("wrapped around it 465 times"), "{line}");
        // A run that did not reach the end: what it moved.
        let line = dd_line_for_run(&job, "/dev/loop1", 128 << 20, Some(40 << 20));
        assert!(line.contains("count=40 "), "{line}");
        assert!(line.contains("as much as this run moved"), "{line}");
    }

    #[test]
    fn a_run_handed_to_io_wq_gets_force_async_in_its_fio_line() {
        let job = Job {
            op: Op::Randread,
            bs: 4096,
            iodepth: 8,
            ..Job::default()
        };
        let uring = EngineKind::Uring;
        let handed = fio_command_as_run(&job, "/dev/zram1", 1 << 30, uring, false, true);
        let inline = fio_command_as_run(&job, "/dev/zram1", 1 << 30, uring, false, false);
        println!("{handed}\n{inline}");
        assert_eq!(handed, format!("{inline} --force_async=1"));
        assert_eq!(inline, fio_command(&job, "/dev/zram1", 1 << 30));
        // A run that `auto` polled (a device with poll queues) is fio's --hipri.
        let polled = fio_command_as_run(&job, "/dev/nvme0n1", 1 << 30, uring, true, false);
        println!("{polled}");
        assert!(polled.contains(" --hipri"), "{polled}");
        assert!(!inline.contains("--hipri"), "{inline}");
        // pread/pwrite has no io-wq to hand anything to.
        let psync = Job {
            engine: EngineKind::Psync,
            ..job.clone()
        };
        let line = fio_command_as_run(
            &psync,
            "/dev/zram1",
            1 << 30,
            EngineKind::Psync,
            false,
            true,
        );
        assert!(!line.contains("force_async"), "{line}");
        assert!(
            flag_notes(&job)
                .iter()
                .any(|n| n.contains("--force_async=1")),
            "{:?}",
            flag_notes(&job)
        );
    }

    #[test]
    fn the_fio_line_names_the_engine_that_ran_or_would_run() {
        let at = |iodepth| Job {
            op: Op::Randread,
            bs: 4096,
            iodepth,
            ..Job::default()
        };
        // Before a run: auto's choice, psync at QD1 (no --iodepth: psync has none), io_uring
        // at depth; the blkscope line leaves the default out.
        let qd1 = commands(&at(1), "/dev/zram1", 1 << 30);
        let qd32 = commands(&at(32), "/dev/zram1", 1 << 30);
        println!("{qd1:?}\n{qd32:?}");
        assert!(qd1.fio.contains("--ioengine=psync"), "{}", qd1.fio);
        assert!(!qd1.fio.contains("--iodepth"), "{}", qd1.fio);
        assert!(
            qd32.fio.contains("--ioengine=io_uring --iodepth=32"),
            "{}",
            qd32.fio
        );
        assert!(!qd1.blkscope.contains("--engine"), "{}", qd1.blkscope);
        let notes = flag_notes(&at(1));
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("--ioengine=psync") && n.contains("costs least")),
            "{notes:?}"
        );
        // After one: the engine the result names (io_uring unavailable: psync ran).
        let forced = Job {
            engine: EngineKind::Uring,
            ..at(8)
        };
        let ran = fio_command_as_run(
            &forced,
            "/dev/zram1",
            1 << 30,
            EngineKind::Psync,
            false,
            false,
        );
        println!("{ran}");
        assert!(ran.contains("--ioengine=psync"), "{ran}");
        assert!(
            commands(&forced, "/dev/zram1", 1 << 30)
                .blkscope
                .contains("--engine uring")
        );
    }

    #[test]
    fn cpus_reach_every_command_line_and_get_a_note() {
        let job = Job {
            op: Op::Read,
            bs: 4096,
            cpus: Some(crate::engine::cpus::CpuList::parse("0,2-3").unwrap()),
            ..Job::default()
        };
        let c = commands(&job, "/dev/zram1", 1 << 30);
        println!("{c:?}");
        assert!(c.blkscope.ends_with(" --cpus 0,2-3"), "{}", c.blkscope);
        assert!(c.fio.contains(" --cpus_allowed=0,2-3"), "{}", c.fio);
        let dd = c.dd.unwrap();
        assert!(dd.starts_with("taskset -c 0,2-3 dd if=/dev/zram1 "), "{dd}");
        let notes = flag_notes(&job);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("--cpus_allowed=0,2-3 / taskset -c 0,2-3:")),
            "{notes:?}"
        );
        // Two jobs: each dd is started under taskset.
        let two = Job { jobs: 2, ..job };
        let dd = dd_command(&two, "/dev/zram1", 1 << 30).unwrap();
        assert_eq!(dd.matches("taskset -c 0,2-3 dd ").count(), 2, "{dd}");
        // Without --cpus, none of it.
        let c = commands(&Job::default(), "/dev/zram1", 1 << 30);
        assert!(
            !c.fio.contains("cpus") && !c.blkscope.contains("cpus"),
            "{c:?}"
        );
    }
}

//! The `dd` and `fio` command lines that match a job, generated from the same [`Job`] that runs,
//! so they cannot disagree with what ran.

use super::job::{Data, EngineKind, Job, Mode, Op, SizeSpec, Sized};

fn size_arg(b: u64) -> String {
    for (unit, m) in [("G", 1u64 << 30), ("M", 1 << 20), ("k", 1 << 10)] {
        if b >= m && b % m == 0 {
            return format!("{}{unit}", b / m);
        }
    }
    b.to_string()
}

/// fio's spelling of sizes (k/m/g are powers of 1024 with fio's default kb_base).
fn fio_size(b: u64) -> String {
    size_arg(b)
}

/// Bytes of the job when its size is known in bytes.
fn bytes_of(job: &Job) -> Option<u64> {
    match job.size {
        Some(SizeSpec::Bytes(b)) | Some(SizeSpec::Text(Sized::Bytes(b))) => Some(b),
        _ => None,
    }
}

/// The fio command line for `job` on `filename` (a device or a file; for a directory target
/// pass the file the test would create). `total` is the job's resolved total size.
pub fn fio_command(job: &Job, filename: &str, total: u64) -> String {
    let jobs = job.jobs.max(1) as u64;
    let region = (total / jobs) / job.bs.max(1) * job.bs.max(1);
    let mut a: Vec<String> = vec![
        "fio".into(),
        "--name=blkscope".into(),
        format!("--filename={filename}"),
        format!("--rw={}", job.op.as_str()),
        format!("--bs={}", fio_size(job.bs)),
        format!(
            "--ioengine={}",
            match job.engine {
                EngineKind::Uring => "io_uring",
                EngineKind::Psync => "psync",
            }
        ),
    ];
    if job.engine == EngineKind::Uring {
        a.push(format!("--iodepth={}", job.iodepth));
        a.push("--fixedbufs".into());
        a.push("--registerfiles".into());
    }
    if job.op == Op::Randrw {
        a.push(format!("--rwmixread={}", job.rwmixread));
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
        a.push(format!("--runtime={}ms", r.as_millis()));
        a.push("--time_based".into());
    }
    if let Some(r) = job.ramp {
        a.push(format!("--ramp_time={}ms", r.as_millis()));
    }
    a.join(" ")
}

/// The dd command line(s) for `job`, or why dd cannot express it.
pub fn dd_command(job: &Job, target: &str, total: u64) -> Result<String, String> {
    if job.op.is_random() {
        return Err(
            "dd only reads and writes sequentially; random I/O needs fio or blkscope".into(),
        );
    }
    if job.iodepth > 1 && job.engine == EngineKind::Uring {
        return Err(format!(
            "dd has one I/O in flight at a time; iodepth {} needs fio or blkscope",
            job.iodepth
        ));
    }
    if job.runtime.is_some() {
        return Err("dd runs over a size, not for a time; set a size instead of a runtime".into());
    }
    if job.offset % job.bs != 0 {
        return Err(
            "dd's seek=/skip= count whole blocks; the offset is not a multiple of bs".into(),
        );
    }
    let jobs = job.jobs.max(1) as u64;
    let region = (bytes_of(job).unwrap_or(total) / jobs) / job.bs * job.bs;
    let count = region / job.bs;
    let bs = size_arg(job.bs);
    let one = |j: u64| {
        let start_blocks = job.offset / job.bs + j * count;
        match job.op {
            Op::Write => {
                let src = match job.data {
                    Data::Zero => "/dev/zero",
                    Data::Random => "/dev/urandom",
                };
                let mut s = format!("dd if={src} of={target} bs={bs} count={count}");
                if start_blocks > 0 {
                    s.push_str(&format!(" seek={start_blocks}"));
                }
                if job.data == Data::Random {
                    s.push_str(" iflag=fullblock");
                }
                match job.mode {
                    Mode::Direct => s.push_str(" oflag=direct"),
                    Mode::Dsync => s.push_str(" oflag=dsync"),
                    Mode::Sync => s.push_str(" oflag=sync"),
                    Mode::Fdatasync => s.push_str(" conv=fdatasync"),
                    Mode::Buffered | Mode::Nocache => {}
                }
                s.push_str(" conv=notrunc");
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
    if jobs == 1 {
        Ok(one(0))
    } else {
        let parts: Vec<String> = (0..jobs).map(|j| format!("{} &", one(j))).collect();
        Ok(format!("{} wait", parts.join(" ")))
    }
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
             --iodepth=32 --fixedbufs --registerfiles --size=1G --direct=1 --runtime=10000ms --time_based"
        );
    }
}

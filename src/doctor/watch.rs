//! `doctor --watch`: a `top` of the processes doing I/O on each device, from the block layer's
//! tracepoints: bytes read and written a second, I/Os a second and the mean time in the device
//! (D2C) of each process's requests, most bytes first. Each interval is a trace of its own
//! (`trace::Tracer`), gone when it ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::sysroot::SysRoot;

/// One process on one device over an interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TopRow {
    pub device: String,
    pub pid: u32,
    pub comm: String,
    /// A kernel thread (writeback, a loop worker, the journal): working for whoever.
    pub kernel: bool,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    pub iops: f64,
    /// Mean issue-to-completion time of its requests, microseconds (none timed: absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d2c_mean_us: Option<f64>,
    /// Where `device` is the disk under a watched loop device, and the I/O was in that loop
    /// device's backing file (the only part of that disk watched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing_file_of: Option<crate::trace::tally::FileOf>,
}

impl Interval {
    /// A line for each disk whose rows are a loop device's backing file only: "vda: only in
    /// loop0's backing file /srv/a.img (the loop device's reads and writes of it, and others'
    /// of the file)".
    pub fn file_notes(&self) -> Vec<String> {
        let mut seen: Vec<(&str, &crate::trace::tally::FileOf)> = Vec::new();
        for r in &self.rows {
            if let Some(f) = &r.backing_file_of
                && !seen.iter().any(|(d, g)| *d == r.device && *g == f)
            {
                seen.push((&r.device, f));
            }
        }
        seen.into_iter()
            .map(|(disk, f)| {
                format!(
                    "{disk}: only in {}'s backing file {} (the loop device's reads and writes \
                     of it, and others' of the file)",
                    f.loop_device, f.file
                )
            })
            .collect()
    }
}

/// One interval of the watch: its rows, and how the trace went.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Seconds the events cover (the windows' when events came too fast to trace them all).
    pub seconds: f64,
    pub sampled: bool,
    pub lost: u64,
    pub rows: Vec<TopRow>,
}

/// Traces `devices` (kernel names) for `interval` (or until `cancel`), and says who did what.
pub fn watch_once(
    root: &SysRoot,
    devices: &[String],
    interval: Duration,
    cancel: &AtomicBool,
) -> Result<Interval, String> {
    let tracer = crate::trace::Tracer::start(root, devices)?;
    let t0 = Instant::now();
    while t0.elapsed() < interval && !cancel.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = t0.elapsed().as_secs_f64().max(1e-3);
    let traced = tracer.stop();
    let seconds = if traced.coverage.windowed {
        traced.coverage.traced().clamp(1e-3, elapsed)
    } else {
        elapsed
    };
    let mut rows: Vec<TopRow> = traced
        .tally
        .rows(&traced.devices)
        .into_iter()
        .filter(|r| r.moved.ios > 0)
        .map(|r| {
            let m = r.moved;
            TopRow {
                device: r.device,
                pid: r.who.0,
                // The trace's `<...>`: a process the kernel had no name cached for, gone by the
                // time its first I/O was read.
                comm: match m.comm.as_str() {
                    "<...>" => "(exited)".to_string(),
                    c => c.to_string(),
                },
                kernel: m.kernel,
                read_bytes_per_sec: m.read_bytes as f64 / seconds,
                write_bytes_per_sec: m.write_bytes as f64 / seconds,
                iops: m.ios as f64 / seconds,
                d2c_mean_us: (m.d2c_n > 0).then(|| m.d2c_ns as f64 / m.d2c_n as f64 / 1e3),
                backing_file_of: r.file,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        let (x, y) = (
            a.read_bytes_per_sec + a.write_bytes_per_sec,
            b.read_bytes_per_sec + b.write_bytes_per_sec,
        );
        y.total_cmp(&x).then(a.pid.cmp(&b.pid))
    });
    Ok(Interval {
        seconds,
        sampled: traced.coverage.windowed,
        lost: traced.lost,
        rows,
    })
}

/// The devices to watch for the names given (as `doctor` takes them), with their partitions:
/// every whole disk when none is named.
pub fn devices(root: &SysRoot, names: &[String]) -> Result<Vec<String>, crate::Error> {
    let tree = crate::device::discover(
        root,
        &crate::device::DiscoverOptions {
            skip_signatures: true,
            ..Default::default()
        },
    )?;
    let chosen = super::chosen(root, &tree, names)?;
    let mut out = Vec::new();
    for (name, _) in chosen {
        for n in crate::stats::related(&tree, &name) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `doctor --watch loop2` showed the disk under loop2's file (loop1) with three kernel
    /// workers reading gigabytes a second, and nothing said that it was loop2's own file.
    #[test]
    fn a_disk_watched_in_a_loop_devices_file_only_says_so_once() {
        let row = |device: &str, pid: u32, file: Option<&str>| TopRow {
            device: device.into(),
            pid,
            comm: "kworker/u8:0".into(),
            kernel: true,
            read_bytes_per_sec: 1e9,
            write_bytes_per_sec: 0.0,
            iops: 1000.0,
            d2c_mean_us: None,
            backing_file_of: file.map(|f| crate::trace::tally::FileOf {
                loop_device: "loop2".into(),
                file: f.into(),
            }),
        };
        let iv = Interval {
            seconds: 1.0,
            sampled: false,
            lost: 0,
            rows: vec![
                row("loop1", 1, Some("/mnt/f")),
                row("loop1", 2, Some("/mnt/f")),
                row("loop2", 3, None),
            ],
        };
        assert_eq!(
            iv.file_notes(),
            [
                "loop1: only in loop2's backing file /mnt/f (the loop device's reads and writes of \
              it, and others' of the file)"
            ]
        );
    }
}

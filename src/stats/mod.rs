//! /proc/diskstats in `iostat -x` terms: a sampler over the same [`SysRoot`] as discovery, the
//! columns computed as sysstat does ([`iostat`]), and other processes' I/O from /proc/PID/io
//! ([`procs`]). What the numbers mean during a test is the analysis layer's
//! (`crate::analysis::findings`). Nothing here knows of any UI.

pub mod iostat;
pub mod procs;

use std::collections::HashMap;
use std::fs;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use procfs_core::{DiskStat, DiskStats, FromBufRead};

use crate::Error;
use crate::device::DeviceTree;
use crate::sysroot::{SysRoot, read_u64};
pub use iostat::{Counters, IostatX, compute};

/// One reading of /proc/diskstats.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at: Instant,
    /// By kernel name.
    pub devices: HashMap<String, Counters>,
    /// In file order.
    pub order: Vec<String>,
}

impl Snapshot {
    /// Reads `<root>/proc/diskstats`.
    pub fn read(root: &SysRoot) -> Result<Self, Error> {
        let path = root.proc("diskstats");
        let f = fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let stats = DiskStats::from_buf_read(BufReader::new(f)).map_err(|e| Error::Parse {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        Ok(Self::from_stats(&stats.0, Instant::now()))
    }

    /// Parses diskstats text (fixtures).
    pub fn parse(text: &str, at: Instant) -> Result<Self, String> {
        let stats: Result<Vec<DiskStat>, _> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(DiskStat::from_line)
            .collect();
        Ok(Self::from_stats(&stats.map_err(|e| e.to_string())?, at))
    }

    fn from_stats(stats: &[DiskStat], at: Instant) -> Self {
        let mut devices = HashMap::with_capacity(stats.len());
        let mut order = Vec::with_capacity(stats.len());
        for d in stats {
            order.push(d.name.clone());
            devices.insert(d.name.clone(), Counters::from(d));
        }
        Self { at, devices, order }
    }
}

/// Computes every device's columns between two snapshots. Devices that appeared since `prev`
/// are left out (no baseline yet); devices that vanished are simply absent. Counters that went
/// backwards give a zero line marked `reset`.
pub fn between(prev: &Snapshot, cur: &Snapshot) -> Vec<IostatX> {
    let dt = cur.at.saturating_duration_since(prev.at).as_secs_f64();
    cur.order
        .iter()
        .filter_map(|name| {
            let c = cur.devices.get(name)?;
            let p = prev.devices.get(name)?;
            let mut x = compute(name, &c.delta(p), dt);
            x.reset = c.went_backwards(p);
            Some(x)
        })
        .collect()
}

/// Samples /proc/diskstats at an interval and keeps the previous reading as the baseline.
pub struct Sampler {
    root: SysRoot,
    prev: Option<Snapshot>,
    iostats_off: HashMap<String, bool>,
}

impl Sampler {
    pub fn new(root: SysRoot) -> Self {
        Self {
            root,
            prev: None,
            iostats_off: HashMap::new(),
        }
    }

    /// Takes the baseline.
    pub fn prime(&mut self) -> Result<(), Error> {
        self.prev = Some(Snapshot::read(&self.root)?);
        Ok(())
    }

    /// Reads again and returns every device's columns since the last reading (empty on the
    /// first call, which only takes the baseline).
    pub fn sample(&mut self) -> Result<Vec<IostatX>, Error> {
        let cur = Snapshot::read(&self.root)?;
        let out = match &self.prev {
            Some(p) => {
                let mut v = between(p, &cur);
                for x in v.iter_mut() {
                    x.stats_off = self.stats_off(&x.disk_device);
                }
                v
            }
            None => Vec::new(),
        };
        self.prev = Some(cur);
        Ok(out)
    }

    /// Whether `queue/iostats` is 0 for the device (or, for a partition, its disk).
    pub fn stats_off(&mut self, name: &str) -> bool {
        if let Some(&v) = self.iostats_off.get(name) {
            return v;
        }
        let v = iostats_disabled(&self.root, name);
        self.iostats_off.insert(name.to_string(), v);
        v
    }
}

/// Whether the kernel keeps no I/O figures for a device (or a partition's disk): its
/// `queue/iostats` is 0 and its driver honours that (zram does not:
/// [`crate::device::counts_io_regardless_of_iostats`]).
pub fn iostats_disabled(root: &SysRoot, name: &str) -> bool {
    let off = |disk: &str, dir: &Path| {
        read_u64(&dir.join("queue/iostats")) == Some(0)
            && !crate::device::counts_io_regardless_of_iostats(disk)
    };
    let direct = root.sys("block").join(name);
    if direct.join("queue/iostats").is_file() {
        return off(name, &direct);
    }
    // A partition: find its disk.
    if let Ok(disks) = fs::read_dir(root.sys("block")) {
        for d in disks.flatten() {
            if d.path().join(name).join("partition").is_file() {
                return off(&d.file_name().to_string_lossy(), &d.path());
            }
        }
    }
    false
}

/// The devices whose figures explain a test on `name`: the device itself, then what it is
/// built on (a partition's disk, a dm/md device's slaves, recursively), then what is built on
/// it (partitions, holders).
pub fn related(tree: &DeviceTree, name: &str) -> Vec<String> {
    let mut v = vec![name.to_string()];
    v.extend(tree.below(name).iter().map(|d| d.name.clone()));
    v.extend(tree.above(name).iter().map(|d| d.name.clone()));
    v
}

/// The devices `stat` reports on, in order: the named ones (by name or path), or every whole
/// device that has statistics; an unknown name is an error.
pub fn resolve_devices(root: &SysRoot, names: &[String]) -> Result<Vec<String>, crate::Error> {
    let snap = Snapshot::read(root)?;
    if names.is_empty() {
        let tree = crate::device::discover(
            root,
            &crate::device::DiscoverOptions {
                skip_signatures: true,
                ..Default::default()
            },
        )?;
        return Ok(tree
            .listed(false)
            .devices
            .iter()
            .filter(|d| !d.is_partition() && snap.devices.contains_key(&d.name))
            .map(|d| d.name.clone())
            .collect());
    }
    // A file or directory stands for the device that holds it (discovered once, if needed).
    let mut tree = None;
    names
        .iter()
        .map(|n| {
            let name = n.strip_prefix("/dev/").unwrap_or(n);
            let name = std::fs::canonicalize(n)
                .ok()
                .filter(|_| root.is_live() && n.starts_with('/'))
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                .unwrap_or_else(|| name.to_string());
            let mut held = || {
                if !root.is_live()
                    || !std::path::Path::new(n).is_dir() && !std::path::Path::new(n).is_file()
                {
                    return None;
                }
                let t = tree.get_or_insert_with(|| {
                    crate::device::discover(
                        root,
                        &crate::device::DiscoverOptions {
                            skip_signatures: true,
                            ..Default::default()
                        },
                    )
                    .map_err(|e| format!("finding the device that holds it failed: {e}"))
                });
                Some(
                    t.as_ref()
                        .map_err(Clone::clone)
                        .and_then(|t| t.named(root, n)),
                )
            };
            if snap.devices.contains_key(&name) {
                Ok(name)
            } else if let Some(found) = held() {
                match found {
                    Ok((d, _)) if snap.devices.contains_key(&d) => Ok(d),
                    Ok((d, _)) => Err(crate::Error::UnknownDevice {
                        path: std::path::PathBuf::from(n),
                        detail: format!(
                            "the device that holds it, {d}, is not in {}; `blkscope list` \
                             shows the devices",
                            root.proc("diskstats").display()
                        ),
                    }),
                    Err(detail) => Err(crate::Error::UnknownDevice {
                        path: std::path::PathBuf::from(n),
                        detail,
                    }),
                }
            } else if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                // `iostat -x 1 3` habits: a bare number is an interval or a count.
                Err(crate::Error::UnknownDevice {
                    path: std::path::PathBuf::from(n),
                    detail: "arguments are devices; for a report every N seconds, M times, \
                             use --interval Ns --count M (iostat's `1 3` is --interval 1s \
                             --count 3)"
                        .into(),
                })
            } else {
                Err(crate::Error::UnknownDevice {
                    path: std::path::PathBuf::from(n),
                    detail: format!(
                        "it is not in {}; `blkscope list` shows the devices",
                        root.proc("diskstats").display()
                    ),
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn appearing_and_vanishing_devices() {
        let t0 = Instant::now();
        let a = Snapshot::parse(
            "7 0 loop0 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n8 0 sda 10 0 80 5 0 0 0 0 0 10 5 0 0 0 0 0 0\n",
            t0,
        )
        .unwrap();
        let b = Snapshot::parse(
            "8 0 sda 20 0 160 15 0 0 0 0 0 20 15 0 0 0 0 0 0\n7 1 loop1 9 0 72 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            t0 + Duration::from_secs(1),
        )
        .unwrap();
        let v = between(&a, &b);
        assert_eq!(v.len(), 1, "loop0 vanished, loop1 has no baseline yet");
        assert_eq!(v[0].disk_device, "sda");
        assert_eq!(v[0].r_s, 10.0);
        assert!(!v[0].reset);
    }

    #[test]
    fn reattached_loop_device_is_a_reset_not_a_spike() {
        let t0 = Instant::now();
        let a = Snapshot::parse("7 0 loop0 90000 0 720000 50 0 0 0 0 0 900 900\n", t0).unwrap();
        let b = Snapshot::parse(
            "7 0 loop0 3 0 24 1 0 0 0 0 0 2 2\n",
            t0 + Duration::from_secs(1),
        )
        .unwrap();
        let v = between(&a, &b);
        assert!(v[0].reset);
        assert_eq!(v[0].r_s, 0.0);
        assert_eq!(v[0].rkb_s, 0.0);
    }

    /// A bare number (iostat's `1 3`) gets the options that mean it; a wrong name gets `list`.
    #[test]
    fn a_number_where_a_device_goes_names_interval_and_count() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("proc")).unwrap();
        fs::write(
            dir.path().join("proc/diskstats"),
            "   8       0 sda 1 0 8 1 1 0 8 1 0 1 2 0 0 0 0 0 0\n",
        )
        .unwrap();
        let root = SysRoot::at(dir.path());
        assert_eq!(resolve_devices(&root, &["sda".into()]).unwrap(), ["sda"]);
        let e = resolve_devices(&root, &["1".into(), "3".into()])
            .unwrap_err()
            .to_string();
        println!("{e}");
        assert!(e.contains("--interval 1s --count 3"), "{e}");
        let e = resolve_devices(&root, &["sdz".into()])
            .unwrap_err()
            .to_string();
        println!("{e}");
        assert!(
            e.contains("blkscope list") && !e.contains("--interval"),
            "{e}"
        );
    }

    #[test]
    fn fixture_iostats_off_and_partition_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let q = dir.path().join("sys/block/sdx/queue");
        fs::create_dir_all(&q).unwrap();
        fs::write(q.join("iostats"), "0\n").unwrap();
        let p = dir.path().join("sys/block/sdx/sdx1");
        fs::create_dir_all(&p).unwrap();
        fs::write(p.join("partition"), "1\n").unwrap();
        let q2 = dir.path().join("sys/block/sdy/queue");
        fs::create_dir_all(&q2).unwrap();
        fs::write(q2.join("iostats"), "1\n").unwrap();
        let root = SysRoot::at(dir.path());
        assert!(iostats_disabled(&root, "sdx"));
        assert!(iostats_disabled(&root, "sdx1"));
        assert!(!iostats_disabled(&root, "sdy"));
        assert!(!iostats_disabled(&root, "nosuch"));
        // zram is created with iostats 0 and counts its I/O all the same.
        let z = dir.path().join("sys/block/zram1/queue");
        fs::create_dir_all(&z).unwrap();
        fs::write(z.join("iostats"), "0\n").unwrap();
        assert!(!iostats_disabled(&root, "zram1"));
    }
}

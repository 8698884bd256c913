//! What /proc/diskstats says each traced device moved while the trace ran: the totals that a
//! trace kept in windows is scaled to (`crate::analysis::traced`). The windows tell who moved
//! what share; the kernel's counters, read at the trace's start and now, tell how much there
//! was in all, between the windows too.

use serde::Serialize;

use super::tally::Part;
use crate::stats::Snapshot;
use crate::sysroot::SysRoot;

/// One traced device's bytes by its diskstats over the trace so far; a disk's without its
/// partitions' (its rows in a trace are the I/O outside them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceBytes {
    pub device: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// The devices' counters when the trace began, and which partitions each disk's include.
pub struct Counted {
    root: SysRoot,
    start: Option<Snapshot>,
    /// Each device, and the names of its partitions among the traced.
    devices: Vec<(String, Vec<String>)>,
}

impl Counted {
    /// Reads the counters of `devices` (the test's, and their partitions `parts`) now.
    pub fn begin(root: &SysRoot, devices: &[((u32, u32), String)], parts: &[Part]) -> Self {
        let name = |dev: (u32, u32)| devices.iter().find(|(d, _)| *d == dev).map(|(_, n)| n);
        let devices = devices
            .iter()
            .map(|(dev, n)| {
                let mine = parts.iter().filter(|p| p.disk == *dev);
                (
                    n.clone(),
                    mine.filter_map(|p| name(p.dev).cloned()).collect(),
                )
            })
            .collect();
        Self {
            root: root.clone(),
            start: Snapshot::read(root).ok(),
            devices,
        }
    }

    /// Each device's bytes since the trace began (none where the counters cannot be read or
    /// went backwards).
    pub fn so_far(&self) -> Vec<DeviceBytes> {
        let (Some(start), Ok(now)) = (&self.start, Snapshot::read(&self.root)) else {
            return Vec::new();
        };
        between(start, &now, &self.devices)
    }
}

/// The bytes each of `devices` moved between two readings, a disk's less its partitions'.
fn between(a: &Snapshot, b: &Snapshot, devices: &[(String, Vec<String>)]) -> Vec<DeviceBytes> {
    let moved = |n: &str| -> Option<(u64, u64)> {
        let (p, c) = (a.devices.get(n)?, b.devices.get(n)?);
        if c.went_backwards(p) {
            return None;
        }
        let d = c.delta(p);
        Some((d.sectors_read * 512, d.sectors_written * 512))
    };
    devices
        .iter()
        .filter_map(|(n, parts)| {
            let (mut r, mut w) = moved(n)?;
            for p in parts {
                let (pr, pw) = moved(p)?;
                (r, w) = (r.saturating_sub(pr), w.saturating_sub(pw));
            }
            Some(DeviceBytes {
                device: n.clone(),
                read_bytes: r,
                write_bytes: w,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn snap(lines: &[(&str, u64, u64)]) -> Snapshot {
        let text: String = lines
            .iter()
            .enumerate()
            .map(|(i, (n, r, w))| format!("7 {i} {n} 1 0 {r} 1 1 0 {w} 1 0 1 1\n"))
            .collect();
        Snapshot::parse(&text, Instant::now()).unwrap()
    }

    #[test]
    fn a_disks_bytes_are_its_own_without_its_partitions() {
        let a = snap(&[("loop0", 100, 0), ("loop0p1", 40, 0), ("loop1", 0, 0)]);
        let b = snap(&[("loop0", 300, 50), ("loop0p1", 140, 10), ("loop1", 8, 8)]);
        let devices = vec![
            ("loop0".to_string(), vec!["loop0p1".to_string()]),
            ("loop0p1".into(), vec![]),
            ("loop1".into(), vec![]),
            ("gone".into(), vec![]),
        ];
        let got = between(&a, &b, &devices);
        println!("{got:?}");
        let by = |n: &str| {
            got.iter()
                .find(|d| d.device == n)
                .map(|d| (d.read_bytes, d.write_bytes))
        };
        assert_eq!(by("loop0"), Some((100 * 512, 40 * 512)));
        assert_eq!(by("loop0p1"), Some((100 * 512, 10 * 512)));
        assert_eq!(by("loop1"), Some((8 * 512, 8 * 512)));
        assert_eq!(by("gone"), None);
    }

    #[test]
    fn counters_that_went_backwards_say_nothing() {
        let a = snap(&[("loop0", 100, 0)]);
        let b = snap(&[("loop0", 10, 0)]);
        assert!(between(&a, &b, &[("loop0".into(), vec![])]).is_empty());
    }
}

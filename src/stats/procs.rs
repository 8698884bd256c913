//! Who else is doing I/O: `/proc/PID/io` (read_bytes, write_bytes: what reached the block
//! layer) of every process, sampled twice, and each process tied, where it can be, to the
//! devices it has open: a descriptor on a device node, or on a file whose file system sits on
//! a device. The kernel adds a child's counters to its parent's when the parent reaps it, so
//! what a child that was already there at the first sample had done by then is taken off its
//! parent's figure: a shell that reaps a dd which ran before the interval did not do that I/O
//! in it, while one whose short dds come and go inside the interval is credited with theirs.

use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::time::Instant;

use serde::Serialize;

use crate::sysroot::SysRoot;

/// Bytes a process has moved to and from storage so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// Every process's counters at one moment, and its parent's pid then.
#[derive(Debug, Clone)]
pub struct ProcSnapshot {
    pub at: Instant,
    pub by_pid: HashMap<u32, ProcIo>,
    pub parent: HashMap<u32, u32>,
}

/// Reads `read_bytes` and `write_bytes` from `/proc/PID/io` text.
pub fn parse_io(text: &str) -> Option<ProcIo> {
    let mut io = ProcIo::default();
    let (mut r, mut w) = (false, false);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("read_bytes:") {
            io.read_bytes = v.trim().parse().ok()?;
            r = true;
        } else if let Some(v) = line.strip_prefix("write_bytes:") {
            io.write_bytes = v.trim().parse().ok()?;
            w = true;
        }
    }
    (r && w).then_some(io)
}

/// Field `n` after the command name in `/proc/PID/stat` text: 0 the state, 1 the parent's
/// pid, ... 6 the flags (the name, in parentheses, may hold spaces).
fn stat_field<T: std::str::FromStr>(stat: &str, n: usize) -> Option<T> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(n)?
        .parse()
        .ok()
}

impl ProcSnapshot {
    /// Every process whose counters can be read (all of them as root; one's own otherwise).
    pub fn read(root: &SysRoot) -> Self {
        let mut by_pid = HashMap::new();
        let mut parent = HashMap::new();
        for e in std::fs::read_dir(root.proc(""))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let read = |f: &str| crate::sysroot::read_text(e.path().join(f)).ok();
            if let Some(io) = read("io").and_then(|t| parse_io(&t)) {
                by_pid.insert(pid, io);
                if let Some(pp) = read("stat").and_then(|t| stat_field(&t, 1)) {
                    parent.insert(pid, pp);
                }
            }
        }
        Self {
            at: Instant::now(),
            by_pid,
            parent,
        }
    }

    /// What each process moved since `a`: its counters' growth, less what the processes of
    /// `a` that are gone now (reaped: their counters went to the nearest ancestor still here)
    /// had moved before `a`.
    fn moved_since(&self, a: &ProcSnapshot) -> HashMap<u32, ProcIo> {
        let mut out: HashMap<u32, ProcIo> = self
            .by_pid
            .iter()
            .map(|(pid, now)| {
                let before = a.by_pid.get(pid).copied().unwrap_or_default();
                let m = ProcIo {
                    read_bytes: now.read_bytes.saturating_sub(before.read_bytes),
                    write_bytes: now.write_bytes.saturating_sub(before.write_bytes),
                };
                (*pid, m)
            })
            .collect();
        for (gone, io) in a
            .by_pid
            .iter()
            .filter(|(p, _)| !self.by_pid.contains_key(p))
        {
            let Some(heir) = self.heir(a, *gone) else {
                continue;
            };
            if let Some(m) = out.get_mut(&heir) {
                m.read_bytes = m.read_bytes.saturating_sub(io.read_bytes);
                m.write_bytes = m.write_bytes.saturating_sub(io.write_bytes);
            }
        }
        out
    }

    /// The nearest ancestor (by `a`'s parents) of a process gone since `a` that is still here:
    /// the one its counters were added to when it was reaped.
    fn heir(&self, a: &ProcSnapshot, gone: u32) -> Option<u32> {
        let mut p = *a.parent.get(&gone)?;
        for _ in 0..64 {
            if self.by_pid.contains_key(&p) {
                return Some(p);
            }
            p = *a.parent.get(&p)?;
        }
        None
    }
}

/// A process that moved data between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BusyProcess {
    pub pid: u32,
    pub comm: String,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    /// Bytes moved in the interval (read + write).
    #[serde(skip)]
    pub bytes: u64,
    /// Kernel names of the devices it has open (directly, or through a file system on them).
    pub devices: Vec<String>,
}

/// Whether `pid` is a kernel thread (PF_KTHREAD in /proc/PID/stat): kworkers, the loop
/// driver's and the flusher threads move data on behalf of others (a loop device's I/O, the
/// page cache's writeback), so they are not "other processes" competing with a test.
pub fn is_kernel_thread(root: &SysRoot, pid: u32) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    crate::sysroot::read_text(root.proc(format!("{pid}/stat")))
        .ok()
        .and_then(|s| stat_field::<u64>(&s, 6))
        .is_some_and(|f| f & PF_KTHREAD != 0)
}

/// The processes (other than `exclude` and kernel threads) that moved data between `a` and
/// `b`, busiest first.
pub fn busy(
    root: &SysRoot,
    a: &ProcSnapshot,
    b: &ProcSnapshot,
    exclude: &[u32],
) -> Vec<BusyProcess> {
    let dt = b.at.duration_since(a.at).as_secs_f64().max(1e-3);
    let mut out: Vec<BusyProcess> = b
        .moved_since(a)
        .iter()
        .filter(|(pid, _)| !exclude.contains(pid))
        .filter_map(|(pid, m)| {
            let (r, w) = (m.read_bytes, m.write_bytes);
            // Only the few that moved data are worth a read of their stat file.
            (r + w > 0 && !is_kernel_thread(root, *pid)).then(|| BusyProcess {
                pid: *pid,
                comm: comm(root, *pid),
                read_bytes_per_sec: r as f64 / dt,
                write_bytes_per_sec: w as f64 / dt,
                bytes: r + w,
                devices: Vec::new(),
            })
        })
        .collect();
    out.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.pid.cmp(&y.pid)));
    out
}

/// A process's command name.
pub fn comm(root: &SysRoot, pid: u32) -> String {
    crate::sysroot::read_text(root.proc(format!("{pid}/comm")))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The device numbers (`major:minor`) a process has open: the block device nodes it holds
/// (its I/O goes there: a dd or fio on a raw device), or else the file systems of the files it
/// holds (a database, a backup, a log).
pub fn open_devices(root: &SysRoot, pid: u32) -> BTreeSet<String> {
    let mut nodes = BTreeSet::new();
    let mut out = BTreeSet::new();
    let Ok(rd) = std::fs::read_dir(root.proc(format!("{pid}/fd"))) else {
        return out;
    };
    for e in rd.flatten() {
        // metadata() follows the fd's magic link to the open file itself.
        let Ok(m) = std::fs::metadata(e.path()) else {
            continue;
        };
        use std::os::unix::fs::FileTypeExt;
        let n = |dev: u64| format!("{}:{}", libc::major(dev), libc::minor(dev));
        if m.file_type().is_block_device() {
            nodes.insert(n(m.rdev()));
        } else if m.file_type().is_file() {
            out.insert(n(m.dev()));
        }
    }
    if nodes.is_empty() { out } else { nodes }
}

/// Ties each busy process to the devices of `tree` (by kernel name) it has open.
pub fn tie_to_devices(root: &SysRoot, procs: &mut [BusyProcess], tree: &crate::device::DeviceTree) {
    let devnos: HashMap<&str, &str> = (tree.devices.iter())
        .map(|d| (d.maj_min.as_str(), d.name.as_str()))
        .collect();
    for p in procs.iter_mut() {
        p.devices = open_devices(root, p.pid)
            .into_iter()
            .filter_map(|d| devnos.get(d.as_str()).map(|n| n.to_string()))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_pid_io() {
        let t = "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_io(t),
            Some(ProcIo {
                read_bytes: 4096,
                write_bytes: 8192
            })
        );
        assert_eq!(parse_io("rchar: 1\n"), None);
    }

    /// A shell (100) that reaps the dd (101) it started before the first sample: the kernel
    /// adds the dd's 32M to the shell's /proc/PID/io, but they were moved before the interval.
    /// Then a dd that came and went inside an interval: the shell is credited with its 16M.
    #[test]
    fn a_reaped_childs_earlier_io_is_not_its_parents() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::at(dir.path());
        let io = |r: u64| format!("read_bytes: {r}\nwrite_bytes: 0\ncancelled_write_bytes: 0\n");
        let put = |rel: &str, text: &str| {
            let p = dir.path().join("proc").join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("100/comm", "sh\n");
        put("100/stat", "100 (sh) S 1 100 100 0 -1 4194560 0 0 0 0\n");
        put("100/io", &io(4096));
        put("101/stat", "101 (dd) Z 100 100 100 0 -1 4194560 0 0 0 0\n");
        put("101/io", &io(32 << 20));
        let a = ProcSnapshot::read(&root);
        std::fs::remove_dir_all(dir.path().join("proc/101")).unwrap();
        put("100/io", &io(4096 + (32 << 20)));
        let b = ProcSnapshot::read(&root);
        let found = busy(&root, &a, &b, &[]);
        println!("{found:?}");
        assert!(found.is_empty(), "{found:?}");
        put("100/io", &io(4096 + (48 << 20)));
        let c = ProcSnapshot::read(&root);
        let found = busy(&root, &b, &c, &[]);
        println!("{found:?}");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].comm.as_str(), found[0].bytes), ("sh", 16 << 20));
    }
}

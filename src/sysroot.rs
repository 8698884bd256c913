//! Where blkscope reads the kernel's view of the machine from.
//!
//! Everything that discovery and the samplers read from sysfs and procfs goes through a
//! [`SysRoot`], so tests can point it at a fixture tree (`tests/fixtures/...`) that holds
//! `sys/block/...`, `proc/self/mountinfo`, `proc/swaps` and `proc/diskstats` for layouts that
//! cannot be built on a test machine (LVM, md RAID, NVMe namespaces, dm-crypt).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A root directory under which `sys/`, `proc/` and (optionally) `dev/` are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    root: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        Self::live()
    }
}

impl SysRoot {
    /// The running system (`/`).
    pub fn live() -> Self {
        Self {
            root: PathBuf::from("/"),
        }
    }

    /// A fixture tree or a chroot.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// True when this is the running system, so device nodes may be opened for real.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/sys/<rel>`
    pub fn sys(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join("sys").join(rel)
    }

    /// `<root>/proc/<rel>`
    pub fn proc(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join("proc").join(rel)
    }

    /// MemAvailable from `<root>/proc/meminfo`, in bytes: what can be allocated without
    /// swapping. None when it cannot be read.
    pub fn mem_available(&self) -> Option<u64> {
        let text = fs::read_to_string(self.proc("meminfo")).ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb.saturating_mul(1024))
    }

    /// Where the node of a device named `name` is read for signature probing: `/dev/NAME` on the
    /// live system, `<root>/dev/NAME` (an image file, if the fixture has one) otherwise.
    pub fn dev_node(&self, name: &str) -> PathBuf {
        self.root.join("dev").join(name)
    }
}

/// Reads a sysfs attribute as a trimmed string; `None` when it does not exist or cannot be read.
pub fn read_attr(path: &Path) -> Option<String> {
    read_text(path)
        .ok()
        .map(|s| s.trim_end_matches(['\n', '\0']).trim().to_string())
}

/// Reads a small file of sysfs or procfs whole: as `fs::read_to_string`, without the size
/// query that it makes first (these files say size 0 or 4096 whatever they hold) and with one
/// read for all of it where it fits a page.
pub fn read_text(path: impl AsRef<Path>) -> io::Result<String> {
    use io::Read;
    let mut f = fs::File::open(path.as_ref())?;
    let mut buf = vec![0u8; 4096];
    let mut n = 0;
    loop {
        if n == buf.len() {
            buf.resize(n * 2, 0);
        }
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Reads a sysfs attribute as an unsigned number.
pub fn read_u64(path: &Path) -> Option<u64> {
    read_attr(path).and_then(|s| s.parse().ok())
}

/// Reads a sysfs `dev` attribute ("major:minor") as (major, minor).
pub fn read_devno(path: &Path) -> Option<(u32, u32)> {
    let s = read_attr(path)?;
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Names of the entries of a directory, sorted naturally (`loop2` before `loop10`); empty when
/// the directory does not exist.
pub fn dir_names(path: &Path) -> io::Result<Vec<String>> {
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_by(|a, b| natural_cmp(a, b));
    Ok(names)
}

/// Compares names so that embedded numbers sort by value: `sda2 < sda10`, `loop9 < loop10`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let nb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (da, db) = (&a[..na], &b[..nb]);
                let ta = trim_zeros(da);
                let tb = trim_zeros(db);
                let ord = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
                a = &a[na..];
                b = &b[nb..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let n = d.iter().take_while(|&&c| c == b'0').count();
    &d[n.min(d.len().saturating_sub(1))..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_text_reads_files_of_any_length_and_procfs_whole() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0usize, 1, 4095, 4096, 4097, 20_000] {
            let p = dir.path().join(format!("f{len}"));
            let text: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            fs::write(&p, &text).unwrap();
            let got = read_text(&p).unwrap();
            println!("{len}: read {}", got.len());
            assert_eq!(got, text);
        }
        // A procfs file says size 0 and has more: read whole all the same.
        let maps = read_text("/proc/self/maps").unwrap();
        println!("/proc/self/maps: {} bytes", maps.len());
        assert!(maps.lines().count() > 3, "{maps}");
        let e = read_text(dir.path().join("none")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn natural_order() {
        let mut v = vec![
            "sda10",
            "sda2",
            "loop10",
            "loop9",
            "nvme0n1p1",
            "nvme0n1",
            "sda",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "loop9",
                "loop10",
                "nvme0n1",
                "nvme0n1p1",
                "sda",
                "sda2",
                "sda10"
            ]
        );
    }

    #[test]
    fn live_root_paths() {
        let r = SysRoot::live();
        assert!(r.is_live());
        assert_eq!(r.sys("block"), PathBuf::from("/sys/block"));
        let f = SysRoot::at("/tmp/x");
        assert!(!f.is_live());
        assert_eq!(f.proc("swaps"), PathBuf::from("/tmp/x/proc/swaps"));
    }
}

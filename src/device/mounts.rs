//! Who uses a device: mounts (from `/proc/self/mountinfo`, matched by device number as lsblk
//! does) and active swap areas (`/proc/swaps`).

use std::collections::HashMap;
use std::fs;
use std::io::BufReader;

use procfs_core::FromBufRead;
use procfs_core::process::MountInfos;

use crate::sysroot::SysRoot;

/// The file system type of `path` from mountinfo: the longest mount point that contains it
/// (the last of equals, as the later mount hides the earlier).
pub fn fs_type(root: &SysRoot, path: &str) -> Option<String> {
    MountTable::read(root).ok()?.fs_type(path)
}

/// [`fs_type`] of a file or directory on the live system, by its real path (symlinks resolved,
/// as the kernel sees it); None where it does not exist.
pub fn fs_type_of(root: &SysRoot, path: &std::path::Path) -> Option<String> {
    let real = fs::canonicalize(path).ok()?;
    fs_type(root, &real.to_string_lossy())
}

/// Whether a file system type keeps its files in RAM (tmpfs, ramfs): what is on it, a loop
/// device's backing file included, is memory whatever the I/O flags.
pub fn in_ram(fs: &str) -> bool {
    matches!(fs, "tmpfs" | "ramfs")
}

/// What a file system type is when it is the kernel's own view of devices, processes or
/// itself (devtmpfs, sysfs, procfs and the like), not storage: a test's file there would be
/// written into the kernel's tables or RAM. None for a file system that stores files.
pub fn kernel_fs(fs: &str) -> Option<&'static str> {
    Some(match fs {
        "devtmpfs" => "the device directory",
        "devpts" => "the terminals' device directory",
        "sysfs" => "the kernel's view of devices and drivers",
        "proc" => "the kernel's view of processes",
        "cgroup" | "cgroup2" => "the kernel's control groups",
        "debugfs" | "tracefs" => "the kernel's debugging and tracing interface",
        "securityfs" | "configfs" | "pstore" | "efivarfs" | "bpf" | "mqueue" | "fusectl"
        | "binfmt_misc" | "hugetlbfs" => "a kernel interface",
        _ => return None,
    })
}

/// Mount points by `major:minor`, in mountinfo order, without repeats; and those of file
/// systems that give their mounts an anonymous device number (major 0: btrfs, whose files all
/// carry one per subvolume), by the device path mountinfo names as their source.
#[derive(Debug, Default, Clone)]
pub struct MountTable {
    by_devno: HashMap<String, Vec<String>>,
    by_source: Vec<(String, String)>,
    /// Every mount point with its file system type, in mountinfo order.
    types: Vec<(String, String)>,
}

impl MountTable {
    /// Reads `<root>/proc/self/mountinfo`. A missing file gives an empty table (a fixture tree
    /// without mounts); a malformed one is an error.
    pub fn read(root: &SysRoot) -> Result<Self, crate::Error> {
        let path = root.proc("self/mountinfo");
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(crate::Error::io(&path, e)),
        };
        let infos =
            MountInfos::from_buf_read(BufReader::new(file)).map_err(|e| crate::Error::Parse {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        Ok(Self::from_infos(infos))
    }

    /// Parses mountinfo text.
    pub fn parse(text: &str) -> Result<Self, String> {
        MountInfos::from_buf_read(text.as_bytes())
            .map(Self::from_infos)
            .map_err(|e| e.to_string())
    }

    fn from_infos(infos: MountInfos) -> Self {
        let mut by_devno: HashMap<String, Vec<String>> = HashMap::new();
        let mut by_source = Vec::new();
        let mut types = Vec::new();
        for mi in infos {
            let target = unescape_octal(&mi.mount_point.to_string_lossy());
            types.push((target.clone(), mi.fs_type.clone()));
            if mi.majmin.starts_with("0:")
                && let Some(src) = mi
                    .mount_source
                    .as_deref()
                    .filter(|s| s.starts_with("/dev/"))
            {
                let pair = (unescape_octal(src), target.clone());
                if !by_source.contains(&pair) {
                    by_source.push(pair);
                }
            }
            let list = by_devno.entry(mi.majmin.clone()).or_default();
            if !list.contains(&target) {
                list.push(target);
            }
        }
        Self {
            by_devno,
            by_source,
            types,
        }
    }

    /// The file system type of `path`: that of the longest mount point that contains it (the
    /// last of equals, as the later mount hides the earlier).
    pub fn fs_type(&self, path: &str) -> Option<String> {
        self.types
            .iter()
            .filter(|(mp, _)| {
                path == mp
                    || mp == "/"
                    || path.starts_with(&format!("{}/", mp.trim_end_matches('/')))
            })
            .max_by_key(|(mp, _)| mp.len())
            .map(|(_, fs)| fs.clone())
    }

    /// The mount points of the device `maj_min`, kernel name `name` (and /dev/mapper name
    /// `dm_name`): by device number, then those of anonymous-numbered mounts whose source names
    /// it (a btrfs on it). `live`: resolve symlinked sources (/dev/disk/by-uuid/...).
    pub fn mountpoints(
        &self,
        maj_min: &str,
        name: &str,
        dm_name: Option<&str>,
        live: bool,
    ) -> Vec<String> {
        let mut out = self.by_devno.get(maj_min).cloned().unwrap_or_default();
        for (src, target) in &self.by_source {
            if names_device(src, name, dm_name, live) && !out.contains(target) {
                out.push(target.clone());
            }
        }
        out
    }
}

/// Whether the path `p` (from /proc/swaps or a mount's source) names the device `name` (kernel
/// name, e.g. `dm-1`), or the one known by `dm_name` under /dev/mapper. On the live system a
/// path that is a symlink (such as /dev/disk/by-uuid/...) is resolved too.
fn names_device(p: &str, name: &str, dm_name: Option<&str>, live: bool) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p);
    if p.starts_with("/dev/") && base == name {
        return true;
    }
    if let Some(dm) = dm_name
        && p == format!("/dev/mapper/{dm}")
    {
        return true;
    }
    if live
        && p.starts_with("/dev/")
        && let Ok(real) = fs::canonicalize(p)
    {
        return real.file_name().is_some_and(|f| f == name);
    }
    false
}

/// Undoes the kernel's octal escapes in mountinfo paths (`\040` is a space).
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Active swap areas from `/proc/swaps`: the `Filename` column, unescaped.
#[derive(Debug, Default, Clone)]
pub struct SwapTable {
    pub paths: Vec<String>,
}

impl SwapTable {
    pub fn read(root: &SysRoot) -> Result<Self, crate::Error> {
        let path = root.proc("swaps");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(crate::Error::io(&path, e)),
        };
        Ok(Self::parse(&text))
    }

    pub fn parse(text: &str) -> Self {
        let paths = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .map(unescape_octal)
            .collect();
        Self { paths }
    }

    /// Whether the device named `name` (kernel name, e.g. `dm-1`), or known by `dm_name` under
    /// /dev/mapper, is an active swap area. On the live system a path that is a symlink (such
    /// as /dev/disk/by-uuid/...) is resolved too.
    pub fn contains_device(&self, name: &str, dm_name: Option<&str>, live: bool) -> bool {
        self.paths
            .iter()
            .any(|p| names_device(p, name, dm_name, live))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_spaces_and_backslashes() {
        assert_eq!(unescape_octal(r"/mnt/my\040disk"), "/mnt/my disk");
        assert_eq!(unescape_octal(r"/a\134b"), r"/a\b");
        assert_eq!(unescape_octal(r"/plain"), "/plain");
        assert_eq!(unescape_octal(r"/trail\04"), r"/trail\04");
    }

    #[test]
    fn btrfs_mounts_by_their_source() {
        // btrfs gives its mounts an anonymous device number (0:39), not the device's (7:0).
        let t = MountTable::parse(
            "29 1 253:1 / / rw - ext4 /dev/vda1 rw\n\
             43 29 0:39 / /mnt/b rw,relatime - btrfs /dev/loop0 rw,subvolid=5,subvol=/\n\
             44 29 0:40 /home /home rw,relatime - btrfs /dev/mapper/vg-home rw,subvol=/home\n\
             45 29 0:41 / /run/x rw - tmpfs tmpfs rw\n",
        )
        .unwrap();
        assert_eq!(t.mountpoints("7:0", "loop0", None, false), ["/mnt/b"]);
        assert!(t.mountpoints("7:1", "loop1", None, false).is_empty());
        assert!(t.mountpoints("7:10", "loop00", None, false).is_empty());
        assert_eq!(
            t.mountpoints("253:2", "dm-2", Some("vg-home"), false),
            ["/home"]
        );
        assert_eq!(t.mountpoints("253:1", "vda1", None, false), ["/"]);
    }

    #[test]
    fn swaps_by_name_and_mapper() {
        let t = SwapTable::parse(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
             /dev/loop3                              partition\t1020\t\t0\t\t-2\n\
             /dev/mapper/vg-swap                     partition\t1020\t\t0\t\t-3\n\
             /swapfile                               file\t\t1020\t\t0\t\t-4\n",
        );
        assert_eq!(t.paths.len(), 3);
        assert!(t.contains_device("loop3", None, false));
        assert!(!t.contains_device("loop30", None, false));
        assert!(t.contains_device("dm-1", Some("vg-swap"), false));
        assert!(!t.contains_device("swapfile", None, false));
    }
}

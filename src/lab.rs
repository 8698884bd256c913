//! The lab: throwaway loop devices over sparse scratch files, one with 512-byte and one with
//! 4096-byte sectors (optionally partitioned), so students can run every destructive test,
//! the raw-device read-modify-write demo included, without risking a real disk.
//!
//! Everything the lab creates is recorded in a state file under `/run/blkscope/labs/` before it
//! is used, and removed when the [`Lab`] is dropped (normal exit, Ctrl-C, SIGTERM, a panic in the
//! UI). If the process is killed outright, the next `blkscope lab` or `blkscope` start removes
//! it ([`cleanup_stale`]); a loop device is only detached if it still uses the lab's file.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::Error;

pub const STATE_DIR: &str = "/run/blkscope/labs";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LabDevice {
    /// `/dev/loopN`
    pub path: String,
    /// `loopN`
    pub name: String,
    pub sector: u32,
    pub backing: PathBuf,
    pub partitioned: bool,
    /// What it is: a loop device with direct I/O to its file (the default), one whose file goes
    /// through the page cache, or a zram device.
    #[serde(default)]
    pub kind: LabKind,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LabKind {
    #[default]
    Loop,
    /// A loop device without direct I/O: its file's page cache sits below the device.
    Cached,
    /// A zram device (its size recorded in `backing`'s place: none).
    Zram,
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    pid: u32,
    dir: PathBuf,
    devices: Vec<LabDevice>,
}

pub struct LabOptions {
    pub size: u64,
    pub partitioned: bool,
    /// Where the backing files go (`--dir`); by default the first of [`default_bases`] that is
    /// not in RAM.
    pub dir: Option<PathBuf>,
    /// Also a 4096-byte-sector loop device whose file goes through the page cache.
    pub cached: bool,
    /// Also a zram device of `size` (compressed memory).
    pub zram: bool,
}

/// The lab's devices; removed on drop.
pub struct Lab {
    pub dir: PathBuf,
    pub devices: Vec<LabDevice>,
    /// The file system under `dir` when it keeps its files in RAM (tmpfs, ramfs): every test on
    /// the lab's devices then measures memory, direct I/O or not.
    pub in_ram: Option<String>,
    /// The file system type under `dir` (ext4, xfs, tmpfs, ...), when it can be read.
    pub fs: Option<String>,
    state_file: PathBuf,
}

/// Where a lab's files may go, in order of preference: `$XDG_RUNTIME_DIR` (the user's own,
/// emptied at logout), `$TMPDIR` or /tmp, and /var/tmp (on disk by convention, where the other
/// two are often a tmpfs: Fedora, Arch, Debian 13 and every `$XDG_RUNTIME_DIR`).
pub fn default_bases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    v.push(std::env::temp_dir());
    v.push(PathBuf::from("/var/tmp"));
    v.retain(|p| p.is_dir());
    v.dedup();
    v
}

/// The first of `bases` whose file system (`fs_of`) is not in RAM, or the first of all when
/// every one is (then with its file system type): a lab over a tmpfs file measures memory.
pub fn pick_base(
    bases: &[PathBuf],
    fs_of: impl Fn(&Path) -> Option<String>,
) -> Option<(PathBuf, Option<String>)> {
    let ram = |p: &Path| fs_of(p).filter(|f| crate::device::mounts::in_ram(f));
    bases
        .iter()
        .find(|p| ram(p).is_none())
        .map(|p| (p.clone(), None))
        .or_else(|| bases.first().map(|p| (p.clone(), ram(p))))
}

/// The file system type of a directory on the live system.
fn fs_of(path: &Path) -> Option<String> {
    crate::device::mounts::fs_type_of(&crate::sysroot::SysRoot::live(), path)
}

/// `blkscope-lab-PID`: the name of a lab's directory, and the PID back from it.
fn lab_dir_name(pid: u32) -> String {
    format!("blkscope-lab-{pid}")
}

fn lab_dir_pid(name: &str) -> Option<u32> {
    name.strip_prefix("blkscope-lab-")?.parse().ok()
}

/// The caller's PATH with /usr/sbin and /sbin after it: losetup, sfdisk, hdparm and the like
/// live there, and a non-login root shell may not have them on its PATH.
pub(crate) fn sbin_path() -> String {
    format!(
        "{}:/usr/sbin:/sbin",
        std::env::var("PATH").unwrap_or_default()
    )
}

fn tool(cmd: &str, args: &[&str]) -> Result<String, Error> {
    let out = Command::new(cmd)
        .args(args)
        .env("PATH", sbin_path())
        .output()
        .map_err(|e| Error::Usage(format!("the lab needs `{cmd}` (util-linux/fdisk): {e}")))?;
    if !out.status.success() {
        return Err(Error::Usage(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether this process may make a lab: root and /dev/loop-control; the error says how.
pub fn can_make() -> Result<(), Error> {
    if crate::sys::geteuid() != 0 || !Path::new("/dev/loop-control").exists() {
        return Err(Error::Usage(
            "the lab makes loop devices, which needs root and /dev/loop-control: run it with sudo \
             (sudo blkscope lab, sudo blkscope learn)"
                .into(),
        ));
    }
    Ok(())
}

impl Lab {
    pub fn create(opts: &LabOptions) -> Result<Self, Error> {
        can_make()?;
        cleanup_stale();
        std::fs::create_dir_all(STATE_DIR).map_err(|e| Error::io(Path::new(STATE_DIR), e))?;
        let pid = std::process::id();
        if opts.size < 1 << 20 {
            return Err(Error::Usage(
                "a lab device needs at least 1M: use --size 1M or more".into(),
            ));
        }
        let (base, in_ram) = match &opts.dir {
            Some(d) if !d.is_dir() => {
                return Err(Error::Usage(format!(
                    "--dir {}: not a directory; give an existing directory for the lab's files",
                    d.display()
                )));
            }
            Some(d) => {
                pick_base(std::slice::from_ref(d), fs_of).unwrap_or_else(|| (d.clone(), None))
            }
            None => pick_base(&default_bases(), fs_of).ok_or_else(|| {
                Error::Usage(
                    "no directory for the lab's files (XDG_RUNTIME_DIR, TMPDIR, /tmp, \
                     /var/tmp): give one with --dir"
                        .into(),
                )
            })?,
        };
        // The backing files are sparse, but every write test fills them: both must fit where
        // they live (on a tmpfs, in memory), before anything is made.
        if let Ok(free) = crate::sys::fs_available(&base) {
            let room = crate::engine::target::usable_space(free);
            let need = opts.size.saturating_mul(2 + opts.cached as u64);
            if need > room {
                use crate::units::fmt_size;
                let fix = match (room / (2 + opts.cached as u64)) >> 20 {
                    // Not a MiB each: no --size helps.
                    0 => "; there is no room for them there: free some space, or give a \
                          directory with more with --dir"
                        .to_string(),
                    mib => format!("; use --size {mib}M or less"),
                };
                return Err(Error::Usage(format!(
                    "{} lab devices of {} need up to {} in {} once written: {} free there, and \
                     blkscope leaves at least 10% (and 64M) of it{fix}",
                    2 + opts.cached as u64,
                    fmt_size(opts.size),
                    fmt_size(need),
                    base.display(),
                    fmt_size(free),
                )));
            }
        }
        let dir = base.join(lab_dir_name(pid));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let mut lab = Lab {
            dir,
            devices: Vec::new(),
            in_ram,
            fs: fs_of(&base),
            state_file: Path::new(STATE_DIR).join(format!("{pid}.json")),
        };
        lab.save()?;
        if opts.zram {
            // Memory before anything is made: a zram device fills RAM as it is written.
            check_memory(opts.size)?;
        }
        for sector in [512u32, 4096] {
            lab.add_loop(sector, LabKind::Loop, opts)?;
        }
        if opts.cached {
            lab.add_loop(4096, LabKind::Cached, opts)?;
        }
        if opts.zram {
            lab.add_zram(opts.size)?;
        }
        Ok(lab)
    }

    /// A loop device over a new sparse file of `opts.size`: with direct I/O to the file, so
    /// that a test measures the disk under the file rather than its page cache (where that
    /// attach fails, on a file system without O_DIRECT, without it: the backing_cache finding
    /// then says so on every result), or without on purpose for [`LabKind::Cached`].
    fn add_loop(&mut self, sector: u32, kind: LabKind, opts: &LabOptions) -> Result<(), Error> {
        let file = match kind {
            LabKind::Cached => "lab-cached.img".to_string(),
            _ => format!("lab-{sector}.img"),
        };
        let backing = self.dir.join(file);
        let f = std::fs::File::create(&backing).map_err(|e| Error::io(&backing, e))?;
        f.set_len(opts.size).map_err(|e| Error::io(&backing, e))?;
        drop(f);
        let direct = if kind == LabKind::Cached {
            "--direct-io=off"
        } else {
            "--direct-io=on"
        };
        let mut args = vec!["--find", "--show", direct, "-b"];
        let s = sector.to_string();
        args.push(&s);
        if opts.partitioned {
            args.push("-P");
        }
        let b = backing.to_string_lossy().into_owned();
        args.push(&b);
        let path = match tool("losetup", &args) {
            Ok(p) => p,
            Err(_) => {
                args.retain(|a| *a != "--direct-io=on");
                tool("losetup", &args)?
            }
        };
        let name = path.trim_start_matches("/dev/").to_string();
        self.devices.push(LabDevice {
            path: path.clone(),
            name,
            sector,
            backing,
            partitioned: opts.partitioned,
            kind,
        });
        self.save()?;
        if opts.partitioned {
            // On the device itself, so the table uses its own sector size.
            partition(Path::new(&path), opts.size)?;
            if !Path::new(&format!("{path}p1")).exists() {
                // Kernels without partition-table parsers: add them from user space.
                let _ = tool("partx", &["-a", &path]);
            }
        }
        Ok(())
    }

    /// A new zram device of `size` (`zram-control/hot_add`), recorded before it is sized.
    fn add_zram(&mut self, size: u64) -> Result<(), Error> {
        let ctl = Path::new("/sys/class/zram-control/hot_add");
        if !ctl.exists() {
            let _ = Command::new("modprobe")
                .arg("zram")
                .env("PATH", sbin_path())
                .status();
        }
        let id = std::fs::read_to_string(ctl).map_err(|e| {
            Error::Usage(format!(
                "the lab's zram device needs the zram module ({}: {e}): modprobe zram",
                ctl.display()
            ))
        })?;
        let name = format!("zram{}", id.trim());
        self.devices.push(LabDevice {
            path: format!("/dev/{name}"),
            name: name.clone(),
            sector: 4096,
            backing: PathBuf::new(),
            partitioned: false,
            kind: LabKind::Zram,
        });
        self.save()?;
        let disksize = format!("/sys/block/{name}/disksize");
        std::fs::write(&disksize, size.to_string())
            .map_err(|e| Error::io(Path::new(&disksize), e))?;
        // udev makes the node; wait for it a little.
        for _ in 0..100 {
            if Path::new(&format!("/dev/{name}")).exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Ok(())
    }

    fn save(&self) -> Result<(), Error> {
        let st = State {
            pid: std::process::id(),
            dir: self.dir.clone(),
            devices: self.devices.clone(),
        };
        let text = serde_json::to_vec_pretty(&st).map_err(|e| Error::Usage(e.to_string()))?;
        std::fs::write(&self.state_file, text).map_err(|e| Error::io(&self.state_file, e))
    }

    /// Detaches and removes everything now (also done on drop).
    pub fn remove(&mut self) {
        remove_devices(&self.devices);
        self.devices.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_file(&self.state_file);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Two partitions of 45% each.
fn partition(backing: &Path, size: u64) -> Result<(), Error> {
    let part_mib = (size * 45 / 100) >> 20;
    if part_mib == 0 {
        return Err(Error::Usage(
            "--partitioned needs a lab size of at least 4M (--size)".into(),
        ));
    }
    use std::io::Write;
    let mut child = Command::new("sfdisk")
        .args(["--quiet", &backing.to_string_lossy()])
        .env("PATH", sbin_path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Error::Usage(format!("--partitioned needs sfdisk (package fdisk): {e}")))?;
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(
            format!("label: gpt\nsize={part_mib}MiB, type=linux\nsize={part_mib}MiB, type=linux\n")
                .as_bytes(),
        );
    }
    let ok = child.wait().is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(
            "sfdisk could not partition the lab image".into(),
        ))
    }
}

/// Detaches loop devices that still use the recorded backing files, then removes the files.
fn remove_devices(devices: &[LabDevice]) {
    for d in devices {
        if d.kind == LabKind::Zram {
            remove_zram(&d.name);
            continue;
        }
        let bf = format!("/sys/block/{}/loop/backing_file", d.name);
        let current = std::fs::read_to_string(&bf).unwrap_or_default();
        let current = current.trim().trim_end_matches(" (deleted)");
        if Path::new(current) == d.backing {
            for _ in 0..20 {
                let ok = Command::new("losetup")
                    .args(["-d", &d.path])
                    .env("PATH", sbin_path())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if ok {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let _ = std::fs::remove_file(&d.backing);
    }
}

/// Resets and removes a lab's zram device (`zram-control/hot_remove`); the kernel refuses
/// while something holds it open, so it is tried for a second.
fn remove_zram(name: &str) {
    let Some(id) = name.strip_prefix("zram") else {
        return;
    };
    for _ in 0..20 {
        if !Path::new("/sys/block").join(name).exists()
            || std::fs::write("/sys/class/zram-control/hot_remove", id).is_ok()
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Refuses a zram device of `size` when less than twice that much memory is available.
fn check_memory(size: u64) -> Result<(), Error> {
    let avail = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024);
    match avail {
        Some(a) if a < size.saturating_mul(2) => Err(Error::Usage(format!(
            "a zram lab device of {} needs that much memory once written, and {} is available: \
             use a smaller --size",
            crate::units::fmt_size(size),
            crate::units::fmt_size(a)
        ))),
        _ => Ok(()),
    }
}

/// Removes labs whose process is gone. Returns how many devices it detached or files it removed,
/// and how many lab directories no state file accounted for it removed.
pub fn cleanup_stale() -> (usize, usize) {
    let Ok(rd) = std::fs::read_dir(STATE_DIR) else {
        return (0, remove_orphan_dirs(&default_bases()));
    };
    let mut n = 0;
    for e in rd.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(st) = serde_json::from_str::<State>(&text) else {
            continue;
        };
        if st.pid == std::process::id() || crate::sys::pid_alive(st.pid) {
            continue;
        }
        remove_devices(&st.devices);
        n += st.devices.len().max(1);
        let _ = std::fs::remove_dir_all(&st.dir);
        let _ = std::fs::remove_file(e.path());
    }
    (n, remove_orphan_dirs(&default_bases()))
}

/// Removes lab directories (`blkscope-lab-PID`) in `bases` that no state file accounts for: a
/// lab on a disk (/var/tmp) outlives a reboot, which empties /run and its state files. Only
/// where the process is gone and no loop device uses a file in it. Returns how many.
fn remove_orphan_dirs(bases: &[PathBuf]) -> usize {
    let backing: Vec<String> = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("loop/backing_file")).ok())
        .collect();
    let mut n = 0;
    for base in bases {
        for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
            let Some(pid) = lab_dir_pid(&e.file_name().to_string_lossy()) else {
                continue;
            };
            let dir = e.path();
            let in_use = backing
                .iter()
                .any(|b| Path::new(b.trim()).starts_with(&dir));
            if pid == std::process::id() || crate::sys::pid_alive(pid) || in_use || !dir.is_dir() {
                continue;
            }
            if std::fs::remove_dir_all(&dir).is_ok() {
                n += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_goes_to_the_first_directory_not_in_ram() {
        let bases: Vec<PathBuf> = ["/run/user/0", "/tmp", "/var/tmp"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let fs = |tmp: &'static str| {
            move |p: &Path| {
                Some(match p.to_str().unwrap() {
                    "/run/user/0" => "tmpfs".to_string(),
                    "/tmp" => tmp.to_string(),
                    _ => "ext4".to_string(),
                })
            }
        };
        // Fedora, Arch, Debian 13: /tmp is a tmpfs too.
        let got = pick_base(&bases, fs("tmpfs"));
        println!("tmpfs /tmp: {got:?}");
        assert_eq!(got, Some((PathBuf::from("/var/tmp"), None)));
        let got = pick_base(&bases, fs("ext4"));
        println!("ext4 /tmp: {got:?}");
        assert_eq!(got, Some((PathBuf::from("/tmp"), None)));
        // Nothing but RAM: the first, with its file system named.
        let got = pick_base(&bases, |_| Some("ramfs".to_string()));
        println!("all ramfs: {got:?}");
        assert_eq!(
            got,
            Some((PathBuf::from("/run/user/0"), Some("ramfs".to_string())))
        );
        // A type that cannot be read is not taken for RAM.
        assert_eq!(
            pick_base(&bases, |_| None),
            Some((PathBuf::from("/run/user/0"), None))
        );
        assert_eq!(pick_base(&[], fs("ext4")), None);
    }

    #[test]
    fn lab_directories_carry_their_pid() {
        assert_eq!(lab_dir_pid(&lab_dir_name(4321)), Some(4321));
        for other in [
            "blkscope-lab-",
            "blkscope-lab-x1",
            "lab-12",
            "blkscope-lab-12.old",
        ] {
            assert_eq!(lab_dir_pid(other), None, "{other}");
        }
    }
}

//! Safety does not lean on mountinfo alone: a mount made in another mount namespace, or outside
//! a chroot, is invisible in /proc/self/mountinfo, and O_EXCL (EBUSY) has the last word.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;

const MIB: u64 = 1 << 20;

/// A shell in its own mount namespace that mounted `dev` and waits; killed on drop (the kernel
/// then unmounts with the namespace).
struct HiddenMount(Child, PathBuf);

impl HiddenMount {
    fn new(dev: &str) -> Self {
        let dir = tempfile::tempdir().unwrap().keep();
        let mut child = Command::new("unshare")
            .env("PATH", path_with_sbin())
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount {dev} {d} && echo mounted && exec sleep 60",
                d = dir.display()
            ))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "mounted", "mount in a new namespace");
        // The directory stays until the namespace is gone: removing a mount point here would
        // detach the mount there.
        Self(child, dir)
    }
}

impl Drop for HiddenMount {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir(&self.1);
    }
}

#[test]
fn a_mount_in_another_namespace_is_refused_by_o_excl() {
    if !require(true, &["losetup", "mkfs.ext4", "unshare", "mount"]) {
        return;
    }
    let lo = Loop::new(32 * MIB, None, false);
    // Inode tables and journal written now, not by ext4's lazy-init thread after the mount: its
    // writes would land in the window that must see none (a CI run saw 4090 sectors there).
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            lo.dev(),
        ],
    );
    let _m = HiddenMount::new(lo.dev());
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mountinfo.contains(&format!("/dev/{}", lo.name)),
        "the mount is invisible here"
    );
    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(
        (r["write_safety"].as_str(), code),
        (Some("blocked"), 4),
        "{r}"
    );
    assert!(reason_codes(&r).contains(&"busy".to_string()), "{r}");
    let (_, w0) = diskstats_sectors(&lo.name);
    let out = blkscope(&["run", lo.dev(), "--size", "1M", "--confirm", &lo.name]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert_eq!(diskstats_sectors(&lo.name).1, w0, "nothing written");
}

#[test]
fn a_mount_outside_a_chroot_is_refused_by_o_excl() {
    if !require(true, &["losetup", "mkfs.ext4", "mount", "chroot", "ldd"]) {
        return;
    }
    let lo = Loop::new(32 * MIB, None, false);
    sh("mkfs.ext4", &["-q", "-F", lo.dev()]);
    let _m = Mount::new(lo.dev());
    let c = Chroot::new(Path::new(env!("CARGO_BIN_EXE_blkscope")), true);
    // Inside the chroot the mount (outside its root) is not in mountinfo ...
    let mi = std::fs::read_to_string(c.dir.path().join("proc/self/mountinfo")).unwrap();
    assert!(!mi.is_empty());
    let out = c.blkscope(&["check", &format!("/dev/{}", lo.name), "--json"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(r["write_safety"], "blocked", "{r}");
    // ... so what refuses the write is O_EXCL (and, seen from inside, not `mounted`).
    let codes = reason_codes(&r);
    assert!(codes.contains(&"busy".to_string()), "{r}");
    assert!(
        !codes.contains(&"mounted".to_string()),
        "mountinfo cannot see it: {r}"
    );
    let out = c.blkscope(&["run", &format!("/dev/{}", lo.name), "--size", "1M"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(Path::new(lo.dev()).exists());
}

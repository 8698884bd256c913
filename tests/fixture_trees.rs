//! Discovery and the safety check on sysfs/procfs fixture trees (tests/fixtures, written by
//! make_fixtures.py) for layouts this machine cannot build: LVM on a partition, md RAID1, NVMe
//! namespaces with partitions, dm-crypt, and a mounted partition of a disk that is the target.

mod common;

use blkscope::SysRoot;
use blkscope::device::{DeviceTree, DiscoverOptions, Kind, ReasonCode, WriteSafety, discover};
use common::*;

fn tree(name: &str) -> DeviceTree {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ));
    discover(&root, &DiscoverOptions::default()).expect("discover fixture")
}

fn root_arg(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn codes(t: &DeviceTree, name: &str) -> Vec<ReasonCode> {
    t.get(name)
        .unwrap()
        .safety_reasons
        .iter()
        .map(|r| r.code)
        .collect()
}

fn verdict(t: &DeviceTree, name: &str) -> WriteSafety {
    t.get(name).unwrap().write_safety
}

#[test]
fn lvm_on_partition() {
    let t = tree("lvm-on-partition");
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    // Tree order: the disk, its partitions, the LVs on sda2, then the next disk.
    assert_eq!(names, ["sda", "sda1", "sda2", "dm-0", "dm-1", "sdb"]);
    let depths: Vec<usize> = t.devices.iter().map(|d| d.depth).collect();
    assert_eq!(depths, [0, 1, 1, 2, 2, 0]);

    let sda = t.get("sda").unwrap();
    assert_eq!(sda.model.as_deref(), Some("Samsung SSD 870"));
    assert_eq!(sda.transport.as_deref(), Some("sata"));
    assert_eq!(sda.physical_block_size, 4096);
    assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(sda.schedulers_available, ["mq-deadline", "none"]);
    assert!(sda.discard);
    assert_eq!(sda.partitions, ["sda1", "sda2"]);
    assert_eq!(sda.size_bytes, 500 << 30);
    // Partitions take queue limits from their disk.
    assert_eq!(t.get("sda2").unwrap().physical_block_size, 4096);
    assert_eq!(t.get("sda2").unwrap().holders, ["dm-0", "dm-1"]);

    let root_lv = t.get("dm-0").unwrap();
    assert_eq!(root_lv.kind, Kind::Dm);
    assert_eq!(root_lv.lsblk_type, "lvm");
    assert_eq!(root_lv.dm_name.as_deref(), Some("vg0-root"));
    assert_eq!(root_lv.mountpoints, ["/"]);
    assert!(t.get("dm-1").unwrap().swap);

    // The whole disk: a partition mounted, an LV on another mounted, another LV swap, held.
    let c = codes(&t, "sda");
    for want in [ReasonCode::Mounted, ReasonCode::Swap, ReasonCode::Held] {
        assert!(c.contains(&want), "sda lacks {want:?}: {c:?}");
    }
    assert_eq!(verdict(&t, "sda"), WriteSafety::Blocked);
    assert_eq!(verdict(&t, "sda2"), WriteSafety::Blocked);
    assert!(codes(&t, "sda2").contains(&ReasonCode::Held));
    assert_eq!(verdict(&t, "dm-0"), WriteSafety::Blocked);
    // An LV is built on sda2; sda2 is not mounted itself, but dm-1 (its sibling LV) is swap:
    // that does not block dm-0 for being swap, only for its own mount.
    assert_eq!(codes(&t, "dm-0"), [ReasonCode::Mounted]);
    assert_eq!(codes(&t, "dm-1"), [ReasonCode::Swap]);
    // The spinning disk next to it is free.
    let sdb = t.get("sdb").unwrap();
    assert!(sdb.rotational);
    assert_eq!(sdb.write_cache.as_deref(), Some("write through"));
    assert_eq!(sdb.write_safety, WriteSafety::Clear);
}

#[test]
fn mounted_partition_of_target_disk_blocks_the_disk() {
    let (r, code) = blkscope_json(&[
        "--root",
        &root_arg("lvm-on-partition"),
        "check",
        "/dev/sda",
        "--json",
    ]);
    assert_eq!(code, 4);
    assert_eq!(r["write_safety"], "blocked");
    let mounted: Vec<&str> = r["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["code"] == "mounted")
        .map(|x| x["detail"].as_str().unwrap())
        .collect();
    assert!(
        mounted
            .iter()
            .any(|d| d.contains("/dev/sda1") && d.contains("/boot/efi")),
        "{mounted:?}"
    );
    assert!(
        mounted.iter().any(|d| d.contains("/dev/dm-0")),
        "{mounted:?}"
    );
    // Reads stay allowed, with a note.
    assert_eq!(r["read_notes"][0]["code"], "read_disturbed");

    let (r, code) = blkscope_json(&[
        "--root",
        &root_arg("lvm-on-partition"),
        "check",
        "sdb",
        "--json",
    ]);
    assert_eq!((r["write_safety"].as_str(), code), (Some("clear"), 0));
}

#[test]
fn md_raid1_over_two_disks() {
    let t = tree("md-raid1");
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["sdc", "md0", "sdd"],
        "md0 is listed once, under its first disk"
    );
    let md = t.get("md0").unwrap();
    assert_eq!(md.kind, Kind::Md);
    assert_eq!(md.lsblk_type, "raid1");
    assert_eq!(md.md_level.as_deref(), Some("raid1"));
    assert_eq!(md.slaves, ["sdc", "sdd"]);
    // Octal escapes in mountinfo are undone.
    assert_eq!(md.mountpoints, ["/srv", "/srv/backup copy"]);
    for disk in ["sdc", "sdd"] {
        let d = t.get(disk).unwrap();
        assert_eq!(d.signatures[0].kind, "linux_raid_member");
        assert_eq!(d.signatures[0].offset, 0x1000);
        let c = codes(&t, disk);
        assert!(c.contains(&ReasonCode::Held), "{disk}: {c:?}");
        assert!(
            c.contains(&ReasonCode::Mounted),
            "{disk}: md0 above it is mounted: {c:?}"
        );
        assert_eq!(d.write_safety, WriteSafety::Blocked);
    }
    // The array is blocked for its own mount, not for its disks.
    assert_eq!(codes(&t, "md0"), [ReasonCode::Mounted]);
    let held = &t.get("sdc").unwrap().safety_reasons[..];
    assert!(
        held.iter()
            .any(|r| r.code == ReasonCode::Held && r.detail.contains("md0"))
    );
}

#[test]
fn nvme_namespaces_with_partitions() {
    let t = tree("nvme-namespaces");
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["nvme0n1", "nvme0n1p1", "nvme0n1p2", "nvme0n2"]);
    let ns1 = t.get("nvme0n1").unwrap();
    assert_eq!(ns1.kind, Kind::Nvme);
    assert_eq!(ns1.lsblk_type, "disk");
    assert_eq!(ns1.transport.as_deref(), Some("nvme"));
    assert_eq!(ns1.serial.as_deref(), Some("S5GXNX0T000001"));
    assert_eq!(ns1.nr_requests, Some(1023));
    let sig: Vec<(&str, u64)> = ns1
        .signatures
        .iter()
        .map(|s| (s.kind.as_str(), s.offset))
        .collect();
    assert_eq!(sig, [("PMBR", 0x1FE), ("gpt", 512)]);
    assert_eq!(
        ns1.write_safety,
        WriteSafety::Blocked,
        "p1 is mounted at /home"
    );
    // The blank partition beside the mounted one is clear; partitions have no model.
    let p2 = t.get("nvme0n1p2").unwrap();
    assert_eq!(p2.write_safety, WriteSafety::Clear);
    assert_eq!(p2.parent.as_deref(), Some("nvme0n1"));
    assert_eq!(p2.partition_number, Some(2));
    assert!(p2.model.is_none());
    // Namespace 2 carries a file system nobody mounted: confirm.
    let ns2 = t.get("nvme0n2").unwrap();
    assert_eq!(ns2.write_safety, WriteSafety::Confirm);
    assert_eq!(codes(&t, "nvme0n2"), [ReasonCode::Signature]);
    assert_eq!(ns2.signatures[0].kind, "ext4");
}

#[test]
fn dm_crypt_on_usb_partition() {
    let t = tree("dm-crypt");
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sde", "sde1", "dm-2"]);
    let sde = t.get("sde").unwrap();
    assert!(sde.removable);
    assert_eq!(sde.transport.as_deref(), Some("usb"));
    assert!(
        t.get("sde1").unwrap().removable,
        "a partition is removable with its disk"
    );
    let crypt = t.get("dm-2").unwrap();
    assert_eq!(crypt.lsblk_type, "crypt");
    assert_eq!(crypt.dm_name.as_deref(), Some("cryptdata"));
    assert_eq!(t.get("sde1").unwrap().signatures[0].kind, "crypto_LUKS");
    let c = codes(&t, "sde1");
    assert!(
        c.contains(&ReasonCode::Held) && c.contains(&ReasonCode::Mounted),
        "{c:?}"
    );
    let held = t
        .get("sde1")
        .unwrap()
        .safety_reasons
        .iter()
        .find(|r| r.code == ReasonCode::Held)
        .unwrap();
    assert!(held.detail.contains("dm-2 (cryptdata)"), "{}", held.detail);
    assert_eq!(verdict(&t, "sde"), WriteSafety::Blocked);
}

#[test]
fn list_json_has_the_documented_keys() {
    let (v, code) = blkscope_json(&["--root", &root_arg("nvme-namespaces"), "list", "--json"]);
    assert_eq!(code, 0);
    let d = device(&v, "nvme0n1p1");
    for key in [
        "name",
        "path",
        "kind",
        "size_bytes",
        "logical_block_size",
        "physical_block_size",
        "rotational",
        "read_only",
        "removable",
        "parent",
        "mountpoints",
        "holders",
        "swap",
        "signatures",
        "write_safety",
    ] {
        assert!(d.get(key).is_some(), "missing {key} in {d}");
    }
    assert_eq!(d["path"], "/dev/nvme0n1p1");
    assert_eq!(d["parent"], "nvme0n1");
    assert_eq!(d["mountpoints"][0], "/home");
    assert_eq!(d["write_safety"], "blocked");
    let ns1 = device(&v, "nvme0n1");
    assert!(ns1["parent"].is_null());
    assert_eq!(ns1["signatures"][1]["type"], "gpt");
    assert_eq!(ns1["signatures"][1]["offset"], 512);
}

#[test]
fn list_table_fits_80_columns_and_draws_the_tree() {
    let out = blkscope(&["--root", &root_arg("lvm-on-partition"), "list", "--ascii"]);
    assert!(out.status.success());
    let text = stdout_of(&out);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "too wide: {l}");
    }
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("NAME"));
    assert!(lines[1].starts_with("sda "));
    assert!(lines[2].starts_with("|-sda1"));
    assert!(lines[3].starts_with("`-sda2"));
    assert!(lines[4].starts_with("  |-dm-0"));
    assert!(lines[5].starts_with("  `-dm-1"));
    assert!(lines[6].starts_with("sdb ") && lines[6].contains("clear"));
    assert!(lines[1].contains("blocked") && lines[1].contains("MOUNTED"));
}

#[test]
fn check_unknown_device_in_fixture_is_one_line() {
    let out = blkscope(&["--root", &root_arg("md-raid1"), "check", "/dev/sdz"]);
    // A usage error (the device is not there), as a path that is not there is.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("sdz"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn missing_sysfs_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = blkscope(&["--root", dir.path().to_str().unwrap(), "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("sysfs"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_check_reads_only_its_target() {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/md-raid1",
        env!("CARGO_MANIFEST_DIR")
    ));
    let opts = DiscoverOptions {
        probe_only: Some("8:32".into()),
        ..Default::default()
    };
    let t = discover(&root, &opts).unwrap();
    assert_eq!(
        t.get("sdc").unwrap().signatures.len(),
        1,
        "the target is probed"
    );
    assert!(
        t.get("sdd").unwrap().signatures.is_empty(),
        "other devices are not read"
    );
}

#[test]
fn a_read_tests_check_reads_no_device_and_still_sees_mounts() {
    // `run` of a read test checks its target with `check_tree_unread`: the verdict on writes
    // hangs on nothing there, so the device is not read (on a fixture tree, its image under
    // dev/ is what a probe would read).
    use blkscope::device::safety::{check_tree, check_tree_unread};
    use blkscope::device::signatures::Blank;
    let root = SysRoot::at(root_arg("lvm-on-partition"));
    let (probed, _) = check_tree(&root, "sdb").unwrap();
    let (unread, tree) = check_tree_unread(&root, "sdb").unwrap();
    println!(
        "probed: {:?} {:?}\nunread: {:?} {:?}",
        probed.write_safety, probed.blank, unread.write_safety, unread.blank
    );
    assert!(matches!(probed.blank, Some(Blank::Blank { .. })));
    assert_eq!(probed.write_safety, WriteSafety::Clear);
    // Not read, so not seen blank: a write would ask for the name.
    assert!(matches!(unread.blank, Some(Blank::Unknown { .. })));
    assert_eq!(unread.write_safety, WriteSafety::Confirm);
    assert!(
        tree.unwrap()
            .devices
            .iter()
            .all(|d| d.signatures.is_empty())
    );
    // What blocks a write is read from sysfs and procfs, not from the device: still seen.
    let (sda, _) = check_tree_unread(&root, "sda").unwrap();
    let c: Vec<ReasonCode> = sda.reasons.iter().map(|r| r.code).collect();
    println!("sda unread: {:?} {c:?}", sda.write_safety);
    assert_eq!(sda.write_safety, WriteSafety::Blocked);
    for want in [ReasonCode::Mounted, ReasonCode::Swap, ReasonCode::Held] {
        assert!(c.contains(&want), "sda lacks {want:?}: {c:?}");
    }
}

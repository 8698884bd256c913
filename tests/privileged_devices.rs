//! Discovery and the safety check on real loop devices (root). Each test builds its own devices
//! over sparse files in a temporary directory and removes them when it ends.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;

use common::*;

const MIB: u64 = 1 << 20;

#[test]
fn blank_loop_is_clear() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let (report, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(report["write_safety"], "clear", "{report}");
    assert_eq!(code, 0);
    assert_eq!(report["device"], lo.name.as_str());
    // Clear because it was seen to be blank, and it says where it looked.
    assert_eq!(reason_codes(&report), ["blank"], "{report}");
    let detail = report["reasons"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("5M read") && detail.contains("0x00"),
        "{detail}"
    );

    let out = blkscope(&["check", lo.dev()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout_of(&out).contains("clear"));
}

#[test]
fn sector_size_4096_is_reported() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, Some(4096), false);
    let (list, code) = blkscope_json(&["list", "--json"]);
    assert_eq!(code, 0);
    let d = device(&list, &lo.name);
    assert_eq!(d["logical_block_size"], 4096, "{d}");
    assert_eq!(d["physical_block_size"], 4096, "{d}");
    assert_eq!(d["size_bytes"], 64 * MIB);
    assert_eq!(d["kind"], "loop");
    assert_eq!(d["type"], "loop");
    assert_eq!(d["loop_backing_file"], lo.image.path_str());
    assert_eq!(d["write_safety"], "clear");
}

#[test]
fn mounted_partition_blocks_disk_and_itself_but_not_its_sibling() {
    if !require(
        true,
        &["losetup", "sfdisk", "mkfs.ext4", "mkfs.vfat", "mount"],
    ) {
        return;
    }
    let image = Image::new(128 * MIB);
    // Two partitions written to the file before it becomes a device.
    sfdisk(
        image.path_str(),
        "label: gpt\nsize=48MiB, type=linux\nsize=48MiB, type=linux\n",
    );
    let lo = Loop::over(image, None, true);
    let p1 = lo.wait_part(1);
    let p2 = lo.wait_part(2);

    // Before anything is mounted: the disk has a partition table -> confirm.
    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(r["write_safety"], "confirm", "{r}");
    assert_eq!(code, 3);
    let codes = reason_codes(&r);
    assert!(codes.contains(&"partition_table".into()), "{codes:?}");
    assert!(codes.contains(&"partitions".into()), "{codes:?}");
    // A blank partition is clear.
    let (r, _) = blkscope_json(&["check", &p2, "--json"]);
    assert_eq!(r["write_safety"], "clear", "{r}");

    sh("mkfs.ext4", &["-q", "-F", &p1]);
    sh("mkfs.vfat", &[&p2]);
    let _m = Mount::new(&p1);

    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(r["write_safety"], "blocked", "{r}");
    assert_eq!(code, 4);
    let codes = reason_codes(&r);
    assert!(codes.contains(&"mounted".into()), "{codes:?}");
    // The kernel agrees: O_EXCL on the disk of a mounted partition is EBUSY.
    assert!(codes.contains(&"busy".into()), "{codes:?}");

    let (r, code) = blkscope_json(&["check", &p1, "--json"]);
    assert_eq!(r["write_safety"], "blocked", "{r}");
    assert_eq!(code, 4);
    assert!(reason_codes(&r).contains(&"mounted".into()));
    assert!(
        !r["read_notes"].as_array().unwrap().is_empty(),
        "reads on a mounted device get a note"
    );

    // The sibling carries a file system but nothing uses it: confirm.
    let (r, code) = blkscope_json(&["check", &p2, "--json"]);
    assert_eq!(r["write_safety"], "confirm", "{r}");
    assert_eq!(code, 3);
    let sig = r["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "signature")
        .expect("signature reason");
    assert!(sig["detail"].as_str().unwrap().contains("vfat"), "{sig}");

    // list agrees with check.
    let (list, _) = blkscope_json(&["list", "--json"]);
    let disk = device(&list, &lo.name);
    assert_eq!(disk["write_safety"], "blocked");
    let part1 = device(&list, &format!("{}p1", lo.name));
    assert_eq!(part1["parent"], lo.name.as_str());
    assert_eq!(part1["kind"], "part");
    assert_eq!(
        part1["mountpoints"][0],
        _m.dir.path().to_str().unwrap(),
        "{part1}"
    );
    let sigs: Vec<&str> = part1["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert_eq!(sigs, ["ext4"]);
}

#[test]
fn active_swap_is_blocked() {
    if !require(true, &["losetup", "mkswap", "swapon"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let _s = Swap::new(lo.dev());
    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(r["write_safety"], "blocked", "{r}");
    assert_eq!(code, 4);
    assert!(reason_codes(&r).contains(&"swap".into()), "{r}");
    let (list, _) = blkscope_json(&["list", "--json"]);
    assert_eq!(device(&list, &lo.name)["swap"], true);
}

#[test]
fn exclusive_holder_makes_it_busy() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(16 * MIB, None, false);
    let _held = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.path)
        .expect("O_EXCL open");
    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(r["write_safety"], "blocked", "{r}");
    assert_eq!(code, 4);
    assert_eq!(reason_codes(&r), ["busy"], "{r}");
}

#[test]
fn non_root_user_gets_one_clear_line() {
    if !require(true, &["losetup", "setpriv"]) {
        return;
    }
    let lo = Loop::new(16 * MIB, None, false);
    let out = blkscope_as_nobody(&["check", lo.dev()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("permission denied") && err.contains("root"),
        "{err}"
    );
    // `list` as a user cannot read device nodes: the blank test is unknown and says why,
    // instead of calling every device blocked (NOOPEN).
    let out = blkscope_as_nobody(&["list", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = device(&list, &lo.name);
    assert_eq!(d["write_safety"], "confirm", "{d}");
    assert_eq!(d["blank"]["state"], "unknown", "{d}");
    let codes: Vec<&str> = d["safety_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["unchecked"], "{d}");
}

/// `list --json` agrees with `lsblk -J -b -O` for SIZE, LOG-SEC, PHY-SEC, ROTA, RO, RM, TYPE,
/// PKNAME and MOUNTPOINTS, on every device lsblk shows, with a blank loop device, a 4K-sector one,
/// a partitioned one with a mounted partition, and an active swap present.
#[test]
fn list_agrees_with_lsblk() {
    if !require(
        true,
        &["losetup", "lsblk", "sfdisk", "mkfs.ext4", "mkswap", "mount"],
    ) {
        return;
    }
    let _blank = Loop::new(32 * MIB, None, false);
    let _big = Loop::new(32 * MIB, Some(4096), false);
    let image = Image::new(64 * MIB);
    sfdisk(image.path_str(), "label: dos\nsize=20MiB\nsize=20MiB\n");
    let parted = Loop::over(image, None, true);
    let p1 = parted.wait_part(1);
    let p2 = parted.wait_part(2);
    sh("mkfs.ext4", &["-q", "-F", &p1]);
    let _m = Mount::new(&p1);
    let _s = Swap::new(&p2);

    let lsblk = sh("lsblk", &["-J", "-b", "-O"]);
    let lsblk: serde_json::Value = serde_json::from_slice(&lsblk.stdout).unwrap();
    let (ours, _) = blkscope_json(&["list", "--json"]);

    fn flatten(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
        for d in v.as_array().into_iter().flatten() {
            out.push(d.clone());
            flatten(&d["children"], out);
        }
    }
    let mut theirs = Vec::new();
    flatten(&lsblk["blockdevices"], &mut theirs);
    assert!(theirs.len() >= 5, "lsblk shows our devices");
    let mut compared = 0;
    for t in &theirs {
        let name = t["name"].as_str().unwrap();
        let o = device(&ours, name);
        let ctx = format!("{name}: lsblk {t}\nblkscope {o}");
        assert_eq!(o["size_bytes"], t["size"], "SIZE {ctx}");
        assert_eq!(o["logical_block_size"], t["log-sec"], "LOG-SEC {ctx}");
        assert_eq!(o["physical_block_size"], t["phy-sec"], "PHY-SEC {ctx}");
        assert_eq!(o["rotational"], t["rota"], "ROTA {ctx}");
        assert_eq!(o["read_only"], t["ro"], "RO {ctx}");
        assert_eq!(o["removable"], t["rm"], "RM {ctx}");
        assert_eq!(o["type"], t["type"], "TYPE {ctx}");
        // PKNAME: a partition's disk, or (for dm/md) one of the devices under it.
        match t["pkname"].as_str() {
            None => assert!(o["parent"].is_null(), "PKNAME {ctx}"),
            Some(pk) => assert!(
                o["parent"] == pk || o["slaves"].as_array().unwrap().iter().any(|s| s == pk),
                "PKNAME {ctx}"
            ),
        }
        // MOUNTPOINTS: lsblk lists [SWAP] among them; blkscope has a `swap` flag.
        let mut lm: Vec<String> = t["mountpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m.as_str().map(String::from))
            .collect();
        let lsblk_swap = lm.iter().any(|m| m == "[SWAP]");
        lm.retain(|m| m != "[SWAP]");
        let mut om: Vec<String> = o["mountpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        lm.sort();
        om.sort();
        assert_eq!(om, lm, "MOUNTPOINTS {ctx}");
        assert_eq!(o["swap"], lsblk_swap, "SWAP {ctx}");
        compared += 1;
    }
    // And blkscope lists nothing that lsblk hides.
    assert_eq!(
        ours["devices"].as_array().unwrap().len(),
        theirs
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect::<std::collections::HashSet<_>>()
            .len()
    );
    assert!(compared >= 5);
}

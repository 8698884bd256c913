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
    // Clear because it was seen to be blank, and it says how it looked: 5 MiB at the ends and
    // 64 places, 16 KiB every 512 KiB of the first 16 MiB, and the backing file's data extents
    // (none: it is sparse).
    assert_eq!(reason_codes(&report), ["blank"], "{report}");
    let detail = report["reasons"][0]["detail"].as_str().unwrap();
    println!("{detail}");
    assert!(
        detail.contains("every data extent of its backing file read (5.4M at ")
            && detail.contains("0x00"),
        "{detail}"
    );
    assert_eq!(report["blank"]["read"], "data_extents", "{report}");

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
fn a_mounted_btrfs_is_seen_as_mounted_and_holds_its_files() {
    if !require(true, &["losetup", "mkfs.btrfs", "mount"]) {
        return;
    }
    // btrfs gives its mounts (and files) an anonymous device number, not the device's: the
    // mount is found by the source mountinfo names.
    let lo = Loop::new(256 * MIB, None, false);
    sh("mkfs.btrfs", &["-q", "-f", lo.dev()]);
    let m = Mount::new(lo.dev());
    let dir = m.dir.path().to_str().unwrap();
    let (r, code) = blkscope_json(&["check", lo.dev(), "--json"]);
    println!("check: {r}");
    assert_eq!(r["write_safety"], "blocked", "{r}");
    assert_eq!(code, 4);
    let mounted = r["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "mounted")
        .unwrap_or_else(|| panic!("no mounted reason: {r}"));
    assert!(
        mounted["detail"].as_str().unwrap().contains(dir),
        "{mounted}"
    );
    let (list, _) = blkscope_json(&["list", "--json"]);
    let d = device(&list, &lo.name);
    println!("list: {d}");
    assert_eq!(d["mountpoints"][0], dir, "{d}");
    assert_eq!(d["write_safety"], "blocked", "{d}");
    // A test in the file system watches the device under it.
    let (doc, code) = blkscope_json(&["run", dir, "--op", "write", "--size", "4M", "--json"]);
    assert_eq!(code, 0, "{doc}");
    println!("target: {}", doc["target"]);
    assert_eq!(
        doc["target"]["device"],
        lo.name.as_str(),
        "{}",
        doc["target"]
    );
    let ds = &doc["results"][0]["diskstats"][0];
    assert_eq!(ds["disk_device"], lo.name.as_str(), "{ds}");
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
    // Its signature reads "swap area signature", not "swap swap area signature".
    let details: Vec<&str> = r["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["detail"].as_str())
        .collect();
    println!("{details:?}");
    assert!(
        details
            .iter()
            .any(|d| d.starts_with("swap area signature at offset"))
            && !details.iter().any(|d| d.contains("swap swap")),
        "{details:?}"
    );
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

    // lsblk reads /proc/self/mountinfo in pieces, and a mount or unmount by a test running
    // beside this one can make it miss a line (seen once: MOUNTPOINTS [] for a partition this
    // test had mounted, that blkscope listed). So the two are read again, up to three times,
    // when they disagree; the last disagreement is the failure.
    let mut last = String::new();
    for attempt in 1..=3 {
        match compare_with_lsblk() {
            Ok(compared) => {
                println!("attempt {attempt}: {compared} devices agree with lsblk");
                assert!(compared >= 5, "compared {compared}");
                return;
            }
            Err(e) => {
                println!("attempt {attempt}: {e}");
                last = e;
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
    }
    panic!("{last}");
}

/// One reading of `lsblk -J -b -O` and `blkscope list --json`, compared: how many devices, or
/// the first disagreement.
fn compare_with_lsblk() -> Result<usize, String> {
    let lsblk = sh("lsblk", &["-J", "-b", "-O"]);
    let lsblk: serde_json::Value = serde_json::from_slice(&lsblk.stdout).unwrap();
    let (ours, _) = blkscope_json(&["list", "--json"]);

    fn flatten(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
        for d in v.as_array().into_iter().flatten() {
            out.push(d.clone());
            flatten(&d["children"], out);
        }
    }
    fn same<T: PartialEq + std::fmt::Debug>(
        a: T,
        b: T,
        what: &str,
        ctx: &str,
    ) -> Result<(), String> {
        if a == b {
            Ok(())
        } else {
            Err(format!("{what}: blkscope {a:?}, lsblk {b:?}; {ctx}"))
        }
    }
    let mut theirs = Vec::new();
    flatten(&lsblk["blockdevices"], &mut theirs);
    if theirs.len() < 5 {
        return Err(format!(
            "lsblk shows {} devices, not ours: {lsblk}",
            theirs.len()
        ));
    }
    let mut compared = 0;
    for t in &theirs {
        let name = t["name"].as_str().unwrap();
        // A device made or removed by a test beside this one between the two readings is a
        // disagreement to read again, not a panic.
        let Some(o) = ours["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
        else {
            return Err(format!("{name} is in lsblk but not in list --json"));
        };
        let ctx = format!("{name}: lsblk {t}\nblkscope {o}");
        same(&o["size_bytes"], &t["size"], "SIZE", &ctx)?;
        same(&o["logical_block_size"], &t["log-sec"], "LOG-SEC", &ctx)?;
        same(&o["physical_block_size"], &t["phy-sec"], "PHY-SEC", &ctx)?;
        same(&o["rotational"], &t["rota"], "ROTA", &ctx)?;
        same(&o["read_only"], &t["ro"], "RO", &ctx)?;
        same(&o["removable"], &t["rm"], "RM", &ctx)?;
        same(&o["type"], &t["type"], "TYPE", &ctx)?;
        // PKNAME: a partition's disk, or (for dm/md) one of the devices under it.
        let pk_ok = match t["pkname"].as_str() {
            None => o["parent"].is_null(),
            Some(pk) => {
                o["parent"] == pk || o["slaves"].as_array().unwrap().iter().any(|s| s == pk)
            }
        };
        if !pk_ok {
            return Err(format!("PKNAME {ctx}"));
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
        same(&om, &lm, "MOUNTPOINTS", &ctx)?;
        same(
            &o["swap"],
            &serde_json::Value::Bool(lsblk_swap),
            "SWAP",
            &ctx,
        )?;
        compared += 1;
    }
    // And blkscope lists nothing that lsblk hides.
    let names = theirs
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect::<std::collections::HashSet<_>>()
        .len();
    same(
        ours["devices"].as_array().unwrap().len(),
        names,
        "device count",
        "",
    )?;
    Ok(compared)
}

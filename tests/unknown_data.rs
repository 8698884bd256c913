//! "I recognise nothing" is not "it is empty": devices that hold data in no known format (random
//! bytes as plain dm-crypt leaves them, a tar stream, data only in the middle or in the last
//! MiB) need the name typed back, and a write without it writes nothing. Known formats keep
//! their own reason; a device of one repeated byte (0xff after a flash erase) is blank.

mod common;

use std::os::unix::fs::FileExt;

use common::*;

const MIB: u64 = 1 << 20;

/// An image of `size` with `patches` (offset, bytes) written into it.
fn image_with(size: u64, patches: &[(u64, Vec<u8>)]) -> Image {
    let img = Image::new(size);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img.path)
        .unwrap();
    for (off, data) in patches {
        f.write_all_at(data, *off).unwrap();
    }
    img
}

/// Random bytes whose first one is not zero, so that where the data starts is where the blank
/// test finds its first non-zero byte (a zero first byte, 1 time in 256, moved the offset the
/// check names by one and failed `data_only_in_the_last_mib` once in CI).
fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    fastrand::fill(&mut v);
    if let Some(b) = v.first_mut() {
        *b |= 1;
    }
    v
}

/// Checks that `lo` needs confirmation for `code`, and that a write without it is refused with
/// exit 3 and reaches the device not at all.
fn refused_without_confirm(lo: &Loop, code: &str) -> serde_json::Value {
    settle(&lo.name);
    let (r, exit) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("confirm"), 3),
        "{r}"
    );
    assert!(reason_codes(&r).contains(&code.to_string()), "{r}");
    let (_, w0) = diskstats_sectors(&lo.name);
    let out = blkscope(&["run", lo.dev(), "--size", "1M"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("--confirm {}", lo.name)), "{err}");
    let (_, w1) = diskstats_sectors(&lo.name);
    assert_eq!(w1, w0, "sectors written without a confirmation");
    r
}

fn data_reason(r: &serde_json::Value) -> String {
    r["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "data")
        .and_then(|x| x["detail"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn random_bytes_as_plain_dm_crypt_leaves_them() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::over(image_with(64 * MIB, &[(0, random(4 << 20))]), None, false);
    let r = refused_without_confirm(&lo, "data");
    let d = data_reason(&r);
    assert!(
        d.contains("not blank") && d.contains("no known format"),
        "{d}"
    );
}

#[test]
fn a_tar_stream_on_the_raw_device() {
    if !require(true, &["losetup", "tar"]) {
        return;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("notes.txt"), b"somebody's notes\n").unwrap();
    let tar = std::process::Command::new("tar")
        .args(["-c", "-f", "-", "-C", src.path().to_str().unwrap(), "."])
        .output()
        .unwrap();
    assert!(tar.status.success());
    let lo = Loop::over(image_with(64 * MIB, &[(0, tar.stdout)]), None, false);
    refused_without_confirm(&lo, "data");
}

#[test]
fn data_only_in_the_middle() {
    if !require(true, &["losetup"]) {
        return;
    }
    // 2 MiB of a database file at 30 MiB: more than the distance between two samples.
    let lo = Loop::over(
        image_with(64 * MIB, &[(30 * MIB + 4096, random(2 << 20))]),
        None,
        false,
    );
    let r = refused_without_confirm(&lo, "data");
    let d = data_reason(&r);
    assert!(d.contains("offset 0x1"), "the offset is in the middle: {d}");
}

#[test]
fn data_only_in_the_last_mib() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::over(
        image_with(64 * MIB, &[(64 * MIB - 100 * 1024, random(4096))]),
        None,
        false,
    );
    let r = refused_without_confirm(&lo, "data");
    let d = data_reason(&r);
    assert!(
        d.contains(&format!("{:#x}", 64 * MIB - 100 * 1024)),
        "names where: {d}"
    );
}

#[test]
fn f2fs_and_squashfs_are_known_formats() {
    if !require(true, &["losetup", "mkfs.f2fs", "mksquashfs"]) {
        return;
    }
    let img = Image::new(64 * MIB);
    sh("mkfs.f2fs", &["-q", "-f", img.path_str()]);
    let lo = Loop::over(img, None, false);
    let r = refused_without_confirm(&lo, "signature");
    assert!(r.to_string().contains("f2fs"), "{r}");

    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a"), b"a").unwrap();
    let out = tempfile::tempdir().unwrap();
    let sq = out.path().join("x.sqfs");
    sh(
        "mksquashfs",
        &[src.path().to_str().unwrap(), sq.to_str().unwrap(), "-quiet"],
    );
    // A squashfs image written to the start of a larger device, as `dd` of an installer does.
    let bytes = std::fs::read(&sq).unwrap();
    let lo = Loop::over(image_with(64 * MIB, &[(0, bytes)]), None, false);
    let r = refused_without_confirm(&lo, "signature");
    assert!(r.to_string().contains("squashfs"), "{r}");
}

#[test]
fn erased_flash_of_0xff_is_blank_and_says_so() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::over(
        image_with(64 * MIB, &[(0, vec![0xff; 64 << 20])]),
        None,
        false,
    );
    let (r, exit) = blkscope_json(&["check", lo.dev(), "--json"]);
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("clear"), 0),
        "{r}"
    );
    assert_eq!(reason_codes(&r), ["blank"], "{r}");
    let d = r["reasons"][0]["detail"].as_str().unwrap();
    assert!(d.contains("0xff") && d.contains("flash erase"), "{d}");
}

#[test]
fn list_reports_the_blank_test() {
    if !require(true, &["losetup"]) {
        return;
    }
    let blank = Loop::new(16 * MIB, None, false);
    let data = Loop::over(
        image_with(16 * MIB, &[(8 * MIB, random(MIB as usize))]),
        None,
        false,
    );
    let (list, code) = blkscope_json(&["list", "--json"]);
    assert_eq!(code, 0);
    let b = device(&list, &blank.name);
    assert_eq!(b["blank"]["state"], "blank", "{b}");
    assert_eq!(b["blank"]["byte"], 0, "{b}");
    assert_eq!(b["write_safety"], "clear", "{b}");
    let d = device(&list, &data.name);
    assert_eq!(d["blank"]["state"], "data", "{d}");
    assert_eq!(d["write_safety"], "confirm", "{d}");
    // Without reading device nodes the blank test cannot run: unknown, and not clear.
    let (list, _) = blkscope_json(&["list", "--json", "--no-signatures"]);
    let b = device(&list, &blank.name);
    assert_eq!(b["blank"]["state"], "unknown", "{b}");
    assert_eq!(b["write_safety"], "confirm", "{b}");
}

/// A file system made in an image of its own (`mkfs` on a plain file, no root needed), then
/// copied into `disk` at `at` without writing its zero blocks (the disk stays sparse).
fn format_into(disk: &Image, at: u64, size: u64, mkfs: &[&str]) {
    let part = Image::new(size);
    let out = std::process::Command::new(mkfs[0])
        .env("PATH", path_with_sbin())
        .args(&mkfs[1..])
        .arg(&part.path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{mkfs:?}: {out:?}");
    let src = std::fs::File::open(&part.path).unwrap();
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .open(&disk.path)
        .unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut off = 0;
    while off < size {
        let n = src.read_at(&mut buf, off).unwrap();
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|&b| b != 0) {
            dst.write_all_at(&buf[..n], at + off).unwrap();
        }
        off += n as u64;
    }
}

/// Zeroes the first `n` bytes of `disk`, as `dd if=/dev/zero of=DISK bs=1M count=N` does.
fn zero_start(disk: &Image, n: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&disk.path)
        .unwrap();
    f.write_all_at(&vec![0u8; n as usize], 0).unwrap();
}

/// The most common advice for starting a disk over (`dd if=/dev/zero bs=1M count=1`, or a tool
/// that rewrites only the table) leaves the partitions' file systems intact behind it. Such a
/// device is not blank: the format is found where partitions begin (or by a copy it keeps) and
/// named, and a write needs the device's name typed back. A blank device stays clear.
#[test]
fn a_wiped_partition_table_with_file_systems_behind_it_needs_confirmation() {
    if !require(
        true,
        &["losetup", "sfdisk", "mkfs.ext4", "mkfs.xfs", "cryptsetup"],
    ) {
        return;
    }
    let cases: [(&str, &str, u64, &[&str], &str); 4] = [
        (
            "gpt",
            "ext4",
            128 * MIB,
            &["mkfs.ext4", "-q", "-F"],
            "ext4 at 1 MiB (offset 1048576)",
        ),
        (
            "dos",
            "ext4",
            128 * MIB,
            &["mkfs.ext4", "-q", "-F"],
            "ext4 at 1 MiB (offset 1048576)",
        ),
        (
            "gpt",
            "xfs",
            400 * MIB,
            &["mkfs.xfs", "-q", "-f"],
            "xfs at 1 MiB (offset 1048576)",
        ),
        (
            "gpt",
            "luks2",
            64 * MIB,
            &[
                "cryptsetup",
                "luksFormat",
                "--type",
                "luks2",
                "--batch-mode",
                "--key-file",
                "-",
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
            ],
            "crypto_LUKS at 1 MiB (offset 1048576)",
        ),
    ];
    for (label, fs, size, mkfs, named) in cases {
        let disk = Image::new(size + 2 * MIB);
        sfdisk(disk.path_str(), &format!("label: {label}\nstart=2048\n"));
        if fs == "luks2" {
            // luksFormat reads the key from stdin with --key-file -.
            let part = Image::new(size);
            let mut c = std::process::Command::new("cryptsetup")
                .env("PATH", path_with_sbin())
                .args(&mkfs[1..])
                .arg(&part.path)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"blkscope-test-key")
                .unwrap();
            assert!(c.wait().unwrap().success(), "cryptsetup luksFormat");
            let src = std::fs::read(&part.path).unwrap();
            let head = &src[..(16 * MIB as usize).min(src.len())];
            let dst = std::fs::OpenOptions::new()
                .write(true)
                .open(&disk.path)
                .unwrap();
            dst.write_all_at(head, MIB).unwrap();
        } else {
            format_into(&disk, MIB, size, mkfs);
        }
        zero_start(&disk, MIB);
        let lo = Loop::over(disk, None, false);
        let r = refused_without_confirm(&lo, "data");
        let why = data_reason(&r);
        println!("{label} + {fs}: {why}");
        assert!(
            why.contains(named)
                && why.contains("a table was probably wiped")
                && why.contains("testdisk"),
            "{label} + {fs}: {r}"
        );
        let (list, _) = blkscope_json(&["list", "--json"]);
        let d = device(&list, &lo.name);
        assert_eq!(d["hidden_signature"]["start"], MIB, "{d}");
        assert_eq!(d["hidden_signature"]["found"], "partition", "{d}");
    }

    // The file system's own start overwritten too (the first 2 MiB zeroed): its backup
    // superblock in block group 1 still names it.
    let disk = Image::new(130 * MIB);
    sfdisk(disk.path_str(), "label: dos\nstart=2048\n");
    format_into(&disk, MIB, 128 * MIB, &["mkfs.ext4", "-q", "-F"]);
    zero_start(&disk, 2 * MIB);
    let lo = Loop::over(disk, None, false);
    let r = refused_without_confirm(&lo, "data");
    let why = data_reason(&r);
    println!("ext4 with its start zeroed: {why}");
    assert!(
        why.contains("a backup superblock of ext") && why.contains("begins at 1 MiB"),
        "{r}"
    );

    // Nothing behind a blank device: it stays clear.
    let blank = Loop::new(64 * MIB, None, false);
    settle(&blank.name);
    let (r, exit) = blkscope_json(&["check", blank.dev(), "--json"]);
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("clear"), 0),
        "{r}"
    );
    assert_eq!(reason_codes(&r), ["blank"], "{r}");
}

/// Copies file systems keep further in than the start a wipe zeroes: ext's backups in later
/// sparse groups (1 KiB and 4 KiB blocks), XFS's secondary superblocks, btrfs's mirror, NTFS's
/// backup boot sector. Each made with the real mkfs in a partition at 1 MiB, then the start
/// zeroed past the copies the old probe knew: confirm, with the format, the offset of its copy
/// and the tool that recovers it named.
#[test]
fn backups_further_in_name_the_file_system_behind_a_zeroed_start() {
    if !require(
        true,
        &[
            "losetup",
            "sfdisk",
            "mkfs.ext4",
            "mkfs.xfs",
            "mkfs.btrfs",
            "mkntfs",
        ],
    ) {
        return;
    }
    // (label, disk, fs size, mkfs, zeroed, named, magic offset if known, recover)
    let ext1k_group3 = MIB + 1024 * (1 + 3 * 8192) + 0x38;
    let ext4k_group3 = MIB + 3 * (128 * MIB) + 0x38;
    type Case<'a> = (
        &'a str,
        u64,
        u64,
        &'a [&'a str],
        u64,
        &'a str,
        Option<u64>,
        &'a str,
    );
    let cases: [Case; 5] = [
        // A plain mkfs.ext4 in 511 MiB picks 1 KiB blocks; 16 MiB zeroed takes group 1's copy.
        (
            "dos",
            512 * MIB,
            511 * MIB,
            &["mkfs.ext4", "-q", "-F"],
            16 * MIB,
            "ext4",
            Some(ext1k_group3),
            "e2fsck -b 24577 -B 1024",
        ),
        // 4 KiB blocks, 130 MiB zeroed: group 1's copy at 129 MiB is gone, group 3's is not.
        (
            "dos",
            1024 * MIB,
            1023 * MIB,
            &["mkfs.ext4", "-q", "-F", "-b", "4096"],
            130 * MIB,
            "ext4",
            Some(ext4k_group3),
            "e2fsck -b 98304 -B 4096",
        ),
        (
            "dos",
            1024 * MIB,
            1023 * MIB,
            &["mkfs.xfs", "-q", "-f"],
            2 * MIB,
            "xfs",
            None,
            "xfs_repair",
        ),
        (
            "dos",
            1024 * MIB,
            1023 * MIB,
            &["mkfs.btrfs", "-q", "-f"],
            16 * MIB,
            "btrfs",
            Some(MIB + (64 * MIB) + 0x40),
            "btrfs rescue",
        ),
        (
            "dos",
            1024 * MIB,
            1023 * MIB,
            &["mkntfs", "-Q", "-q", "-F"],
            16 * MIB,
            "ntfs",
            Some(1024 * MIB - 512 + 3),
            "testdisk",
        ),
    ];
    for (label, disk_size, size, mkfs, zeroed, named, magic, tool) in cases {
        let disk = Image::new(disk_size);
        sfdisk(disk.path_str(), &format!("label: {label}\nstart=2048\n"));
        format_into(&disk, MIB, size, mkfs);
        zero_start(&disk, zeroed);
        let lo = Loop::over(disk, None, false);
        let r = refused_without_confirm(&lo, "data");
        let why = data_reason(&r);
        println!("{} with {} MiB zeroed: {why}", mkfs[0], zeroed / MIB);
        assert!(
            why.contains(&format!(" of {named} at offset"))
                && why.contains("begins at 1 MiB")
                && why.contains(tool),
            "{}: {r}",
            mkfs[0]
        );
        let (list, _) = blkscope_json(&["list", "--json"]);
        let d = device(&list, &lo.name);
        let h = &d["hidden_signature"];
        assert_eq!(
            (h["found"].as_str(), h["start"].as_u64(), h["type"].as_str()),
            (Some("backup"), Some(MIB), Some(named)),
            "{d}"
        );
        if let Some(at) = magic {
            assert_eq!(h["offset"], at, "{d}");
        }
        // Past what was zeroed: a copy, not the original.
        assert!(h["offset"].as_u64() > Some(zeroed), "{d}");
    }
}

/// A blank test that samples misses data between its places; a loop device's backing file
/// says where data can be (SEEK_DATA), and that is read too: 4 KiB of random data at 300 MiB
/// of an otherwise sparse 1 GiB file is found, at its offset.
#[test]
fn data_where_the_backing_file_has_it_is_found_between_the_samples() {
    if !require(true, &["losetup"]) {
        return;
    }
    let at = 300 * MIB;
    let lo = Loop::over(image_with(1024 * MIB, &[(at, random(4096))]), None, false);
    let r = refused_without_confirm(&lo, "data");
    let d = data_reason(&r);
    println!("{d}");
    assert!(d.contains(&format!("offset {at:#x}")), "{r}");
    // A blank file-backed device says its data extents were read.
    let blank = Loop::new(64 * MIB, None, false);
    settle(&blank.name);
    let (r, exit) = blkscope_json(&["check", blank.dev(), "--json"]);
    println!("{r}");
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("clear"), 0),
        "{r}"
    );
    assert_eq!(r["blank"]["read"], "data_extents", "{r}");
}

/// A place between the blank test's samples of a device of `size` bytes, 4 KiB aligned, in
/// its second half.
fn between_samples(size: u64) -> u64 {
    let r = blkscope::device::signatures::blank_regions(size);
    r.windows(2)
        .filter(|w| w[0].0 > size / 2 && w[1].0 > w[0].0 + w[0].1 + 8192)
        .map(|w| (w[0].0 + w[0].1 + 4096) & !0xfff)
        .next()
        .expect("a gap between samples")
}

/// With nothing to say where data is (the backing file deleted, as a device whose data the
/// samples miss), `check --full` reads every byte: data between the samples is found and its
/// offset named; a blank device says it was read whole, in how long. A small device is read
/// whole without being asked.
#[test]
fn a_whole_read_finds_data_between_the_samples() {
    if !require(true, &["losetup"]) {
        return;
    }
    // Deleted under the loop device: its backing file cannot be opened to ask for extents.
    let over_deleted = |size: u64, patches: &[(u64, Vec<u8>)]| {
        let img = image_with(size, patches);
        let lo = Loop::over(img, None, false);
        let backing =
            std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", lo.name)).unwrap();
        std::fs::remove_file(backing.trim()).unwrap();
        settle(&lo.name);
        lo
    };
    let size = 256 * MIB;
    let at = between_samples(size) + 17;
    let lo = over_deleted(size, &[(at, b"x".to_vec())]);
    let (r, exit) = blkscope_json(&["check", lo.dev(), "--json", "--full"]);
    println!("--full with data at {at:#x}: {r}");
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("confirm"), 3),
        "{r}"
    );
    assert_eq!(
        r["blank"],
        serde_json::json!({"state": "data", "offset": at}),
        "{r}"
    );
    let blank = over_deleted(size, &[]);
    let out = blkscope(&["check", blank.dev(), "--full"]);
    let text = stdout_of(&out);
    println!("{text}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text.contains("clear: read whole (256M in "), "{text}");
    // 8 MiB: the samples cover most of it, and the rest takes well under 2 s at their rate.
    let small = 8 * MIB;
    let at = between_samples(small) + 5;
    let lo = over_deleted(small, &[(at, b"y".to_vec())]);
    let (r, exit) = blkscope_json(&["check", lo.dev(), "--json"]);
    println!("8 MiB, data at {at:#x}, no --full: {r}");
    assert_eq!(
        (r["write_safety"].as_str(), exit),
        (Some("confirm"), 3),
        "{r}"
    );
    assert_eq!(r["blank"]["offset"], at, "{r}");
}

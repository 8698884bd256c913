//! Property tests (proptest) for everything blkscope parses from users or the kernel: sizes and
//! durations, /proc/diskstats, mountinfo, /proc/swaps, suite TOML, and the signature probe and
//! blank test over random bytes. None may panic; what is valid must come out right.

use std::io::Write;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use blkscope::device::mounts::{MountTable, SwapTable};
use blkscope::device::signatures::{Blank, blank_regions, probe, scan_blank};
use blkscope::stats::{Snapshot, between};
use blkscope::units::{parse_duration, parse_interval, parse_size, parse_size_or_percent};

proptest! {
    #[test]
    fn any_text_as_a_size_or_duration_is_an_answer_not_a_panic(s in "\\PC{0,24}") {
        let _ = parse_size(&s);
        let _ = parse_size_or_percent(&s);
        let _ = parse_duration(&s);
        let _ = parse_interval(&s);
    }

    #[test]
    fn sizes_with_units_are_exact(n in 0u64..(1 << 20), unit in 0usize..9) {
        let (u, m) = [("", 1u64), ("k", 1 << 10), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30),
            ("T", 1 << 40), ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000)][unit];
        prop_assert_eq!(parse_size(&format!("{n}{u}")), Ok(n * m));
    }

    #[test]
    fn sizes_that_overflow_are_refused(n in (u64::MAX >> 9)..u64::MAX) {
        let text = format!("{n}T");
        prop_assert!(parse_size(&text).is_err(), "{} accepted", text);
    }

    #[test]
    fn durations_are_exact_and_bounded(ms in 0u64..10_000_000) {
        prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        let long = format!("{ms}000000h");
        prop_assert!(parse_duration(&long).is_err() || ms == 0, "{} accepted", long);
        prop_assert_eq!(parse_interval(&format!("{ms}ms")).is_ok(), ms >= 1);
    }

    #[test]
    fn any_diskstats_text_parses_or_errs(s in "(\\PC{0,80}\n){0,6}") {
        let _ = Snapshot::parse(&s, Instant::now());
    }

    #[test]
    fn diskstats_lines_give_sane_iostat_figures(
        a in proptest::collection::vec(0u64..(1u64 << 40), 17),
        b in proptest::collection::vec(0u64..(1u64 << 40), 17),
        ms in 1u64..10_000,
    ) {
        let line = |v: &[u64]| {
            let f: Vec<String> = v.iter().map(u64::to_string).collect();
            format!("   7       0 loop0 {}\n", f.join(" "))
        };
        let t0 = Instant::now();
        let s0 = Snapshot::parse(&line(&a), t0).unwrap();
        let s1 = Snapshot::parse(&line(&b), t0 + Duration::from_millis(ms)).unwrap();
        for x in between(&s0, &s1) {
            for c in blkscope::stats::iostat::COLUMNS {
                let v = x.column(c).unwrap();
                prop_assert!(v.is_finite() && v >= 0.0, "{} = {}", c, v);
            }
        }
    }

    #[test]
    fn any_mountinfo_or_swaps_text_is_an_answer(s in "(\\PC{0,100}\n){0,5}") {
        let _ = MountTable::parse(&s);
        let t = SwapTable::parse(&s);
        let _ = t.contains_device("loop0", Some("vg-swap"), false);
    }

    #[test]
    fn mountinfo_lines_are_found_by_device_number(
        major in 0u32..300, minor in 0u32..300, dir in "[a-z]{1,8}( [a-z]{1,4})?",
    ) {
        let escaped = dir.replace(' ', "\\040");
        let text = format!(
            "36 35 {major}:{minor} / /mnt/{escaped} rw,noatime master:1 - ext4 /dev/x rw\n"
        );
        let t = MountTable::parse(&text).unwrap();
        prop_assert_eq!(
            t.mountpoints(&format!("{major}:{minor}"), "y", None, false),
            [format!("/mnt/{dir}")]
        );
    }

    #[test]
    fn any_suite_toml_is_a_suite_or_a_reason_with_a_line(s in "(\\PC{0,60}\n){0,8}") {
        if let Err(e) = blkscope::suite::parse(&s, std::path::Path::new("x.toml")) {
            let lines = s.lines().count().max(1);
            prop_assert!(e.line.is_none_or(|l| l >= 1 && l <= lines + 1), "{}", e);
            prop_assert!(!e.reason.is_empty());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random bytes, with magics sprinkled at the offsets the probe looks at: it never fails,
    /// never panics, and reports nothing beyond the size it was given, even when the file is
    /// longer (a device is never read past its end).
    #[test]
    fn the_probe_over_random_bytes(
        size in 0usize..(300 << 10),
        extra in 0usize..8192,
        seed in any::<u64>(),
        sprinkle in proptest::collection::vec((0usize..0x11000, 0usize..6), 0..8),
    ) {
        let magics: [&[u8]; 6] =
            [b"EFI PART", b"LABELONE", b"\x55\xaa", b"hsqs", b"BEA01", b"LUKS\xba\xbe"];
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut buf = vec![0u8; size + extra];
        rng.fill(&mut buf);
        for (off, k) in sprinkle {
            let m = magics[k];
            if off + m.len() <= buf.len() {
                buf[off..off + m.len()].copy_from_slice(m);
            }
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&buf).unwrap();
        for sector in [0u32, 512, 4096] {
            let sigs = probe(&f, size as u64, sector).unwrap();
            for s in &sigs {
                prop_assert!(s.offset < size as u64, "{:?} past {}", s, size);
            }
        }
        match scan_blank(&f, size as u64, &Default::default()).unwrap() {
            Blank::Data { offset } => prop_assert!(offset < size as u64),
            Blank::Blank { bytes_read, .. } => prop_assert!(bytes_read <= size as u64),
            Blank::Unknown { .. } => prop_assert_eq!(size, 0),
        }
    }

    #[test]
    fn blank_regions_stay_inside_and_in_order(size in 0u64..(1u64 << 50)) {
        let r = blank_regions(size);
        let mut end = 0;
        let mut total = 0;
        for (o, l) in r {
            prop_assert!(o >= end && o + l <= size, "{} {} in {}", o, l, size);
            end = o + l;
            total += l;
        }
        prop_assert!(total <= 6 << 20);
    }
}

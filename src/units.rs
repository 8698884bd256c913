//! Human-readable sizes.

/// Formats bytes with binary units the way lsblk does (`512`, `4K`, `100M`, `1.5G`).
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "K", "M", "G", "T", "P", "E"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    let s = format!("{v:.1}");
    let s = s.strip_suffix(".0").unwrap_or(&s);
    format!("{s}{}", UNITS[i])
}

/// Bytes as exactly as a command line takes them, in the largest binary unit that divides
/// them (`1G`, `512M`, `4k`, else the number): what dd, fio and blkscope's own options read back
/// as the same number.
pub fn exact_size(b: u64) -> String {
    for (unit, m) in [("G", 1u64 << 30), ("M", 1 << 20), ("k", 1 << 10)] {
        if b >= m && b.is_multiple_of(m) {
            return format!("{}{unit}", b / m);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    use super::{exact_size, fmt_size};

    #[test]
    fn exact_sizes_read_back_as_the_same_number() {
        for b in [
            0u64,
            1,
            4095,
            4096,
            1 << 20,
            (1 << 20) + 4096,
            3 << 30,
            (1 << 30) + 1,
        ] {
            let s = exact_size(b);
            let back = crate::engine::job::parse_size(&s).unwrap();
            println!("{b} -> {s} -> {back}");
            assert_eq!(back, b, "{s}");
        }
        assert_eq!(exact_size(512 << 20), "512M");
        assert_eq!(exact_size(1_073_741_824), "1G");
    }

    #[test]
    fn sizes() {
        assert_eq!(fmt_size(0), "0B");
        assert_eq!(fmt_size(512), "512B");
        assert_eq!(fmt_size(4096), "4K");
        assert_eq!(fmt_size(100 << 20), "100M");
        assert_eq!(fmt_size(1536 << 20), "1.5G");
        assert_eq!(fmt_size(256 << 30), "256G");
    }
}

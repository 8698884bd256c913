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

#[cfg(test)]
mod tests {
    use super::fmt_size;

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

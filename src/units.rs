//! Sizes and durations: printed as people read them, and parsed as dd and fio read them (every
//! option, suite file and form field that takes one goes through here).

use std::time::Duration;

/// Which way another process's bytes went: `read 2M`, `wrote 1M`, `read 2M and wrote 1M`,
/// each size followed by `per` (`/s` for rates).
pub fn read_wrote(read: u64, write: u64, per: &str) -> String {
    match (read, write) {
        (r, 0) => format!("read {}{per}", fmt_size(r)),
        (0, w) => format!("wrote {}{per}", fmt_size(w)),
        (r, w) => format!("read {}{per} and wrote {}{per}", fmt_size(r), fmt_size(w)),
    }
}

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
/// them (`2T`, `1G`, `512M`, `4k`, else the number): what dd, fio and blkscope's own options
/// read back as the same number.
pub fn exact_size(b: u64) -> String {
    for (unit, m) in [
        ("T", 1u64 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("k", 1 << 10),
    ] {
        if b >= m && b.is_multiple_of(m) {
            return format!("{}{unit}", b / m);
        }
    }
    b.to_string()
}

/// A parsed size string (`4k`, `1G`, `50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sized {
    Bytes(u64),
    Percent(f64),
}

impl serde::Serialize for Sized {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Sized::Bytes(b) => s.serialize_u64(*b),
            Sized::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
    }
}

/// Parses a size the way dd and fio read them: a number with an optional suffix. `K`, `M`, `G`,
/// `T` (and `KiB`, `MiB`, ...) are powers of 1024; `KB`, `MB`, `GB`, `TB` are powers of 1000
/// (as in dd); `b` alone is 512-byte blocks is *not* supported, to avoid surprises; a bare
/// number is bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{s}' is not a size: write a number with an optional unit, like 4k, 1M or 1G"
        ));
    }
    let mult: u64 = match unit.trim() {
        "" | "B" | "c" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" => 1 << 40,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        u => {
            return Err(format!(
                "'{s}': unknown unit '{u}'; use K, M, G, T (powers of 1024) or KB, MB, GB, TB (powers of 1000)"
            ));
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size: '{num}' is not a number"))?;
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("'{s}' is too large"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// A size, or a percentage such as `50%`.
pub fn parse_size_or_percent(s: &str) -> Result<Sized, String> {
    if let Some(p) = s.trim().strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a percentage"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(format!(
                "'{s}': a percentage must be above 0 and at most 100"
            ));
        }
        return Ok(Sized::Percent(v));
    }
    parse_size(s).map(Sized::Bytes)
}

/// Parses `10s`, `500ms`, `2m`, `1h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration: write e.g. 10s, 500ms or 2m"))?;
    let secs = match unit {
        "" | "s" | "sec" => v,
        "ms" => v / 1000.0,
        "us" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        u => {
            return Err(format!("'{s}': unknown unit '{u}'; use ms, s, m or h"));
        }
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("'{s}' is not a duration"));
    }
    // A year is longer than any test; far beyond it, Duration would overflow.
    if secs > 366.0 * 86400.0 {
        return Err(format!("'{s}' is too long: use at most a year (8784h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A sampling interval: a duration of at least 1 ms (0 would sample in a busy loop).
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < Duration::from_millis(1) {
        return Err(format!(
            "'{s}' is too short for an interval: use at least 1ms (e.g. 100ms or 1s)"
        ));
    }
    Ok(d)
}

/// `n` and its noun, plural when `n` is not 1: "1 place", "96 places".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            999 << 40,
            (1 << 40) + (1 << 30),
        ] {
            let s = exact_size(b);
            let back = parse_size(&s).unwrap();
            println!("{b} -> {s} -> {back}");
            assert_eq!(back, b, "{s}");
        }
        assert_eq!(exact_size(512 << 20), "512M");
        assert_eq!(exact_size(1_073_741_824), "1G");
        assert_eq!(exact_size(999 << 40), "999T");
        assert_eq!(exact_size((1 << 40) + (1 << 30)), "1025G");
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

    #[test]
    fn sizes_like_dd_and_fio() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5M"), Ok(1572864));
        assert!(parse_size("1X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
        assert_eq!(parse_size_or_percent("50%"), Ok(Sized::Percent(50.0)));
        assert!(parse_size_or_percent("150%").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3 fortnights").is_err());
    }
}

//! Human formatting shared by the command line and the TUI: sizes, rates, durations, and the
//! text of tables, trees and results. Nothing here runs a test or reads a device; it turns the
//! library's values into text.
//!
//! - [`table`]: the `list` tree table and the `iostat -x` table.
//! - [`reference`]: docs/findings.md, from the findings model.
//! - [`text`]: a check's verdict, a run's result, a suite's table, an explanation, a comparison.

pub mod lesson;
pub mod reference;
pub mod table;
pub mod text;

pub use crate::units::fmt_size;

/// A latency in nanoseconds as `812 ns`, `45.3 us`, `1.25 ms` or `2.00 s`. `us_decimals` is the
/// precision of the microsecond range (1 on the command line, 0 in the TUI's narrow columns).
pub fn fmt_duration(ns: f64, us_decimals: usize) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.*} us", us_decimals, ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A throughput in both units people quote: `95.4 MiB/s (100.0 MB/s)`.
pub fn fmt_rate(bps: f64) -> String {
    format!(
        "{:.1} MiB/s ({:.1} MB/s)",
        bps / (1 << 20) as f64,
        bps / 1e6
    )
}

/// A figure in at most 9 columns: `123k`, `4567`, `12.34`.
pub fn fmt_compact(v: f64) -> String {
    if v >= 100_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A count with its noun, singular or plural: `1 test`, `6 tests`.
pub use crate::units::count;

/// Whether the locale says UTF-8 (else trees and borders are drawn in ASCII).
pub fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_plural_past_one() {
        let got = [count(0, "test"), count(1, "test"), count(6, "run")];
        assert_eq!(got, ["0 tests", "1 test", "6 runs"], "{got:?}");
    }

    #[test]
    fn durations_at_both_precisions() {
        assert_eq!(fmt_duration(812.0, 1), "812 ns");
        assert_eq!(fmt_duration(45_340.0, 1), "45.3 us");
        assert_eq!(fmt_duration(45_340.0, 0), "45 us");
        assert_eq!(fmt_duration(1_250_000.0, 0), "1.25 ms");
        assert_eq!(fmt_duration(2e9, 1), "2.00 s");
    }

    #[test]
    fn rates_and_compact_figures() {
        assert_eq!(fmt_rate(100e6), "95.4 MiB/s (100.0 MB/s)");
        assert_eq!(fmt_compact(445_000.0), "445k");
        assert_eq!(fmt_compact(3480.0), "3480");
        assert_eq!(fmt_compact(1.494), "1.49");
    }
}

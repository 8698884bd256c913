//! Every number a finding's words say is one of its evidence's: "read 256M" where the evidence
//! has 268435456 bytes, "3%" where it has 0.03, "1.24 ms" where it has 1240000 ns or 0.00124
//! s. [`unexplained`] lists the numbers of a message that no figure of its evidence (nested
//! ones too) rounds to, in any of the units the words print it in; debug builds check every
//! finding made (`Finding::new`), so that each test that makes one checks its words.

use super::evidence::{Evidence, Figure};

/// A number as the words print it: its value, the unit after it, and how far the printing
/// may have rounded it (half its last digit).
#[derive(Debug, Clone, PartialEq)]
struct Said {
    text: String,
    value: f64,
    unit: String,
    rounding: f64,
}

/// The numbers of `message` that none of `evidence`'s figures is, as printed. A command the
/// words suggest (`blkscope run ... --bs 1M`, `echo 1 > ...`) and a source they cite ("(article
/// 000: 0.36 ms vs 11.2 ms)") are not figures of the finding and are left out.
pub fn unexplained(message: &str, evidence: &Evidence) -> Vec<String> {
    let mut figures = Vec::new();
    for (_, f) in evidence.iter() {
        collect(f, &mut figures);
    }
    said(&claims(message))
        .into_iter()
        .filter(|s| !figures.iter().any(|&f| explains(f, s)))
        .map(|s| s.text)
        .collect()
}

/// What the words claim: without the commands they suggest and the sources they cite, each up
/// to the parenthesis, semicolon or line that ends it, and without an option's value
/// (`--iodepth 32`).
fn claims(message: &str) -> String {
    // Not `dd `: a process named dd is a finding's figure ("dd (pid 4503) read 48M").
    const COMMANDS: [&str; 5] = ["blkscope ", "echo ", "hdparm ", "sysctl ", "(article "];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while !rest.is_empty() {
        let next = COMMANDS
            .iter()
            .filter_map(|c| {
                rest.match_indices(c)
                    .find(|(i, _)| *i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric())
                    .map(|(i, _)| i)
            })
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..at]);
        let cmd = &rest[at..];
        let end = cmd[1..].find([')', ';', '\n']).map_or(cmd.len(), |e| e + 1);
        rest = &cmd[end..];
    }
    // An option's value: the word after `--name`.
    let mut words: Vec<&str> = out.split(' ').collect();
    for i in 1..words.len() {
        if words[i - 1]
            .trim_start_matches(['(', '[', '"'])
            .starts_with("--")
        {
            words[i] = "";
        }
    }
    words.join(" ")
}

/// Every number among a figure and those inside it (a list's, a record's, a text's).
fn collect(f: &Figure, out: &mut Vec<f64>) {
    match f {
        Figure::List(v) => v.iter().for_each(|f| collect(f, out)),
        Figure::Record(r) => r.values().for_each(|f| collect(f, out)),
        Figure::Text(t) => out.extend(said(t).iter().map(|s| s.value)),
        f => out.extend(f.as_f64()),
    }
}

/// The numbers in words: those that stand alone (not part of a name such as `loop0`, `p99`,
/// `QD32` or `x1`), with the unit after them.
fn said(text: &str) -> Vec<Said> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b"_-/.:".contains(&b[i - 1])));
        if !starts {
            i += 1;
            continue;
        }
        let from = i;
        if b[i] == b'0' && b.get(i + 1) == Some(&b'x') {
            // A hexadecimal flag word (0x4).
            let digits = text[i + 2..]
                .bytes()
                .take_while(u8::is_ascii_hexdigit)
                .count();
            if let Ok(value) = u64::from_str_radix(&text[i + 2..i + 2 + digits], 16) {
                out.push(Said {
                    text: text[i..i + 2 + digits].to_string(),
                    value: value as f64,
                    unit: String::new(),
                    rounding: 0.5,
                });
            }
            i += 2 + digits;
            continue;
        }
        while i < b.len() && (b[i].is_ascii_digit() || (b[i] == b'.' && next_digit(b, i))) {
            i += 1;
        }
        let number = &text[from..i];
        // A version, a time of day or a device number (5.15.0, 12:30, 7:0): not a figure.
        if i < b.len() && (b[i] == b':' || (b[i] == b'.' && next_digit(b, i))) {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            continue;
        }
        let rest = &text[i..];
        let unit = unit_after(rest);
        let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
        if let Ok(value) = number.parse::<f64>() {
            out.push(Said {
                text: format!("{number}{}", &rest[..unit.1]),
                value,
                unit: unit.0.to_string(),
                rounding: 0.5 * 10f64.powi(-(decimals as i32)),
            });
        }
        i += unit.1;
    }
    out
}

fn next_digit(b: &[u8], i: usize) -> bool {
    b.get(i + 1).is_some_and(u8::is_ascii_digit)
}

/// The unit right after a number ("M", " ms", "%", " KiB"), and how many bytes it takes.
fn unit_after(rest: &str) -> (&'static str, usize) {
    const UNITS: [&str; 20] = [
        "KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "TB", "ns", "us", "ms", "s", "%", "K", "k",
        "M", "G", "T", "B", "x",
    ];
    for space in [0, 1] {
        let r = &rest[space.min(rest.len())..];
        if space == 1 && !rest.starts_with(' ') {
            break;
        }
        for u in UNITS {
            let ends = r
                .as_bytes()
                .get(u.len())
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if r.starts_with(u) && ends && !(space == 1 && matches!(u, "x" | "k" | "K")) {
                return (u, space + u.len());
            }
        }
    }
    ("", 0)
}

/// Whether `figure` prints as `s` in one of the scales its unit may stand for.
fn explains(figure: f64, s: &Said) -> bool {
    let binary = |p: i32| 1024f64.powi(p);
    let decimal = |p: i32| 1000f64.powi(p);
    // A size: the figure in bytes, or already in the unit the words give it in (`max_sectors_kb`).
    let scales: &[f64] = match s.unit.as_str() {
        "K" | "k" | "KiB" => &[binary(1), decimal(1), 1.0],
        "M" | "MiB" => &[binary(2), decimal(2), 1.0],
        "G" | "GiB" => &[binary(3), decimal(3), 1.0],
        "T" | "TiB" => &[binary(4), decimal(4), 1.0],
        "kB" => &[decimal(1), 1.0],
        "MB" => &[decimal(2), 1.0],
        "GB" => &[decimal(3), 1.0],
        "TB" => &[decimal(4), 1.0],
        // A time: the figure in ns, us, ms or s.
        "ns" => &[1.0, 1e-3, 1e-6, 1e-9],
        "us" => &[1e3, 1.0, 1e-3, 1e-6],
        "ms" => &[1e6, 1e3, 1.0, 1e-3],
        "s" => &[1e9, 1e6, 1e3, 1.0],
        // A share: 0.03 or 3.
        "%" => &[0.01, 1.0],
        _ => &[1.0],
    };
    scales.iter().any(|&scale| {
        let printed = figure / scale;
        // Rounded to the digits shown, or to three significant ones (fmt_size's "1.5M").
        (printed - s.value).abs() <= s.rounding * 1.0001 + 0.005 * s.value.abs()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_with_their_units_and_names_are_not_numbers() {
        let got: Vec<(String, f64, String)> =
            said("dd (pid 4503) read 256M on loop0 at p99 1.24 ms, 3% of QD32 x1; 12.5 MB/s")
                .into_iter()
                .map(|s| (s.text, s.value, s.unit))
                .collect();
        println!("{got:?}");
        let want = [
            ("4503", 4503.0, ""),
            ("256M", 256.0, "M"),
            ("1.24 ms", 1.24, "ms"),
            ("3%", 3.0, "%"),
            ("12.5 MB", 12.5, "MB"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1, g.2.as_str()), w);
        }
    }

    #[test]
    fn a_number_the_evidence_has_is_told_and_one_it_lacks_is_not() {
        let e = Evidence::new()
            .with("read_bytes", 268_435_456u64)
            .with("share", 0.031)
            .with("p99_ns", 1_240_000u64)
            .with("pid", 4503u64);
        let m = "dd (pid 4503) read 256M, 3.1% of the test's, p99 1.24 ms";
        assert_eq!(unexplained(m, &e), Vec::<String>::new());
        let wrong = "dd (pid 4503) read 300M, 4% of the test's, p99 2 ms, 8 times";
        assert_eq!(unexplained(wrong, &e), ["300M", "4%", "2 ms", "8"]);
        // Commands, options and sources are not the finding's figures; a flag word is one.
        let advice = "fill it first (blkscope run /dev/sdx --op write --bs 1M --size 1G); use \
                      --iodepth 32 or echo 1 > /sys/x (article 000: 0.36 ms vs 11.2 ms); \
                      warning 0x1000";
        let flags = Evidence::new().with("critical_warning", 4096u64);
        assert_eq!(unexplained(advice, &flags), Vec::<String>::new());
        assert_eq!(unexplained("warning 0x4", &flags), ["0x4"]);
        // A figure already in the unit said.
        let kb = Evidence::new().with("max_sectors_kb", 512u64);
        assert_eq!(
            unexplained("split into 512 KiB requests", &kb),
            Vec::<String>::new()
        );
    }
}

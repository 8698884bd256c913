//! `blkscope compare`: two saved runs test by test.

use std::fmt::Write as _;

/// Two saved runs side by side.
pub fn comparison(a_id: &str, b_id: &str, diffs: &[crate::runs::Diff]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {a_id}\nB: {b_id}");
    let _ = writeln!(out, "{:<13} {:>12} {:>12} {:>7}", "", "A", "B", "B/A");
    // Each test's name on a line of its own, then its figures: names are long, and two lone
    // tests compared carry both names.
    let mut last = None;
    for d in diffs {
        let name = d.name();
        if last.as_ref() != Some(&name) {
            let _ = writeln!(out, "{name}");
            for n in d.notes() {
                let _ = writeln!(out, "  note: {n}");
            }
            last = Some(name);
        }
        let _ = writeln!(
            out,
            "  {:<11} {:>12.1} {:>12.1} {:>7}",
            d.metric,
            d.a,
            d.b,
            d.ratio.map(|r| format!("{r:.2}x")).unwrap_or("-".into())
        );
    }
    out
}

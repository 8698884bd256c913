//! `blkscope check`: the verdict and its reasons.

use crate::device::{ReasonCode, SafetyReport, WriteSafety};
use std::fmt::Write as _;

/// `check`'s verdict, its reasons and the advice that follows from them.
pub fn check(r: &SafetyReport) -> String {
    let mut out = String::new();
    let what = match &r.device {
        Some(d) => format!("{} ({d})", r.target),
        None => r.target.clone(),
    };
    let how = match (&r.blank, r.write_safety) {
        (Some(b), WriteSafety::Clear) => b.judged().map(|h| format!(": {h}")),
        _ => None,
    };
    let _ = writeln!(
        out,
        "{what}: {}{}",
        r.write_safety.as_str(),
        how.unwrap_or_default()
    );
    if let Some(w) = &r.whole_read {
        let _ = writeln!(out, "  whole read: {w}");
    }
    for reason in &r.reasons {
        let _ = writeln!(out, "  [{}] {}", reason.code.badge(), reason.detail);
    }
    for note in &r.read_notes {
        let _ = writeln!(out, "  note: {}", note.detail);
    }
    let advice = match (r.write_safety, &r.device) {
        (WriteSafety::Clear, _) if r.reasons.iter().any(|x| x.code == ReasonCode::ExistingFile) => {
            "A write test may run with --force (it overwrites the file).".to_string()
        }
        (WriteSafety::Clear, _) => "A write test may run.".to_string(),
        (WriteSafety::Confirm, Some(d)) => {
            format!("A write test destroys what is on it: it needs --confirm {d}.")
        }
        (WriteSafety::Confirm, None) => "A write test needs confirmation.".to_string(),
        // A device of size 0, or one that cannot be opened, cannot be read either: `run`
        // refuses the read too.
        (WriteSafety::Blocked, _) if r.reasons.iter().any(|x| x.code == ReasonCode::Empty) => {
            "Nothing can be tested: write and read tests alike need a size above 0.".to_string()
        }
        (WriteSafety::Blocked, _) if r.reasons.iter().any(|x| x.code == ReasonCode::OpenFailed) => {
            "Write tests are refused, and a read test cannot open it either.".to_string()
        }
        (WriteSafety::Blocked, _) => "Write tests are refused; read tests are allowed.".to_string(),
    };
    let _ = writeln!(out, "{advice}");
    out
}

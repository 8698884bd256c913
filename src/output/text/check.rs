//! `blkscope check`: the verdict and its reasons.

use crate::device::signatures::{Blank, Coverage};
use crate::device::{ReasonCode, SafetyReport, WriteSafety};
use crate::units::{fmt_size, plural};
use std::fmt::Write as _;

/// `check`'s verdict, its reasons and the advice that follows from them.
pub fn check(r: &SafetyReport) -> String {
    let mut out = String::new();
    let what = match &r.device {
        Some(d) => format!("{} ({d})", r.target),
        None => r.target.clone(),
    };
    let how = match (&r.blank, r.write_safety) {
        (Some(b), WriteSafety::Clear) => blank_how(b).map(|h| format!(": {h}")),
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

/// How a blank device was judged, in a few words: "read whole (1 GiB in 0.8 s)", "blank where
/// sampled (5.5 MiB at 96 places)".
fn blank_how(b: &Blank) -> Option<String> {
    let Blank::Blank {
        bytes_read,
        read,
        places,
        seconds,
        ..
    } = b
    else {
        return None;
    };
    Some(match read {
        Coverage::Whole => format!("read whole ({} in {seconds:.1} s)", fmt_size(*bytes_read)),
        Coverage::DataExtents => format!(
            "every data extent of its backing file read ({} at {})",
            fmt_size(*bytes_read),
            plural(*places, "place")
        ),
        Coverage::Sampled => format!(
            "blank where sampled ({} at {})",
            fmt_size(*bytes_read),
            plural(*places, "place")
        ),
    })
}

//! `blkscope verify TARGET --stamp RUN` and `blkscope verify TARGET --capacity full|sampled`.

use std::io::Write;

use crate::cli::args::VerifyArgs;
use crate::cli::{print, print_json, say};
use crate::engine::TargetSpec;
use crate::output::text;
use crate::sysroot::SysRoot;
use crate::verify::CapacityMode;

/// The exit status when something read back is bad.
pub const BAD: i32 = 6;

pub fn run(root: &SysRoot, a: &VerifyArgs, out: &mut impl Write) -> Result<i32, crate::Error> {
    let cancel = crate::cli::signals::cancel_on_signals();
    if let Some(mode) = &a.capacity {
        let mode = if mode == "full" {
            CapacityMode::Full
        } else {
            CapacityMode::Sampled
        };
        let spec = TargetSpec {
            path: a.target.clone(),
            confirm: a.confirm.clone(),
            force: false,
        };
        let (info, cap, rep) =
            match crate::session::capacity(root, &spec, mode, a.max_errors, &cancel) {
                Ok(x) => x,
                Err(e) => {
                    say!("blkscope: {e}");
                    return Ok(e.exit_code());
                }
            };
        if a.json {
            print_json(out, &serde_json::json!({"capacity": cap, "verify": rep}))?;
        } else {
            let how = match cap.how {
                crate::verify::CapacityHow::Ok => "every block came back",
                crate::verify::CapacityHow::IoError => {
                    "blocks from there on fail: the device is smaller than it says"
                }
                crate::verify::CapacityHow::Wrap => {
                    "blocks from there on come back at lower offsets: the device wraps around \
                     (fake capacity)"
                }
            };
            print(
                out,
                &format!(
                    "{}: advertised {} ({} bytes), usable {} ({} bytes): {how}\n",
                    info.path,
                    crate::output::fmt_size(cap.advertised_bytes),
                    cap.advertised_bytes,
                    crate::output::fmt_size(cap.usable_bytes),
                    cap.usable_bytes
                ),
            )?;
            print(out, &text::verify_report(&rep, cap.advertised_bytes, ""))?;
        }
        let bad = rep.is_bad() || cap.usable_bytes < cap.advertised_bytes;
        return Ok(if rep.stopped.as_deref() == Some("cancelled") {
            1
        } else if bad {
            BAD
        } else {
            0
        });
    }
    let run_id = a.stamp.as_deref().unwrap_or("last");
    let path = crate::runs::resolve(run_id).map_err(crate::Error::Usage)?;
    let saved = crate::runs::load(&path).map_err(crate::Error::Usage)?;
    let rep = crate::session::verify_saved(root, &a.target, &saved, a.max_errors, &cancel)?;
    let size = saved.target.as_ref().map(|t| t.size_bytes).unwrap_or(0);
    if a.json {
        print_json(out, &serde_json::json!({"run": saved.id, "verify": rep}))?;
    } else {
        print(out, &format!("{}: what run {} wrote\n", a.target, saved.id))?;
        print(out, &text::verify_report(&rep, size, ""))?;
        // Every sector checked here was acknowledged as written: one that holds anything but
        // this run's data at its own offset lost that write.
        use crate::verify::BadKind;
        let lost: Vec<&str> = [BadKind::Zeroed, BadKind::Foreign, BadKind::WrongStamp]
            .into_iter()
            .filter(|k| rep.bad_ranges.iter().any(|r| r.kind == *k))
            .map(BadKind::name)
            .collect();
        if !lost.is_empty() {
            print(
                out,
                &format!(
                    "lost writes: the {} sectors were acknowledged as written and do not hold \
                     this run's data (a volatile write cache that ignored flushes?)\n",
                    lost.join(", ")
                ),
            )?;
        }
    }
    Ok(if rep.stopped.as_deref() == Some("cancelled") {
        1
    } else if rep.is_bad() {
        BAD
    } else {
        0
    })
}

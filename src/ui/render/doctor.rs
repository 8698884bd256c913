//! The doctor overlay (`d`): the findings for a device, and a live top of who does I/O on it.

use super::*;
use crate::output::fmt_size;
use crate::ui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

pub(super) fn doctor_pane(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    device: &str,
    findings: &Option<Result<Vec<crate::doctor::Finding>, String>>,
) {
    use crate::doctor::Severity;
    let mut text: Vec<Line> = Vec::new();
    match findings {
        None => text.push(Line::from(
            "examining: SMART, the processes doing I/O (1 s), the settings...",
        )),
        Some(Err(e)) => text.push(Line::from(Span::styled(e.clone(), look.alert()))),
        Some(Ok(v)) if v.is_empty() => text.push(Line::from("nothing to report")),
        Some(Ok(v)) => {
            for x in v {
                let style = match (x.severity(), look.color) {
                    (Severity::Problem, true) => Style::default().fg(Color::Red),
                    (Severity::Warning, true) => Style::default().fg(Color::Yellow),
                    (Severity::Problem, false) => look.alert(),
                    (Severity::Warning, false) => Style::default().add_modifier(Modifier::BOLD),
                    (Severity::Info, _) => look.dim(),
                };
                text.push(Line::from(vec![
                    Span::styled(format!("[{}] ", x.severity().as_str()), style),
                    Span::styled(
                        format!("{}: ", x.kind),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(x.message.clone()),
                ]));
            }
        }
    }
    doctor_top_lines(app, look, device, &mut text);
    large_pane(f, app, look, area, format!(" Doctor: {device} "), text);
}

/// The pane's live top: who does I/O on the device now, by the block layer's trace, each second.
pub(super) fn doctor_top_lines<'a>(app: &App, look: Look, device: &str, text: &mut Vec<Line<'a>>) {
    let Some((d, top)) = &app.doctor_top else {
        return;
    };
    if d != device {
        return;
    }
    text.push(Line::from(""));
    match top {
        Err(e) => text.push(Line::from(Span::styled(
            format!("live top: {e}"),
            look.dim(),
        ))),
        Ok(iv) => {
            let rows: Vec<&crate::doctor::watch::TopRow> = iv
                .rows
                .iter()
                .filter(|r| r.pid != std::process::id())
                .take(8)
                .collect();
            text.push(Line::from(Span::styled(
                format!(
                    "I/O now (block layer trace, {:.2} s{}): {}",
                    iv.seconds,
                    if iv.sampled { ", sampled" } else { "" },
                    if rows.is_empty() { "none" } else { "" }
                ),
                Style::default().add_modifier(Modifier::BOLD),
            )));
            for r in rows {
                text.push(Line::from(format!(
                    " {:<14.14} {:>7} {:<8.8} r {}/s w {}/s {:.0} IOPS{}",
                    if r.kernel {
                        format!("[{}]", r.comm)
                    } else {
                        r.comm.clone()
                    },
                    r.pid,
                    r.device,
                    fmt_size(r.read_bytes_per_sec as u64),
                    fmt_size(r.write_bytes_per_sec as u64),
                    r.iops,
                    r.d2c_mean_us
                        .map(|u| format!(" D2C {u:.0} us"))
                        .unwrap_or_default()
                )));
            }
            for n in iv.file_notes() {
                text.push(Line::from(Span::styled(n, look.dim())));
            }
        }
    }
}

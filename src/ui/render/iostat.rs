//! The iostat -x panel: the target's devices in `iostat -x` terms, refreshed every second, with
//! the reads of a read-modify-write lit up when the analysis of the test so far found it.

use super::*;

/// iostat -x of the watched devices, one column per device, as many as fit from
/// `app.iostat_first` (Left/Right scroll through them), the rows scrolled by
/// `app.iostat_scroll`.
pub fn diskstats_panel(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let fit = ((area.width.saturating_sub(2 + 8)) / 10).max(1) as usize;
    let first = app.iostat_first.min(app.watched.len().saturating_sub(1));
    let names: Vec<&String> = app.watched.iter().skip(first).take(fit).collect();
    let mut lines = Vec::new();
    if names.is_empty() {
        lines.push(Line::from("no block device to watch"));
    } else {
        let mut head = format!("{:<8}", "");
        for n in &names {
            head.push_str(&format!(" {:>9.9}", n));
        }
        lines.push(Line::from(Span::styled(
            head,
            Style::default().add_modifier(Modifier::BOLD),
        )));
        // "off" alone reads like a fault of the panel: say whose figures are missing and why,
        // first, where a short panel still shows it.
        for n in &names {
            if app
                .diskstats
                .iter()
                .any(|x| &&x.disk_device == n && x.stats_off)
            {
                // Two short lines: the panel does not wrap (its rows scroll by line).
                lines.push(Line::from(format!("off: no kernel figures for {n}")));
                lines.push(Line::from("  (its queue/iostats is 0)"));
            }
        }
        // The columns that explain a test, in the order the panel teaches them.
        let rows: [&str; 11] = [
            "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await", "aqu-sz",
            "%util", "f/s",
        ];
        for label in rows {
            let get = |x: &crate::stats::IostatX| x.column(label).unwrap_or(0.0);
            let mut s = format!("{label:<8}");
            for n in &names {
                match app.diskstats.iter().find(|x| &&x.disk_device == n) {
                    Some(x) if x.stats_off => s.push_str(&format!(" {:>9}", "off")),
                    Some(x) => s.push_str(&format!(" {:>9}", crate::output::fmt_compact(get(x)))),
                    None => s.push_str(&format!(" {:>9}", "-")),
                }
            }
            let hot = label == "r/s" && rmw_live(app);
            lines.push(if hot {
                Line::from(Span::styled(s, look.alert()))
            } else {
                Line::from(s)
            });
        }
    }
    let inner_h = area.height.saturating_sub(2) as usize;
    // The header stays; the figures below it scroll.
    let max = lines.len().saturating_sub(inner_h) as u16;
    let mut limits = app.limits.get();
    limits.iostat_rows = max;
    app.limits.set(limits);
    let scroll = app.iostat_scroll.min(max) as usize;
    if scroll > 0 && lines.len() > 1 {
        lines.drain(1..1 + scroll.min(lines.len() - 1));
    }
    let title = if app.watched.len() > names.len() {
        format!(
            " iostat -x (1 s) {}-{} of {} ",
            first + 1,
            first + names.len(),
            app.watched.len()
        )
    } else {
        " iostat -x (1 s) ".to_string()
    };
    let focused = app.screen == Screen::Main && app.focus == Focus::Iostat;
    f.render_widget(
        Paragraph::new(lines).block(look.block(title, focused)),
        area,
    );
}

/// The analysis of the test so far found read-modify-write: its reads light up in the panel.
pub(super) fn rmw_live(app: &App) -> bool {
    app.running()
        && app.run.as_ref().is_some_and(|r| {
            r.findings
                .iter()
                .any(|f| f.kind == crate::analysis::findings::Kind::ReadModifyWrite)
        })
}

//! The Properties pane: what decides how to test the selected target.

use super::*;
use crate::output::fmt_size;
use crate::ui::app::{App, Focus};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) fn kv<'a>(k: &'a str, v: String) -> Line<'a> {
    Line::from(vec![
        Span::styled(
            format!("{k:<13}"),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(v),
    ])
}

/// A host's node: whether it answered, its devices, and its iostat stream.
pub(super) fn host_properties<'a>(
    app: &App,
    t: &crate::ui::app::TargetEntry,
    look: Look,
    lines: &mut Vec<Line<'a>>,
) {
    lines.push(kv("host", t.label.clone()));
    let Some(h) = app.hosts.iter().find(|h| h.label == t.label) else {
        return;
    };
    match (&h.tree, &h.error) {
        (_, Some(e)) => {
            lines.push(Line::from(Span::styled(
                "unreachable: its devices are not listed",
                look.alert(),
            )));
            lines.push(Line::from(e.clone()));
        }
        (None, None) => lines.push(kv("state", "connecting through ssh...".into())),
        (Some(tree), None) => {
            lines.push(kv("devices", tree.devices.len().to_string()));
            lines.push(kv(
                "iostat",
                match &h.stats_error {
                    Some(e) => e.clone(),
                    None => "streamed from its `blkscope stat --json`".into(),
                },
            ));
            lines.push(Line::from(Span::styled(
                "Its blkscope runs the tests and decides their safety. Select a device.",
                look.dim(),
            )));
        }
    }
}

pub fn properties_pane(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let t = app.target();
    let mut lines = Vec::new();
    match &t.device {
        None if t.is_host() => host_properties(app, t, look, &mut lines),
        None => file_properties(app, look, &mut lines),
        Some(_) => {
            let Some(d) = app.device_of(t) else {
                return;
            };
            device_properties(t, d, look, &mut lines);
        }
    }
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let (scroll, max, shown) = scroll_pane(&para, area, app.props_scroll);
    let mut limits = app.limits.get();
    limits.properties = max;
    app.limits.set(limits);
    let title = match shown {
        Some(s) => format!(" Properties {s} "),
        None => " Properties ".to_string(),
    };
    let focused = app.focus == Focus::Properties;
    f.render_widget(
        para.scroll((scroll, 0)).block(look.block(title, focused)),
        area,
    );
}

/// The scratch file target: where it goes, and that it needs no root.
pub(super) fn file_properties(app: &App, look: Look, lines: &mut Vec<Line>) {
    lines.push(kv(
        "target",
        format!("a file in {}", app.scratch_dir.display()),
    ));
    lines.push(kv(
        "size",
        format!("{} (or --size)", fmt_size(app.target().size)),
    ));
    lines.push(kv(
        "on device",
        app.watched.first().cloned().unwrap_or("-".into()),
    ));
    lines.push(kv(
        "safety",
        "clear: the file is the test's own, removed afterwards".into(),
    ));
    lines.push(Line::from(Span::styled(
        "No root needed: press r to run the selected test.",
        look.dim(),
    )));
}

/// A block device's properties: what it is, its block sizes and queue, its write cache, what
/// it is backed by or used for, its signatures, and the write-safety verdict with its reasons.
pub(super) fn device_properties<'a>(
    t: &'a crate::ui::app::TargetEntry,
    d: &crate::device::Device,
    look: Look,
    lines: &mut Vec<Line<'a>>,
) {
    if let Some(h) = &t.host {
        lines.push(kv("host", h.clone()));
    }
    lines.push(kv(
        "device",
        format!(
            "{} {} {}",
            d.path.display(),
            d.lsblk_type,
            fmt_size(d.size_bytes)
        ),
    ));
    if let Some(m) = d.model.as_ref().or(d.dm_name.as_ref()) {
        lines.push(kv("model", m.clone()));
    }
    if t.badges.contains(&"LAB")
        && let Some(note) = &t.model
    {
        lines.push(kv("lab", format!("{note}, removed when blkscope exits")));
    }
    lines.push(kv(
        "block size",
        format!(
            "logical {} physical {}{}",
            d.logical_block_size,
            d.physical_block_size,
            if d.rotational {
                ", rotational"
            } else {
                ", non-rotational"
            }
        ),
    ));
    lines.push(kv(
        "queue",
        format!(
            "{} nr_requests {} max {} KiB ra {} KiB",
            d.scheduler.as_deref().unwrap_or("-"),
            d.nr_requests.map(|v| v.to_string()).unwrap_or("-".into()),
            d.max_sectors_kb
                .map(|v| v.to_string())
                .unwrap_or("-".into()),
            d.read_ahead_kb.map(|v| v.to_string()).unwrap_or("-".into()),
        ),
    ));
    lines.push(kv(
        "write cache",
        d.write_cache.clone().unwrap_or("-".into()),
    ));
    // A loop device's file, and whether its I/O goes through that file's page cache:
    // without direct I/O a test on it measures memory (the run's backing_cache).
    if let Some(f) = &d.loop_backing_file {
        let ram = d
            .loop_backing_fs
            .as_deref()
            .filter(|fs| crate::device::mounts::in_ram(fs));
        let dio = match (ram, d.loop_direct_io) {
            (Some(fs), _) => format!(" (on {fs}: RAM, direct I/O or not)"),
            (None, Some(true)) => " (direct I/O)".into(),
            (None, Some(false)) => " (no direct I/O: page cache)".into(),
            (None, None) => String::new(),
        };
        lines.push(kv("backing", format!("{f}{dio}")));
    }
    if !d.holders.is_empty() {
        lines.push(kv("holders", d.holders.join(", ")));
    }
    if !d.mountpoints.is_empty() || d.swap {
        let mut m = d.mountpoints.clone();
        if d.swap {
            m.push("[SWAP]".into());
        }
        lines.push(kv("mounted", m.join(", ")));
    }
    if !d.signatures.is_empty() {
        lines.push(kv(
            "signatures",
            d.signatures
                .iter()
                .map(|s| format!("{}@{:#x}", s.kind, s.offset))
                .collect::<Vec<_>>()
                .join(" "),
        ));
    }
    lines.push(Line::from(vec![
        Span::styled(
            format!("{:<13}", "write"),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(t.safety.as_str(), look.safety(t.safety)),
    ]));
    for r in &t.reasons {
        lines.push(Line::from(format!("  - {r}")));
    }
}

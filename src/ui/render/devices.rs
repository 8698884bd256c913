//! The Devices pane: every target, tree-ordered, with its safety.

use super::*;
use crate::output::fmt_size;
use crate::ui::app::{App, Focus};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// " Devices ", or with a host filter typed or kept, " Hosts: /text ".
fn title(app: &App) -> String {
    let typing = matches!(app.overlay, crate::ui::app::Overlay::Filter);
    if typing || !app.host_filter.is_empty() {
        let cursor = if typing { "_" } else { "" };
        format!(" Hosts: /{}{cursor} ", app.host_filter)
    } else {
        " Devices ".to_string()
    }
}

/// The device list: scratch file first, then devices in tree order with size and badge.
pub fn devices_pane(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let inner_h = area.height.saturating_sub(2) as usize;
    let first = list_first(app.selected_target, inner_h);
    let w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = app
        .targets
        .iter()
        .enumerate()
        .skip(first)
        .take(inner_h)
        .map(|(i, t)| {
            let mark = if i == app.selected_target { ">" } else { " " };
            if t.is_host() {
                // A host's node: its name, and how many devices it has (or why none).
                let state = match (t.badges.first(), &t.model) {
                    (Some(&"DOWN"), _) => "unreachable".to_string(),
                    (_, Some(m)) => m.clone(),
                    _ => String::new(),
                };
                let mut line = Line::from(vec![
                    Span::styled(
                        format!("{mark}{} ", t.label),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    if t.badges.first() == Some(&"DOWN") {
                        Span::styled(state, look.alert())
                    } else {
                        Span::styled(state, look.dim())
                    },
                ]);
                if i == app.selected_target {
                    line = line.style(look.selected());
                }
                return line;
            }
            let name = if t.is_scratch() {
                "scratch file".to_string()
            } else {
                format!("{}{}", "  ".repeat(t.depth), t.label)
            };
            let size = if t.is_scratch() {
                String::new()
            } else {
                fmt_size(t.size)
            };
            let verdict = t.safety.as_str();
            let badges = t.badges.join(",");
            let text = format!("{mark}{name:<13.13} {size:>6} ");
            let rest = format!(" {badges}");
            let mut spans = vec![
                Span::raw(text),
                Span::styled(format!("{verdict:<7}"), look.safety(t.safety)),
                Span::raw(rest),
            ];
            // Keep within the pane.
            let len: usize = spans.iter().map(|s| s.content.chars().count()).sum();
            if len > w
                && let Some(last) = spans.last_mut()
            {
                let keep = last.content.chars().count().saturating_sub(len - w);
                last.content = last.content.chars().take(keep).collect::<String>().into();
            }
            let mut line = Line::from(spans);
            if i == app.selected_target {
                line = line.style(look.selected());
            }
            line
        })
        .collect();
    let focused = app.focus == Focus::Devices;
    f.render_widget(
        Paragraph::new(lines).block(look.block(title(app), focused)),
        area,
    );
}

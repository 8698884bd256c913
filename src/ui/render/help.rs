//! The help overlay: the keys of the view beneath it, from its table.

use super::*;
use crate::ui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// A binding's keys as the help names them.
pub(super) fn key_name(b: &crate::ui::app::bindings::Binding, look: Look) -> &'static str {
    if look.ascii { b.ascii } else { b.label }
}

/// The keys of the view beneath the help, from its table: what the footer shows and more.
pub(super) fn help(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let table = app.screen_view().table();
    let width = table
        .iter()
        .map(|b| key_name(b, look).chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut lines: Vec<Line> = table
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(
                    format!("{:<width$}", key_name(b, look)),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::raw(b.help),
            ])
        })
        .collect();
    lines.push(Line::from(vec![
        Span::styled(
            format!("{:<width$}", "mouse"),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw("click selects, the wheel scrolls (--no-mouse)"),
    ]));
    lines.push(Line::from(""));
    lines.push(Line::from(
        "Writes: clear targets start; confirm asks for the name; blocked are refused.",
    ));
    // As tall as the lines are once wrapped, so that the last one is not cut off.
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let w = area.width.saturating_sub(4).clamp(40, 76);
    let r = centered(area, w, para.line_count(w - 2) as u16 + 2);
    f.render_widget(Clear, r);
    f.render_widget(para.block(look.block(" Keys ", true)), r);
}

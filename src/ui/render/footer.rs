//! The footer: the view's keys, from its table of bindings.

use super::*;
use crate::ui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub(super) fn footer_line(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let mut items: Vec<(String, &str)> = app
        .footer_of(look.ascii)
        .into_iter()
        .map(|(k, d)| (k.to_string(), d))
        .collect();
    // Too wide (ASCII key names are longer than arrows, "j/k" for "↑↓"): the keys before the
    // last two (help and quit, or back) give way, last first; the help names them all.
    while items.len() > 3 && footer_spans(&items).width() > area.width as usize {
        items.remove(items.len() - 3);
    }
    f.render_widget(Paragraph::new(footer_spans(&items)), area);
}

/// The footer's keys in bold, each with what it does.
pub(super) fn footer_spans<'a>(items: &'a [(String, &'a str)]) -> Line<'a> {
    let mut spans = Vec::new();
    for (i, (k, d)) in items.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(
            k.as_str(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if !d.is_empty() {
            spans.push(Span::raw(format!(" {d}")));
        }
    }
    Line::from(spans)
}

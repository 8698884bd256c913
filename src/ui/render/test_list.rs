//! The Tests pane: the built-in tests and the suites.

use super::*;
use crate::output::fmt_size;
use crate::ui::app::{App, Focus};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn tests_pane(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let mut rows: Vec<String> = app
        .tests
        .iter()
        .map(|p| {
            let j = &p.job;
            format!(
                "{:<12} {:>4} QD{:<2} x{} {}",
                p.name,
                fmt_size(j.bs),
                j.iodepth,
                j.jobs,
                j.mode.as_str()
            )
        })
        .collect();
    rows.extend(app.suites.iter().map(|s| {
        format!(
            "suite {:<12} {}",
            s.name,
            crate::output::count(s.tests.len(), "test")
        )
    }));
    let inner_h = area.height.saturating_sub(2) as usize;
    let first = list_first(app.selected_test, inner_h);
    let lines: Vec<Line> = rows
        .into_iter()
        .enumerate()
        .skip(first)
        .take(inner_h)
        .map(|(i, text)| {
            let sel = i == app.selected_test;
            let line = Line::from(format!("{}{text}", if sel { ">" } else { " " }));
            if sel {
                line.style(look.selected())
            } else {
                line
            }
        })
        .collect();
    let focused = app.focus == Focus::Tests;
    f.render_widget(
        Paragraph::new(lines).block(look.block(" Tests ", focused)),
        area,
    );
}

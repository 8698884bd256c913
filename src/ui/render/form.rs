//! The test form overlay (`e`).

use super::*;
use crate::ui::app::{App, FORM_FIELDS};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

pub(super) fn form_overlay(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    form: &crate::ui::app::Form,
) {
    let p = app.test();
    let mut lines = vec![
        Line::from(Span::styled(p.about, look.dim())),
        Line::from(""),
    ];
    for (i, name) in FORM_FIELDS.iter().enumerate() {
        let value = match (&form.editing, i == form.field) {
            (Some(t), true) => format!("{t}_"),
            _ => app.field_value(i),
        };
        let line = Line::from(format!(" {name:<9} {value}"));
        lines.push(if i == form.field {
            line.style(look.selected())
        } else {
            line
        });
    }
    lines.push(Line::from(""));
    match &form.error {
        Some(e) => lines.push(Line::from(Span::styled(
            format!("refused: {e}"),
            look.alert(),
        ))),
        None => lines.push(Line::from(Span::styled(
            "Enter edits a value; Left/Right change mode, data, engine and verify.",
            look.dim(),
        ))),
    }
    // As tall as its wrapped lines: a refusal can run to several.
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let r = fitted(area, 66, &para);
    f.render_widget(Clear, r);
    f.render_widget(
        para.block(look.block(format!(" Edit: {} ", p.name), true)),
        r,
    );
}

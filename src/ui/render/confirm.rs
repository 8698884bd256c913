//! The confirmation overlay: the device's name typed back before a write.

use super::*;
use crate::ui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

pub(super) fn confirm(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    device: &str,
    typed: &str,
    error: Option<&str>,
) {
    // Why it needs the name typed: what was seen on it (a partition table, a signature, or
    // data blkscope does not recognise), as the properties pane lists it.
    let t = app.target();
    let reasons: &[String] = if t.device.as_deref() == Some(device) {
        &t.reasons
    } else {
        &[]
    };
    let mut lines = vec![Line::from(if reasons.is_empty() {
        format!("A write test destroys what /dev/{device} may hold.")
    } else {
        format!("A write test destroys what /dev/{device} holds:")
    })];
    for r in reasons {
        lines.push(Line::from(format!("- {r}")));
    }
    lines.extend([
        Line::from("To go on, type the device name:"),
        Line::from(""),
        Line::from(vec![
            Span::raw("  > "),
            Span::styled(
                format!("{typed}_"),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ]),
        Line::from(""),
    ]);
    if let Some(e) = error {
        lines.push(Line::from(Span::styled(e.to_string(), look.alert())));
    }
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let r = fitted(area, 64, &para);
    f.render_widget(Clear, r);
    f.render_widget(
        para.block(look.block(format!(" Confirm write to {device} "), true)),
        r,
    );
}

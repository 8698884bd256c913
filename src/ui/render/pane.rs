//! The large scrolling overlays (explain, doctor, refusal) and how they scroll.

use super::*;
use crate::ui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// A wrapped paragraph in a bordered pane of `area`, scrolled `want` lines: the scroll kept
/// within what there is to see, the most it can scroll, and (when it does not all fit) which
/// lines are shown, as "first-last of total" for the title.
pub(super) fn scroll_pane(para: &Paragraph, area: Rect, want: u16) -> (u16, u16, Option<String>) {
    let inner_h = area.height.saturating_sub(2) as usize;
    let total = para.line_count(area.width.saturating_sub(2));
    let max = total.saturating_sub(inner_h) as u16;
    let scroll = want.min(max);
    let shown = (max > 0).then(|| {
        format!(
            "{}-{} of {}",
            scroll + 1,
            (scroll as usize + inner_h).min(total),
            total
        )
    });
    (scroll, max, shown)
}

/// A pane over almost the whole screen, with `text` wrapped in it.
pub(super) fn large_pane(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    title: String,
    text: Vec<Line>,
) {
    let r = centered(
        area,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    let para = Paragraph::new(text).wrap(Wrap { trim: false });
    scrolling_overlay(f, app, look, r, &title, para);
}

/// A pane over the screen at `r` that scrolls (Up/Down, PgUp/PgDn, the wheel) when its text
/// does not fit; its title then says which lines are shown.
pub(super) fn scrolling_overlay(
    f: &mut Frame,
    app: &App,
    look: Look,
    r: Rect,
    title: &str,
    para: Paragraph,
) {
    let (scroll, max, shown) = scroll_pane(&para, r, app.overlay_scroll);
    let mut limits = app.limits.get();
    limits.overlay = max;
    app.limits.set(limits);
    let title = match shown {
        Some(s) => format!("{}: lines {s} ", title.trim_end()),
        None => title.to_string(),
    };
    f.render_widget(Clear, r);
    f.render_widget(para.scroll((scroll, 0)).block(look.block(title, true)), r);
}

pub(super) fn explain_pane(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    title: &str,
    lines: &[String],
) {
    let text: Vec<Line> = lines.iter().map(|l| Line::from(l.as_str())).collect();
    large_pane(f, app, look, area, format!(" Explain: {title} "), text);
}

pub(super) fn refused(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    device: &str,
    reasons: &[String],
) {
    let mut lines = vec![
        Line::from(Span::styled(
            format!("A write test on /dev/{device} is refused:"),
            look.alert(),
        )),
        Line::from(""),
    ];
    for r in reasons {
        lines.push(Line::from(format!("- {r}")));
    }
    lines.push(Line::from(""));
    lines.push(Line::from("Read tests are allowed. Esc to go back."));
    // As tall as the reasons are once wrapped; beyond the screen it scrolls.
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let r = fitted(area, 70, &para);
    scrolling_overlay(f, app, look, r, " Blocked ", para);
}

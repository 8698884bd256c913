//! The lessons' panes. Where a lesson, a choice or the button lies is worked out from the same
//! layout the draw uses ([`rows`]), so a click finds what it fell on.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{LearnApp, Pane};
use crate::output::lesson;
use crate::ui::Look;

/// What a screen row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Lesson(usize),
    Choice(usize),
    Run,
}

/// The panes' area of the screen (all but the footer), None when the screen is too small.
fn body(screen: Rect) -> Option<Rect> {
    if screen.width < crate::ui::render::MIN_WIDTH || screen.height < crate::ui::render::MIN_HEIGHT
    {
        return None;
    }
    let [body, _] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(screen);
    Some(body)
}

/// The list's two parts: the lessons and what the selected one is about.
fn list_areas(body: Rect) -> [Rect; 2] {
    Layout::vertical([Constraint::Min(3), Constraint::Length(5)]).areas(body)
}

/// Which screen row holds which lesson, choice or button, as the draw lays them out.
pub fn rows(app: &LearnApp, screen: Rect) -> Vec<(u16, Row)> {
    let Some(body) = body(screen) else {
        return Vec::new();
    };
    let look = Look {
        color: false,
        ascii: true,
    };
    match app.pane {
        Pane::List => list_lines(app, look, list_areas(body)[0]).1,
        Pane::Question => question_lines(app, look, body).1,
        Pane::Running | Pane::Answer => Vec::new(),
    }
}

fn row_at(app: &LearnApp, y: u16, screen: Rect) -> Option<Row> {
    rows(app, screen)
        .into_iter()
        .find(|(at, _)| *at == y)
        .map(|x| x.1)
}

pub fn list_row_at(app: &LearnApp, y: u16, screen: Rect) -> Option<usize> {
    match row_at(app, y, screen)? {
        Row::Lesson(i) => Some(i),
        _ => None,
    }
}

pub fn choice_at(app: &LearnApp, y: u16, screen: Rect) -> Option<usize> {
    match row_at(app, y, screen)? {
        Row::Choice(i) => Some(i),
        _ => None,
    }
}

pub fn run_button_at(app: &LearnApp, y: u16, screen: Rect) -> bool {
    row_at(app, y, screen) == Some(Row::Run)
}

/// Greedy word wrap to `width` columns.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        if para.chars().count() <= width {
            out.push(para.to_string());
            continue;
        }
        let indent: String = para.chars().take_while(|c| *c == ' ').collect();
        let width = width.saturating_sub(indent.len()).max(8);
        let mut line = String::new();
        for w in para.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
                out.push(format!("{indent}{}", std::mem::take(&mut line)));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        out.push(format!("{indent}{line}"));
    }
    out
}

pub fn draw(f: &mut Frame, app: &LearnApp, look: Look) {
    let area = f.area();
    let Some(body) = body(area) else {
        f.render_widget(
            Paragraph::new("The terminal is too small: 64x18 at least."),
            area,
        );
        return;
    };
    let footer = Rect {
        y: body.y + body.height,
        height: 1,
        ..body
    };
    let keys = super::keys::footer(app);
    match app.pane {
        Pane::List => list(f, app, look, body),
        Pane::Question => question(f, app, look, body),
        Pane::Running => running(f, app, look, body),
        Pane::Answer => answer(f, app, look, body),
    }
    f.render_widget(Paragraph::new(Span::styled(keys, look.dim())), footer);
    if look.ascii {
        crate::ui::render::asciify(f.buffer_mut());
    }
}

fn list(f: &mut Frame, app: &LearnApp, look: Look, area: Rect) {
    let [top, about] = list_areas(area);
    let (lines, _) = list_lines(app, look, top);
    f.render_widget(
        Paragraph::new(lines).block(look.block(" blkscope learn: lessons ", true)),
        top,
    );
    about_lesson(f, app, look, about);
}

/// The lessons that fit in `top`, and the row each is on.
fn list_lines(app: &LearnApp, look: Look, top: Rect) -> (Vec<Line<'static>>, Vec<(u16, Row)>) {
    let inner_h = top.height.saturating_sub(2) as usize;
    let first = app.selected.saturating_sub(inner_h.saturating_sub(1));
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for (i, l) in app.lessons.iter().enumerate().skip(first).take(inner_h) {
        let mark = match app.done.get(&l.name) {
            Some(d) => format!(" [done {}/{}]", d.claims.held, d.claims.total()),
            None => String::new(),
        };
        let text = format!("{:<18} {}{mark}", l.name, l.title);
        let style = if i == app.selected {
            look.selected()
        } else {
            Style::default()
        };
        rows.push((top.y + 1 + lines.len() as u16, Row::Lesson(i)));
        lines.push(Line::from(Span::styled(text, style)));
    }
    (lines, rows)
}

/// What the selected lesson is about, and when it was last done.
fn about_lesson(f: &mut Frame, app: &LearnApp, look: Look, about: Rect) {
    let l = app.lesson();
    let mut text: Vec<Line> = wrap(&l.about, about.width.saturating_sub(2) as usize)
        .into_iter()
        .map(Line::from)
        .collect();
    if let Some(d) = app.done.get(&l.name) {
        text.push(Line::from(Span::styled(
            lesson::list_line(l, Some(d))
                .split("  [")
                .nth(1)
                .map(|s| format!("[{s}"))
                .unwrap_or_default(),
            look.dim(),
        )));
    }
    f.render_widget(
        Paragraph::new(text).block(look.block(" about ", false)),
        about,
    );
}

fn question(f: &mut Frame, app: &LearnApp, look: Look, area: Rect) {
    let (lines, _) = question_lines(app, look, area);
    f.render_widget(
        Paragraph::new(lines).block(look.block(format!(" {} ", app.lesson().title), true)),
        area,
    );
}

/// The question, the choices and the button, and the row each choice and the button is on.
fn question_lines(app: &LearnApp, look: Look, area: Rect) -> (Vec<Line<'static>>, Vec<(u16, Row)>) {
    let l = app.lesson();
    let width = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = wrap(&l.question, width)
        .into_iter()
        .map(Line::from)
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from("Your prediction:"));
    let mut rows = Vec::new();
    for (i, c) in l.choices.iter().enumerate() {
        let chosen = app.prediction == Some(i);
        let style = if chosen {
            look.selected()
        } else {
            Style::default()
        };
        let mark = if chosen { ">" } else { " " };
        for (k, w) in wrap(&c.text, width.saturating_sub(5))
            .into_iter()
            .enumerate()
        {
            let head = if k == 0 {
                format!("{mark} {}) ", crate::learn::letter(i))
            } else {
                "     ".into()
            };
            rows.push((area.y + 1 + lines.len() as u16, Row::Choice(i)));
            lines.push(Line::from(Span::styled(format!("{head}{w}"), style)));
        }
    }
    lines.push(Line::from(""));
    let devices: Vec<&str> = l.devices().iter().map(|d| d.as_str()).collect();
    lines.extend(
        wrap(
            &format!(
                "{} step(s) on lab devices made for the lesson ({}), removed after it.",
                l.steps.len(),
                devices.join(", ")
            ),
            width,
        )
        .into_iter()
        .map(|s| Line::from(Span::styled(s, look.dim()))),
    );
    lines.push(Line::from(""));
    rows.push((area.y + 1 + lines.len() as u16, Row::Run));
    let button = match app.prediction {
        Some(i) => format!("[ Enter: run it, predicting {}) ]", crate::learn::letter(i)),
        None => "[ Enter: run it (pick a prediction first, or run without) ]".into(),
    };
    lines.push(Line::from(Span::styled(button, look.alert())));
    (lines, rows)
}

fn running(f: &mut Frame, app: &LearnApp, look: Look, area: Rect) {
    let [head, mid, done] = Layout::vertical([
        Constraint::Length(5),
        Constraint::Min(8),
        Constraint::Length(5),
    ])
    .areas(area);
    let l = app.lesson();
    let width = head.width.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    let title = match &app.step {
        Some((i, s, path)) => format!(" step {}/{}: {} on {path} ", i + 1, l.steps.len(), s.name),
        None => format!(" {} ", l.title),
    };
    lines.push(Line::from(Span::styled(app.status.clone(), look.alert())));
    if let Some((_, s, _)) = &app.step {
        lines.extend(wrap(&s.look, width).into_iter().take(3).map(Line::from));
    }
    f.render_widget(Paragraph::new(lines).block(look.block(title, true)), head);
    let [chart, panel] =
        Layout::horizontal([Constraint::Min(30), Constraint::Length(28)]).areas(mid);
    let pts: Vec<(f64, f64)> = app
        .samples
        .iter()
        .map(|s| (s.elapsed_s, s.bytes_per_sec / 1e6))
        .collect();
    let x_max = pts.last().map(|p| p.0).unwrap_or(1.0).max(1.0);
    let name = app.test.as_ref().map(|t| t.0.as_str()).unwrap_or("-");
    crate::ui::render::chart(
        f,
        look,
        chart,
        &format!(" MB/s: {name} "),
        "MB/s",
        &pts,
        x_max,
    );
    iostat_panel(f, app, look, panel);
    let mut lines = Vec::new();
    for t in &app.tests_done {
        let g = |k: &str| t.figures.get(k).copied().unwrap_or(0.0);
        lines.push(Line::from(format!(
            "{:<17} {:>8} MB/s {:>8} IOPS  mean {} us",
            t.test,
            lesson::fmt_figure(g("mbps")),
            lesson::fmt_figure(g("iops")),
            lesson::fmt_figure(g("lat_mean_us"))
        )));
    }
    let skip = lines.len().saturating_sub(3);
    f.render_widget(
        Paragraph::new(lines.split_off(skip)).block(look.block(" measured so far ", false)),
        done,
    );
}

/// The lab device's iostat -x, the step's columns highlighted.
fn iostat_panel(f: &mut Frame, app: &LearnApp, look: Look, area: Rect) {
    let watch: &[String] = app.step.as_ref().map(|s| &s.1.watch[..]).unwrap_or(&[]);
    let rows = [
        "r/s", "w/s", "rkB/s", "wkB/s", "f/s", "r_await", "w_await", "aqu-sz", "%util",
    ];
    let mut lines = Vec::new();
    for r in rows {
        let v = app
            .iostat
            .as_ref()
            .and_then(|x| x.column(r))
            .map(crate::output::fmt_compact)
            .unwrap_or_else(|| "-".into());
        let text = format!("{r:<9}{v:>10}");
        let hot = watch.iter().any(|w| w == r);
        lines.push(if hot {
            Line::from(Span::styled(format!("{text} <"), look.alert()))
        } else {
            Line::from(text)
        });
    }
    f.render_widget(
        Paragraph::new(lines).block(look.block(" iostat -x (1 s) ", false)),
        area,
    );
}

fn answer(f: &mut Frame, app: &LearnApp, look: Look, area: Rect) {
    let width = area.width.saturating_sub(2) as usize;
    let text: Vec<String> = match (&app.result, &app.error) {
        (_, Some(e)) => vec![format!("The lesson could not run: {e}")],
        (Some(r), None) => lesson::answer(r),
        (None, None) => vec!["No result.".into()],
    };
    let good = if look.color {
        Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    let mut lines = Vec::new();
    for t in text {
        let trimmed = t.trim_start();
        let style = if trimmed.starts_with("[held]") || trimmed.starts_with("Measured here") {
            good
        } else if trimmed.starts_with("[did not hold]") || trimmed.starts_with("[not checked]") {
            look.alert()
        } else {
            Style::default()
        };
        for w in wrap(&t, width) {
            lines.push(Line::from(Span::styled(w, style)));
        }
    }
    let inner = area.height.saturating_sub(2) as usize;
    let max = lines.len().saturating_sub(inner) as u16;
    let scroll = app.scroll.min(max);
    let title = match max {
        0 => " the answer ".to_string(),
        _ => format!(" the answer (line {} of {}) ", scroll + 1, lines.len()),
    };
    f.render_widget(
        Paragraph::new(lines)
            .scroll((scroll, 0))
            .block(look.block(title, true)),
        area,
    );
}

//! Drawing: one function per pane, each a view over [`App`].
//!
//! ```text
//! Main                                      Run
//! +-Devices--------++-Properties-------+    +-Running: test on target-----++-iostat -x-+
//! |> scratch file  || model, sizes,    |    | MB/s chart                  || r/s  ...  |
//! |  sda  blocked  || queue, holders   |    | IOPS chart                  || w/s  ...  |
//! +-Tests----------++-iostat -x--------+    | done / elapsed / ETA / lat. || finding   |
//! |> Seq write 1M  || r/s w/s ... %util|    +-----------------------------++-----------+
//! +----------------++-----------------+     keys for this view
//! keys for this view
//! ```

mod latency;
pub(crate) mod run;
pub use run::diskstats_panel;
use run::{results_view, run_view};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::{self, Marker};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Cell, Chart, Clear, Dataset, GraphType, Paragraph, Row, Table, Wrap,
};

use super::app::{App, FORM_FIELDS, Focus, Hit, Overlay, Screen};
use crate::device::WriteSafety;
use crate::output::fmt_size;

/// How to draw: colour or not, braille or ASCII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub color: bool,
    pub ascii: bool,
}

pub const MIN_WIDTH: u16 = 64;
pub const MIN_HEIGHT: u16 = 18;

const ASCII_BORDER: symbols::border::Set = symbols::border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

impl Look {
    pub(crate) fn block<'a>(&self, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
        let mut b = Block::bordered().title(title);
        if self.ascii {
            b = b.border_set(ASCII_BORDER);
        }
        if focused {
            b = b.border_style(if self.color {
                Style::default().fg(Color::Cyan)
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            });
        }
        b
    }

    pub(crate) fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    fn safety(&self, s: WriteSafety) -> Style {
        if !self.color {
            return match s {
                WriteSafety::Blocked => Style::default().add_modifier(Modifier::BOLD),
                _ => Style::default(),
            };
        }
        match s {
            WriteSafety::Clear => Style::default().fg(Color::Green),
            WriteSafety::Confirm => Style::default().fg(Color::Yellow),
            WriteSafety::Blocked => Style::default().fg(Color::Red),
        }
    }

    pub(crate) fn alert(&self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }

    pub(crate) fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }

    pub(crate) fn marker(&self) -> Marker {
        if self.ascii {
            Marker::Dot
        } else {
            Marker::Braille
        }
    }
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &App, look: Look) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(f, area);
        return;
    }
    let status_h = u16::from(app.status.is_some());
    let [body, status, footer] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(status_h),
        Constraint::Length(1),
    ])
    .areas(area);
    debug_assert_eq!(body, body_area(app, area));
    match app.screen {
        Screen::Main => main_view(f, app, look, body),
        Screen::Run => run_view(f, app, look, body),
        Screen::Results => results_view(f, app, look, body),
    }
    if let Some(s) = &app.status {
        f.render_widget(
            Paragraph::new(Span::styled(s.as_str(), look.alert())),
            status,
        );
    }
    footer_line(f, app, look, footer);
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => help(f, app, look, area),
        Overlay::Form(form) => form_overlay(f, app, look, area, form),
        Overlay::Confirm {
            device,
            typed,
            error,
        } => confirm(f, app, look, area, device, typed, error.as_deref()),
        Overlay::Refused { device, reasons } => refused(f, app, look, area, device, reasons),
        Overlay::Explain { title, lines } => explain_pane(f, app, look, area, title, lines),
        Overlay::Doctor { device, findings } => doctor_pane(f, app, look, area, device, findings),
    }
    if look.ascii {
        asciify(f.buffer_mut());
    }
}

/// Replaces every character that is not ASCII with an ASCII one: what a console without a
/// Unicode font (TERM=linux) can show. Whatever a widget draws (chart axes, braille, arrows),
/// nothing else reaches the screen in ASCII mode.
pub fn asciify(buf: &mut ratatui::buffer::Buffer) {
    for cell in buf.content.iter_mut() {
        let sym = cell.symbol();
        if sym.is_ascii() {
            continue;
        }
        let c = sym.chars().next().unwrap_or(' ');
        let r = match c {
            '\u{2800}' => " ",
            '\u{2801}'..='\u{28ff}' => ".",
            '│' | '┃' | '║' | '╎' | '┆' | '▏' | '▕' => "|",
            '─' | '━' | '═' | '╌' | '┄' => "-",
            '\u{2500}'..='\u{257f}' => "+",
            '█' | '▓' | '▒' | '■' => "#",
            '░' => ":",
            '\u{2580}'..='\u{259f}' => "#",
            '•' | '·' | '●' => "*",
            '↑' | '▲' => "^",
            '↓' | '▼' => "v",
            '←' | '◀' => "<",
            '→' | '▶' => ">",
            '…' => "~",
            '×' => "x",
            _ => "?",
        };
        cell.set_symbol(r);
    }
}

fn too_small(f: &mut Frame, area: Rect) {
    let msg = format!(
        "Terminal too small: {}x{}. blkscope needs at least {MIN_WIDTH}x{MIN_HEIGHT}. Enlarge it, or q to quit.",
        area.width, area.height
    );
    f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
}

fn footer_line(f: &mut Frame, app: &App, look: Look, area: Rect) {
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
fn footer_spans<'a>(items: &'a [(String, &'a str)]) -> Line<'a> {
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

/// The main view's panes.
struct MainAreas {
    devs: Rect,
    tests: Rect,
    props: Rect,
    panel: Rect,
}

/// Where the main view's panes go in `body` (the screen less the status and footer lines).
fn main_areas(app: &App, body: Rect) -> MainAreas {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(46), Constraint::Percentage(54)]).areas(body);
    let tests_h = ((app.tests.len() + app.suites.len()) as u16 + 2).min(left.height / 2);
    let [devs, tests] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(tests_h)]).areas(left);
    let panel_h = 14.min(right.height / 2 + 2);
    let [props, panel] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(panel_h)]).areas(right);
    MainAreas {
        devs,
        tests,
        props,
        panel,
    }
}

/// The body of the screen: all but the status line (when there is one) and the footer.
fn body_area(app: &App, area: Rect) -> Rect {
    let status_h = u16::from(app.status.is_some());
    let [body, _, _] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(status_h),
        Constraint::Length(1),
    ])
    .areas(area);
    body
}

/// The first row a list shows so that `selected` is visible in `inner_h` rows.
fn list_first(selected: usize, inner_h: usize) -> usize {
    selected.saturating_sub(inner_h.saturating_sub(1))
}

fn inside(r: Rect, x: u16, y: u16) -> bool {
    x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height
}

/// What is at column `x`, row `y` of a screen of `area`, as [`draw`] lays it out.
pub fn hit_test(app: &App, area: Rect, x: u16, y: u16) -> Hit {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return Hit::Nothing;
    }
    let body = body_area(app, area);
    match app.screen {
        Screen::Main => {
            let m = main_areas(app, body);
            let row_in = |r: Rect, selected: usize| {
                let inner_h = r.height.saturating_sub(2) as usize;
                (y > r.y && y < r.y + r.height - 1)
                    .then(|| list_first(selected, inner_h) + (y - r.y - 1) as usize)
            };
            if inside(m.devs, x, y) {
                Hit::Pane(Focus::Devices, row_in(m.devs, app.selected_target))
            } else if inside(m.tests, x, y) {
                Hit::Pane(Focus::Tests, row_in(m.tests, app.selected_test))
            } else if inside(m.props, x, y) {
                Hit::Pane(Focus::Properties, None)
            } else if inside(m.panel, x, y) {
                Hit::Pane(Focus::Iostat, None)
            } else {
                Hit::Nothing
            }
        }
        Screen::Results => {
            let (table, first) = run::results_table_area(app, body);
            // Border, then the header row.
            if inside(table, x, y) && y >= table.y + 2 && y < table.y + table.height - 1 {
                Hit::Result(first + (y - table.y - 2) as usize)
            } else if inside(run::results_areas(app, body).1, x, y) {
                Hit::Notes
            } else {
                Hit::Nothing
            }
        }
        Screen::Run => Hit::Nothing,
    }
}

fn main_view(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let m = main_areas(app, area);
    devices_pane(f, app, look, m.devs);
    tests_pane(f, app, look, m.tests);
    properties_pane(f, app, look, m.props);
    diskstats_panel(f, app, look, m.panel);
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
        Paragraph::new(lines).block(look.block(" Devices ", focused)),
        area,
    );
}

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

fn kv<'a>(k: &'a str, v: String) -> Line<'a> {
    Line::from(vec![
        Span::styled(
            format!("{k:<13}"),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(v),
    ])
}

/// A host's node: whether it answered, its devices, and its iostat stream.
fn host_properties<'a>(
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
fn file_properties(app: &App, look: Look, lines: &mut Vec<Line>) {
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
fn device_properties<'a>(
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

/// A box `w` wide, centred in `area`, as tall as `para` is once wrapped in it (borders
/// included), but at most the screen less a line above and below.
fn fitted(area: Rect, w: u16, para: &Paragraph) -> Rect {
    let h = para.line_count(w.saturating_sub(2)) as u16 + 2;
    centered(area, w, h.min(area.height.saturating_sub(2)))
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A binding's keys as the help names them.
fn key_name(b: &crate::ui::app::bindings::Binding, look: Look) -> &'static str {
    if look.ascii { b.ascii } else { b.label }
}

/// The keys of the view beneath the help, from its table: what the footer shows and more.
fn help(f: &mut Frame, app: &App, look: Look, area: Rect) {
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

fn form_overlay(f: &mut Frame, app: &App, look: Look, area: Rect, form: &super::app::Form) {
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

fn confirm(
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

/// A pane over almost the whole screen, with `text` wrapped in it.
fn large_pane(f: &mut Frame, app: &App, look: Look, area: Rect, title: String, text: Vec<Line>) {
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
fn scrolling_overlay(f: &mut Frame, app: &App, look: Look, r: Rect, title: &str, para: Paragraph) {
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

fn explain_pane(f: &mut Frame, app: &App, look: Look, area: Rect, title: &str, lines: &[String]) {
    let text: Vec<Line> = lines.iter().map(|l| Line::from(l.as_str())).collect();
    large_pane(f, app, look, area, format!(" Explain: {title} "), text);
}

fn doctor_pane(
    f: &mut Frame,
    app: &App,
    look: Look,
    area: Rect,
    device: &str,
    findings: &Option<Result<Vec<crate::doctor::Finding>, String>>,
) {
    use crate::doctor::Severity;
    let mut text: Vec<Line> = Vec::new();
    match findings {
        None => text.push(Line::from(
            "examining: SMART, the processes doing I/O (1 s), the settings...",
        )),
        Some(Err(e)) => text.push(Line::from(Span::styled(e.clone(), look.alert()))),
        Some(Ok(v)) if v.is_empty() => text.push(Line::from("nothing to report")),
        Some(Ok(v)) => {
            for x in v {
                let style = match (x.severity(), look.color) {
                    (Severity::Problem, true) => Style::default().fg(Color::Red),
                    (Severity::Warning, true) => Style::default().fg(Color::Yellow),
                    (Severity::Problem, false) => look.alert(),
                    (Severity::Warning, false) => Style::default().add_modifier(Modifier::BOLD),
                    (Severity::Info, _) => look.dim(),
                };
                text.push(Line::from(vec![
                    Span::styled(format!("[{}] ", x.severity().as_str()), style),
                    Span::styled(
                        format!("{}: ", x.kind),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(x.message.clone()),
                ]));
            }
        }
    }
    doctor_top_lines(app, look, device, &mut text);
    large_pane(f, app, look, area, format!(" Doctor: {device} "), text);
}

/// The pane's live top: who does I/O on the device now, by the block layer's trace, each second.
fn doctor_top_lines<'a>(app: &App, look: Look, device: &str, text: &mut Vec<Line<'a>>) {
    let Some((d, top)) = &app.doctor_top else {
        return;
    };
    if d != device {
        return;
    }
    text.push(Line::from(""));
    match top {
        Err(e) => text.push(Line::from(Span::styled(
            format!("live top: {e}"),
            look.dim(),
        ))),
        Ok(iv) => {
            let rows: Vec<&crate::doctor::watch::TopRow> = iv
                .rows
                .iter()
                .filter(|r| r.pid != std::process::id())
                .take(8)
                .collect();
            text.push(Line::from(Span::styled(
                format!(
                    "I/O now (block layer trace, {:.2} s{}): {}",
                    iv.seconds,
                    if iv.sampled { ", sampled" } else { "" },
                    if rows.is_empty() { "none" } else { "" }
                ),
                Style::default().add_modifier(Modifier::BOLD),
            )));
            for r in rows {
                text.push(Line::from(format!(
                    " {:<14.14} {:>7} {:<8.8} r {}/s w {}/s {:.0} IOPS{}",
                    if r.kernel {
                        format!("[{}]", r.comm)
                    } else {
                        r.comm.clone()
                    },
                    r.pid,
                    r.device,
                    fmt_size(r.read_bytes_per_sec as u64),
                    fmt_size(r.write_bytes_per_sec as u64),
                    r.iops,
                    r.d2c_mean_us
                        .map(|u| format!(" D2C {u:.0} us"))
                        .unwrap_or_default()
                )));
            }
        }
    }
}

fn refused(f: &mut Frame, app: &App, look: Look, area: Rect, device: &str, reasons: &[String]) {
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

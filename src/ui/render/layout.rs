//! Where everything goes: the main view's panes, the body under the status line, the rows
//! a list shows, and what a click falls on. The draw and the mouse use the same layout.

use super::*;
use crate::ui::app::{App, Focus, Hit, Screen};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;

/// The main view's panes.
pub(super) struct MainAreas {
    pub(super) devs: Rect,
    pub(super) tests: Rect,
    pub(super) props: Rect,
    pub(super) panel: Rect,
}

/// Where the main view's panes go in `body` (the screen less the status and footer lines).
pub(super) fn main_areas(app: &App, body: Rect) -> MainAreas {
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
pub(super) fn body_area(app: &App, area: Rect) -> Rect {
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
pub(super) fn list_first(selected: usize, inner_h: usize) -> usize {
    selected.saturating_sub(inner_h.saturating_sub(1))
}

pub(super) fn inside(r: Rect, x: u16, y: u16) -> bool {
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
            let (table, first) = results_table_area(app, body);
            // Border, then the header row.
            if inside(table, x, y) && y >= table.y + 2 && y < table.y + table.height - 1 {
                Hit::Result(first + (y - table.y - 2) as usize)
            } else if inside(results_areas(app, body).1, x, y) {
                Hit::Notes
            } else {
                Hit::Nothing
            }
        }
        Screen::Run => Hit::Nothing,
    }
}

/// A box `w` wide, centred in `area`, as tall as `para` is once wrapped in it (borders
/// included), but at most the screen less a line above and below.
pub(super) fn fitted(area: Rect, w: u16, para: &Paragraph) -> Rect {
    let h = para.line_count(w.saturating_sub(2)) as u16 + 2;
    centered(area, w, h.min(area.height.saturating_sub(2)))
}

pub(super) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

//! Drawing: a file per pane and per overlay, each a view over [`App`]; [`theme`] says how
//! things look and [`layout`] where they go (the mouse reads the same layout).
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

// The theme and the layout the draw and the mouse share.
mod layout;
mod theme;
pub use layout::*;
pub use theme::*;

// A file per pane.
mod charts;
mod devices;
mod footer;
mod iostat;
mod latency;
mod properties;
mod results;
pub(crate) mod run;
mod test_list;
pub(crate) use charts::*;
use devices::*;
use footer::*;
pub use iostat::diskstats_panel;
use properties::*;
use results::*;
use test_list::*;

// A file per overlay.
mod confirm;
mod doctor;
mod form;
mod help;
mod pane;
use confirm::*;
use doctor::*;
use form::*;
use help::*;
use pane::*;

use run::run_view;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table, Wrap};

use super::app::{App, Focus, Overlay, Screen};
use crate::output::fmt_size;

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
        // Typed into the Devices pane's title.
        Overlay::Filter => {}
    }
    if look.ascii {
        asciify(f.buffer_mut());
    }
}

fn too_small(f: &mut Frame, area: Rect) {
    let msg = format!(
        "Terminal too small: {}x{}. blkscope needs at least {MIN_WIDTH}x{MIN_HEIGHT}. Enlarge it, or q to quit.",
        area.width, area.height
    );
    f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
}

fn main_view(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let m = main_areas(app, area);
    devices_pane(f, app, look, m.devs);
    tests_pane(f, app, look, m.tests);
    properties_pane(f, app, look, m.props);
    diskstats_panel(f, app, look, m.panel);
}

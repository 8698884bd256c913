//! The main TUI's keys, as data ([`crate::ui::keymap`]): a table per view whose rows drive the
//! dispatch ([`App::on_key`] looks the key up here), the footer (the rows marked for it, in
//! order) and the help overlay (every row of the view under it).

use crossterm::event::KeyEvent;

use super::{App, Focus, Overlay, Screen};
use crate::bind;
use crate::ui::keymap::{self, Key, *};

/// What a key does. Each is carried out by [`App::on_command`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    /// Quit (a running test is cancelled first).
    Quit,
    /// Quit at once.
    QuitNow,
    Help,
    CloseHelp,
    /// Move the selection of the pane with the focus (or scroll it) by this many rows.
    Move(i8),
    NextPane,
    PrevPane,
    /// The iostat panel: the devices shown start one further left or right.
    DevicesLeft,
    DevicesRight,
    /// Devices: go to the tests; Tests: open the form.
    Enter,
    Edit,
    Run,
    Explain,
    Doctor,
    /// Read the selected device whole (or stop that read).
    ReadWhole,
    Results,
    ClearStatus,
    CancelTest,
    ToggleLatency,
    ToggleCharts,
    /// The results: the previous or next result.
    Result(i8),
    ScrollNotes(i8),
    Compare,
    Reopen,
    BackToMain,
    /// An explanation, refusal or doctor pane: scroll it, or close it.
    ScrollPane(i8),
    ClosePane,
    /// The form: the field above or below, the value before or after, edit the value, close.
    Field(i8),
    Value(bool),
    EditValue,
    CloseForm,
    /// Typing a value or a name: keep it, give it up, or edit the line.
    Accept,
    Undo,
    EditLine,
    /// The typed name starts the write.
    StartWrite,
    CancelWrite,
    /// `/`: filter the hosts.
    Filter,
    /// Enter or Esc while filtering: keep the filter, or clear it.
    EndFilter(bool),
}

/// A row of the main TUI's tables.
pub type Binding = keymap::Binding<App, Cmd>;

/// The views, each with a table of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The main view with the devices or the tests in focus.
    Lists,
    Properties,
    Iostat,
    Run,
    Results,
    Help,
    /// An explanation, a refusal or the doctor's findings.
    Pane,
    Form,
    /// Typing a value into the form.
    Editing,
    /// Typing the device's name back before a write.
    Confirm,
    /// Typing the text the hosts shown must hold.
    Filter,
}

impl View {
    pub const ALL: [View; 11] = [
        View::Lists,
        View::Properties,
        View::Iostat,
        View::Run,
        View::Results,
        View::Help,
        View::Pane,
        View::Form,
        View::Editing,
        View::Confirm,
        View::Filter,
    ];

    /// Its bindings, in the footer's and the help's order.
    pub fn table(self) -> &'static [Binding] {
        match self {
            View::Lists => LISTS,
            View::Properties => PROPERTIES,
            View::Iostat => IOSTAT,
            View::Run => RUN,
            View::Results => RESULTS,
            View::Help => HELP,
            View::Pane => PANE,
            View::Form => FORM,
            View::Editing => EDITING,
            View::Confirm => CONFIRM,
            View::Filter => FILTER,
        }
    }

    /// What a key event does in this view.
    pub fn command(self, e: &KeyEvent) -> Option<Cmd> {
        keymap::command(self.table(), e)
    }
}

impl App {
    /// The view the keys go to: the open overlay's, else the screen's (and the pane's).
    pub fn view(&self) -> View {
        match &self.overlay {
            Overlay::Help => View::Help,
            Overlay::Form(f) if f.editing.is_some() => View::Editing,
            Overlay::Form(_) => View::Form,
            Overlay::Confirm { .. } => View::Confirm,
            Overlay::Filter => View::Filter,
            Overlay::Refused { .. } | Overlay::Explain { .. } | Overlay::Doctor { .. } => {
                View::Pane
            }
            Overlay::None => self.screen_view(),
        }
    }

    /// The view of the screen beneath any overlay: what the help explains.
    pub fn screen_view(&self) -> View {
        match (self.screen, self.focus) {
            (Screen::Run, _) => View::Run,
            (Screen::Results, _) => View::Results,
            (Screen::Main, Focus::Properties) => View::Properties,
            (Screen::Main, Focus::Iostat) => View::Iostat,
            (Screen::Main, _) => View::Lists,
        }
    }

    /// The keys that work in the current view, for the footer: (keys, what they do).
    pub fn footer(&self) -> Vec<(&'static str, &'static str)> {
        self.footer_of(false)
    }

    /// The footer with the keys named for a console without arrows.
    pub fn footer_of(&self, ascii: bool) -> Vec<(&'static str, &'static str)> {
        keymap::footer(self.view().table(), self, ascii)
    }
}

const HELP_KEY: Binding = bind!(&[(ch('?'), Cmd::Help)], "?", "?", "help", "this help", true);
const QUIT: Binding = bind!(
    &[(ch('q'), Cmd::Quit)],
    "q",
    "q",
    "quit",
    "quit (cancels a running test first)",
    true
);
const QUIT_NOW: Binding = bind!(
    &[(ctrl('c'), Cmd::QuitNow)],
    "Ctrl-C",
    "Ctrl-C",
    "quit",
    "quit at once",
    false
);
const PANES: Binding = bind!(
    &[(TAB, Cmd::NextPane), (BACKTAB, Cmd::PrevPane)],
    "Tab",
    "Tab",
    "pane",
    "next pane: Devices, Tests, Properties, iostat (Shift-Tab: back)",
    true
);
const RUN_KEY: Binding = bind!(
    &[(ch('r'), Cmd::Run)],
    "r",
    "r",
    "run",
    "run the selected test on the selected target",
    true
);
const EDIT: Binding = bind!(
    &[(ch('e'), Cmd::Edit)],
    "e",
    "e",
    "edit",
    "edit the selected test's parameters",
    true
);
const EXPLAIN: Binding = bind!(
    &[(ch('x'), Cmd::Explain)],
    "x",
    "x",
    "explain",
    "explain it: dd and fio lines, flags, traps",
    true
);
const DOCTOR: Binding = bind!(
    &[(ch('d'), Cmd::Doctor)],
    "d",
    "d",
    "doctor",
    "doctor: SMART, other I/O, alignment, settings",
    true
);
const READ_WHOLE: Binding = bind!(
    &[(ch('b'), Cmd::ReadWhole)],
    "b",
    "b",
    "blank?",
    "read the device whole: is it blank? (b again stops)",
    false
);
const RESULTS_KEY: Binding = bind!(
    &[(ch('v'), Cmd::Results)],
    "v",
    "v",
    "results",
    "the results (saved runs if none yet)",
    true
);
const PAGES: Binding = bind!(
    &[(PGUP, Cmd::Move(-8)), (PGDN, Cmd::Move(8))],
    "PgUp/PgDn",
    "PgUp/PgDn",
    "by 8",
    "move (or scroll) by 8",
    false
);
const CLEAR_STATUS: Binding = bind!(
    &[(ESC, Cmd::ClearStatus)],
    "Esc",
    "Esc",
    "clear",
    "clear the status line",
    false
);
/// A binding that works in a view without a place in its footer (the help names it).
const fn quiet(b: Binding) -> Binding {
    Binding { footer: false, ..b }
}

/// Up and down, and j/k, as in vi and less.
const UP_DOWN: &[(Key, Cmd)] = &[
    (UP, Cmd::Move(-1)),
    (DOWN, Cmd::Move(1)),
    (ch('k'), Cmd::Move(-1)),
    (ch('j'), Cmd::Move(1)),
];

/// The main view with the devices or the tests in focus. (At 80 columns the footer has no room
/// for j/k: the help names them.)
static LISTS: &[Binding] = &[
    bind!(
        UP_DOWN,
        "↑↓",
        "j/k",
        "move",
        "move in the pane (arrows or j/k)",
        true
    ),
    PAGES,
    PANES,
    bind!(
        &[(ENTER, Cmd::Enter)],
        "Enter",
        "Enter",
        "go on",
        "Devices: go to Tests (a host: open/close); Tests: edit",
        false
    ),
    bind!(
        &[(ch('/'), Cmd::Filter)],
        "/",
        "/",
        "filter",
        "--host: show the hosts whose name holds what is typed",
        false
    ),
    RUN_KEY,
    EDIT,
    EXPLAIN,
    DOCTOR,
    READ_WHOLE,
    RESULTS_KEY,
    CLEAR_STATUS,
    HELP_KEY,
    QUIT,
    QUIT_NOW,
];

/// The Properties pane in focus: j/k scroll it.
static PROPERTIES: &[Binding] = &[
    bind!(
        UP_DOWN,
        "↑↓/jk",
        "j/k",
        "scroll",
        "scroll the properties",
        true
    ),
    PAGES,
    PANES,
    RUN_KEY,
    EDIT,
    quiet(EXPLAIN),
    quiet(DOCTOR),
    READ_WHOLE,
    quiet(RESULTS_KEY),
    CLEAR_STATUS,
    HELP_KEY,
    QUIT,
    QUIT_NOW,
];

/// The iostat panel in focus: h/l go through the related devices, j/k scroll the rows.
static IOSTAT: &[Binding] = &[
    bind!(
        &[
            (LEFT, Cmd::DevicesLeft),
            (RIGHT, Cmd::DevicesRight),
            (ch('h'), Cmd::DevicesLeft),
            (ch('l'), Cmd::DevicesRight),
        ],
        "←→/hl",
        "h/l",
        "devices",
        "scroll through the related devices (partitions, holders)",
        true
    ),
    bind!(UP_DOWN, "↑↓/jk", "j/k", "scroll", "scroll the rows", true),
    PAGES,
    PANES,
    RUN_KEY,
    quiet(EDIT),
    quiet(EXPLAIN),
    quiet(DOCTOR),
    quiet(RESULTS_KEY),
    CLEAR_STATUS,
    HELP_KEY,
    QUIT,
    QUIT_NOW,
];

static RUN: &[Binding] = &[
    bind!(
        &[(ESC, Cmd::CancelTest)],
        "Esc",
        "Esc",
        "cancel test",
        "cancel the test",
        true
    ),
    Binding {
        keys: &[(ch('l'), Cmd::ToggleLatency)],
        label: "l",
        ascii: "l",
        does: |a| if a.latency_view { "IOPS" } else { "latency" },
        help: "the lower chart: IOPS, or the latency heatmap and histogram",
        footer: true,
    },
    bind!(
        &[(ch('q'), Cmd::Quit)],
        "q",
        "q",
        "cancel+quit",
        "cancel the test, then quit",
        true
    ),
    HELP_KEY,
    QUIT_NOW,
];

static RESULTS: &[Binding] = &[
    bind!(
        &[
            (UP, Cmd::Result(-1)),
            (DOWN, Cmd::Result(1)),
            (ch('k'), Cmd::Result(-1)),
            (ch('j'), Cmd::Result(1)),
        ],
        "↑↓",
        "j/k",
        "result",
        "the result before or after (also j/k)",
        true
    ),
    Binding {
        keys: &[(ch('g'), Cmd::ToggleCharts)],
        label: "g",
        ascii: "g",
        does: |a| if a.result_charts { "notes" } else { "charts" },
        help: "the run's charts, or its notes",
        footer: true,
    },
    bind!(
        &[(ch('r'), Cmd::Run)],
        "r",
        "r",
        "run again",
        "run the selected test again",
        true
    ),
    bind!(
        &[(ch('c'), Cmd::Compare)],
        "c",
        "c",
        "compare",
        "compare the selected result with the one before it",
        true
    ),
    bind!(
        &[(ch('o'), Cmd::Reopen)],
        "o",
        "o",
        "reopen",
        "reopen saved runs",
        true
    ),
    bind!(
        &[
            (PGUP, Cmd::ScrollNotes(-8)),
            (PGDN, Cmd::ScrollNotes(8)),
            (SPACE, Cmd::ScrollNotes(8)),
        ],
        "PgUp/PgDn",
        "PgUp/PgDn",
        "scroll",
        "scroll what the result means (Space: down)",
        false
    ),
    bind!(
        &[(ESC, Cmd::BackToMain), (BACKSPACE, Cmd::BackToMain)],
        "Esc",
        "Esc",
        "back",
        "back to the devices and tests",
        true
    ),
    HELP_KEY,
    QUIT,
    QUIT_NOW,
];

static HELP: &[Binding] = &[
    bind!(
        &[
            (ESC, Cmd::CloseHelp),
            (ch('?'), Cmd::CloseHelp),
            (ch('q'), Cmd::CloseHelp),
            (ENTER, Cmd::CloseHelp),
        ],
        "Esc",
        "Esc",
        "close",
        "close the help (also ?, q, Enter)",
        true
    ),
    QUIT_NOW,
];

static PANE: &[Binding] = &[
    bind!(
        &[
            (UP, Cmd::ScrollPane(-1)),
            (DOWN, Cmd::ScrollPane(1)),
            (ch('k'), Cmd::ScrollPane(-1)),
            (ch('j'), Cmd::ScrollPane(1)),
            (PGUP, Cmd::ScrollPane(-8)),
            (PGDN, Cmd::ScrollPane(8)),
            (SPACE, Cmd::ScrollPane(8)),
        ],
        "↑↓ PgUp/PgDn",
        "j/k PgUp/PgDn",
        "scroll",
        "scroll (also j/k; Space: down a page)",
        true
    ),
    bind!(
        &[
            (ESC, Cmd::ClosePane),
            (ENTER, Cmd::ClosePane),
            (ch('q'), Cmd::ClosePane),
            (ch('x'), Cmd::ClosePane),
            (ch('d'), Cmd::ClosePane),
        ],
        "Esc",
        "Esc",
        "back",
        "close the pane (also Enter, q, and the key that opened it)",
        true
    ),
    QUIT_NOW,
];

static FORM: &[Binding] = &[
    bind!(
        &[
            (UP, Cmd::Field(-1)),
            (DOWN, Cmd::Field(1)),
            (ch('k'), Cmd::Field(-1)),
            (ch('j'), Cmd::Field(1)),
            (TAB, Cmd::Field(1)),
        ],
        "↑↓",
        "j/k",
        "field",
        "the field above or below (also j/k, Tab)",
        true
    ),
    bind!(
        &[
            (LEFT, Cmd::Value(false)),
            (RIGHT, Cmd::Value(true)),
            (ch('h'), Cmd::Value(false)),
            (ch('l'), Cmd::Value(true)),
            (SPACE, Cmd::Value(true)),
        ],
        "←→",
        "h/l",
        "change",
        "the value before or after (also h/l, Space)",
        true
    ),
    bind!(
        &[(ENTER, Cmd::EditValue)],
        "Enter",
        "Enter",
        "edit",
        "type a value (a choice: the next one)",
        true
    ),
    bind!(
        &[(ch('r'), Cmd::Run)],
        "r",
        "r",
        "run",
        "run the test with these values",
        false
    ),
    bind!(
        &[(ESC, Cmd::CloseForm), (ch('q'), Cmd::CloseForm)],
        "Esc",
        "Esc",
        "done",
        "close the form, keeping the values",
        true
    ),
    QUIT_NOW,
];

/// Ctrl-U and Ctrl-W as a shell's line editor takes them, and Backspace.
const LINE_EDIT: Binding = bind!(
    &[
        (ctrl('u'), Cmd::EditLine),
        (ctrl('w'), Cmd::EditLine),
        (BACKSPACE, Cmd::EditLine),
    ],
    "Ctrl-U",
    "Ctrl-U",
    "clear",
    "typed text: Ctrl-U clears it, Ctrl-W drops the last word",
    true
);

static EDITING: &[Binding] = &[
    bind!(
        &[(ENTER, Cmd::Accept)],
        "Enter",
        "Enter",
        "accept",
        "keep the value typed (refused with the reason if it is not valid)",
        true
    ),
    bind!(
        &[(ESC, Cmd::Undo)],
        "Esc",
        "Esc",
        "undo",
        "give up the value typed",
        true
    ),
    LINE_EDIT,
    bind!(
        &[(ctrl('c'), Cmd::QuitNow)],
        "Ctrl-C",
        "Ctrl-C",
        "quit",
        "quit at once",
        true
    ),
    bind!(
        &[(Key::AnyChar, Cmd::EditLine)],
        "a-z 0-9",
        "a-z 0-9",
        "type",
        "type the value",
        false
    ),
];

static CONFIRM: &[Binding] = &[
    bind!(
        &[(Key::AnyChar, Cmd::EditLine)],
        "type the name",
        "type the name",
        "",
        "the device's name, typed back, allows the write",
        true
    ),
    bind!(
        &[(ENTER, Cmd::StartWrite)],
        "Enter",
        "Enter",
        "start",
        "start the write if the name is right",
        true
    ),
    LINE_EDIT,
    bind!(
        &[(ESC, Cmd::CancelWrite)],
        "Esc",
        "Esc",
        "cancel",
        "do not write",
        true
    ),
    QUIT_NOW,
];

static FILTER: &[Binding] = &[
    bind!(
        &[(Key::AnyChar, Cmd::EditLine)],
        "type",
        "type",
        "filter",
        "the hosts shown are those whose name holds the text typed",
        true
    ),
    bind!(
        &[(ENTER, Cmd::EndFilter(true))],
        "Enter",
        "Enter",
        "keep",
        "keep the filter",
        true
    ),
    LINE_EDIT,
    bind!(
        &[(ESC, Cmd::EndFilter(false))],
        "Esc",
        "Esc",
        "all",
        "clear the filter: every host shown",
        true
    ),
    QUIT_NOW,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    /// Every key of every row does what its row says (no row earlier in the view takes it),
    /// every row has keys, every view a footer, and Ctrl-C quits everywhere.
    #[test]
    fn every_key_does_what_its_row_says_and_every_footer_key_is_bound() {
        let mut keys = 0;
        for view in View::ALL {
            let problems = keymap::problems(view.table());
            assert!(problems.is_empty(), "{view:?}: {problems:#?}");
            keys += view.table().iter().map(|b| b.keys.len()).sum::<usize>();
            let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
            assert_eq!(view.command(&ctrl_c), Some(Cmd::QuitNow), "{view:?}");
            assert!(
                view.table().iter().any(|b| b.footer),
                "{view:?}: an empty footer"
            );
        }
        println!("{keys} keys in {} views", View::ALL.len());
    }

    /// A letter typed where a name or a value is typed goes into it, not to a command; Ctrl
    /// with a letter never types it.
    #[test]
    fn typing_views_take_letters_as_text() {
        let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(View::Confirm.command(&q), Some(Cmd::EditLine));
        assert_eq!(View::Editing.command(&q), Some(Cmd::EditLine));
        assert_eq!(View::Lists.command(&q), Some(Cmd::Quit));
        let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        assert_eq!(View::Confirm.command(&ctrl_r), None);
        assert_eq!(View::Lists.command(&ctrl_r), None);
        let shifted = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(View::Results.command(&shifted), Some(Cmd::Help));
    }
}

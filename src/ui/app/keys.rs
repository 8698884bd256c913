//! What each key, click and wheel turn does in each view, and the footer that names the keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

impl App {
    /// The keys that work in the current view, for the footer.
    pub fn footer(&self) -> Vec<(&'static str, &'static str)> {
        match (&self.overlay, self.screen) {
            (Overlay::Help, _) => vec![("Esc", "close")],
            (Overlay::Form(f), _) if f.editing.is_some() => {
                vec![
                    ("Enter", "accept"),
                    ("Esc", "undo"),
                    ("Ctrl-U", "clear"),
                    ("Ctrl-C", "quit"),
                ]
            }
            (Overlay::Form(_), _) => vec![
                ("↑↓", "field"),
                ("←→", "change"),
                ("Enter", "edit"),
                ("Esc", "done"),
            ],
            (Overlay::Confirm { .. }, _) => {
                vec![
                    ("type the name", ""),
                    ("Enter", "start"),
                    ("Ctrl-U", "clear"),
                    ("Esc", "cancel"),
                ]
            }
            (Overlay::Refused { .. }, _)
            | (Overlay::Explain { .. }, _)
            | (Overlay::Doctor { .. }, _) => vec![("↑↓ PgUp/PgDn", "scroll"), ("Esc", "back")],
            (Overlay::None, Screen::Run) => vec![
                ("Esc", "cancel test"),
                ("l", if self.latency_view { "IOPS" } else { "latency" }),
                ("q", "cancel+quit"),
                ("?", "help"),
            ],
            (Overlay::None, Screen::Results) => vec![
                ("↑↓", "result"),
                (
                    "g",
                    if self.result_charts {
                        "notes"
                    } else {
                        "charts"
                    },
                ),
                ("r", "run again"),
                ("c", "compare"),
                ("o", "reopen"),
                ("Esc", "back"),
                ("?", "help"),
                ("q", "quit"),
            ],
            (Overlay::None, Screen::Main) if self.focus == Focus::Iostat => vec![
                ("←→/hl", "devices"),
                ("↑↓/jk", "scroll"),
                ("Tab", "pane"),
                ("r", "run"),
                ("?", "help"),
                ("q", "quit"),
            ],
            (Overlay::None, Screen::Main) if self.focus == Focus::Properties => vec![
                ("↑↓/jk", "scroll"),
                ("Tab", "pane"),
                ("r", "run"),
                ("e", "edit"),
                ("?", "help"),
                ("q", "quit"),
            ],
            // At most 80 columns: j/k are in the help (?).
            (Overlay::None, Screen::Main) => vec![
                ("↑↓", "move"),
                ("Tab", "pane"),
                ("r", "run"),
                ("e", "edit"),
                ("x", "explain"),
                ("d", "doctor"),
                ("v", "results"),
                ("?", "help"),
                ("q", "quit"),
            ],
        }
    }

    /// Handles one key: the open overlay's keys first, then the screen's.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return Action::QuitNow;
        }
        match self.overlay.clone() {
            Overlay::Help => {
                if matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
                ) {
                    self.overlay = Overlay::None;
                }
                Action::None
            }
            Overlay::Refused { .. } | Overlay::Explain { .. } | Overlay::Doctor { .. } => {
                self.on_pane_key(key)
            }
            Overlay::Confirm { device, typed, .. } => self.on_confirm_key(key, device, typed),
            Overlay::Form(form) => self.on_form_key(form, key),
            // Every screen quits on q and opens the help on ?.
            Overlay::None if key.code == KeyCode::Char('q') => {
                self.quit = true;
                Action::Quit
            }
            Overlay::None if key.code == KeyCode::Char('?') => {
                self.overlay = Overlay::Help;
                Action::None
            }
            Overlay::None => match self.screen {
                Screen::Run => self.on_run_key(key),
                Screen::Results => self.on_results_key(key),
                Screen::Main => self.on_main_key(key),
            },
        }
    }

    /// A refusal, explanation or doctor pane: scroll it, or close it.
    fn on_pane_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Esc
            | KeyCode::Enter
            | KeyCode::Char('q')
            | KeyCode::Char('x')
            | KeyCode::Char('d') => {
                self.overlay = Overlay::None;
                // The next pane opens at its top.
                self.overlay_scroll = 0;
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll_overlay(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll_overlay(-1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll_overlay(8),
            KeyCode::PageUp => self.scroll_overlay(-8),
            _ => {}
        }
        Action::None
    }

    /// The confirmation: the device's name typed back starts the write test.
    fn on_confirm_key(&mut self, key: KeyEvent, device: String, mut typed: String) -> Action {
        match key.code {
            KeyCode::Esc => {
                self.overlay = Overlay::None;
                self.status = Some("write test not started".into());
                Action::None
            }
            KeyCode::Enter => {
                if typed.trim() == device {
                    self.overlay = Overlay::None;
                    match self.selected_suite().cloned() {
                        Some(s) => self.start_suite(s, Some(device)),
                        None => self.start(Some(device)),
                    }
                } else {
                    self.overlay = Overlay::Confirm {
                        device: device.clone(),
                        typed,
                        error: Some(format!("that is not {device}; type {device} exactly")),
                    };
                    Action::None
                }
            }
            _ => {
                if edit_line(&mut typed, &key) {
                    self.overlay = Overlay::Confirm {
                        device,
                        typed,
                        error: None,
                    };
                }
                Action::None
            }
        }
    }

    /// While a test runs: Esc cancels it, l switches the lower chart.
    fn on_run_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Esc => {
                if let Some(r) = self.run.as_mut() {
                    r.cancelling = true;
                }
                Action::Cancel
            }
            KeyCode::Char('l') => {
                self.latency_view = !self.latency_view;
                Action::None
            }
            _ => Action::None,
        }
    }

    /// The results: move, compare, reopen saved runs, scroll what a result means.
    fn on_results_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Char('g') => {
                self.result_charts = !self.result_charts;
                Action::None
            }
            KeyCode::Esc | KeyCode::Backspace => {
                self.screen = Screen::Main;
                Action::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected_result = self.selected_result.saturating_sub(1);
                Action::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                if self.selected_result + 1 < self.results.len() {
                    self.selected_result += 1;
                }
                Action::None
            }
            KeyCode::Char('r') => self.request_run(),
            KeyCode::Char('c') => {
                self.compare_selected();
                Action::None
            }
            KeyCode::Char('o') => Action::Reopen,
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll_notes(8);
                Action::None
            }
            KeyCode::PageUp => {
                self.scroll_notes(-8);
                Action::None
            }
            _ => Action::None,
        }
    }

    fn on_main_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Tab => {
                self.focus = self.focus.next();
                Action::None
            }
            KeyCode::BackTab => {
                self.focus = self.focus.prev();
                Action::None
            }
            KeyCode::Left | KeyCode::Char('h') if self.focus == Focus::Iostat => {
                self.iostat_first = self.iostat_first.saturating_sub(1);
                Action::None
            }
            KeyCode::Right | KeyCode::Char('l') if self.focus == Focus::Iostat => {
                if self.iostat_first + 1 < self.watched.len() {
                    self.iostat_first += 1;
                }
                Action::None
            }
            KeyCode::PageUp => {
                self.move_selection(-8);
                Action::None
            }
            KeyCode::PageDown => {
                self.move_selection(8);
                Action::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.move_selection(-1);
                Action::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.move_selection(1);
                Action::None
            }
            KeyCode::Enter => {
                match self.focus {
                    Focus::Devices => self.focus = Focus::Tests,
                    Focus::Tests => self.open_form(),
                    Focus::Properties | Focus::Iostat => {}
                }
                Action::None
            }
            KeyCode::Char('e') => {
                self.open_form();
                Action::None
            }
            KeyCode::Char('r') => self.request_run(),
            KeyCode::Char('x') => {
                self.overlay = self.explain();
                Action::None
            }
            KeyCode::Char('d') => {
                // The scratch file: the device holding its directory.
                let device = self
                    .target()
                    .device
                    .clone()
                    .or_else(|| self.watched.first().cloned());
                match device {
                    Some(device) => {
                        self.overlay = Overlay::Doctor {
                            device: device.clone(),
                            findings: None,
                        };
                        Action::Doctor {
                            device,
                            host: self.target().host.clone(),
                        }
                    }
                    None => {
                        self.status = Some("no block device here to examine".into());
                        Action::None
                    }
                }
            }
            KeyCode::Char('v') => {
                if self.results.is_empty() {
                    // Nothing run yet in this session: show the saved runs instead.
                    Action::Reopen
                } else {
                    self.screen = Screen::Results;
                    Action::None
                }
            }
            KeyCode::Esc => {
                self.status = None;
                Action::None
            }
            _ => Action::None,
        }
    }

    fn move_selection(&mut self, by: isize) {
        match self.focus {
            Focus::Devices => {
                let n = self.targets.len() as isize;
                self.selected_target =
                    (self.selected_target as isize + by).clamp(0, n - 1) as usize;
                self.target_changed();
            }
            Focus::Tests => {
                let n = (self.tests.len() + self.suites.len()) as isize;
                self.selected_test = (self.selected_test as isize + by).clamp(0, n - 1) as usize;
            }
            Focus::Properties => {
                let max = self.limits.get().properties as isize;
                self.props_scroll = (self.props_scroll as isize + by).clamp(0, max) as u16;
            }
            Focus::Iostat => {
                let max = self.limits.get().iostat_rows as isize;
                self.iostat_scroll = (self.iostat_scroll as isize + by).clamp(0, max) as u16;
            }
        }
    }

    /// A click: selects the pane (and the row under the pointer) or the result.
    pub fn on_click(&mut self, hit: Hit) -> Action {
        if self.overlay != Overlay::None {
            return Action::None;
        }
        match (self.screen, hit) {
            (Screen::Main, Hit::Pane(pane, row)) => {
                self.focus = pane;
                match (pane, row) {
                    (Focus::Devices, Some(i)) if i < self.targets.len() => {
                        self.selected_target = i;
                        self.target_changed();
                    }
                    (Focus::Tests, Some(i)) if i < self.tests.len() + self.suites.len() => {
                        self.selected_test = i;
                    }
                    _ => {}
                }
            }
            (Screen::Results, Hit::Result(i)) if i < self.results.len() => {
                self.selected_result = i;
            }
            _ => {}
        }
        Action::None
    }

    /// The wheel over a pane: moves its selection (lists) or scrolls it, `by` lines; with an
    /// explain, doctor or refusal pane open, scrolls that.
    pub fn on_wheel(&mut self, hit: Hit, by: isize) -> Action {
        if matches!(
            self.overlay,
            Overlay::Refused { .. } | Overlay::Explain { .. } | Overlay::Doctor { .. }
        ) {
            self.scroll_overlay(by);
            return Action::None;
        }
        if self.overlay != Overlay::None {
            return Action::None;
        }
        match (self.screen, hit) {
            (Screen::Main, Hit::Pane(pane, _)) => {
                let keep = self.focus;
                self.focus = pane;
                self.move_selection(by);
                self.focus = keep;
            }
            (Screen::Results, Hit::Notes) if !self.result_charts => self.scroll_notes(by),
            (Screen::Results, _) => {
                let n = self.results.len() as isize;
                if n > 0 {
                    self.selected_result =
                        (self.selected_result as isize + by).clamp(0, n - 1) as usize;
                }
            }
            _ => {}
        }
        Action::None
    }
}

/// A key typed into a line of text (the form's value, the device name a write asks for), as a
/// shell's line editor takes it: Backspace deletes a character, Ctrl-U the whole line, Ctrl-W
/// the last word; other keys with Ctrl or Alt insert nothing (Ctrl-U typed a 'u' before).
/// Returns whether the key was one of these.
pub(super) fn edit_line(text: &mut String, key: &KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char('u') if ctrl => text.clear(),
        KeyCode::Char('w') if ctrl => {
            let kept = text.trim_end().rfind(' ').map_or(0, |i| i + 1);
            text.truncate(kept);
        }
        KeyCode::Char(_) if ctrl || key.modifiers.contains(KeyModifiers::ALT) => return false,
        KeyCode::Char(c) => text.push(c),
        _ => return false,
    }
    true
}

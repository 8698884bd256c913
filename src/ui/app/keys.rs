//! What each key (as the view's table in [`super::bindings`] binds it), click and wheel turn
//! does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::bindings::Cmd;
use super::*;

impl App {
    /// Handles one key: what the view's table binds it to ([`super::bindings`]).
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        match self.view().command(&key) {
            Some(cmd) => self.on_command(cmd, &key),
            None => Action::None,
        }
    }

    /// Carries out what a key is bound to.
    fn on_command(&mut self, cmd: Cmd, key: &KeyEvent) -> Action {
        match cmd {
            Cmd::Quit => {
                self.quit = true;
                return Action::Quit;
            }
            Cmd::QuitNow => {
                self.quit = true;
                return Action::QuitNow;
            }
            Cmd::Help => self.overlay = Overlay::Help,
            Cmd::CloseHelp | Cmd::CloseForm => self.overlay = Overlay::None,
            Cmd::Run => {
                self.overlay = Overlay::None;
                return self.request_run();
            }
            Cmd::Doctor => return self.open_doctor(),
            Cmd::ReadWhole => return self.read_whole(),
            Cmd::Results => return self.show_results(),
            Cmd::Reopen => return Action::Reopen,
            Cmd::CancelTest => {
                if let Some(r) = self.run.as_mut() {
                    r.cancelling = true;
                }
                return Action::Cancel;
            }
            Cmd::StartWrite => return self.confirm_typed(),
            Cmd::Field(_) | Cmd::Value(_) | Cmd::EditValue | Cmd::Accept | Cmd::Undo => {
                self.on_form_command(cmd)
            }
            Cmd::EditLine if matches!(self.overlay, Overlay::Filter) => self.edit_filter(key),
            Cmd::EditLine | Cmd::CancelWrite => self.on_typing(cmd, key),
            Cmd::Filter => self.start_filter(),
            Cmd::EndFilter(keep) => self.end_filter(keep),
            _ => self.on_view_command(cmd),
        }
        Action::None
    }

    /// The commands that change only what is shown.
    fn on_view_command(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Move(by) => self.move_selection(by.into()),
            Cmd::NextPane => self.focus = self.focus.next(),
            Cmd::PrevPane => self.focus = self.focus.prev(),
            Cmd::DevicesLeft => self.iostat_first = self.iostat_first.saturating_sub(1),
            Cmd::DevicesRight => {
                self.iostat_first = (self.iostat_first + 1).min(self.watched.len().max(1) - 1);
            }
            Cmd::Enter => match self.focus {
                Focus::Devices => {
                    if !self.toggle_host() {
                        self.focus = Focus::Tests;
                    }
                }
                Focus::Tests => self.open_form(),
                Focus::Properties | Focus::Iostat => {}
            },
            Cmd::Edit => self.open_form(),
            Cmd::Explain => self.overlay = self.explain(),
            Cmd::ClearStatus => self.status = None,
            Cmd::ToggleLatency => self.latency_view = !self.latency_view,
            Cmd::ToggleCharts => self.result_charts = !self.result_charts,
            Cmd::Result(by) => self.move_result(by.into()),
            Cmd::ScrollNotes(by) => self.scroll_notes(by.into()),
            Cmd::Compare => self.compare_selected(),
            Cmd::BackToMain => self.screen = Screen::Main,
            Cmd::ScrollPane(by) => self.scroll_overlay(by.into()),
            Cmd::ClosePane => {
                self.overlay = Overlay::None;
                // The next pane opens at its top.
                self.overlay_scroll = 0;
            }
            _ => {}
        }
    }

    /// `d`: the doctor's findings for the target's device (the scratch file: the device
    /// holding its directory).
    fn open_doctor(&mut self) -> Action {
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

    /// `v`: the session's results, or the saved runs when nothing ran yet.
    fn show_results(&mut self) -> Action {
        if self.results.is_empty() {
            Action::Reopen
        } else {
            self.screen = Screen::Results;
            Action::None
        }
    }

    /// Text typed into the form's value or the confirmation; Esc gives the write up.
    fn on_typing(&mut self, cmd: Cmd, key: &KeyEvent) {
        if cmd == Cmd::CancelWrite {
            self.overlay = Overlay::None;
            self.status = Some("write test not started".into());
            return;
        }
        match &mut self.overlay {
            Overlay::Confirm { typed, error, .. } => {
                let typed_something = edit_line(typed, key);
                if typed_something {
                    *error = None;
                }
            }
            Overlay::Form(f) => {
                if let Some(t) = f.editing.as_mut() {
                    edit_line(t, key);
                }
            }
            _ => {}
        }
    }

    /// Enter on the confirmation: the device's name typed back starts the write test.
    fn confirm_typed(&mut self) -> Action {
        let Overlay::Confirm { device, typed, .. } = self.overlay.clone() else {
            return Action::None;
        };
        if typed.trim() == device {
            self.overlay = Overlay::None;
            return match self.selected_suite().cloned() {
                Some(s) => self.start_suite(s, Some(device)),
                None => self.start(Some(device)),
            };
        }
        self.overlay = Overlay::Confirm {
            device: device.clone(),
            typed,
            error: Some(format!("that is not {device}; type {device} exactly")),
        };
        Action::None
    }

    /// The result `by` rows before or after the selected one (the first or last at the ends).
    fn move_result(&mut self, by: isize) {
        let n = self.results.len() as isize;
        if n > 0 {
            self.selected_result = (self.selected_result as isize + by).clamp(0, n - 1) as usize;
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
            (Screen::Results, _) => self.move_result(by),
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

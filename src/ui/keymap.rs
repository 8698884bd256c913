//! Keys as data, for both TUIs: a view's table of [`Binding`]s, each row the keys and what
//! each does (a command of the TUI's own), how the footer and the help name them. The dispatch
//! looks a key up in the view's table ([`command`]), the footer shows the rows marked for it
//! ([`footer`]), the help lists every row: a key added to a table is bound, shown and
//! explained at once.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as a table names it: a code, with Ctrl or not; or any character typed (a name, a
/// value, a choice), which a view's named keys go before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Code { code: KeyCode, ctrl: bool },
    AnyChar,
}

pub const fn key(code: KeyCode) -> Key {
    Key::Code { code, ctrl: false }
}

pub const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}

pub const fn ctrl(c: char) -> Key {
    Key::Code {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

pub const UP: Key = key(KeyCode::Up);
pub const DOWN: Key = key(KeyCode::Down);
pub const LEFT: Key = key(KeyCode::Left);
pub const RIGHT: Key = key(KeyCode::Right);
pub const PGUP: Key = key(KeyCode::PageUp);
pub const PGDN: Key = key(KeyCode::PageDown);
pub const ENTER: Key = key(KeyCode::Enter);
pub const ESC: Key = key(KeyCode::Esc);
pub const TAB: Key = key(KeyCode::Tab);
pub const BACKTAB: Key = key(KeyCode::BackTab);
pub const BACKSPACE: Key = key(KeyCode::Backspace);
pub const SPACE: Key = ch(' ');

impl Key {
    /// Whether a key event is this key: Ctrl as the table says; Shift as it comes (a `?` is a
    /// shifted `/`, Shift-Tab is BackTab); never with Alt.
    pub fn matches(&self, e: &KeyEvent) -> bool {
        let ctrl_held = e.modifiers.contains(KeyModifiers::CONTROL);
        let alt = e.modifiers.contains(KeyModifiers::ALT);
        match *self {
            Key::Code { code, ctrl } => e.code == code && ctrl_held == ctrl && !alt,
            Key::AnyChar => matches!(e.code, KeyCode::Char(_)) && !ctrl_held && !alt,
        }
    }

    /// A key event that is this key (for tests that press every key of a table).
    #[cfg(test)]
    pub fn event(&self) -> KeyEvent {
        match *self {
            Key::Code { code, ctrl } => KeyEvent::new(
                code,
                if ctrl {
                    KeyModifiers::CONTROL
                } else {
                    KeyModifiers::NONE
                },
            ),
            Key::AnyChar => KeyEvent::new(KeyCode::Char('z'), KeyModifiers::NONE),
        }
    }
}

/// One row of a view's table: its keys and what each does (a command `C`), how the footer and
/// the help name them. `S` is the TUI's state, which the footer's words may depend on.
pub struct Binding<S: 'static, C: 'static> {
    pub keys: &'static [(Key, C)],
    /// The keys' name (`↑↓/jk`), and on a console without arrows (`j/k`).
    pub label: &'static str,
    pub ascii: &'static str,
    /// What it does, in a word or two for the footer.
    pub does: fn(&S) -> &'static str,
    /// What it does, in a line for the help.
    pub help: &'static str,
    /// Shown in the footer.
    pub footer: bool,
}

/// A row of a table whose footer words do not depend on the state.
#[macro_export]
macro_rules! bind {
    ($keys:expr, $label:literal, $ascii:literal, $does:literal, $help:literal, $footer:literal) => {
        $crate::ui::keymap::Binding {
            keys: $keys,
            label: $label,
            ascii: $ascii,
            does: |_| $does,
            help: $help,
            footer: $footer,
        }
    };
}

/// What a key event does in a view with this table: a key it names before any character typed.
pub fn command<S, C: Copy>(table: &'static [Binding<S, C>], e: &KeyEvent) -> Option<C> {
    let keys = || table.iter().flat_map(|b| b.keys.iter());
    keys()
        .find(|(k, _)| *k != Key::AnyChar && k.matches(e))
        .or_else(|| keys().find(|(k, _)| k.matches(e)))
        .map(|(_, c)| *c)
}

/// The footer of a view with this table: (keys, what they do), the keys named for a console
/// without arrows when `ascii`.
pub fn footer<S, C>(
    table: &'static [Binding<S, C>],
    state: &S,
    ascii: bool,
) -> Vec<(&'static str, &'static str)> {
    table
        .iter()
        .filter(|b| b.footer)
        .map(|b| (if ascii { b.ascii } else { b.label }, (b.does)(state)))
        .collect()
}

/// Checks a table: every row has keys and words, and every key of every row does what its row
/// says (no row earlier in the table takes it). The problems found, for a test to print.
#[cfg(test)]
pub fn problems<S, C: Copy + PartialEq + std::fmt::Debug>(
    table: &'static [Binding<S, C>],
) -> Vec<String> {
    let mut out = Vec::new();
    for b in table {
        if b.keys.is_empty() || b.help.is_empty() || b.label.is_empty() {
            out.push(format!("{}: no keys or no words", b.label));
        }
        for (k, cmd) in b.keys {
            let got = command(table, &k.event());
            if got != Some(*cmd) {
                out.push(format!("{} {k:?}: does {got:?}, not {cmd:?}", b.label));
            }
        }
    }
    out
}

//! The lessons' keys, as data ([`crate::ui::keymap`]): a table per pane drives what a key does
//! and the footer that names them.

use crossterm::event::KeyEvent;

use super::{LearnApp, Pane};
use crate::bind;
use crate::ui::keymap::{self, Key, *};

/// What a key does in the lessons' TUI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Quit,
    /// The list: the lesson above or below (it wraps round).
    Select(i8),
    Open,
    /// The question: a letter picks that choice.
    Predict,
    Run,
    /// Back to the list.
    Back,
    /// The answer: scroll by this many lines.
    Scroll(i8),
}

type Binding = keymap::Binding<LearnApp, Cmd>;

const QUIT: Binding = bind!(
    &[(ch('q'), Cmd::Quit), (ctrl('c'), Cmd::Quit)],
    "q",
    "q",
    "quit",
    "quit (a running lesson stops and its lab devices are removed)",
    true
);

static LIST: &[Binding] = &[
    bind!(
        &[
            (UP, Cmd::Select(-1)),
            (DOWN, Cmd::Select(1)),
            (ch('k'), Cmd::Select(-1)),
            (ch('j'), Cmd::Select(1)),
        ],
        "Up/Down",
        "Up/Down",
        "choose",
        "choose a lesson (also j/k)",
        true
    ),
    bind!(
        &[(ENTER, Cmd::Open)],
        "Enter",
        "Enter",
        "open",
        "open its question",
        true
    ),
    QUIT,
];

static QUESTION: &[Binding] = &[
    bind!(
        &[(Key::AnyChar, Cmd::Predict)],
        "a-z",
        "a-z",
        "predict",
        "pick a prediction by its letter",
        true
    ),
    bind!(
        &[(ENTER, Cmd::Run)],
        "Enter",
        "Enter",
        "run",
        "run the lesson (with the prediction, if one was picked)",
        true
    ),
    bind!(
        &[(ESC, Cmd::Back)],
        "Esc",
        "Esc",
        "lessons",
        "back to the lessons",
        true
    ),
    QUIT,
];

static RUNNING: &[Binding] = &[bind!(
    &[
        (ESC, Cmd::Quit),
        (ch('q'), Cmd::Quit),
        (ctrl('c'), Cmd::Quit)
    ],
    "Esc/q",
    "Esc/q",
    "stop the lesson (its lab devices are removed)",
    "stop the lesson and quit",
    true
)];

static ANSWER: &[Binding] = &[
    bind!(
        &[
            (UP, Cmd::Scroll(-1)),
            (DOWN, Cmd::Scroll(1)),
            (ch('k'), Cmd::Scroll(-1)),
            (ch('j'), Cmd::Scroll(1)),
            (PGUP, Cmd::Scroll(-10)),
            (PGDN, Cmd::Scroll(10)),
            (SPACE, Cmd::Scroll(10)),
        ],
        "Up/Down",
        "Up/Down",
        "scroll",
        "scroll the answer (PgUp/PgDn, Space: by 10)",
        true
    ),
    bind!(
        &[(ENTER, Cmd::Back), (ESC, Cmd::Back)],
        "Enter/Esc",
        "Enter/Esc",
        "lessons",
        "back to the lessons",
        true
    ),
    QUIT,
];

/// The table of a pane.
pub fn table(pane: Pane) -> &'static [Binding] {
    match pane {
        Pane::List => LIST,
        Pane::Question => QUESTION,
        Pane::Running => RUNNING,
        Pane::Answer => ANSWER,
    }
}

/// What a key does in the pane shown.
pub fn command(app: &LearnApp, e: &KeyEvent) -> Option<Cmd> {
    keymap::command(table(app.pane), e)
}

/// The footer of the pane shown, as one line.
pub fn footer(app: &LearnApp) -> String {
    keymap::footer(table(app.pane), app, true)
        .iter()
        .map(|(k, d)| format!("{k} {d}"))
        .collect::<Vec<_>>()
        .join("  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_every_pane_does_what_its_row_says() {
        for pane in [Pane::List, Pane::Question, Pane::Running, Pane::Answer] {
            let problems = keymap::problems(table(pane));
            assert!(problems.is_empty(), "{pane:?}: {problems:#?}");
            let ctrl_c = ctrl('c').event();
            assert_eq!(keymap::command(table(pane), &ctrl_c), Some(Cmd::Quit));
        }
        // In the question, q quits before it could be a choice.
        assert_eq!(keymap::command(QUESTION, &ch('q').event()), Some(Cmd::Quit));
        assert_eq!(
            keymap::command(QUESTION, &ch('b').event()),
            Some(Cmd::Predict)
        );
    }
}

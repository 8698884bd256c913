//! How the TUI looks: colour or not, line drawing or ASCII, and the styles every pane uses.

use crate::device::WriteSafety;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::{self, Marker};
use ratatui::text::Line;
use ratatui::widgets::Block;

/// How to draw: colour or not, braille or ASCII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub color: bool,
    pub ascii: bool,
}

pub const MIN_WIDTH: u16 = 64;

pub const MIN_HEIGHT: u16 = 18;

pub(super) const ASCII_BORDER: symbols::border::Set = symbols::border::Set {
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

    pub(super) fn safety(&self, s: WriteSafety) -> Style {
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

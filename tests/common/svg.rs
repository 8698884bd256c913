//! A ratatui buffer as an SVG picture: what a terminal with a dark palette would show, cell for
//! cell, so the pictures in README.md and docs/ are the program's own drawing, not a hand's.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const CELL_W: f64 = 8.4;
const CELL_H: f64 = 17.0;
const FONT: f64 = 14.0;
const BACKGROUND: &str = "#1d1f21";
const FOREGROUND: &str = "#d0d0d0";

/// xterm's palette, a little softened, for the named colours the TUI uses.
fn rgb(c: Color, default: &'static str) -> String {
    let named = match c {
        Color::Reset => default,
        Color::Black => "#1d1f21",
        Color::Red => "#e0605a",
        Color::Green => "#8fc25f",
        Color::Yellow => "#e6c04f",
        Color::Blue => "#6a9fd8",
        Color::Magenta => "#b886c9",
        Color::Cyan => "#5fbfbf",
        Color::Gray => "#c0c0c0",
        Color::DarkGray => "#7a7a7a",
        Color::LightRed => "#ff8080",
        Color::LightGreen => "#a8e07a",
        Color::LightYellow => "#fff08a",
        Color::LightBlue => "#8fbfff",
        Color::LightMagenta => "#e0a0f0",
        Color::LightCyan => "#90e8e8",
        Color::White => "#f0f0f0",
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(_) => default,
    };
    named.to_string()
}

/// One run of cells on a row that share a style.
#[derive(PartialEq)]
struct Style {
    fg: String,
    bg: String,
    bold: bool,
}

fn style_of(cell: &ratatui::buffer::Cell) -> Style {
    let (mut fg, mut bg) = (rgb(cell.fg, FOREGROUND), rgb(cell.bg, BACKGROUND));
    if cell.modifier.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fg, &mut bg);
    }
    Style {
        fg,
        bg,
        bold: cell.modifier.contains(Modifier::BOLD),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A run's background (when it is not the picture's) and its words, each placed at its own
/// cell and stretched to its cells, so that spaces need no font and a font whose braille or
/// box glyphs are not one cell wide still lines up.
fn run_svg(out: &mut String, row: u16, col: u16, cells: &[String], st: &Style) {
    let (x, y) = (f64::from(col) * CELL_W, f64::from(row) * CELL_H);
    if st.bg != BACKGROUND {
        out.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{}\"/>\n",
            cells.len() as f64 * CELL_W,
            st.bg
        ));
    }
    let weight = if st.bold { " font-weight=\"bold\"" } else { "" };
    let mut i = 0;
    while i < cells.len() {
        if cells[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let start = i;
        while i < cells.len() && !cells[i].trim().is_empty() {
            i += 1;
        }
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\"{weight} textLength=\"{:.1}\" \
             lengthAdjust=\"spacingAndGlyphs\">{}</text>\n",
            x + start as f64 * CELL_W,
            y + CELL_H * 0.78,
            st.fg,
            (i - start) as f64 * CELL_W,
            escape(&cells[start..i].concat())
        ));
    }
}

/// The buffer as a standalone SVG document.
pub fn picture(buf: &Buffer) -> String {
    let area = buf.area;
    let (w, h) = (
        f64::from(area.width) * CELL_W,
        f64::from(area.height) * CELL_H,
    );
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.1} {h:.1}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, \
         monospace\" font-size=\"{FONT}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"{BACKGROUND}\"/>\n"
    );
    for row in 0..area.height {
        let mut col = 0;
        while col < area.width {
            let st = style_of(&buf[(col, row)]);
            let (start, mut cells) = (col, Vec::new());
            while col < area.width && style_of(&buf[(col, row)]) == st {
                cells.push(buf[(col, row)].symbol().to_string());
                col += 1;
            }
            run_svg(&mut out, row, start, &cells, &st);
        }
    }
    out.push_str("</svg>\n");
    out
}

//! docs/findings.md, written from the findings model: every kind, grouped by where it comes
//! from, with its general meaning. A test compares the file with this text, so a kind added to
//! the model is in the docs or the tests fail.

use std::fmt::Write;

use crate::analysis::findings::{Effect, Kind, Source};

/// The findings reference, as Markdown.
pub fn findings_markdown() -> String {
    let mut out = String::from(
        "# Findings\n\n\
         Every kind of finding and warning blkscope raises, grouped by where it comes from, with \
         what it means in general. A finding's own message says what was seen, with its figures \
         (`numbers` in JSON): every number its words say is one of them (a command it suggests \
         and a source it cites aside; debug builds, and so the tests, check each finding made). \
         `blkscope explain KIND` prints the text below and the whole message of the newest \
         saved run that had one.\n\n\
         In JSON a test's finding is `{\"kind\", \"device\", \"message\", \"numbers\"}` in \
         `findings`, and `{\"kind\", \"message\"}` in `warnings`; the doctor's is \
         `{\"kind\", \"severity\", \"message\", \"numbers\"}`.\n\n\
         This page is written from the code (`src/analysis/findings/kind.rs`); \
         `BLKSCOPE_WRITE_DOCS=1 cargo test --test docs` writes it again.\n\n\
         A result says its notes in the order of what they do to the figure: first what makes \
         it not the device's at all (**not the device's**: reads of holes, memory, the page \
         cache), then what moved it (**moves it**: read-modify-write, flushes, another \
         process's I/O), then what the device is and how it is set up (**context**).\n",
    );
    let sources = [
        Source::Job,
        Source::Diskstats,
        Source::HowItRan,
        Source::Unwritten,
        Source::Others,
        Source::Repeats,
        Source::Device,
    ];
    for source in sources {
        let _ = write!(
            out,
            "\n## From {}\n\n| kind | to the figure | what it means |\n| --- | --- | --- |\n",
            source.name()
        );
        for k in Kind::ALL.iter().filter(|k| k.source() == source) {
            let effect = match k.effect() {
                Effect::Meaningless => "not the device's",
                Effect::Changes => "moves it",
                Effect::Context => "context",
            };
            let _ = writeln!(out, "| `{}` | {effect} | {} |", k.name(), k.about());
        }
    }
    out
}

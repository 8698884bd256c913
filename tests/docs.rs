//! The documents written from the code are current: docs/findings.md lists every kind of
//! finding the model has, with its meaning. `BLKSCOPE_WRITE_DOCS=1 cargo test --test docs`
//! writes them again.

mod common;

use std::path::Path;

fn current(rel: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("BLKSCOPE_WRITE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        println!("wrote {}", path.display());
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "{rel} is not what the code writes: run BLKSCOPE_WRITE_DOCS=1 cargo test --test docs\n\
         --- the code writes ---\n{text}"
    );
}

#[test]
fn the_findings_reference_lists_every_kind() {
    let text = blkscope::output::reference::findings_markdown();
    for k in blkscope::analysis::findings::Kind::ALL {
        assert!(text.contains(&format!("| `{}` |", k.name())), "{k}");
    }
    println!("{} kinds", blkscope::analysis::findings::Kind::ALL.len());
    current("docs/findings.md", &text);
}

/// `blkscope explain KIND` explains every kind the model has, the doctor's too (`misaligned`
/// was not explainable while the doctor's kinds lived apart).
#[test]
fn explain_knows_every_kind() {
    for k in blkscope::analysis::findings::Kind::ALL {
        let out = common::blkscope(&["explain", k.name()]);
        let text = common::ok_stdout(&out, k.name());
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.starts_with(&format!("{}: ", k.name())) && joined.contains(&k.about()[..40]),
            "{k}: {text}"
        );
    }
    println!(
        "{} kinds explained",
        blkscope::analysis::findings::Kind::ALL.len()
    );
}

//! The documents written from the code are current: docs/findings.md lists every kind of
//! finding the model has, with its meaning. `BLKSCOPE_WRITE_DOCS=1 cargo test --test docs`
//! writes them again.

mod common;

use std::path::Path;

#[test]
fn the_findings_reference_lists_every_kind() {
    let text = blkscope::output::reference::findings_markdown();
    for k in blkscope::analysis::findings::Kind::ALL {
        assert!(text.contains(&format!("| `{}` |", k.name())), "{k}");
    }
    println!("{} kinds", blkscope::analysis::findings::Kind::ALL.len());
    common::current("docs/findings.md", &text);
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

/// Every `console` block in README.md, CONTRIBUTING.md and docs/ runs as shown (trycmd): the
/// command after `$`, its output (`...` stands for lines that change from run to run, `[..]`
/// for part of a line) and its exit status (`? 3`). Device commands read the fixture tree of
/// a disk with LVM on its second partition and a blank second disk (BLKSCOPE_ROOT), saved runs
/// go to a directory of this test's. `TRYCMD=overwrite cargo test --test docs commands`
/// writes what the commands print now into the blocks.
#[test]
fn the_commands_in_the_documents_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = tempfile::tempdir().unwrap();
    let docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("blkscope", Path::new(env!("CARGO_BIN_EXE_blkscope")))
        .env(
            "BLKSCOPE_ROOT",
            root.join("tests/fixtures/lvm-on-partition")
                .display()
                .to_string(),
        )
        .env("XDG_DATA_HOME", home.path().display().to_string())
        .env("XDG_CONFIG_HOME", home.path().display().to_string())
        .env("BLKSCOPE_NO_TRACE", "1")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    cases.case(root.join("README.md"));
    cases.case(root.join("CONTRIBUTING.md"));
    for d in &docs {
        cases.case(d);
    }
    println!("{} documents", docs.len() + 2);
    cases.run();
}

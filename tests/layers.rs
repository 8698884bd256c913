//! The house stays as lib.rs and docs/architecture.md's house describe it: every module of the library
//! imports only from the layers below its own (no import runs back up, so there is no circle),
//! and no function outside the tests needs a scroll to read (120 lines at most). Read from the
//! source as text, as a reviewer would.

use std::path::{Path, PathBuf};

/// The library's top-level modules, from the top layer down. A module may name (`crate::X`)
/// only modules after it in this list.
const LAYERS: [&str; 25] = [
    "cli", "ui", "report", "plot", "output", "learn", "session", "remote", "runs", "result",
    "suite", "doctor", "tuning", "lab", "analysis", "verify", "engine", "trace", "stats", "device",
    "xdg", "error", "units", "sysroot", "sys",
];

/// The longest a function may be.
const MAX_FN_LINES: usize = 120;

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// The top-level module a source file belongs to (`engine` for src/engine/worker.rs).
fn module_of(path: &Path) -> String {
    let rel = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file without its test module and without comments.
fn code_of(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_import_runs_downwards() {
    let mut seen = 0;
    let mut wrong = Vec::new();
    for path in sources() {
        let module = module_of(&path);
        let Some(own) = LAYERS.iter().position(|m| *m == module) else {
            // lib.rs and main.rs stand above every layer.
            assert!(
                module == "lib" || module == "main",
                "{}: module {module} is in no layer: add it to LAYERS (and to lib.rs and the \
                 house in docs/architecture.md)",
                path.display()
            );
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            let Some(to) = LAYERS.iter().position(|m| *m == name) else {
                continue;
            };
            seen += 1;
            if to < own {
                wrong.push(format!("{} -> crate::{name}", path.display()));
            }
        }
    }
    println!("{seen} imports between layers read");
    assert!(
        seen > 100,
        "only {seen} imports found: is the source where it was?"
    );
    assert!(
        wrong.is_empty(),
        "imports that run back up a layer:\n{}",
        wrong.join("\n")
    );
}

/// (name, first line, length) of every function in `code`, its end found by the closing brace
/// at its own indentation (rustfmt's layout).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let rest = [
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "fn ",
            "async fn ",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p));
        let Some(rest) = rest else { continue };
        if t.ends_with(';') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i..].iter().position(|x| *x == close) {
            out.push((name, i + 1, end + 1));
        }
    }
    out
}

#[test]
fn no_function_needs_a_scroll() {
    let mut longest = (String::new(), 0);
    let mut long = Vec::new();
    let mut count = 0;
    for path in sources() {
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for (name, line, len) in functions(&code) {
            count += 1;
            let at = format!("{}:{line} {name}", path.display());
            if len > longest.1 {
                longest = (at.clone(), len);
            }
            if len > MAX_FN_LINES {
                long.push(format!("{at}: {len} lines"));
            }
        }
    }
    println!(
        "{count} functions read; the longest is {} ({} lines)",
        longest.0, longest.1
    );
    assert!(count > 500, "only {count} functions found");
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines: split them into named steps\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_reader_measures_what_it_should() {
    let code = "fn a() {\n    x();\n}\n\npub fn b(\n    y: u8,\n) -> u8 {\n    y\n}\n    fn inner() {\n        z();\n    }\n";
    let f = functions(code);
    println!("{f:?}");
    assert_eq!(
        f,
        [
            ("a".to_string(), 1, 3),
            ("b".to_string(), 5, 5),
            ("inner".to_string(), 10, 3)
        ]
    );
}

/// One findings model: a single `struct Finding` in the library (a test's, a suite's, a
/// lesson's and the doctor's findings are the same type), and its kinds one enum.
#[test]
fn one_finding_type() {
    let mut defined = Vec::new();
    for path in sources() {
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for (i, l) in code.lines().enumerate() {
            let t = l.trim_start();
            if t.starts_with("pub struct Finding ")
                || t.starts_with("struct Finding ")
                || t.starts_with("pub enum Kind ") && path.ends_with("findings/kind.rs")
            {
                defined.push(format!("{}:{} {t}", path.display(), i + 1));
            }
        }
    }
    println!("{defined:#?}");
    assert_eq!(
        defined.len(),
        2,
        "one Finding struct and one findings Kind enum: {defined:#?}"
    );
}

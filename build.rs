//! Records the commit blkscope is built from, for `--version` (`unknown` outside a git checkout,
//! e.g. from a source tarball).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    let commit = if dirty && commit != "unknown" {
        format!("{commit}-modified")
    } else {
        commit
    };
    println!("cargo:rustc-env=BLKSCOPE_COMMIT={commit}");
    // Rebuild when HEAD moves (a commit, a checkout); the paths may not exist outside git.
    let mut watch = vec![".git/HEAD".to_string(), ".git/index".to_string()];
    if let Ok(head) = std::fs::read_to_string(".git/HEAD")
        && let Some(r) = head.trim().strip_prefix("ref: ")
    {
        watch.push(format!(".git/{r}"));
        watch.push(".git/packed-refs".into());
    }
    for p in watch {
        if std::path::Path::new(&p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

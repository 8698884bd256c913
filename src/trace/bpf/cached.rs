//! The programs' layout kept for the kernel's build, in /run (memory, gone at the next boot,
//! which is when the kernel can change): finding it in the kernel's BTF took a run 0.5-0.8 ms
//! of its 2.6 ms budget on the slowest row (docs/architecture.md). The file holds the build's
//! key on its first line and the numbers on its second; one for another build, or one that does
//! not read, is found again and written over.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Where the layout is kept: a file for each format of its numbers (the second has the typed
/// programs' ids), so that two builds of blkscope run by turns do not each find the other's
/// file unreadable and write it over (0.5-2 ms of BTF each run).
pub const DIR: &str = "/run/blkscope";
const FILE: &str = "bpf-layout-2";

/// The running kernel's build: its release, its version line (the build's number and date) and
/// the size of its BTF; None where they cannot be read.
pub fn kernel() -> Option<String> {
    let read = |p: &str| fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    let size = fs::metadata("/sys/kernel/btf/vmlinux").ok()?.len();
    Some(format!(
        "{} {} {size}",
        read("/proc/sys/kernel/osrelease")?,
        read("/proc/sys/kernel/version")?
    ))
}

/// The numbers kept in `dir` for build `key`.
pub fn read(dir: &Path, key: &str) -> Option<Vec<u32>> {
    let text = fs::read_to_string(dir.join(FILE)).ok()?;
    let (first, numbers) = text.split_once('\n')?;
    if first != key {
        return None;
    }
    numbers.split_whitespace().map(|w| w.parse().ok()).collect()
}

/// Keeps `words` in `dir` for build `key`, whole or not at all (written aside, then renamed);
/// where it cannot (no /run, not root), the next run finds them again.
pub fn write(dir: &Path, key: &str, words: &[u32]) {
    let numbers: Vec<String> = words.iter().map(u32::to_string).collect();
    let text = format!("{key}\n{}\n", numbers.join(" "));
    // Aside under a name of this write's own (two traces of one process may write at once).
    static WRITES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let aside = dir.join(format!("{FILE}.{}.{n}", std::process::id()));
    let written = fs::create_dir_all(dir)
        .and_then(|()| fs::File::create(&aside))
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| fs::rename(&aside, dir.join(FILE)));
    if written.is_err() {
        let _ = fs::remove_file(&aside);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept and read back for the same build; not for another; a file that does not read as
    /// numbers is none.
    #[test]
    fn a_layout_is_read_back_only_for_the_build_it_was_kept_for() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("blkscope");
        assert_eq!(read(&at, "6.18 #1 5523"), None);
        write(&at, "6.18 #1 5523", &[8, 16, 32]);
        let got = read(&at, "6.18 #1 5523");
        println!("{got:?}");
        assert_eq!(got, Some(vec![8, 16, 32]));
        assert_eq!(read(&at, "6.19 #1 5600"), None);
        fs::write(at.join(FILE), "6.18 #1 5523\n8 x 32\n").unwrap();
        assert_eq!(read(&at, "6.18 #1 5523"), None);
        // Nothing left aside.
        let names: Vec<_> = fs::read_dir(&at)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn this_kernels_build_has_a_key() {
        let k = kernel();
        println!("{k:?}");
        if std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
            assert!(k.is_some_and(|k| k.contains(' ')));
        }
    }
}

//! `--push`: this blkscope (or the file named) copied to each host for the run, streamed from
//! the file (never held in memory per host), and skipped where the host already holds the same
//! one from this run: the copies live under their SHA-256 in a private directory there
//! (`$TMPDIR/blkscope-UID`, mode 700, refused unless the user owns it), each session holding
//! its own hard link while it runs; a copy goes a few seconds after its last session, so that
//! the next alias of the same machine in a fan-out finds it.
//!
//! The push and the run share one connection: the remote script says `blkscope-have` or
//! `blkscope-send` on its first line, and only after `send` does the binary follow on the
//! channel's input, which then stays open so that the remote run can stop when it closes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::failures::PUSH_FAILED;
use super::ssh::shell_quote;

/// The binary to push, read once for its hash and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    pub path: PathBuf,
    pub size: u64,
    /// SHA-256, hex.
    pub hash: String,
}

/// The first line of a push's answer when the host had the binary already.
pub const HAVE: &str = "blkscope-have";
/// ... and when it waits for it.
pub const SEND: &str = "blkscope-send";

impl Binary {
    /// Reads `path` once, in 1 MiB pieces, for its SHA-256.
    pub fn prepare(path: &Path) -> Result<Binary, String> {
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            let n = f
                .read(&mut buf)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            h.update(&buf[..n]);
        }
        let hash = h
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        Ok(Binary {
            path: path.to_path_buf(),
            size,
            hash,
        })
    }

    /// Shell that sets `$b` to this session's own link to the binary on the host: taken from
    /// the private cache where this run put it already (printing HAVE), or received on the
    /// input (printing SEND first) and put in the cache for the hosts after it.
    pub fn acquire_script(&self) -> String {
        let (hash, size) = (&self.hash, self.size);
        format!(
            "umask 077; d=\"${{TMPDIR:-/tmp}}/blkscope-$(id -u)\"; mkdir \"$d\" 2>/dev/null; \
             if [ -d \"$d\" ] && [ ! -L \"$d\" ] && [ -O \"$d\" ] && chmod 700 \"$d\"; then :; \
             else d=$(mktemp -d \"${{TMPDIR:-/tmp}}/blkscope.XXXXXXXX\") || exit {PUSH_FAILED}; fi; \
             f=\"$d/{hash}\"; b=\"$f.$$\"; \
             if ln \"$f\" \"$b\" 2>/dev/null; then echo {HAVE}; \
             else echo {SEND}; head -c {size} > \"$b.part\"; \
             if [ $(wc -c < \"$b.part\") -eq {size} ] && chmod 700 \"$b.part\" && mv \"$b.part\" \"$b\"; \
             then ln \"$b\" \"$f\" 2>/dev/null; \
             else rm -f \"$b.part\"; echo 'blkscope: the copy of blkscope did not arrive whole' >&2; \
             exit {PUSH_FAILED}; fi; fi"
        )
    }
}

/// Seconds a cached copy outlives its last session, for the next alias of the same machine.
pub const LINGER: u32 = 3;

/// Shell that lets go of the session's link `$b` (set by the acquire script or given), and of
/// the cached copy `LINGER` seconds later when no session holds a link (`$f.PID`) or is
/// receiving one (`$f.PID.part`) by then, and none took or let go of one meanwhile (the copy's
/// inode change time, which every link and unlink moves, is as it was at this release: a
/// fan-out's sessions come and go, and at the one instant of the check all four slots of a
/// loaded machine were once between sessions, so the copy went and three hosts were sent it
/// again). The copy may be another session's inode, so its link count says nothing. The wait
/// runs detached, so the connection ends at once.
pub fn release_script() -> String {
    format!(
        "rm -f \"$b\"; f=\"${{b%.*}}\"; d=\"${{b%/*}}\"; \
         case \"$d\" in */blkscope.*) rm -rf \"$d\";; \
         *) c=$(stat -c %z \"$f\" 2>/dev/null); \
         (sleep {LINGER}; set -- \"$f\".*; [ -e \"$1\" ] || \
         [ \"$(stat -c %z \"$f\" 2>/dev/null)\" != \"$c\" ] || rm -f \"$f\") \
         </dev/null >/dev/null 2>&1 & ;; esac"
    )
}

/// The release script for a link whose path the acquire script printed.
pub fn release_at(path: &str) -> String {
    format!("b={}; {}", shell_quote(path), release_script())
}

/// Whether `path` is what the acquire script makes: an absolute path in a blkscope directory,
/// named for a hash and a process.
pub fn is_link_path(path: &str) -> bool {
    let Some((dir, name)) = path.rsplit_once('/') else {
        return false;
    };
    let dir_name = dir.rsplit('/').next().unwrap_or("");
    path.starts_with('/')
        && !path.contains(char::is_whitespace)
        && dir_name.starts_with("blkscope")
        && name
            .split_once('.')
            .is_some_and(|(h, pid)| h.len() == 64 && pid.chars().all(|c| c.is_ascii_digit()))
}

/// What a host's first line asks: after SEND the binary follows on `stdin` ("sent"); HAVE needs
/// nothing ("cached"); anything else (the connection failed) neither.
pub fn answer(
    line: &str,
    bin: &Binary,
    stdin: Option<&mut std::process::ChildStdin>,
) -> Option<&'static str> {
    match line.trim() {
        SEND => {
            if let Some(i) = stdin {
                // A host that goes meanwhile ends the command too; its outcome says why.
                let _ = stream(bin, i);
            }
            Some("sent")
        }
        HAVE => Some("cached"),
        _ => None,
    }
}

/// Streams the binary to `to` (the channel's input): 64 KiB at a time, from the file.
pub fn stream(bin: &Binary, to: &mut impl Write) -> std::io::Result<u64> {
    let f = std::fs::File::open(&bin.path)?;
    let mut r = std::io::BufReader::with_capacity(64 << 10, f.take(bin.size));
    let n = std::io::copy(&mut r, to)?;
    to.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The acquire and release scripts, run here with sh in a temporary $TMPDIR: the first
    /// session receives, the second takes the cached copy, and the last one out removes it.
    #[test]
    fn sessions_share_one_copy_and_the_last_one_out_removes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("bin");
        std::fs::write(&src, b"#!/bin/sh\necho ran \"$@\"\n").unwrap();
        let bin = Binary::prepare(&src).unwrap();
        println!("{} bytes, {}", bin.size, bin.hash);
        assert_eq!(bin.hash.len(), 64);
        let session = |feed: bool| {
            let mut c = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{}; echo \"$b\"", bin.acquire_script()))
                .env("TMPDIR", tmp.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = c.stdin.take().unwrap();
            if feed {
                stream(&bin, &mut stdin).unwrap();
            }
            drop(stdin);
            let out = c.wait_with_output().unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        let first = session(true);
        println!("first: {first:?}");
        assert!(first.starts_with(SEND), "{first}");
        let second = session(false);
        println!("second: {second:?}");
        assert!(second.starts_with(HAVE), "{second}");
        let paths: Vec<&str> = [&first, &second]
            .iter()
            .map(|s| s.lines().nth(1).unwrap())
            .collect();
        for p in &paths {
            assert!(is_link_path(p), "{p}");
            let ran = std::process::Command::new(p).arg("x").output().unwrap();
            assert_eq!(String::from_utf8_lossy(&ran.stdout), "ran x\n");
        }
        let dir = Path::new(paths[0]).parent().unwrap().to_path_buf();
        let count = || std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(count(), 3, "the copy and two sessions' links");
        let release = |p: &str| {
            let st = std::process::Command::new("sh")
                .arg("-c")
                .arg(release_at(p))
                .status()
                .unwrap();
            assert!(st.success() || count() == 0);
        };
        release(paths[0]);
        std::thread::sleep(std::time::Duration::from_secs(u64::from(LINGER) + 1));
        assert_eq!(count(), 2, "the copy stays while a session holds it");
        release(paths[1]);
        assert_eq!(count(), 1, "the copy lingers for the next session");
        // A session that comes and goes while the copy lingers keeps it past the first
        // release's check (no link at that instant, but the copy was used since): the next
        // session still finds it.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let between = session(false);
        assert!(between.starts_with(HAVE), "{between}");
        release(between.lines().nth(1).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(
            u64::from(LINGER) * 1000 - 600,
        ));
        let after = session(false);
        println!("after the first release's check: {after:?}");
        assert!(after.starts_with(HAVE), "the copy was kept: {after}");
        release(after.lines().nth(1).unwrap());
        let t = std::time::Instant::now();
        while count() > 0 && t.elapsed().as_secs() < u64::from(LINGER) + 10 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        println!("gone after {:?}", t.elapsed());
        assert_eq!(count(), 0, "then goes");
        // A copy cut short is refused, and nothing is left of it.
        let short = {
            let mut c = std::process::Command::new("sh")
                .arg("-c")
                .arg(bin.acquire_script())
                .env("TMPDIR", tmp.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin.take().unwrap().write_all(b"#!/bin").unwrap();
            c.wait_with_output().unwrap()
        };
        println!("{short:?}");
        assert_eq!(short.status.code(), Some(PUSH_FAILED));
        assert_eq!(count(), 0);
    }
}

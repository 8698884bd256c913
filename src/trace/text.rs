//! The kernel's text of a trace (`trace_pipe`): read where the ring buffer's pages cannot be
//! read as [`super::raw`] expects, or when `BLKSCOPE_TRACE_TEXT=1` asks for it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::event;
use super::tally::Tally;

/// The instance's `trace_pipe`, and the part of a line read before the rest came.
pub struct Text {
    pipe: File,
    buf: Vec<u8>,
    carry: String,
}

impl Text {
    /// Opens the instance's text pipe without blocking reads.
    pub fn open(dir: &Path) -> io::Result<Text> {
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dir.join("trace_pipe"))?;
        Ok(Text {
            pipe,
            buf: vec![0u8; 1 << 16],
            carry: String::new(),
        })
    }

    /// Reads the text (at most about `limit` bytes) into the tally, adding the events the
    /// kernel says it lost to `lost`; true when it stopped at the limit with more to read.
    pub fn drain(&mut self, limit: usize, tally: &mut Tally, lost: &mut u64) -> io::Result<bool> {
        let mut taken = 0usize;
        loop {
            if taken >= limit {
                return Ok(true);
            }
            match self.pipe.read(&mut self.buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    taken += n;
                    self.carry
                        .push_str(&String::from_utf8_lossy(&self.buf[..n]));
                    *lost += self.take_lines(tally);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Counts the whole lines read so far into the tally and keeps the part of the last one;
    /// the events the lines say were lost.
    fn take_lines(&mut self, tally: &mut Tally) -> u64 {
        let end = self.carry.rfind('\n').map_or(0, |i| i + 1);
        let mut lost = 0;
        for line in self.carry[..end].lines() {
            if let Some(e) = event::parse(line) {
                tally.add(&e);
            } else if let Some(l) = event::parse_life(line) {
                tally.life(l);
            } else {
                lost += lost_in(line);
            }
        }
        self.carry.drain(..end);
        lost
    }
}

/// The count of a `CPU:N [LOST M EVENTS]` line.
fn lost_in(line: &str) -> u64 {
    line.split_once("[LOST ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_lost_lines_are_counted() {
        assert_eq!(lost_in("CPU:1 [LOST 50189 EVENTS]"), 50189);
        assert_eq!(lost_in("CPU:0 [LOST EVENTS]"), 0);
        assert_eq!(
            lost_in("dd-1 [000] 1.0: block_bio_queue: 7,3 R 0 + 8 [dd]"),
            0
        );
    }

    #[test]
    fn a_line_read_in_two_parts_is_counted_once_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trace_pipe"), "").unwrap();
        let mut t = Text::open(dir.path()).unwrap();
        let mut tally = Tally::new(1);
        let line = "           dd-24858   (  24858) [001] .....  3627.000001: block_bio_queue: 7,3 R 0 + 8 [dd]\n";
        let (a, b) = line.split_at(40);
        t.carry.push_str(a);
        assert_eq!((t.take_lines(&mut tally), tally.events), (0, 0));
        t.carry.push_str(b);
        t.carry.push_str("CPU:1 [LOST 7 EVENTS]\n");
        let lost = t.take_lines(&mut tally);
        println!("lost {lost}, events {}, left {:?}", tally.events, t.carry);
        assert_eq!((lost, tally.events, t.carry.as_str()), (7, 1, ""));
    }
}

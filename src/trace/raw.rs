//! The trace as the kernel keeps it: each CPU's ring-buffer pages (`per_cpu/cpuN/trace_pipe_raw`)
//! decoded into the events of [`super::event`], without the kernel printing them as text and
//! blkscope parsing the text back.
//!
//! A page is a header (its first event's time, then how many bytes of events it holds, with
//! flags for events lost before it) and the events, each a 32-bit word (its length in words,
//! or a kind: padding, a longer time step, an absolute time; and its time since the one before)
//! and the record the tracepoint wrote. Where a record's fields lie is read from the instance's
//! `format` files, so a kernel that moves them is read right. The records carry the thread's
//! pid; its process (the tgid) is looked up in /proc, or in the kernel's `saved_tgids` for one
//! that has ended.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::event::{Event, Kind, Life};

/// Where one field of a record lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Field {
    offset: usize,
    size: usize,
}

/// Which event a record is, and where the fields blkscope reads lie in it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Format {
    Block {
        kind: Kind,
        dev: Field,
        sector: Field,
        nr_sector: Field,
        rwbs: Field,
        /// The submitter's name (queue and issue; not a completion's).
        comm: Option<Field>,
    },
    Fork {
        parent_pid: Field,
        child_pid: Field,
    },
    Exit {
        pid: Field,
    },
}

/// The fields of one event's `format` file: name, and where it lies.
fn fields(text: &str) -> (Option<u16>, HashMap<String, Field>) {
    let mut id = None;
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
            continue;
        }
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let Some(decl) = parts.next() else { continue };
        // "char rwbs[10]" is rwbs; "__data_loc char[] cmd" is cmd.
        let Some(name) = decl.split_whitespace().last() else {
            continue;
        };
        let name = name.split('[').next().unwrap_or(name);
        let value = |key: &str, parts: &[&str]| -> Option<usize> {
            parts
                .iter()
                .find_map(|p| p.strip_prefix(key)?.strip_prefix(':'))?
                .parse()
                .ok()
        };
        let parts: Vec<&str> = parts.collect();
        if let (Some(offset), Some(size)) = (value("offset", &parts), value("size", &parts)) {
            out.insert(name.to_string(), Field { offset, size });
        }
    }
    (id, out)
}

/// Reads an event's format: its id and where its fields lie; None when a field is missing.
fn format(name: &str, text: &str) -> Option<(u16, Format)> {
    let (id, f) = fields(text);
    let get = |k: &str| f.get(k).copied();
    let block = |kind| {
        Some(Format::Block {
            kind,
            dev: get("dev")?,
            sector: get("sector")?,
            nr_sector: get("nr_sector")?,
            rwbs: get("rwbs")?,
            comm: get("comm"),
        })
    };
    let format = match name {
        "block_bio_queue" => block(Kind::Queue)?,
        "block_rq_issue" => block(Kind::Issue)?,
        "block_rq_complete" => block(Kind::Complete)?,
        "sched_process_fork" => Format::Fork {
            parent_pid: get("parent_pid")?,
            child_pid: get("child_pid")?,
        },
        "sched_process_exit" => Format::Exit { pid: get("pid")? },
        _ => return None,
    };
    Some((id?, format))
}

/// Where a page's header says what (`events/header_page`): the size of its events, and where
/// they begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    commit: Field,
    data: usize,
}

impl Layout {
    fn read(text: &str) -> Option<Layout> {
        let (_, f) = fields(text);
        Some(Layout {
            commit: f.get("commit").copied()?,
            data: f.get("data")?.offset,
        })
    }
}

/// The page's flags in its commit word: events were lost before this page, and their count
/// is stored after its events.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
/// The commit word's bits that give the events' size.
const COMMIT_SIZE: u64 = (1 << 27) - 1;
/// The event word's kinds beyond data of 1-28 words (0: data whose length follows).
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;

/// One record of a page: when, and where it lies in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    ts_ns: u64,
    start: usize,
    len: usize,
}

/// The records of one page, and the events the kernel lost before it (1 where it did not
/// count them).
fn records(page: &[u8], layout: Layout, out: &mut Vec<Record>) -> u64 {
    let (Some(mut ts), Some(commit)) = (read_uint(page, U64_AT_0), read_uint(page, layout.commit))
    else {
        return 0;
    };
    let end = (layout.data + (commit & COMMIT_SIZE) as usize).min(page.len());
    let mut at = layout.data;
    while at + 4 <= end {
        let Some((word, next)) = word_at(page, at) else {
            break;
        };
        match word {
            Word::Record { delta, start, len } => {
                ts += delta;
                out.push(Record {
                    ts_ns: ts,
                    start,
                    len,
                });
            }
            Word::Step(t) => ts += t,
            // An absolute time gives the low 59 bits; the page's time the rest.
            Word::Absolute(t) => ts = (ts & !((1u64 << 59) - 1)) | t,
            Word::Padding => {}
        }
        at = next;
    }
    lost_before(page, commit, end)
}

/// The page's time: its first 8 bytes.
const U64_AT_0: Field = Field { offset: 0, size: 8 };

/// Events the kernel lost before a page, by its commit word's flags: the count stored after
/// its events, or 1 where it was not stored.
fn lost_before(page: &[u8], commit: u64, end: usize) -> u64 {
    match (commit & MISSED_EVENTS != 0, commit & MISSED_STORED != 0) {
        (_, true) => read_uint(
            page,
            Field {
                offset: end,
                size: 8,
            },
        )
        .unwrap_or(1),
        (true, false) => 1,
        _ => 0,
    }
}

/// What one event word of a page says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// A record `delta` ns after the one before, at `start`, `len` bytes.
    Record {
        delta: u64,
        start: usize,
        len: usize,
    },
    /// The time moves on by this much.
    Step(u64),
    /// The time is this (its low 59 bits).
    Absolute(u64),
    /// Space a discarded event left.
    Padding,
}

/// The event word at `at`, and where the next begins; None where the page's events end.
fn word_at(page: &[u8], at: usize) -> Option<(Word, usize)> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(page.get(at..at + 4)?.try_into().ok()?))
    };
    let head = word(at)?;
    let (kind, delta) = (head & 31, (head >> 5) as u64);
    Some(match kind {
        // A padding with no time is the rest of the page.
        PADDING if delta == 0 => return None,
        PADDING => (Word::Padding, at + 4 + word(at + 4)? as usize),
        TIME_EXTEND => (Word::Step(((word(at + 4)? as u64) << 27) | delta), at + 8),
        TIME_STAMP => (
            Word::Absolute(((word(at + 4)? as u64) << 27) | delta),
            at + 8,
        ),
        // A long record: its length (with this word's 4 bytes) follows.
        0 => {
            let len = (word(at + 4)? as usize).saturating_sub(4);
            let record = Word::Record {
                delta,
                start: at + 8,
                len,
            };
            (record, at + 8 + len.div_ceil(4) * 4)
        }
        words => {
            let len = words as usize * 4;
            let record = Word::Record {
                delta,
                start: at + 4,
                len,
            };
            (record, at + 4 + len)
        }
    })
}

/// An unsigned field of 1, 2, 4 or 8 bytes in the machine's order.
fn read_uint(b: &[u8], f: Field) -> Option<u64> {
    let s = b.get(f.offset..f.offset + f.size)?;
    Some(match f.size {
        1 => s[0] as u64,
        2 => u16::from_ne_bytes(s.try_into().ok()?) as u64,
        4 => u32::from_ne_bytes(s.try_into().ok()?) as u64,
        8 => u64::from_ne_bytes(s.try_into().ok()?),
        _ => return None,
    })
}

/// A char array field up to its first NUL.
fn read_chars(b: &[u8], f: Field) -> &[u8] {
    let s = b.get(f.offset..f.offset + f.size).unwrap_or_default();
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

/// A tracefs file that gives its text in one read only (`header_page` answers a second read,
/// as a short first one leaves it, with nothing).
fn read_at_once(path: &Path) -> io::Result<String> {
    let mut buf = vec![0u8; 1 << 16];
    let n = File::open(path)?.read(&mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// What a record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item<'a> {
    Io(Event<'a>),
    Life(Life),
}

/// The thread ids' processes, as they are looked up.
#[derive(Debug, Default)]
struct Tgids {
    known: foldhash::HashMap<u32, Option<u32>>,
    /// The last thread looked up, and its process: a thread's events come in runs.
    last: Option<(u32, Option<u32>)>,
    /// The kernel's table, read at most once a drain (for threads that ended), by pid.
    saved: Option<Vec<(u32, u32)>>,
    saved_at: PathBuf,
}

impl Tgids {
    fn of(&mut self, pid: u32) -> Option<u32> {
        if pid == 0 {
            return Some(0);
        }
        if let Some((p, t)) = self.last
            && p == pid
        {
            return t;
        }
        if let Some(&t) = self.known.get(&pid) {
            self.last = Some((pid, t));
            return t;
        }
        let t = proc_tgid(pid).or_else(|| {
            let saved = self.saved.get_or_insert_with(|| {
                fs::read(&self.saved_at)
                    .map(|s| saved_tgids(&s))
                    .unwrap_or_default()
            });
            let at = saved.binary_search_by_key(&pid, |&(p, _)| p).ok()?;
            Some(saved[at].1)
        });
        if self.known.len() > 1 << 16 {
            self.known.clear();
        }
        self.known.insert(pid, t);
        self.last = Some((pid, t));
        t
    }
}

/// A live thread's process, from /proc.
fn proc_tgid(pid: u32) -> Option<u32> {
    use procfs_core::FromRead;
    let s = procfs_core::process::Status::from_file(format!("/proc/{pid}/status")).ok()?;
    u32::try_from(s.tgid).ok()
}

/// `saved_tgids`: "PID TGID" lines (one for each pid the kernel's tracing has seen, tens of
/// thousands on a busy machine), by pid.
fn saved_tgids(text: &[u8]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = text
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let mut words = l.split(|&b| b == b' ').filter(|w| !w.is_empty());
            let mut number = || std::str::from_utf8(words.next()?).ok()?.parse::<u32>().ok();
            let (p, t) = (number()?, number()?);
            words.next().is_none().then_some((p, t))
        })
        .collect();
    // The kernel prints them in pid order; a table read as it changed may not be.
    if !out.is_sorted_by_key(|&(p, _)| p) {
        out.sort_unstable_by_key(|&(p, _)| p);
    }
    out
}

/// Each CPU's raw pipe of an instance, and how to read its pages.
pub struct Pipes {
    cpus: Vec<File>,
    layout: Layout,
    formats: foldhash::HashMap<u16, Format>,
    page: usize,
    /// The pages read at one drain, and their records in time order; between drains, the
    /// records kept for the next ([`Pipes::hand_out`]). `spare` is where they are gathered.
    arena: Vec<u8>,
    records: Vec<Record>,
    spare: Vec<u8>,
    tgids: Tgids,
    /// When the last drain was.
    drained_at: std::time::Instant,
}

impl Pipes {
    /// Opens the raw pipes of the instance at `dir`, whose trace root is `base`; an error where
    /// the kernel does not describe its pages or events as this reader expects.
    pub fn open(dir: &Path, base: &Path) -> io::Result<Pipes> {
        let layout = Layout::read(&read_at_once(&base.join("events/header_page"))?)
            .ok_or_else(|| bad("events/header_page"))?;
        let page = fs::read_to_string(dir.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map_or(4096, |kb| kb * 1024);
        Ok(Pipes {
            cpus: cpu_pipes(dir)?,
            layout,
            formats: formats(dir)?,
            page,
            arena: Vec::new(),
            records: Vec::new(),
            spare: Vec::new(),
            tgids: Tgids {
                saved_at: base.join("saved_tgids"),
                ..Tgids::default()
            },
            drained_at: std::time::Instant::now(),
        })
    }

    /// Reads what the pipes hold now (at most about `limit` bytes of pages) and hands each
    /// event to `on` in time order over the CPUs; the events lost, and whether to read again
    /// soon (it stopped at the limit, or pages came at [`SOON`] a second or more).
    pub fn drain(&mut self, limit: usize, on: impl FnMut(Item)) -> io::Result<(u64, bool)> {
        // Every CPU is read after this: each one's events before it are all in this drain.
        let mut horizon = crate::sys::monotonic_ns();
        let held = self.arena.len();
        self.tgids.saved = None;
        let (mut lost, mut more) = (0, false);
        // Each CPU its share: one that fills the limit would leave the others to lose events.
        let share = limit / self.cpus.len().max(1);
        for cpu in 0..self.cpus.len() {
            let first = self.records.len();
            let (l, m) = self.read_pages(cpu, self.arena.len().saturating_add(share))?;
            lost += l;
            more |= m;
            // Stopped at its share: its events after the last one read are still to come.
            if m && let Some(last) = self.records[first..].iter().map(|r| r.ts_ns).max() {
                horizon = horizon.min(last + 1);
            }
        }
        // Pages coming at this rate would fill the kernel's buffers in a second's wait: read
        // again soon (a full trace raised above the default rate, BLKSCOPE_TRACE_MAX_RATE).
        let now = std::time::Instant::now();
        let seconds = now.duration_since(self.drained_at).as_secs_f64().max(1e-3);
        self.drained_at = now;
        more |= (self.arena.len() - held) as f64 / seconds >= SOON as f64;
        self.hand_out(horizon, on);
        Ok((lost, more))
    }

    /// Hands out the records before `horizon` in time order over the CPUs, and keeps the
    /// others for the next drain: a CPU read later in a drain gives events newer than the
    /// last of one read earlier, whose newer ones come in the next (a bio queued on one CPU
    /// and issued on another would be seen issued first).
    fn hand_out(&mut self, horizon: u64, mut on: impl FnMut(Item)) {
        self.records.sort_by_key(|r| r.ts_ns);
        let keep = self.records.partition_point(|r| r.ts_ns < horizon);
        for r in &self.records[..keep] {
            let Some(rec) = self.arena.get(r.start..r.start + r.len) else {
                continue;
            };
            if let Some(item) = item(rec, r.ts_ns, &self.formats, &mut self.tgids) {
                on(item);
            }
        }
        self.records.drain(..keep);
        self.spare.clear();
        for r in &mut self.records {
            let rec = self.arena.get(r.start..r.start + r.len).unwrap_or_default();
            (r.start, r.len) = (self.spare.len(), rec.len());
            self.spare.extend_from_slice(rec);
        }
        std::mem::swap(&mut self.arena, &mut self.spare);
    }

    /// Reads one CPU's pages into the arena and their records (until it has none, or the arena
    /// holds `until` bytes): the events lost, and whether it stopped there.
    fn read_pages(&mut self, cpu: usize, until: usize) -> io::Result<(u64, bool)> {
        let mut lost = 0;
        loop {
            if self.arena.len() >= until {
                return Ok((lost, true));
            }
            let at = self.arena.len();
            self.arena.resize(at + self.page, 0);
            let read = self.cpus[cpu].read(&mut self.arena[at..]);
            self.arena.truncate(at + *read.as_ref().unwrap_or(&0));
            match read {
                Ok(0) => return Ok((lost, false)),
                Ok(_) => {
                    let first = self.records.len();
                    lost += records(&self.arena[at..], self.layout, &mut self.records);
                    for r in &mut self.records[first..] {
                        r.start += at;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((lost, false)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Pages a second past which the next drain comes soon: a quarter of the 8 MiB a CPU's buffer
/// holds.
const SOON: usize = 2 << 20;

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The formats of the events the instance has on: the three block events, and the lifetime
/// events where the kernel has them (as the instance's set-up takes them).
fn formats(dir: &Path) -> io::Result<foldhash::HashMap<u16, Format>> {
    let mut formats = foldhash::HashMap::default();
    let events = (super::EVENTS.iter().map(|e| ("block", *e)))
        .chain(super::LIFE_EVENTS.iter().map(|e| ("sched", *e)));
    for (sys, e) in events {
        match fs::read_to_string(dir.join(format!("events/{sys}/{e}/format"))) {
            Ok(text) => {
                let (id, f) = format(e, &text).ok_or_else(|| bad(e))?;
                formats.insert(id, f);
            }
            Err(_) if sys == "sched" => {}
            Err(err) => return Err(err),
        }
    }
    Ok(formats)
}

/// Each CPU's `trace_pipe_raw` of the instance, opened not to block.
fn cpu_pipes(dir: &Path) -> io::Result<Vec<File>> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir.join("per_cpu"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|cpu| {
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(cpu.join("trace_pipe_raw"))
        })
        .collect()
}

/// A record as an event; None for a kind blkscope did not ask for.
fn item<'a>(
    rec: &'a [u8],
    ts_ns: u64,
    formats: &foldhash::HashMap<u16, Format>,
    tgids: &mut Tgids,
) -> Option<Item<'a>> {
    let id = read_uint(rec, Field { offset: 0, size: 2 })? as u16;
    let pid = read_uint(rec, Field { offset: 4, size: 4 })? as u32;
    Some(match formats.get(&id)? {
        Format::Block {
            kind,
            dev,
            sector,
            nr_sector,
            rwbs,
            comm,
        } => {
            let dev = read_uint(rec, *dev)? as u32;
            Item::Io(Event {
                comm: comm.map_or(&[][..], |c| read_chars(rec, c)),
                pid,
                tgid: tgids.of(pid),
                ts_ns,
                kind: *kind,
                dev: (dev >> 20, dev & ((1 << 20) - 1)),
                rwbs: read_chars(rec, *rwbs),
                sector: read_uint(rec, *sector)?,
                sectors: read_uint(rec, *nr_sector)? as u32,
            })
        }
        Format::Fork {
            parent_pid,
            child_pid,
        } => Item::Life(Life::Began {
            pid: read_uint(rec, *child_pid)? as u32,
            parent: tgids.of(pid).unwrap_or(read_uint(rec, *parent_pid)? as u32),
            ts_ns,
        }),
        Format::Exit { pid: field } => {
            let ended = read_uint(rec, *field)? as u32;
            // A thread's exit is not its process's: only the thread whose pid is the process's.
            if tgids.of(pid).is_some_and(|t| t != ended) {
                return None;
            }
            Item::Life(Life::Ended { pid: ended, ts_ns })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s\", ((unsigned int) ((REC->dev) >> 20))
";

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
";

    /// An issue record as the kernel writes it (6.18's layout above).
    fn issue_record(
        pid: u32,
        dev: u32,
        sector: u64,
        sectors: u32,
        rwbs: &str,
        comm: &str,
    ) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[0..2].copy_from_slice(&2104u16.to_ne_bytes());
        r[4..8].copy_from_slice(&pid.to_ne_bytes());
        r[8..12].copy_from_slice(&dev.to_ne_bytes());
        r[16..24].copy_from_slice(&sector.to_ne_bytes());
        r[24..28].copy_from_slice(&sectors.to_ne_bytes());
        r[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        r[44..44 + comm.len()].copy_from_slice(comm.as_bytes());
        r
    }

    /// A page of `events` (time step, record), with a commit word's `flags`, and `stored`
    /// lost events after them.
    fn page(start: u64, events: &[(u64, Vec<u8>)], flags: u64, stored: Option<u64>) -> Vec<u8> {
        let mut data = Vec::new();
        for (delta, rec) in events {
            let mut delta = *delta;
            if delta >= 1 << 27 {
                // A longer step goes in a time-extend word first.
                data.extend_from_slice(
                    &(TIME_EXTEND | (((delta & ((1 << 27) - 1)) as u32) << 5)).to_ne_bytes(),
                );
                data.extend_from_slice(&((delta >> 27) as u32).to_ne_bytes());
                delta = 0;
            }
            let words = rec.len().div_ceil(4);
            if words <= 28 {
                data.extend_from_slice(&((words as u32) | ((delta as u32) << 5)).to_ne_bytes());
            } else {
                data.extend_from_slice(&((delta as u32) << 5).to_ne_bytes());
                data.extend_from_slice(&((rec.len() + 4) as u32).to_ne_bytes());
            }
            data.extend_from_slice(rec);
            data.resize(data.len().div_ceil(4) * 4, 0);
        }
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&start.to_ne_bytes());
        p[8..16].copy_from_slice(&(data.len() as u64 | flags).to_ne_bytes());
        p[16..16 + data.len()].copy_from_slice(&data);
        if let Some(n) = stored {
            p[16 + data.len()..24 + data.len()].copy_from_slice(&n.to_ne_bytes());
        }
        p
    }

    #[test]
    fn a_format_file_gives_each_fields_place() {
        let (id, f) = format("block_rq_issue", ISSUE).unwrap();
        println!("{id} {f:?}");
        assert_eq!(id, 2104);
        let Format::Block {
            kind,
            dev,
            sector,
            rwbs,
            comm,
            ..
        } = f
        else {
            panic!("{f:?}")
        };
        assert_eq!(kind, Kind::Issue);
        assert_eq!((dev.offset, sector.offset, sector.size), (8, 16, 8));
        assert_eq!((rwbs.offset, rwbs.size), (34, 10));
        assert_eq!(
            comm,
            Some(Field {
                offset: 44,
                size: 16
            })
        );
        // A field missing: not read at all.
        assert_eq!(format("block_rq_issue", "ID: 5\n"), None);
        let l = Layout::read(HEADER_PAGE).unwrap();
        assert_eq!((l.commit, l.data), (Field { offset: 8, size: 8 }, 16));
    }

    #[test]
    fn a_page_gives_its_events_in_order_with_their_times_and_lost_count() {
        let layout = Layout::read(HEADER_PAGE).unwrap();
        let formats: foldhash::HashMap<u16, Format> = [format("block_rq_issue", ISSUE).unwrap()]
            .into_iter()
            .collect();
        let a = issue_record(700, (7 << 20) | 3, 2048, 8, "WS", "dd");
        // A record longer than 28 words takes the length word.
        let mut long = issue_record(701, 254 << 20, 99, 16, "R", "fio");
        long.resize(120, 0);
        let p = page(
            5_000_000_000,
            &[(100, a), (1 << 28, long)],
            MISSED_EVENTS | MISSED_STORED,
            Some(42),
        );
        let mut recs = Vec::new();
        let lost = records(&p, layout, &mut recs);
        println!("lost {lost} {recs:?}");
        assert_eq!(lost, 42);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].ts_ns, 5_000_000_100);
        assert_eq!(recs[1].ts_ns, 5_000_000_100 + (1 << 28));
        assert_eq!(recs[1].len, 120);
        let mut tgids = Tgids::default();
        tgids.known.insert(700, Some(690));
        tgids.known.insert(701, None);
        let items: Vec<Item> = recs
            .iter()
            .filter_map(|r| item(&p[r.start..r.start + r.len], r.ts_ns, &formats, &mut tgids))
            .collect();
        println!("{items:?}");
        let Item::Io(e) = &items[0] else { panic!() };
        assert_eq!(
            (
                e.comm, e.pid, e.tgid, e.kind, e.dev, e.rwbs, e.sector, e.sectors
            ),
            (
                &b"dd"[..],
                700,
                Some(690),
                Kind::Issue,
                (7, 3),
                &b"WS"[..],
                2048,
                8
            )
        );
        let Item::Io(e) = &items[1] else { panic!() };
        assert_eq!(
            (e.comm, e.tgid, e.dev, e.sectors),
            (&b"fio"[..], None, (254, 0), 16)
        );
        // Lost without a count: one at least; a page without flags lost none.
        assert_eq!(
            records(&page(0, &[], MISSED_EVENTS, None), layout, &mut recs),
            1
        );
        assert_eq!(records(&page(0, &[], 0, None), layout, &mut recs), 0);
    }

    #[test]
    fn padding_and_absolute_times_are_stepped_over_and_a_null_padding_ends_the_page() {
        let layout = Layout::read(HEADER_PAGE).unwrap();
        let rec = issue_record(700, 7 << 20, 8, 8, "R", "dd");
        let mut data: Vec<u8> = Vec::new();
        let w = |d: &mut Vec<u8>, v: u32| d.extend_from_slice(&v.to_ne_bytes());
        // A discarded event's padding: its length counts itself and the 8 bytes after it.
        w(&mut data, PADDING | (3 << 5));
        w(&mut data, 12);
        data.extend_from_slice(&[0xff; 8]);
        // An absolute time (low 59 bits: 2 << 27 | 5), then the record 10 ns after it.
        w(&mut data, TIME_STAMP | (5 << 5));
        w(&mut data, 2);
        w(&mut data, 16 | (10 << 5));
        data.extend_from_slice(&rec);
        // A null padding: nothing after it is read.
        w(&mut data, PADDING);
        w(&mut data, 16 | (10 << 5));
        data.extend_from_slice(&rec);
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&(7u64 << 59).to_ne_bytes());
        p[8..16].copy_from_slice(&(data.len() as u64).to_ne_bytes());
        p[16..16 + data.len()].copy_from_slice(&data);
        let mut recs = Vec::new();
        assert_eq!(records(&p, layout, &mut recs), 0);
        println!("{recs:?}");
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].ts_ns, (7u64 << 59) | (((2 << 27) | 5) + 10));
        assert_eq!((recs[0].start, recs[0].len), (16 + 16 + 8 + 4, 64));
    }

    /// Two CPUs, the first read in two drains (a share of one page each): the second CPU's
    /// newer event waits for the first's older one of the next drain, so the events come in
    /// time order over both drains (a bio's queue on one CPU before its issue on another).
    #[test]
    fn a_cpus_newer_events_wait_for_the_others_older_ones_read_in_the_next_drain() {
        let dir = tempfile::tempdir().unwrap();
        let ev = |t: u64| issue_record(700, 7 << 20, t, 8, "R", "dd");
        // Events at 100 and 300, then at 400, on CPU 0; at 200 and 5000 on CPU 1 (the
        // record's sector is its time, to tell them apart).
        let cpu0 = [
            page(100, &[(0, ev(100)), (200, ev(300))], 0, None),
            page(400, &[(0, ev(400))], 0, None),
        ]
        .concat();
        let cpu1 = page(200, &[(0, ev(200)), (4800, ev(5000))], 0, None);
        let open = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            File::open(dir.path().join(name)).unwrap()
        };
        let mut tgids = Tgids::default();
        tgids.known.insert(700, Some(700));
        let mut pipes = Pipes {
            cpus: vec![open("cpu0", &cpu0), open("cpu1", &cpu1)],
            layout: Layout::read(HEADER_PAGE).unwrap(),
            formats: [format("block_rq_issue", ISSUE).unwrap()]
                .into_iter()
                .collect(),
            page: 4096,
            arena: Vec::new(),
            records: Vec::new(),
            spare: Vec::new(),
            tgids,
            drained_at: std::time::Instant::now(),
        };
        let mut seen: Vec<(u64, u64)> = Vec::new();
        let mut drain = |seen: &mut Vec<(u64, u64)>, limit: usize| {
            pipes
                .drain(limit, |i| {
                    if let Item::Io(e) = i {
                        seen.push((e.ts_ns, e.sector));
                    }
                })
                .unwrap();
        };
        drain(&mut seen, 2 * 4096);
        let first = seen.len();
        // CPU 0 stops at its share again (at 400: what comes after it is not known yet), and
        // the last drain, as the trace's end makes it, reads all.
        drain(&mut seen, 2 * 4096);
        let second = seen.len();
        drain(&mut seen, usize::MAX);
        println!("{seen:?}, {first} in the first drain, {second} by the second");
        assert_eq!(
            seen,
            [(100, 100), (200, 200), (300, 300), (400, 400), (5000, 5000)]
        );
        assert_eq!((first, second), (3, 4), "5000 waited for CPU 0's 400");
        assert!(pipes.records.is_empty() && pipes.arena.is_empty());
    }

    #[test]
    fn the_kernels_saved_tgids_are_read() {
        let t = saved_tgids(b"701 701\n700 690\nbad\n702 x\n99999999999 1\n703 703 703\n");
        assert_eq!(t, vec![(700, 690), (701, 701)]);
        let mut tgids = Tgids {
            saved: Some(t),
            ..Tgids::default()
        };
        // A thread gone from /proc is found in the table.
        if proc_tgid(700).is_none() {
            assert_eq!(tgids.of(700), Some(690));
        }
        // This process is found in /proc, and so is each of its threads' (the tests' runner has
        // several).
        let me = std::process::id();
        assert_eq!(proc_tgid(me), Some(me));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let held = std::thread::spawn(move || rx.recv());
        let tids: Vec<u32> = fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        let of: Vec<_> = tids.iter().map(|&t| proc_tgid(t)).collect();
        drop(tx);
        held.join().unwrap().ok();
        println!("threads {tids:?}, their process {of:?}");
        assert!(tids.len() >= 2 && of.iter().all(|&p| p == Some(me)));
    }
}

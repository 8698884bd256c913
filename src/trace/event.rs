//! The events blkscope enables, and one line of a tracefs instance's `trace_pipe` with
//! `record-tgid` on (read where the ring buffer's pages cannot be, `raw`):
//!
//! ```text
//!   dd-2676    (   2676) [000] .....  3626.337937: block_bio_queue: 254,0 RA 12580616 + 8 [dd]
//!   dd-2676    (   2676) [000] .....  3626.337957: block_rq_issue: 254,0 RA 4096 () 12580616 + 8 be,0,4 [dd]
//!   rustc-2613 (   2610) [001] ..s..  3626.338137: block_rq_complete: 254,0 RA () 12580616 + 8 be,0,4 [0]
//! ```
//!
//! The task of a `block_bio_queue` is the one that submitted the I/O; that of an issue or a
//! completion is whoever ran then (a kworker, an interrupt), so only the queue event names who
//! did the I/O. The name at the head of a line comes from the kernel's cache of recent names,
//! which a busy machine overwrites (`<...>`); the queue and issue events carry the name in their
//! own record (the last, bracketed word), and that one is taken.

/// Which of the three events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bio entered the block layer (Q, as blktrace names it).
    Queue,
    /// A request went to the driver (D).
    Issue,
    /// The driver completed a request (C).
    Complete,
}

/// One event, borrowing its bytes from the line or the record: its name is made a string only
/// where a submitter is first seen (checking each event's was a twentieth of the reader's CPU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<'a> {
    pub comm: &'a [u8],
    /// The thread.
    pub pid: u32,
    /// Its process (thread group), when the kernel recorded it.
    pub tgid: Option<u32>,
    /// When, in nanoseconds of the instance's clock (microseconds as printed).
    pub ts_ns: u64,
    pub kind: Kind,
    /// major, minor.
    pub dev: (u32, u32),
    /// blktrace's letters: F flush first, then R read, W write, D discard, N none; S sync, M
    /// metadata, A readahead, F (last) FUA.
    pub rwbs: &'a [u8],
    pub sector: u64,
    pub sectors: u32,
}

impl Event<'_> {
    /// A cache flush (rwbs starts with F: a preflush, alone or before a write).
    pub fn flush(&self) -> bool {
        self.rwbs.first() == Some(&b'F')
    }

    /// Moves data in (R) or out (W); discards and flushes without data do not.
    pub fn reads(&self) -> bool {
        self.sectors > 0 && self.rwbs.contains(&b'R')
    }

    pub fn writes(&self) -> bool {
        self.sectors > 0 && self.rwbs.contains(&b'W')
    }

    pub fn bytes(&self) -> u64 {
        self.sectors as u64 * 512
    }
}

/// A line's parts: "TASK-PID (TGID) [CPU] FLAGS TIMESTAMP: EVENT: ARGS".
struct Line<'a> {
    comm: &'a str,
    pid: &'a str,
    tgid: Option<u32>,
    ts: &'a str,
    name: &'a str,
    args: &'a str,
}

fn split(line: &str) -> Option<Line<'_>> {
    let (head, rest) = line.split_once(") [")?;
    let (task, tgid) = head.rsplit_once('(')?;
    let (comm, pid) = task.trim().rsplit_once('-')?;
    let tgid = tgid.trim().parse().ok();
    let rest = rest.split_once(']')?.1.trim_start();
    let (_flags, rest) = rest.split_once(' ')?;
    let (ts, rest) = rest.trim_start().split_once(": ")?;
    let (name, args) = rest.split_once(": ")?;
    Some(Line {
        comm,
        pid,
        tgid,
        ts,
        name,
        args,
    })
}

/// A process began (`sched_process_fork`: its pid) or ended (`sched_process_exit` of its main
/// thread), and when (ns of the instance's clock): how long a process the trace saw was there,
/// so that what windows saw of it is scaled by its own time and not the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// `parent`: the process that forked it.
    Began {
        pid: u32,
        parent: u32,
        ts_ns: u64,
    },
    Ended {
        pid: u32,
        ts_ns: u64,
    },
}

/// Parses a line of the two lifetime events; None for any other.
pub fn parse_life(line: &str) -> Option<Life> {
    let l = split(line)?;
    let ts_ns = parse_ts(l.ts)?;
    let field = |key: &str| -> Option<u32> {
        l.args
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))?
            .parse()
            .ok()
    };
    match l.name {
        "sched_process_fork" => Some(Life::Began {
            pid: field("child_pid")?,
            parent: l.tgid.or_else(|| field("pid"))?,
            ts_ns,
        }),
        // A thread's exit is not its process's: only the thread whose pid is the process's.
        "sched_process_exit" => {
            let pid = field("pid")?;
            (l.tgid.is_none_or(|t| t == pid)).then_some(Life::Ended { pid, ts_ns })
        }
        _ => None,
    }
}

/// Parses one line; None for headers, `LOST` notes and events of other kinds.
pub fn parse(line: &str) -> Option<Event<'_>> {
    let Line {
        comm,
        pid,
        tgid,
        ts,
        name,
        args,
    } = split(line)?;
    let kind = match name {
        "block_bio_queue" => Kind::Queue,
        "block_rq_issue" => Kind::Issue,
        "block_rq_complete" => Kind::Complete,
        _ => return None,
    };
    let mut tok = args.split_whitespace();
    let (maj, min) = tok.next()?.split_once(',')?;
    let rwbs = tok.next()?;
    // "SECTOR + COUNT": the words on either side of the first "+".
    let words: Vec<&str> = tok.collect();
    let plus = words.iter().position(|w| *w == "+")?;
    let sector = words.get(plus.checked_sub(1)?)?.parse().ok()?;
    let sectors = words.get(plus + 1)?.parse().ok()?;
    let own_comm = (kind != Kind::Complete)
        .then(|| args.rsplit_once(" [")?.1.strip_suffix(']'))
        .flatten()
        .filter(|c| !c.is_empty());
    Some(Event {
        comm: own_comm.unwrap_or(comm.trim()).as_bytes(),
        pid: pid.parse().ok()?,
        tgid,
        ts_ns: parse_ts(ts)?,
        kind,
        dev: (maj.parse().ok()?, min.parse().ok()?),
        rwbs: rwbs.as_bytes(),
        sector,
        sectors,
    })
}

/// "3626.337937" (seconds and microseconds) in nanoseconds.
fn parse_ts(ts: &str) -> Option<u64> {
    let (s, frac) = ts.trim().split_once('.')?;
    let frac_ns: u64 = format!("{frac:0<9}").get(..9)?.parse().ok()?;
    Some(s.parse::<u64>().ok()? * 1_000_000_000 + frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_events_as_the_kernel_prints_them() {
        let q = "              dd-2676    (   2676) [000] .....  3626.337937: block_bio_queue: 254,0 RA 12580616 + 8 [dd]";
        let e = parse(q).unwrap();
        println!("{e:?}");
        assert_eq!(
            (e.comm, e.pid, e.tgid, e.kind, e.dev, e.rwbs),
            (
                &b"dd"[..],
                2676,
                Some(2676),
                Kind::Queue,
                (254, 0),
                &b"RA"[..]
            )
        );
        assert_eq!(
            (e.sector, e.sectors, e.ts_ns),
            (12580616, 8, 3_626_337_937_000)
        );
        assert!(e.reads() && !e.writes() && e.bytes() == 4096);
        let d = "  kworker/u8:2-91      (     91) [001] .....  3626.337957: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [kworker/u8:2]";
        let e = parse(d).unwrap();
        assert_eq!(
            (e.comm, e.pid, e.kind, e.sector),
            (&b"kworker/u8:2"[..], 91, Kind::Issue, 2048)
        );
        assert!(e.writes());
        let c = "           rustc-2613    (   2610) [001] ..s..  3626.338137: block_rq_complete: 254,0 RA () 12580616 + 8 be,0,4 [0]";
        let e = parse(c).unwrap();
        assert_eq!(
            (e.tgid, e.kind, e.sector),
            (Some(2610), Kind::Complete, 12580616)
        );
        // A flush without data; a thread whose tgid was not recorded; other lines.
        let f = "   jbd2/vda-8-120 (-------) [000] .....  1.000001: block_rq_issue: 254,0 FF 0 () 0 + 0 be,0,4 [jbd2/vda-8]";
        let e = parse(f).unwrap();
        assert_eq!((e.comm, e.pid, e.tgid), (&b"jbd2/vda-8"[..], 120, None));
        assert!(e.flush() && !e.reads() && !e.writes());
        // A name the kernel's cache had lost: the event's own record names the process.
        let lost = "           <...>-24858   (  24858) [001] .....  3627.000001: block_bio_queue: 7,3 FWS 0 + 0 [dd]";
        let e = parse(lost).unwrap();
        assert_eq!((e.comm, e.pid, e.tgid), (&b"dd"[..], 24858, Some(24858)));
        let spaced =
            "  <...>-700 (  699) [000] .....  1.5: block_bio_queue: 7,3 R 8 + 8 [Web Content]";
        assert_eq!(parse(spaced).unwrap().comm, b"Web Content");
        assert_eq!(parse("# tracer: nop"), None);
        // When processes began and ended; a thread's end is not its process's.
        let fork = "  bash-700 (  700) [001] .....  2.000001: sched_process_fork: comm=bash pid=700 child_comm=bash child_pid=701";
        assert_eq!(
            parse_life(fork),
            Some(Life::Began {
                pid: 701,
                parent: 700,
                ts_ns: 2_000_001_000
            })
        );
        let exit = "  dd-701 (  701) [000] .....  3.5: sched_process_exit: comm=dd pid=701 prio=120 group_dead=true";
        assert_eq!(
            parse_life(exit),
            Some(Life::Ended {
                pid: 701,
                ts_ns: 3_500_000_000
            })
        );
        let thread = "  worker-702 (  701) [000] .....  3.4: sched_process_exit: comm=worker pid=702 prio=120";
        assert_eq!(parse_life(thread), None);
        assert_eq!(parse_life(q), None);
        assert_eq!(parse(fork), None);
        assert_eq!(parse("CPU:1 [LOST 42 EVENTS]"), None);
    }
}

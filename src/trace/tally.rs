//! What the block events of a test add up to: who did how much I/O on each device, and where
//! the time of the test's own I/Os went (queue to issue, Q2D: in the scheduler and the queue;
//! issue to completion, D2C: in the device), as blktrace's btt names them.

use std::collections::BTreeMap;

// The tally's maps are looked up a few times for each event: foldhash's hasher in place of
// SipHash (with one buffer for a request's bios) took a full trace's reader from 514 to 374 ns
// an event (docs/architecture.md), and nothing here is keyed by what another user could choose
// to collide.
use foldhash::{HashMap, HashSet};
use std::collections::hash_map::Entry;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::below::FileBelow;
use super::event::{Event, Kind, Life};
use super::pick::Pick;

/// Who submitted I/O, as the tally keys it: a process (tgid), or a thread whose process the
/// kernel did not record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Submitter(pub u32);

/// What one submitter did on one device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    /// Its process's name as /proc said it when its first I/O was read (else the name the
    /// event recorded, its thread's).
    pub comm: String,
    /// Its parent, the parent's parent, ... as /proc said when its first I/O was read (empty
    /// when it was gone by then): /proc/PID/io counts a reaped child's bytes in its parent's,
    /// and this says whose they were.
    pub ancestors: Vec<u32>,
    /// A kernel thread (writeback, a loop device's worker, the journal), as /proc or its name
    /// said when its first I/O was read: once, not at every summary of the trace.
    pub kernel: bool,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    pub flushes: u64,
    /// Requests of this submitter timed from issue to completion (D2C), and their sum.
    pub d2c_n: u64,
    pub d2c_ns: u64,
}

impl Moved {
    /// One I/O of `e`'s bytes, in its direction: a request, or a bio-based device's bio.
    fn count(&mut self, e: &Event) {
        self.ios += 1;
        if e.reads() {
            self.read_bytes += e.bytes();
        } else if e.writes() {
            self.write_bytes += e.bytes();
        }
    }
}

/// Bios queued and not yet completed, at most this many (events missed would otherwise keep
/// them for ever).
const MAX_OPEN: usize = 1 << 20;

/// A bio that entered the block layer: when, who submitted it, when the first request with
/// any of it went to the driver, and how many of its sectors the driver has completed (a bio
/// larger than the device takes goes as several requests; bios merged into one request
/// complete with it).
#[derive(Debug, Clone, Copy)]
struct Open {
    queued: u64,
    who: Submitter,
    issued: Option<u64>,
    sectors: u32,
    done: u32,
}

/// A bio's device and first sector in one number, ordered as the pair is: the open bios' key,
/// compared in two machine words (docs/architecture.md, "The open bios' keys").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct BioAt(u128);

impl BioAt {
    fn new(dev: (u32, u32), sector: u64) -> Self {
        Self((dev.0 as u128) << 96 | (dev.1 as u128) << 64 | sector as u128)
    }

    fn dev(self) -> (u32, u32) {
        ((self.0 >> 96) as u32, (self.0 >> 64) as u32)
    }

    fn sector(self) -> u64 {
        self.0 as u64
    }
}

/// One of the test's bios timed at each step of the block layer ([`Pick`]), in ns of the
/// trace's clock (CLOCK_MONOTONIC, as the engine's): queued (Q), its first request issued to
/// the driver (D), its last completed (C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stepped {
    pub sector: u64,
    pub queued: u64,
    pub issued: u64,
    pub completed: u64,
}

/// The running tally of one trace. Bytes are counted when a request goes to the driver (after
/// the block layer split or merged bios: what the device was asked for), each request given to
/// whoever queued the bio it starts with.
pub struct Tally {
    /// This process: its I/O is the test's.
    own: u32,
    /// A process's name and ancestors, while it runs ([`lineage`]; tests give their own).
    lookup: fn(u32) -> Option<(String, Vec<u32>)>,
    pub by: HashMap<((u32, u32), Submitter), Moved>,
    /// Bios in flight by (device, first sector).
    open: BTreeMap<BioAt, Open>,
    /// Requests issued to the driver and not yet completed, by (device, sector, sectors): a
    /// driver that could not take one (a full virtio queue) has it issued again, and its
    /// bytes are counted once.
    issued: HashSet<((u32, u32), u64, u32)>,
    pub q2d: Histogram<u64>,
    pub d2c: Histogram<u64>,
    /// Some of the test's bios, timed at each step, and the level that picked them.
    pub stepped: Vec<Stepped>,
    pick: Pick,
    pub events: u64,
    /// When processes began and ended while the trace ran (ns of its clock), by pid.
    began: HashMap<u32, u64>,
    ended: HashMap<u32, u64>,
    /// Who forked whom while the trace ran: the ancestors of a process gone before its I/O was
    /// read (a short dd of a shell loop).
    parents: HashMap<u32, u32>,
    /// The traced disks' partitions: I/O in one is counted on it.
    parts: Vec<Part>,
    /// Loop devices' backing files: I/O in one is counted on it ([`FILE_MAJOR`]), and on a disk
    /// traced only for them (`only_files`) the rest is not counted.
    files: Vec<FileBelow>,
    only_files: Vec<(u32, u32)>,
    /// Bio-based devices (zram, dm, md: no requests, so no issue events): their bytes are
    /// counted when a bio is queued.
    bio_based: Vec<(u32, u32)>,
    /// Where [`Tally::bios_in`] puts a request's bios, kept between events.
    bios: Vec<BioAt>,
    /// Only `block_bio_queue` is on (a window after the first of a trace kept in windows): every
    /// device's bytes are counted at its bios, and no bio is kept open for a request.
    light: bool,
    /// The `block_bio_queue` events among `events`.
    pub queues: u64,
}

/// A process's name and ancestors: from /proc while it runs; when it is gone, the name its
/// event recorded and the ancestors the fork events gave, then /proc's for the first of
/// them still there.
fn named(
    lookup: fn(u32) -> Option<(String, Vec<u32>)>,
    parents: &HashMap<u32, u32>,
    pid: u32,
    comm: &[u8],
) -> (String, Vec<u32>) {
    if let Some(found) = lookup(pid) {
        return found;
    }
    let mut ancestors = Vec::new();
    let mut p = pid;
    while let Some(&parent) = parents.get(&p) {
        if ancestors.len() >= 64 || ancestors.contains(&parent) {
            break;
        }
        ancestors.push(parent);
        p = parent;
        if let Some((_, more)) = lookup(p) {
            ancestors.extend(more);
            break;
        }
    }
    (String::from_utf8_lossy(comm).into_owned(), ancestors)
}

/// The major number the tally gives the backing file of a loop device (the `n`th of
/// [`Tally::with_files`] is minor `n`): a kernel's majors have 12 bits.
pub const FILE_MAJOR: u32 = 1 << 12;

/// Where I/O in a loop device's backing file was: the loop device and the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileOf {
    pub loop_device: String,
    pub file: String,
}

/// Processes whose beginning or end is kept, at most this many of each (a machine that forks
/// thousands a second would otherwise grow them for as long as a test runs).
const MAX_LIVES: usize = 1 << 18;

/// A partition of a traced disk: the disk's events name the disk and a sector on it, and the
/// sectors from `start` to `end` are the partition's (`dev`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub disk: (u32, u32),
    pub start: u64,
    pub end: u64,
    pub dev: (u32, u32),
}

/// One submitter's I/O on one device, and when it began and ended where that was while the
/// trace ran: what a trace hands out, so far or at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The device's kernel name (or `major:minor`): a partition's, where the I/O was in one.
    pub device: String,
    /// The disk, where `device` is a partition of it.
    pub disk: Option<String>,
    /// The loop device whose backing file the I/O was in (then `device` holds the file).
    pub file: Option<FileOf>,
    pub who: Submitter,
    pub moved: Moved,
    pub began_ns: Option<u64>,
    pub ended_ns: Option<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds")
}

impl Tally {
    /// A tally in which the process `own` is the test.
    pub fn new(own: u32) -> Self {
        Self {
            own,
            lookup: lineage,
            by: HashMap::default(),
            open: BTreeMap::new(),
            issued: HashSet::default(),
            q2d: histogram(),
            d2c: histogram(),
            stepped: Vec::new(),
            pick: Pick::default(),
            events: 0,
            began: HashMap::default(),
            ended: HashMap::default(),
            parents: HashMap::default(),
            bios: Vec::new(),
            parts: Vec::new(),
            files: Vec::new(),
            only_files: Vec::new(),
            bio_based: Vec::new(),
            light: false,
            queues: 0,
        }
    }

    /// The same, counting the bytes of these devices' bios as they are queued: a bio-based
    /// driver makes no requests, and requests are where bytes are counted elsewhere.
    pub fn with_bio_based(mut self, devices: Vec<(u32, u32)>) -> Self {
        self.bio_based = devices;
        self
    }

    /// The same, counting I/O in these partitions on them.
    pub fn with_parts(mut self, parts: Vec<Part>) -> Self {
        self.parts = parts;
        self
    }

    /// The same, counting I/O in these loop devices' backing files on them; on their disks
    /// not among `whole` (the devices traced whole), I/O elsewhere is not counted.
    pub fn with_files(mut self, files: Vec<FileBelow>, whole: &[(u32, u32)]) -> Self {
        self.only_files = files
            .iter()
            .map(|f| f.disk)
            .filter(|d| !whole.contains(d))
            .collect();
        self.files = files;
        self
    }

    /// Whether an event is on a disk traced only for a backing file, outside it (the kernel's
    /// filter is given the files' ranges coarsely).
    fn outside(&self, e: &Event) -> bool {
        self.only_files.contains(&e.dev) && !self.files.iter().any(|f| f.holds(e.dev, e.sector))
    }

    /// Where I/O at `sector` of `dev` is counted: the backing file it falls in, else the
    /// partition, else the device.
    fn place(&self, dev: (u32, u32), sector: u64) -> (u32, u32) {
        if let Some(i) = self.files.iter().position(|f| f.holds(dev, sector)) {
            return (FILE_MAJOR, i as u32);
        }
        self.parts
            .iter()
            .find(|p| p.disk == dev && (p.start..p.end).contains(&sector))
            .map_or(dev, |p| p.dev)
    }

    fn moved(&mut self, dev: (u32, u32), who: Submitter, comm: &[u8]) -> &mut Moved {
        match self.by.entry((dev, who)) {
            Entry::Occupied(m) => m.into_mut(),
            Entry::Vacant(v) => {
                let (name, ancestors) = named(self.lookup, &self.parents, who.0, comm);
                let kernel = kernel_thread(who.0, &name);
                v.insert(Moved {
                    comm: name,
                    ancestors,
                    kernel,
                    ..Moved::default()
                })
            }
        }
    }

    /// Counts one event.
    pub fn add(&mut self, e: &Event) {
        self.events += 1;
        if self.outside(e) {
            return;
        }
        match e.kind {
            Kind::Queue => self.queued(e),
            Kind::Issue => self.issued(e),
            Kind::Complete => self.completed(e),
        }
    }

    fn queued(&mut self, e: &Event) {
        self.queues += 1;
        let who = Submitter(e.tgid.unwrap_or(e.pid));
        let counted = e.sectors > 0 && (self.light || self.bio_based.contains(&e.dev));
        let m = self.moved(self.place(e.dev, e.sector), who, e.comm);
        if e.flush() {
            m.flushes += 1;
        }
        if counted {
            m.count(e);
        }
        if e.sectors > 0 && !self.light {
            if self.open.len() >= MAX_OPEN {
                self.open.clear();
            }
            // A bio at a sector where one was open: that one completed unseen (its events
            // lost); timing the new one from the old one's queueing would be wrong.
            self.open.insert(
                BioAt::new(e.dev, e.sector),
                Open {
                    queued: e.ts_ns,
                    who,
                    issued: None,
                    sectors: e.sectors,
                    done: 0,
                },
            );
        }
    }

    /// A request to the driver: its bytes are its first bio's submitter's; the bios in it (one
    /// merged after its first, or the bio it is part of) go to the driver now.
    fn issued(&mut self, e: &Event) {
        if e.sectors == 0 {
            return;
        }
        if self.issued.len() >= MAX_OPEN {
            self.issued.clear();
        }
        if !self.issued.insert((e.dev, e.sector, e.sectors)) {
            return;
        }
        let who = match self.open.get(&BioAt::new(e.dev, e.sector)) {
            Some(o) => {
                if o.who.0 == self.own && o.issued.is_none() {
                    let _ = self.q2d.record(e.ts_ns.saturating_sub(o.queued).max(1));
                }
                o.who
            }
            None => Submitter(e.tgid.unwrap_or(e.pid)),
        };
        let mut bios = std::mem::take(&mut self.bios);
        self.bios_in(e, &mut bios);
        for k in &bios {
            if let Some(o) = self.open.get_mut(k) {
                o.issued = o.issued.or(Some(e.ts_ns));
            }
        }
        self.bios = bios;
        self.moved(self.place(e.dev, e.sector), who, e.comm)
            .count(e);
    }

    /// The open bios with sectors in the request of `e`: the one it starts in (which may
    /// begin before it) and those after, into `out` (the tally's own, taken and given back
    /// by the caller: a request an event, and an allocation each would cost more than the rest).
    fn bios_in(&self, e: &Event, out: &mut Vec<BioAt>) {
        out.clear();
        let (from, to) = (
            BioAt::new(e.dev, e.sector),
            BioAt::new(e.dev, e.sector + e.sectors as u64),
        );
        // One walk down from the request's end: those that start in it, then the one before
        // it if it reaches into it.
        for (&k, o) in self.open.range(..to).rev() {
            if k >= from {
                out.push(k);
                continue;
            }
            if k.dev() == e.dev && k.sector() + o.sectors as u64 > e.sector {
                out.push(k);
            }
            break;
        }
        out.reverse();
    }

    /// A request completed: its first bio's time in the device is its submitter's; each bio
    /// in it is done once all its sectors are, and one of the test's is timed at each step.
    fn completed(&mut self, e: &Event) {
        self.issued.remove(&(e.dev, e.sector, e.sectors));
        if let Some(Open {
            who,
            issued: Some(d),
            ..
        }) = self.open.get(&BioAt::new(e.dev, e.sector)).copied()
        {
            let ns = e.ts_ns.saturating_sub(d).max(1);
            if who.0 == self.own {
                let _ = self.d2c.record(ns);
            }
            let place = self.place(e.dev, e.sector);
            if let Some(m) = self.by.get_mut(&(place, who)) {
                m.d2c_n += 1;
                m.d2c_ns += ns;
            }
        }
        if e.sectors == 0 {
            return;
        }
        let end = e.sector + e.sectors as u64;
        let mut bios = std::mem::take(&mut self.bios);
        self.bios_in(e, &mut bios);
        for &k in &bios {
            let Some(o) = self.open.get_mut(&k) else {
                continue;
            };
            let Some(issued) = o.issued else {
                continue;
            };
            let overlap = (k.sector() + o.sectors as u64).min(end) - k.sector().max(e.sector);
            o.done = o.done.saturating_add(overlap as u32);
            if o.done < o.sectors {
                continue;
            }
            let o = self.open.remove(&k).expect("an open bio");
            if o.who.0 == self.own {
                let s = Stepped {
                    sector: k.sector(),
                    queued: o.queued,
                    issued,
                    completed: e.ts_ns,
                };
                self.pick.keep(&mut self.stepped, s, |s| s.sector);
            }
        }
        self.bios = bios;
    }

    /// Notes a process's beginning or end.
    pub fn life(&mut self, l: Life) {
        let (map, pid, ts) = match l {
            Life::Began { pid, parent, ts_ns } => {
                if self.parents.len() >= MAX_LIVES {
                    self.parents.clear();
                }
                self.parents.insert(pid, parent);
                (&mut self.began, pid, ts_ns)
            }
            Life::Ended { pid, ts_ns } => (&mut self.ended, pid, ts_ns),
        };
        if map.len() >= MAX_LIVES {
            map.clear();
        }
        map.insert(pid, ts);
    }

    /// Who moved what on each device, with when each began and ended (`names`: the devices'
    /// kernel names by number).
    pub fn rows(&self, names: &[((u32, u32), String)]) -> Vec<Row> {
        self.by
            .iter()
            .map(|((dev, who), m)| {
                let file = self.file_at(*dev);
                Row {
                    device: file.map_or_else(|| name(names, *dev), |f| f.disk_name.clone()),
                    file: file.map(|f| FileOf {
                        loop_device: name(names, f.loop_dev),
                        file: f.file.clone(),
                    }),
                    disk: self
                        .parts
                        .iter()
                        .find(|p| p.dev == *dev)
                        .map(|p| name(names, p.disk)),
                    who: *who,
                    moved: m.clone(),
                    began_ns: self.began.get(&who.0).copied(),
                    ended_ns: self.ended.get(&who.0).copied(),
                }
            })
            .collect()
    }

    /// The backing file a device of the tally's stands for ([`FILE_MAJOR`]).
    fn file_at(&self, dev: (u32, u32)) -> Option<&FileBelow> {
        (dev.0 == FILE_MAJOR)
            .then(|| self.files.get(dev.1 as usize))
            .flatten()
    }

    /// Forgets the bios in flight: the events are about to be turned on again after a gap, and
    /// a request's issue or completion then would be matched with a bio queued before it.
    /// `light`: only `block_bio_queue` will be on (`Tally::light`).
    pub fn forget_open(&mut self, light: bool) {
        self.open.clear();
        self.issued.clear();
        self.light = light;
    }

    /// The test's process.
    pub fn own(&self) -> u32 {
        self.own
    }

    /// Whether `who` is the test.
    pub fn is_own(&self, who: Submitter) -> bool {
        who.0 == self.own
    }
}

/// A device's kernel name among `names`, else `major:minor`.
fn name(names: &[((u32, u32), String)], dev: (u32, u32)) -> String {
    names
        .iter()
        .find(|(d, _)| *d == dev)
        .map_or_else(|| format!("{}:{}", dev.0, dev.1), |(_, n)| n.clone())
}

/// Who a submitter was, as a reader needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    /// This test: its threads and their io_uring workers.
    Test,
    /// A kernel thread (writeback, md/dm, a loop device's worker, the journal): working for
    /// the test or for others, as the device below the test does.
    Kernel,
    /// Another process.
    Other,
}

/// A running process's name and its ancestors, parent first, from /proc (None when it is
/// gone).
fn lineage(pid: u32) -> Option<(String, Vec<u32>)> {
    use procfs_core::FromRead;
    let stat = |p: u32| procfs_core::process::Stat::from_file(format!("/proc/{p}/stat")).ok();
    let first = stat(pid)?;
    let mut ancestors = Vec::new();
    let mut parent = first.ppid;
    // pid 1 (and 0, the kernel's) end the line; a bound, should /proc change under the walk.
    while parent > 1 && ancestors.len() < 64 {
        ancestors.push(parent as u32);
        parent = stat(parent as u32).map_or(0, |s| s.ppid);
    }
    Some((worker_name(&first.comm).to_string(), ancestors))
}

/// A kernel worker's name without what /proc appends to it (`kworker/u8:2-loop3`: the
/// workqueue of the work it ran last, when /proc was read; `+loop5` while it runs it). The
/// trace says what a worker served; a worker shared by two loop devices was named after the
/// other one under this one's line ("below loop0: ... (kworker/u8:2-loop3)"), and `doctor
/// --watch` named a loop device's reader of its file `kworker/u8:2-events_unbound`.
fn worker_name(comm: &str) -> &str {
    match comm
        .strip_prefix("kworker/")
        .and_then(|rest| rest.find(['-', '+']))
    {
        Some(i) => &comm[.."kworker/".len() + i],
        None => comm,
    }
}

/// A kernel thread, by what /proc says of it, or by its name where it is gone.
pub fn kernel_thread(pid: u32, comm: &str) -> bool {
    if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
        && let Some(k) = status.lines().find_map(|l| l.strip_prefix("Kthread:"))
    {
        return k.trim() == "1";
    }
    const KERNEL: [&str; 14] = [
        "kworker",
        "kswapd",
        "jbd2",
        "loop",
        "md",
        "dm",
        "kcompactd",
        "ksoftirqd",
        "xfs",
        "btrfs",
        "flush",
        "kthreadd",
        "khugepaged",
        "irq/",
    ];
    KERNEL.iter().any(|k| comm.starts_with(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::parse;

    #[test]
    fn a_kernel_worker_is_named_without_the_work_it_ran_last() {
        for (proc_name, named) in [
            ("kworker/u8:2-loop3", "kworker/u8:2"),
            ("kworker/u8:4+loop5", "kworker/u8:4"),
            ("kworker/0:1H-kblockd", "kworker/0:1H"),
            ("kworker/u8:4-events_unbound", "kworker/u8:4"),
            ("kworker/u8:2", "kworker/u8:2"),
            ("loop0", "loop0"),
            ("dd", "dd"),
            ("my-tool", "my-tool"),
        ] {
            assert_eq!(worker_name(proc_name), named, "{proc_name}");
        }
    }

    #[test]
    fn the_tests_own_io_and_others_and_where_its_time_went() {
        let own = 500;
        let lines = [
            // The test (tgid 500, an io_uring worker of it) reads 4 KiB at sector 8.
            "iou-wrk-501-502 (    500) [000] .....  10.000100: block_bio_queue: 7,0 R 8 + 8 [iou-wrk-501]",
            "iou-wrk-501-502 (    500) [000] .....  10.000130: block_rq_issue: 7,0 R 4096 () 8 + 8 be,0,4 [iou-wrk-501]",
            "          <idle>-0 (      0) [000] ..s..  10.000230: block_rq_complete: 7,0 R () 8 + 8 be,0,4 [0]",
            // dd (pid 900) reads 1 MiB at once; nothing timed for it.
            "              dd-900 (    900) [001] .....  10.000200: block_bio_queue: 7,0 R 4096 + 2048 [dd]",
            "              dd-900 (    900) [001] .....  10.000210: block_rq_issue: 7,0 R 1048576 () 4096 + 2048 be,0,4 [dd]",
            "              dd-900 (    900) [001] .....  10.000900: block_rq_complete: 7,0 R () 4096 + 2048 be,0,4 [0]",
            // The test writes with a preflush: the bio is queued, the request issued by a
            // kworker (counted as the test's, whose bio it was).
            "  blkscope-job-0-501 (    500) [000] .....  10.001000: block_bio_queue: 7,0 FWS 64 + 8 [blkscope-job-0]",
            "  kworker/0:1H-77 (     77) [000] .....  10.001010: block_rq_issue: 7,0 WS 4096 () 64 + 8 be,0,4 [kworker/0:1H]",
            // A 1 MiB bio split in two requests of 512 KiB: 1 MiB, not 1.5 or 2.
            "  blkscope-job-0-501 (    500) [000] .....  10.002000: block_bio_queue: 7,0 W 8192 + 2048 [blkscope-job-0]",
            "  blkscope-job-0-501 (    500) [000] .....  10.002001: block_bio_queue: 7,0 W 9216 + 1024 [blkscope-job-0]",
            "  blkscope-job-0-501 (    500) [000] .....  10.002010: block_rq_issue: 7,0 W 524288 () 8192 + 1024 be,0,4 [blkscope-job-0]",
            "  blkscope-job-0-501 (    500) [000] .....  10.002011: block_rq_issue: 7,0 W 524288 () 9216 + 1024 be,0,4 [blkscope-job-0]",
        ];
        let mut t = Tally::new(own);
        // The pids here are made up: whatever runs under them on this machine is not asked.
        t.lookup = |_| None;
        for l in lines {
            t.add(&parse(l).unwrap());
        }
        let mine = &t.by[&((7, 0), Submitter(500))];
        let dd = &t.by[&((7, 0), Submitter(900))];
        println!("{mine:?}\n{dd:?}");
        assert_eq!(
            (mine.read_bytes, mine.write_bytes, mine.flushes, mine.ios),
            (4096, 4096 + (1 << 20), 1, 4)
        );
        assert_eq!((dd.read_bytes, dd.comm.as_str()), (1 << 20, "dd"));
        assert_eq!(t.q2d.len(), 4, "only the test's own I/Os are timed");
        // 30 us in the queue, 100 us in the device (to the histogram's three digits).
        assert!(
            t.q2d.equivalent(t.q2d.value_at_quantile(0.3), 10_000),
            "{:?}",
            t.q2d
        );
        assert!(t.q2d.equivalent(t.q2d.max(), 30_000), "{}", t.q2d.max());
        assert!(t.d2c.equivalent(t.d2c.max(), 100_000), "{}", t.d2c.max());
        assert!(t.is_own(Submitter(500)) && !t.is_own(Submitter(900)));
        assert_eq!(t.events, 12);
    }

    #[test]
    fn in_a_light_window_every_devices_bytes_are_counted_at_its_bios() {
        // A window with block_bio_queue only: a request-based device's bytes too, and no bio is
        // kept for a request that will not be seen; the next timed window times them again.
        let mut t = Tally::new(500);
        t.lookup = |_| None;
        t.forget_open(true);
        for l in [
            "  j-501 (    500) [000] .....  10.000100: block_bio_queue: 7,0 R 8 + 8 [j]",
            "  dd-900 (    900) [001] .....  10.000200: block_bio_queue: 7,0 W 4096 + 2048 [dd]",
        ] {
            t.add(&parse(l).unwrap());
        }
        let at = |t: &Tally, pid| {
            let m = &t.by[&((7, 0), Submitter(pid))];
            (m.read_bytes, m.write_bytes, m.ios)
        };
        println!("{:?}", t.by);
        assert_eq!((at(&t, 500), at(&t, 900)), ((4096, 0, 1), (0, 1 << 20, 1)));
        assert!(t.open.is_empty(), "{:?}", t.open);
        assert_eq!((t.events, t.queues), (2, 2));
        t.forget_open(false);
        for l in [
            "  j-501 (    500) [000] .....  11.000100: block_bio_queue: 7,0 R 16 + 8 [j]",
            "  j-501 (    500) [000] .....  11.000110: block_rq_issue: 7,0 R 4096 () 16 + 8 be,0,4 [j]",
            "  <idle>-0 (-----) [000] ..s1.  11.000210: block_rq_complete: 7,0 R () 16 + 8 be,0,4 [0]",
        ] {
            t.add(&parse(l).unwrap());
        }
        assert_eq!(at(&t, 500), (8192, 0, 2), "counted once, at the request");
        assert_eq!((t.q2d.len(), t.d2c.len()), (1, 1));
    }

    /// zram (252,0) makes no requests: its bytes are its bios', counted as they are queued; a
    /// request-based device beside it (7,0) is still counted at its requests, once.
    #[test]
    fn a_bio_based_devices_bytes_are_counted_at_its_bios() {
        let lines = [
            "  j-501 (    500) [000] .....  10.000100: block_bio_queue: 252,0 R 8 + 8 [j]",
            "  dd-900 (    900) [001] .....  10.000200: block_bio_queue: 252,0 W 4096 + 2048 [dd]",
            "  dd-900 (    900) [001] .....  10.000300: block_bio_queue: 7,0 R 0 + 8 [dd]",
            "  dd-900 (    900) [001] .....  10.000310: block_rq_issue: 7,0 R 4096 () 0 + 8 be,0,4 [dd]",
        ];
        let mut t = Tally::new(500).with_bio_based(vec![(252, 0)]);
        t.lookup = |_| None;
        for l in lines {
            t.add(&parse(l).unwrap());
        }
        let at = |dev, pid| {
            let m = &t.by[&(dev, Submitter(pid))];
            (m.read_bytes, m.write_bytes, m.ios)
        };
        println!("{:?}", t.by);
        assert_eq!(at((252, 0), 500), (4096, 0, 1));
        assert_eq!(at((252, 0), 900), (0, 1 << 20, 1));
        assert_eq!(
            at((7, 0), 900),
            (4096, 0, 1),
            "a request-based device: once"
        );
    }

    #[test]
    fn the_tests_bios_are_timed_from_queue_to_their_last_sector() {
        let lines = [
            // A 1 MiB bio queued once, sent as two requests of 512 KiB.
            "  j-501 (    500) [000] .....  10.000100: block_bio_queue: 7,0 W 8192 + 2048 [j]",
            "  j-501 (    500) [000] .....  10.000110: block_rq_issue: 7,0 W 524288 () 8192 + 1024 be,0,4 [j]",
            "  j-501 (    500) [000] .....  10.000120: block_rq_issue: 7,0 W 524288 () 9216 + 1024 be,0,4 [j]",
            "  <idle>-0 (      0) [000] ..s..  10.000300: block_rq_complete: 7,0 W () 8192 + 1024 be,0,4 [0]",
            "  <idle>-0 (      0) [000] ..s..  10.000500: block_rq_complete: 7,0 W () 9216 + 1024 be,0,4 [0]",
            // Two 4 KiB bios merged into one request.
            "  j-501 (    500) [000] .....  10.001000: block_bio_queue: 7,0 R 100 + 8 [j]",
            "  j-501 (    500) [000] .....  10.001002: block_bio_queue: 7,0 R 108 + 8 [j]",
            "  j-501 (    500) [000] .....  10.001010: block_rq_issue: 7,0 R 8192 () 100 + 16 be,0,4 [j]",
            "  <idle>-0 (      0) [000] ..s..  10.001050: block_rq_complete: 7,0 R () 100 + 16 be,0,4 [0]",
            // Another's bio is not timed; a flush's completion completes nothing.
            "  dd-900 (    900) [001] .....  10.002000: block_bio_queue: 7,0 R 4096 + 8 [dd]",
            "  dd-900 (    900) [001] .....  10.002010: block_rq_issue: 7,0 R 4096 () 4096 + 8 be,0,4 [dd]",
            "  <idle>-0 (      0) [000] ..s..  10.002020: block_rq_complete: 7,0 FN () 0 + 0 be,0,4 [0]",
            "  <idle>-0 (      0) [000] ..s..  10.002030: block_rq_complete: 7,0 R () 4096 + 8 be,0,4 [0]",
        ];
        let mut t = Tally::new(500);
        t.lookup = |_| None;
        for l in lines {
            t.add(&parse(l).unwrap());
        }
        let at = |s: u64| 10_000_000_000 + s * 1000;
        let mut got = t.stepped.clone();
        got.sort_by_key(|s| s.sector);
        println!("{got:?}");
        let step = |sector, q, d, c| Stepped {
            sector,
            queued: at(q),
            issued: at(d),
            completed: at(c),
        };
        assert_eq!(
            got,
            [
                step(100, 1000, 1010, 1050),
                step(108, 1002, 1010, 1050),
                step(8192, 100, 110, 500),
            ]
        );
        assert!(t.open.is_empty(), "{:?}", t.open);
        assert_eq!(t.d2c.len(), 2, "one D2C a request the test's bio starts");
    }

    /// A request the driver could not take (a full virtio queue) is issued again by kblockd:
    /// its bytes are counted once, for whoever queued its bio; one issued again after it
    /// completed is a new request.
    #[test]
    fn a_request_issued_again_before_it_completes_is_counted_once() {
        let mut t = Tally::new(500);
        for l in [
            "              dd-900 (    900) [001] .....  1.000100: block_bio_queue: 254,0 R 4096 + 2048 [dd]",
            "              dd-900 (    900) [001] .....  1.000110: block_rq_issue: 254,0 R 1044480 () 4096 + 2040 be,0,4 [dd]",
            "    kworker/1:1H-44 (     44) [001] .....  1.000300: block_rq_issue: 254,0 R 1044480 () 4096 + 2040 be,0,4 [kworker/1:1H]",
            "          <idle>-0 (      0) [001] ..s..  1.000900: block_rq_complete: 254,0 R () 4096 + 2040 be,0,4 [0]",
            "              dd-901 (    901) [001] .....  1.001100: block_bio_queue: 254,0 R 4096 + 2040 [dd]",
            "              dd-901 (    901) [001] .....  1.001110: block_rq_issue: 254,0 R 1044480 () 4096 + 2040 be,0,4 [dd]",
        ] {
            t.add(&parse(l).unwrap());
        }
        let by: Vec<(u32, u64, u64)> =
            t.by.iter()
                .map(|((_, w), m)| (w.0, m.read_bytes, m.ios))
                .collect();
        println!("{by:?}");
        let of = |pid| t.by.iter().find(|((_, w), _)| w.0 == pid).map(|(_, m)| m);
        assert_eq!(of(900).map(|m| (m.read_bytes, m.ios)), Some((1044480, 1)));
        assert_eq!(of(901).map(|m| (m.read_bytes, m.ios)), Some((1044480, 1)));
        assert!(
            of(44).is_none(),
            "kblockd issued dd's request again: {by:?}"
        );
    }

    #[test]
    fn io_in_a_partition_is_counted_on_it_and_the_rest_on_the_disk() {
        let part = |n: u32, start, end| Part {
            disk: (7, 0),
            start,
            end,
            dev: (259, n),
        };
        let mut t = Tally::new(500).with_parts(vec![part(1, 2048, 4096), part(2, 4096, 8192)]);
        t.lookup = |_| None;
        for l in [
            "  j-501 (    500) [000] .....  10.000100: block_bio_queue: 7,0 W 2048 + 8 [j]",
            "  j-501 (    500) [000] .....  10.000110: block_rq_issue: 7,0 W 4096 () 2048 + 8 be,0,4 [j]",
            "  <idle>-0 (      0) [000] ..s..  10.000300: block_rq_complete: 7,0 W () 2048 + 8 be,0,4 [0]",
            "  dd-900 (    900) [001] .....  10.002000: block_bio_queue: 7,0 R 4096 + 8 [dd]",
            "  dd-900 (    900) [001] .....  10.002010: block_rq_issue: 7,0 R 4096 () 4096 + 8 be,0,4 [dd]",
            "  dd-900 (    900) [001] .....  10.003000: block_bio_queue: 7,0 R 0 + 8 [dd]",
            "  dd-900 (    900) [001] .....  10.003010: block_rq_issue: 7,0 R 4096 () 0 + 8 be,0,4 [dd]",
        ] {
            t.add(&parse(l).unwrap());
        }
        let names = [
            ((7, 0), "loop0".to_string()),
            ((259, 1), "loop0p1".to_string()),
            ((259, 2), "loop0p2".to_string()),
        ];
        let mut rows: Vec<(String, Option<String>, u32, u64)> = t
            .rows(&names)
            .into_iter()
            .map(|r| {
                let bytes = r.moved.read_bytes + r.moved.write_bytes;
                (r.device, r.disk, r.who.0, bytes)
            })
            .collect();
        rows.sort();
        println!("{rows:?}");
        let disk = Some("loop0".to_string());
        assert_eq!(
            rows,
            [
                ("loop0".into(), None, 900, 4096),
                ("loop0p1".into(), disk.clone(), 500, 4096),
                ("loop0p2".into(), disk, 900, 4096),
            ]
        );
        assert_eq!(t.d2c.len(), 1, "the test's request timed in its partition");
    }

    #[test]
    fn kernel_threads_by_proc_or_by_name() {
        assert!(kernel_thread(2, "kthreadd"), "pid 2 is kthreadd");
        assert!(!kernel_thread(std::process::id(), "blkscope"));
        assert!(kernel_thread(u32::MAX, "kworker/u8:2"), "gone: by its name");
        assert!(!kernel_thread(u32::MAX, "postgres"));
    }

    /// A dd of a shell loop, gone before its I/O was read: its ancestors come from the fork
    /// events (shell 700 forked the subshell 701, which forked dd 702), then from /proc for the
    /// first of them still there; when it began and ended comes with its row.
    #[test]
    fn a_process_gone_before_its_io_was_read_has_its_ancestors_from_the_forks() {
        let mut t = Tally::new(500);
        t.lookup = |pid| (pid == 700).then(|| ("sh".to_string(), vec![600, 1]));
        for l in [
            "  sh-700 (  700) [000] .....  1.0: sched_process_fork: comm=sh pid=700 child_comm=sh child_pid=701",
            "  sh-701 (  701) [000] .....  1.1: sched_process_fork: comm=sh pid=701 child_comm=sh child_pid=702",
            "  dd-702 (  702) [000] .....  1.3: sched_process_exit: comm=dd pid=702 prio=120",
        ] {
            t.life(super::super::event::parse_life(l).unwrap());
        }
        t.add(
            &parse("  dd-702 (  702) [001] .....  1.2: block_bio_queue: 7,0 R 0 + 8 [dd]").unwrap(),
        );
        t.add(&parse("  dd-702 (  702) [001] .....  1.2: block_rq_issue: 7,0 R 4096 () 0 + 8 be,0,4 [dd]").unwrap());
        let rows = t.rows(&[((7, 0), "loop0".into())]);
        println!("{rows:?}");
        let dd = &rows[0];
        assert_eq!(
            (
                dd.moved.comm.as_str(),
                dd.moved.ancestors.clone(),
                dd.moved.read_bytes
            ),
            ("dd", vec![701, 700, 600, 1], 4096)
        );
        assert_eq!(
            (dd.device.as_str(), dd.began_ns, dd.ended_ns),
            ("loop0", Some(1_100_000_000), Some(1_300_000_000))
        );
    }
}

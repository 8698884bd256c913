//! The trace read from BPF programs (`bpf::events`) instead of a tracefs instance: their
//! records as the tally's events, each as tracefs would have printed it, and a window's events
//! turned on and off by the programs' switch.

use std::io;

use super::bpf::events::{self, Events, Filter, Record, Which};
use super::event::{Event, Kind, Life};
use super::raw::Item;

/// The programs at work, the records the kernel could not keep so far, and each partition's
/// disk (partition, disk).
pub struct Programs {
    events: Events,
    lost: u64,
    disks: Vec<(Dev, Dev)>,
}

/// A device's (major, minor).
type Dev = (u32, u32);

impl Programs {
    /// Loads them with every event off but processes' lives, and a ring for a second and a
    /// half of records at `rate` a second; `disks`: each partition traced, with its disk.
    pub fn start(filter: &Filter, rate: f64, disks: Vec<(Dev, Dev)>) -> io::Result<Self> {
        let mut events = Events::start(filter, ring_bytes(rate))?;
        events.set(events::LIVES)?;
        Ok(Self {
            events,
            lost: 0,
            disks,
        })
    }

    /// Turns the first `n` block events (tracefs's order: queue, issue, complete) on, or all
    /// off; processes' lives stay on. Whether the programs took it: where one could not be
    /// attached, the block events are all off again (a window half open would count what no
    /// window holds).
    pub fn set(&mut self, n: usize, on: bool) -> bool {
        let mut bits = events::LIVES;
        if on && n >= 1 {
            bits |= events::QUEUE;
        }
        if on && n >= 3 {
            bits |= events::REQUESTS;
        }
        let took = self.events.set(bits).is_ok();
        if !took {
            let _ = self.events.set(events::LIVES);
        }
        took
    }

    /// Everything off: the trace is over.
    pub fn off(&mut self) {
        let _ = self.events.set(0);
    }

    /// Records written and not yet read.
    pub fn held(&self) -> u64 {
        self.events.held()
    }

    /// Hands what the ring holds to `on` (at most about `limit` bytes of it); the records lost
    /// since the last drain, and whether it stopped at the limit with more to read.
    pub fn drain(&mut self, limit: usize, mut on: impl FnMut(Item)) -> (u64, bool) {
        let flags = self.events.layout.flags;
        let disks = &self.disks;
        let more = self.events.drain(limit, |r| {
            let mut letters = [0u8; 8];
            if let Some(item) = item(&r, &flags, &mut letters, disks) {
                on(item);
            }
        });
        let lost = self.events.lost();
        let new = lost.saturating_sub(self.lost);
        self.lost = lost;
        (new, more)
    }
}

/// The ring's size: a second and a half of records at `rate` (each with its 8-byte header), a
/// power of two from 1 MiB to 64 MiB.
fn ring_bytes(rate: f64) -> usize {
    let want = (rate * 1.5 * (events::RECORD + 8) as f64) as usize;
    want.next_power_of_two().clamp(1 << 20, 64 << 20)
}

/// A record as the tally takes it: a block event as tracefs records it (a request's sector of
/// all ones, a flush's, is 0 there; a bio in a partition is its disk's, at the disk's sector, as
/// `bio_dev` names it where the program reads the partition of `disks`), a process's
/// beginning, or the end of a process (a thread's exit is not its process's).
fn item<'a>(
    r: &'a Record,
    flags: &events::OpFlags,
    letters: &'a mut [u8; 8],
    disks: &[(Dev, Dev)],
) -> Option<Item<'a>> {
    let kind = match r.which {
        Which::Queue => Kind::Queue,
        Which::Issue => Kind::Issue,
        Which::Complete => Kind::Complete,
        Which::Fork => {
            return Some(Item::Life(Life::Began {
                pid: r.child,
                parent: r.tgid,
                ts_ns: r.ts_ns,
            }));
        }
        Which::Exit => {
            return (r.pid == r.tgid).then_some(Item::Life(Life::Ended {
                pid: r.pid,
                ts_ns: r.ts_ns,
            }));
        }
    };
    let n = flags.rwbs(r.opf, letters);
    let comm = &r.comm[..r.comm.iter().position(|&b| b == 0).unwrap_or(16)];
    let dev = (r.dev >> 20, r.dev & ((1 << 20) - 1));
    let dev = disks
        .iter()
        .find(|(p, _)| *p == dev)
        .map_or(dev, |&(_, d)| d);
    Some(Item::Io(Event {
        comm,
        pid: r.pid,
        tgid: Some(r.tgid),
        ts_ns: r.ts_ns,
        kind,
        dev,
        rwbs: &letters[..n],
        sector: if r.sector == u64::MAX { 0 } else { r.sector },
        sectors: r.sectors,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(which: Which) -> Record {
        let mut comm = [0u8; 16];
        comm[..2].copy_from_slice(b"dd");
        Record {
            which,
            ts_ns: 9,
            sector: 384,
            dev: (7 << 20) | 2,
            sectors: 128,
            pid: 12,
            tgid: 10,
            opf: 1 << 11,
            comm,
            child: 0,
        }
    }

    use crate::trace::bpf::events::tests::FLAGS;

    /// A bio the queue's program read in a partition (its `bi_bdev`) is its disk's, as tracefs's
    /// `bio_dev` names it: the requests that time it name the disk.
    #[test]
    fn a_bio_in_a_partition_is_its_disks() {
        let disks = [((259, 0), (7, 2))];
        let mut queued = record(Which::Queue);
        queued.dev = 259 << 20;
        let mut l = [0u8; 8];
        let Some(Item::Io(e)) = item(&queued, &FLAGS, &mut l, &disks) else {
            panic!("an I/O")
        };
        println!("{e:?}");
        assert_eq!((e.dev, e.sector), ((7, 2), 384));
        // The disk's own request, and a device no partition of the trace's, stay as they are.
        for (dev, want) in [((7 << 20) | 2, (7, 2)), ((8 << 20) | 16, (8, 16))] {
            let mut r = record(Which::Issue);
            r.dev = dev;
            let mut l = [0u8; 8];
            let Some(Item::Io(e)) = item(&r, &FLAGS, &mut l, &disks) else {
                panic!("an I/O")
            };
            assert_eq!(e.dev, want, "{e:?}");
        }
    }

    /// A record reads as the event tracefs would have recorded: its name without the NULs,
    /// its device split, its letters; a flush request's sector of all ones as 0.
    #[test]
    fn records_are_the_events_tracefs_prints() {
        let mut l = [0u8; 8];
        let r = record(Which::Queue);
        let Some(Item::Io(e)) = item(&r, &FLAGS, &mut l, &[]) else {
            panic!("an I/O")
        };
        println!("{e:?}");
        assert_eq!(
            (e.comm, e.pid, e.tgid, e.dev, e.rwbs, e.sector, e.bytes()),
            (&b"dd"[..], 12, Some(10), (7, 2), &b"RS"[..], 384, 65536)
        );
        let mut flush = record(Which::Issue);
        (flush.sector, flush.opf, flush.sectors) = (u64::MAX, 2 | FLAGS.preflush, 0);
        let mut l = [0u8; 8];
        let Some(Item::Io(e)) = item(&flush, &FLAGS, &mut l, &[]) else {
            panic!("an I/O")
        };
        assert_eq!(
            (e.kind, e.sector, e.rwbs, e.flush()),
            (Kind::Issue, 0, &b"FF"[..], true)
        );
    }

    /// A fork is its child's beginning, under the forking process; an exit ends a process
    /// only where the thread that exits is its main one.
    #[test]
    fn forks_begin_processes_and_main_threads_end_them() {
        let mut l = [0u8; 8];
        let mut fork = record(Which::Fork);
        fork.child = 40;
        assert_eq!(
            item(&fork, &FLAGS, &mut l, &[]),
            Some(Item::Life(Life::Began {
                pid: 40,
                parent: 10,
                ts_ns: 9
            }))
        );
        let thread = record(Which::Exit);
        assert_eq!(item(&thread, &FLAGS, &mut l, &[]), None);
        let mut main = record(Which::Exit);
        main.pid = 10;
        assert_eq!(
            item(&main, &FLAGS, &mut l, &[]),
            Some(Item::Life(Life::Ended { pid: 10, ts_ns: 9 }))
        );
    }

    #[test]
    fn the_ring_holds_a_second_and_a_half_at_the_rate_limit() {
        let got = [1.0, 10_000.0, 40_000.0, 1e9].map(ring_bytes);
        println!("{got:?}");
        assert_eq!(got, [1 << 20, 2 << 20, 8 << 20, 64 << 20]);
    }
}

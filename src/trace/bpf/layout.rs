//! Where the trace's programs find what they read in the kernel's structs, and what the bits
//! of an operation mean: offsets, enumerators and (where the kernel can check the programs'
//! reads itself) the types' ids, from the kernel's BTF, kept in /run for the kernel's build
//! (`cached`). docs/architecture.md, "The trace's events from BPF programs".

use std::ffi::CStr;
use std::io;

use super::btf::{Btf, FUNC, STRUCT};
use super::cached;
use crate::sys::bpf;

/// The tracepoints the programs run at, in the order of `events::PROGRAMS`: the bio queued, a
/// request issued and completed, a process forked and gone.
pub const POINTS: [&CStr; 5] = [
    c"block_bio_queue",
    c"block_rq_issue",
    c"block_rq_complete",
    c"sched_process_fork",
    c"sched_process_exit",
];

/// The bits of `blk_opf_t` that blktrace's letters (`rwbs`) show, from the kernel's BTF: the
/// operation in the low byte, then these flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpFlags {
    pub preflush: u32,
    pub fua: u32,
    pub rahead: u32,
    pub sync: u32,
    pub meta: u32,
}

impl OpFlags {
    /// blktrace's letters for `opf`, as the kernel's `blk_fill_rwbs` writes them: F for a
    /// preflush, the operation (R, W, D, F for a flush alone, N), then F for FUA, A, S, M.
    pub fn rwbs(&self, opf: u32, out: &mut [u8; 8]) -> usize {
        let mut n = 0;
        // At most seven letters ("FDEFASM").
        let mut put = |c: u8| {
            out[n] = c;
            n += 1;
        };
        if opf & self.preflush != 0 {
            put(b'F');
        }
        match opf & 0xff {
            1 => put(b'W'),
            3 => put(b'D'),
            5 => {
                put(b'D');
                put(b'E');
            }
            2 => put(b'F'),
            0 => put(b'R'),
            _ => put(b'N'),
        }
        for (bit, c) in [
            (self.fua, b'F'),
            (self.rahead, b'A'),
            (self.sync, b'S'),
            (self.meta, b'M'),
        ] {
            if opf & bit != 0 {
                put(c);
            }
        }
        n
    }
}

/// Where the programs find what they read: byte offsets from the kernel's BTF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub(super) bi_bdev: u32,
    pub(super) bi_opf: u32,
    pub(super) bi_sector: u32,
    pub(super) bi_size: u32,
    pub(super) bd_dev: u32,
    pub(super) rq_q: u32,
    pub(super) rq_cmd_flags: u32,
    pub(super) rq_sector: u32,
    pub(super) rq_data_len: u32,
    pub(super) q_disk: u32,
    pub(super) disk_major: u32,
    pub(super) disk_first_minor: u32,
    pub(super) task_pid: u32,
    pub flags: OpFlags,
    /// The ids that let the block programs read the structs by plain loads; None where the
    /// kernel lacks `bpf_rdonly_cast` (before 6.2).
    pub(super) typed: Option<Typed>,
}

/// What a block program that reads its struct by plain loads needs (`events::Style::Typed`):
/// the `bpf_rdonly_cast` kfunc's id in the kernel's BTF, and the `bio`'s and `request`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Typed {
    pub cast: u32,
    pub bio: u32,
    pub request: u32,
}

/// The layout's numbers besides the typed ids, and with them.
const WORDS: usize = 18;
const WORDS_TYPED: usize = WORDS + 3;

impl Layout {
    /// Whether the kernel has what the typed block programs need (`events::Style::Typed`):
    /// the `bpf_rdonly_cast` kfunc and the structs' ids.
    pub fn typed(&self) -> bool {
        self.typed.is_some()
    }

    /// The running kernel's: as kept for its build (`cached`), else from its BTF, then kept.
    pub fn of_kernel() -> io::Result<Self> {
        let at = std::path::Path::new(cached::DIR);
        let key = cached::kernel();
        if let Some(l) = key
            .as_deref()
            .and_then(|k| cached::read(at, k))
            .and_then(|w| Self::from_words(&w))
        {
            return Ok(l);
        }
        let l = Self::of_btf()?;
        if let Some(k) = &key {
            cached::write(at, k, &l.words());
        }
        Ok(l)
    }

    /// Its numbers, in one order, for `cached`.
    fn words(&self) -> Vec<u32> {
        let f = &self.flags;
        vec![
            self.bi_bdev,
            self.bi_opf,
            self.bi_sector,
            self.bi_size,
            self.bd_dev,
            self.rq_q,
            self.rq_cmd_flags,
            self.rq_sector,
            self.rq_data_len,
            self.q_disk,
            self.disk_major,
            self.disk_first_minor,
            self.task_pid,
            f.preflush,
            f.fua,
            f.rahead,
            f.sync,
            f.meta,
        ]
        .into_iter()
        .chain(match self.typed {
            Some(t) => [t.cast, t.bio, t.request],
            None => [0; 3],
        })
        .collect()
    }

    /// The layout `words` says; None where they are not as many as it has (a file kept by a
    /// build that kept fewer).
    pub(super) fn from_words(w: &[u32]) -> Option<Self> {
        let (w, t) = (w.len() == WORDS_TYPED).then(|| w.split_at(WORDS))?;
        let &[a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r] = w else {
            return None;
        };
        let typed = (t[0] != 0).then(|| Typed {
            cast: t[0],
            bio: t[1],
            request: t[2],
        });
        Some(Self {
            bi_bdev: a,
            bi_opf: b,
            bi_sector: c,
            bi_size: d,
            bd_dev: e,
            rq_q: f,
            rq_cmd_flags: g,
            rq_sector: h,
            rq_data_len: i,
            q_disk: j,
            disk_major: k,
            disk_first_minor: l,
            task_pid: m,
            flags: OpFlags {
                preflush: n,
                fua: o,
                rahead: p,
                sync: q,
                meta: r,
            },
            typed,
        })
    }

    /// The running kernel's, from its BTF, where its tracepoints hand over what the programs
    /// read.
    fn of_btf() -> io::Result<Self> {
        let data = bpf::vmlinux_btf()?;
        let btf = Btf::parse(&data)
            .ok_or_else(|| io::Error::other("/sys/kernel/btf/vmlinux is not BTF"))?;
        takes_what_the_programs_read(&btf)?;
        let o = btf
            .offsets_of(&[
                ("bio", &["bi_bdev"]),
                ("bio", &["bi_opf"]),
                ("bio", &["bi_iter", "bi_sector"]),
                ("bio", &["bi_iter", "bi_size"]),
                ("block_device", &["bd_dev"]),
                ("request", &["q"]),
                ("request", &["cmd_flags"]),
                ("request", &["__sector"]),
                ("request", &["__data_len"]),
                ("request_queue", &["disk"]),
                ("gendisk", &["major"]),
                ("gendisk", &["first_minor"]),
                ("task_struct", &["pid"]),
            ])
            .map_err(io::Error::other)?;
        let bits = btf
            .enum_values(
                "req_flag_bits",
                &[
                    "__REQ_PREFLUSH",
                    "__REQ_FUA",
                    "__REQ_RAHEAD",
                    "__REQ_SYNC",
                    "__REQ_META",
                ],
            )
            .map_err(io::Error::other)?;
        let bit = |i: usize| 1u32.checked_shl(bits[i] as u32).unwrap_or(0);
        let typed = typed_ids(&btf);
        Ok(Self {
            bi_bdev: o[0],
            bi_opf: o[1],
            bi_sector: o[2],
            bi_size: o[3],
            bd_dev: o[4],
            rq_q: o[5],
            rq_cmd_flags: o[6],
            rq_sector: o[7],
            rq_data_len: o[8],
            q_disk: o[9],
            disk_major: o[10],
            disk_first_minor: o[11],
            task_pid: o[12],
            flags: OpFlags {
                preflush: bit(0),
                fua: bit(1),
                rahead: bit(2),
                sync: bit(3),
                meta: bit(4),
            },
            typed,
        })
    }

    /// The bytes of a bio the queue's program copies: up to its last field read, in words.
    pub(super) fn bio_head(&self) -> u32 {
        let end = (self.bi_bdev + 8)
            .max(self.bi_opf + 4)
            .max(self.bi_sector + 8)
            .max(self.bi_size + 4);
        end.next_multiple_of(8)
    }

    /// The same of a request.
    pub(super) fn rq_head(&self) -> u32 {
        let end = (self.rq_q + 8)
            .max(self.rq_cmd_flags + 4)
            .max(self.rq_sector + 8)
            .max(self.rq_data_len + 4);
        end.next_multiple_of(8)
    }
}

/// Whether each tracepoint hands its programs what they read, in that place (the first
/// argument the bio or request, a fork's second the new task): the offsets alone do not say
/// so (before 5.11 the block events took the queue first), and a program reading one thing as
/// another would record nonsense.
fn takes_what_the_programs_read(btf: &Btf) -> io::Result<()> {
    let points: Vec<&str> = POINTS.iter().map(|p| p.to_str().unwrap_or("")).collect();
    let firsts = ["bio", "request", "request", "task_struct", "task_struct"];
    let args = btf.tracepoint_args(&points);
    for ((point, first), got) in points.iter().zip(firsts).zip(&args) {
        let ok = got.as_ref().is_some_and(|a| {
            a.first().is_some_and(|f| f == first)
                && (*point != "sched_process_fork" || a.get(1).is_some_and(|s| s == first))
                && (*point != "block_rq_complete" || a.len() == 3)
        });
        if !ok {
            return Err(io::Error::other(format!(
                "the kernel's {point} hands over {got:?}, not what the trace's program reads"
            )));
        }
    }
    Ok(())
}

/// The ids a typed block program needs, where the kernel has them all (`bpf_rdonly_cast` is
/// about halfway through this kernel's types: found once a boot, then kept with the rest).
fn typed_ids(btf: &Btf) -> Option<Typed> {
    let ids = btf.ids_of(&[
        (FUNC, "bpf_rdonly_cast"),
        (STRUCT, "bio"),
        (STRUCT, "request"),
    ]);
    match ids[..] {
        [Some(cast), Some(bio), Some(request)] => Some(Typed { cast, bio, request }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This kernel's tracepoints hand over what the programs read (where it has BTF).
    #[test]
    fn this_kernels_tracepoints_take_what_the_programs_read() {
        let Ok(data) = bpf::vmlinux_btf() else {
            return println!("skipped: no /sys/kernel/btf/vmlinux");
        };
        let btf = Btf::parse(&data).unwrap();
        let points: Vec<&str> = POINTS.iter().map(|p| p.to_str().unwrap()).collect();
        println!("{:?}", btf.tracepoint_args(&points));
        takes_what_the_programs_read(&btf).unwrap();
    }

    /// A kernel whose `block_bio_queue` hands over the queue first (before 5.11) is refused,
    /// and the trace falls back to tracefs, rather than a program reading a queue as a bio.
    #[test]
    fn a_tracepoint_that_hands_over_the_queue_first_is_refused() {
        // strings: 0 "", 1 "bio", 5 "request_queue", 19 "btf_trace_block_bio_queue"
        let s = b"\0bio\0request_queue\0btf_trace_block_bio_queue\0";
        let params: Vec<u8> = [0u32, 4, 0, 3, 0, 2]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let types = [
            (1, 4 << 24, 8, vec![]),        // 1: struct bio
            (0, 2 << 24, 1, vec![]),        // 2: bio *
            (0, 2 << 24, 5, vec![]),        // 3: request_queue * (5)
            (0, 2 << 24, 0, vec![]),        // 4: void *
            (5, 4 << 24, 8, vec![]),        // 5: struct request_queue
            (0, (13 << 24) | 3, 0, params), // 6: (void *, queue *, bio *)
            (0, 2 << 24, 6, vec![]),        // 7: pointer to 6
            (19, 8 << 24, 7, vec![]),       // 8: typedef btf_trace_block_bio_queue
        ];
        let d = crate::trace::bpf::btf::tests::blob(&types, s);
        let btf = Btf::parse(&d).unwrap();
        let e = takes_what_the_programs_read(&btf).unwrap_err().to_string();
        println!("{e}");
        assert!(
            e.contains("block_bio_queue") && e.contains("request_queue"),
            "{e}"
        );
    }

    /// A layout's numbers read back as the same layout, with the typed ids and without (a
    /// first id of 0); those a build kept without the typed ids, or too few, are none.
    #[test]
    fn a_layouts_words_read_back_as_it() {
        let w: Vec<u32> = (1..=WORDS_TYPED as u32).collect();
        let l = Layout::from_words(&w).unwrap();
        assert_eq!(l.words(), w);
        assert_eq!(l.flags.meta, 18);
        let t = l.typed.unwrap();
        assert_eq!((t.cast, t.bio, t.request), (19, 20, 21));
        let mut untyped = w.clone();
        untyped[WORDS..].fill(0);
        let l = Layout::from_words(&untyped).unwrap();
        println!("{l:?}");
        assert_eq!((l.typed, l.words()), (None, untyped));
        assert!(Layout::from_words(&w[..WORDS]).is_none());
        assert!(Layout::from_words(&w[..17]).is_none());
    }

    /// This kernel's ids for the typed programs, where its BTF has `bpf_rdonly_cast` (6.2 and
    /// later): the struct ids those of the structs the block tracepoints hand over.
    #[test]
    fn this_kernels_typed_ids_are_found_where_it_has_the_cast() {
        let Ok(data) = bpf::vmlinux_btf() else {
            return println!("skipped: no /sys/kernel/btf/vmlinux");
        };
        let btf = Btf::parse(&data).unwrap();
        let has_cast = btf.ids_of(&[(FUNC, "bpf_rdonly_cast")])[0].is_some();
        let typed = typed_ids(&btf);
        println!("bpf_rdonly_cast in the BTF: {has_cast}; {typed:?}");
        assert_eq!(typed.is_some(), has_cast);
        if let Some(t) = typed {
            let structs = btf.ids_of(&[(STRUCT, "bio"), (STRUCT, "request")]);
            assert_eq!(structs, [Some(t.bio), Some(t.request)]);
            assert_ne!(t.cast, t.bio);
        }
    }
}

//! Where a field lies in one of the kernel's structs, from its BPF Type Format
//! (/sys/kernel/btf/vmlinux): a raw tracepoint hands its program the kernel's own `struct bio`,
//! whose layout changes between kernels. A scan of our own that stops at the structs asked
//! for: the btf-rs crate (2.0, its mmap backend) took about 1 ms to find each struct by name in
//! this VM's 6 MB of types, a whole run's share of the budget (docs/architecture.md). The types
//! are indexed only as far as a lookup goes: the block layer's structs lie in the first tenth
//! of this kernel's 126572 types.

use std::cell::RefCell;
use std::fmt;

/// A BTF blob's types and strings, and where each type's record starts (by its id), as far as
/// the lookups so far have indexed them.
pub struct Btf<'a> {
    data: &'a [u8],
    strings: usize,
    index: RefCell<Index>,
}

/// Each type's record offset in `data` so far (the type of id `i` at `at[i - 1]`), where the
/// next one starts, and where the types end.
struct Index {
    at: Vec<usize>,
    next: usize,
    end: usize,
}

#[derive(Debug, PartialEq)]
pub struct NotFound(pub String);

impl std::error::Error for NotFound {}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the kernel's BTF has no {}", self.0)
    }
}

pub const STRUCT: u32 = 4;
const UNION: u32 = 5;
const ENUM: u32 = 6;
const ENUM64: u32 = 19;
const PTR: u32 = 2;
const TYPEDEF: u32 = 8;
pub const FUNC: u32 = 12;
const FUNC_PROTO: u32 = 13;
/// typedef, volatile, const, restrict, type_tag: a name or qualifier over another type.
const OVER: [u32; 5] = [8, 9, 10, 11, 18];

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// The bytes each kind's record has after its 12-byte head, with `vlen` members.
fn trailing(kind: u32, vlen: usize) -> usize {
    match kind {
        1 | 14 | 17 => 4,
        3 => 12,
        4 | 5 | 15 | 19 => 12 * vlen,
        6 | 13 => 8 * vlen,
        _ => 0,
    }
}

impl<'a> Btf<'a> {
    /// Indexes `data` (a little-endian BTF blob, such as /sys/kernel/btf/vmlinux); None where
    /// it is not one.
    pub fn parse(data: &'a [u8]) -> Option<Self> {
        if data.get(..2)? != [0x9f, 0xeb] {
            return None;
        }
        let (hdr, types, types_len, strings) = (
            u32_at(data, 4)? as usize,
            u32_at(data, 8)? as usize,
            u32_at(data, 12)? as usize,
            u32_at(data, 16)? as usize,
        );
        let (next, end) = (hdr + types, hdr + types + types_len);
        Some(Self {
            data,
            strings: hdr + strings,
            index: RefCell::new(Index {
                at: Vec::new(),
                next,
                end: end.min(data.len()),
            }),
        })
    }

    /// Where type `id`'s record starts, indexing the types up to it first; None past the last.
    fn pos(&self, id: u32) -> Option<usize> {
        let i = (id as usize).checked_sub(1)?;
        let mut x = self.index.borrow_mut();
        while x.at.len() <= i {
            if x.next + 12 > x.end {
                return None;
            }
            let pos = x.next;
            let info = u32_at(self.data, pos + 4)?;
            x.at.push(pos);
            x.next = pos + 12 + trailing((info >> 24) & 0x1f, (info & 0xffff) as usize);
        }
        Some(x.at[i])
    }

    fn name(&self, off: u32) -> &[u8] {
        let s = &self.data[(self.strings + off as usize).min(self.data.len())..];
        &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]
    }

    /// Type `id`'s head: (name offset, kind, vlen, kind flag, size or type), and its record.
    fn head(&self, id: u32) -> Option<(u32, u32, usize, bool, u32, usize)> {
        let pos = self.pos(id)?;
        let info = u32_at(self.data, pos + 4)?;
        Some((
            u32_at(self.data, pos)?,
            (info >> 24) & 0x1f,
            (info & 0xffff) as usize,
            info >> 31 == 1,
            u32_at(self.data, pos + 8)?,
            pos,
        ))
    }

    /// The id of struct `name`.
    fn struct_id(&self, name: &str) -> Option<u32> {
        self.struct_ids(&[name])[0]
    }

    /// The ids of structs `names`, in one pass over the types.
    fn struct_ids(&self, names: &[&str]) -> Vec<Option<u32>> {
        let want: Vec<(u32, &str)> = names.iter().map(|n| (STRUCT, *n)).collect();
        self.ids_of(&want)
    }

    /// The id of each type of `want` (its kind, such as [`STRUCT`] or [`FUNC`], and its name;
    /// the first of that kind and name), in one pass that stops when all are found: the ids a
    /// program that casts to the kernel's types is written with.
    pub fn ids_of(&self, want: &[(u32, &str)]) -> Vec<Option<u32>> {
        let mut ids = vec![None; want.len()];
        for id in 1.. {
            let Some((n, kind, ..)) = self.head(id) else {
                break;
            };
            if !want.iter().any(|(k, _)| *k == kind) {
                continue;
            }
            let name = self.name(n);
            for (i, (k, w)) in want.iter().enumerate() {
                if *k == kind && w.as_bytes() == name {
                    ids[i].get_or_insert(id);
                }
            }
            if ids.iter().all(Option::is_some) {
                break;
            }
        }
        ids
    }

    /// The type under any typedefs and qualifiers over `id`.
    fn under(&self, mut id: u32) -> u32 {
        while let Some((_, kind, _, _, t, _)) = self.head(id) {
            if !OVER.contains(&kind) {
                break;
            }
            id = t;
        }
        id
    }

    /// Member `name` of struct or union `id`: its type and byte offset.
    fn member(&self, id: u32, name: &str) -> Option<(u32, u32)> {
        let (_, kind, vlen, flag, _, pos) = self.head(id)?;
        if kind != STRUCT && kind != UNION {
            return None;
        }
        (0..vlen).find_map(|i| {
            let m = pos + 12 + 12 * i;
            let (n, t, bits) = (
                u32_at(self.data, m)?,
                u32_at(self.data, m + 4)?,
                u32_at(self.data, m + 8)?,
            );
            let bits = if flag { bits & 0xff_ffff } else { bits };
            (self.name(n) == name.as_bytes()).then_some((self.under(t), bits / 8))
        })
    }

    /// The byte offset of `path` (members, each within the last: `["bi_iter", "bi_size"]`) in
    /// struct `name`.
    pub fn offset_of(&self, name: &str, path: &[&str]) -> Result<u32, NotFound> {
        let id = self.struct_id(name);
        self.offset_in(id, name, path)
    }

    /// Each of `want` (a struct's name, and a path in it as [`Btf::offset_of`] takes it), the
    /// structs found in one pass.
    pub fn offsets_of(&self, want: &[(&str, &[&str])]) -> Result<Vec<u32>, NotFound> {
        let names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
        let ids = self.struct_ids(&names);
        (want.iter().zip(ids))
            .map(|((name, path), id)| self.offset_in(id, name, path))
            .collect()
    }

    fn offset_in(&self, id: Option<u32>, name: &str, path: &[&str]) -> Result<u32, NotFound> {
        let missing = || NotFound(format!("struct {name} with {}", path.join(".")));
        let mut id = id.ok_or_else(missing)?;
        let mut at = 0;
        for m in path {
            let (t, off) = self.member(id, m).ok_or_else(missing)?;
            (id, at) = (t, at + off);
        }
        Ok(at)
    }

    /// What each raw tracepoint of `points` (`block_rq_issue`) hands its program, from its
    /// BTF prototype (`btf_trace_block_rq_issue`): after the context, each argument's struct
    /// where it points to one (`request`), else its type's name; None for a tracepoint not
    /// found. Kernels change them (before 5.11 `block_rq_issue` took the queue first).
    pub fn tracepoint_args(&self, points: &[&str]) -> Vec<Option<Vec<String>>> {
        let names: Vec<String> = points.iter().map(|p| format!("btf_trace_{p}")).collect();
        let mut found = vec![None; points.len()];
        for id in 1.. {
            let Some((n, kind, _, _, t, _)) = self.head(id) else {
                break;
            };
            if kind != TYPEDEF {
                continue;
            }
            let name = self.name(n);
            if let Some(i) = names.iter().position(|w| w.as_bytes() == name) {
                found[i] = Some(self.params(t));
                if found.iter().all(Option::is_some) {
                    break;
                }
            }
        }
        found
    }

    /// The arguments after the first of the function `ptr` points to (as
    /// [`Btf::tracepoint_args`] names them).
    fn params(&self, ptr: u32) -> Vec<String> {
        let Some((_, PTR, _, _, proto, _)) = self.head(self.under(ptr)) else {
            return Vec::new();
        };
        let Some((_, FUNC_PROTO, vlen, _, _, pos)) = self.head(self.under(proto)) else {
            return Vec::new();
        };
        (1..vlen)
            .map(|i| {
                let t = u32_at(self.data, pos + 12 + 8 * i + 4).unwrap_or(0);
                let t = self.under(t);
                let named = match self.head(t) {
                    Some((_, PTR, _, _, to, _)) => self.under(to),
                    _ => t,
                };
                let n = self.head(named).map_or(0, |h| h.0);
                String::from_utf8_lossy(self.name(n)).into_owned()
            })
            .collect()
    }

    /// The values of enumerators `names` of enum `of` (`req_flag_bits`), in one pass over the
    /// types that compares only enums' names.
    pub fn enum_values(&self, of: &str, names: &[&str]) -> Result<Vec<i64>, NotFound> {
        let mut found = vec![None; names.len()];
        for id in 1.. {
            let Some((name, kind, vlen, _, _, pos)) = self.head(id) else {
                break;
            };
            if kind != ENUM && kind != ENUM64 {
                continue;
            }
            if self.name(name) != of.as_bytes() {
                continue;
            }
            let pos = pos + 12;
            let each = if kind == ENUM { 8 } else { 12 };
            for i in 0..vlen {
                let e = pos + each * i;
                let Some(n) = u32_at(self.data, e) else { break };
                let Some(w) = names.iter().position(|w| w.as_bytes() == self.name(n)) else {
                    continue;
                };
                let lo = u32_at(self.data, e + 4).unwrap_or(0);
                found[w] = Some(if kind == ENUM {
                    i64::from(lo as i32)
                } else {
                    i64::from(lo) | i64::from(u32_at(self.data, e + 8).unwrap_or(0)) << 32
                });
            }
            if found.iter().all(Option::is_some) {
                break;
            }
        }
        (names.iter().zip(found))
            .map(|(n, v)| v.ok_or_else(|| NotFound(format!("enum {of} with {n}"))))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A BTF blob of `types` (each a head and the bytes after it) over `strings`.
    pub(crate) fn blob(types: &[(u32, u32, u32, Vec<u8>)], strings: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for (name, info, size, after) in types {
            for v in [name, info, size] {
                t.extend(v.to_le_bytes());
            }
            t.extend(after);
        }
        let mut d = vec![0x9f, 0xeb, 1, 0];
        for v in [
            24u32,
            0,
            t.len() as u32,
            t.len() as u32,
            strings.len() as u32,
        ] {
            d.extend(v.to_le_bytes());
        }
        d.extend(t);
        d.extend(strings);
        d
    }

    /// Members: (name, type, offset in bits) each.
    fn members(m: &[(u32, u32, u32)]) -> Vec<u8> {
        m.iter()
            .flat_map(|&(n, t, o)| [n, t, o])
            .flat_map(u32::to_le_bytes)
            .collect()
    }

    /// A struct in a struct through a typedef, a member after a bitfield, kinds whose records
    /// have more than a head before them (an int, an enum of two): offsets as the kernel's BTF
    /// gives them.
    #[test]
    fn finds_a_members_offset_through_nested_structs_and_typedefs() {
        // strings: 0 "", 1 "int", 5 "iter", 10 "size", 15 "bio", 19 "it", 22 "flags", 28 "e"
        let s = b"\0int\0iter\0size\0bio\0it\0flags\0e\0";
        let types = [
            (1, 1 << 24, 4, vec![0; 4]),                                // 1: int
            (28, (6 << 24) | 2, 4, vec![0; 16]),                        // 2: enum
            (5, (4 << 24) | 2, 16, members(&[(1, 1, 0), (10, 1, 64)])), // 3: iter
            (5, 8 << 24, 3, vec![]),                                    // 4: typedef of 3
            (
                15,
                (4 << 24) | (1 << 31) | 2,
                48,
                members(&[(22, 1, (3 << 24) | 32), (19, 4, 128)]),
            ), // 5: bio, bitfield flags
        ];
        let d = blob(&types, s);
        let btf = Btf::parse(&d).expect("a BTF blob");
        assert_eq!(btf.offset_of("bio", &["it", "size"]), Ok(16 + 8));
        assert_eq!(btf.offset_of("bio", &["flags"]), Ok(4));
        assert_eq!(
            btf.offset_of("bio", &["nope"]).unwrap_err().to_string(),
            "the kernel's BTF has no struct bio with nope"
        );
        assert!(Btf::parse(b"not btf").is_none());
    }

    /// An enumerator's value from an enum of 32 bits and one of 64, found by name.
    #[test]
    fn finds_enumerators_by_name() {
        // strings: 0 "", 1 "A", 3 "B", 5 "WIDE", 10 "e", 12 "f"
        let s = b"\0A\0B\0WIDE\0e\0f\0";
        let two: Vec<u8> = [1u32, 7, 3, (-2i32) as u32]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let wide: Vec<u8> = [5u32, 1, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let types = [
            (10, (6 << 24) | 2, 4, two.clone()),
            (12, (19 << 24) | 1, 8, wide),
            (12, (6 << 24) | 2, 4, two),
        ];
        let d = blob(&types, s);
        let btf = Btf::parse(&d).expect("a BTF blob");
        let got = btf.enum_values("e", &["A", "B"]);
        println!("{got:?}");
        assert_eq!(got, Ok(vec![7, -2]));
        // Another enum of the same name, 64 bits wide, holds the rest.
        assert_eq!(
            btf.enum_values("f", &["WIDE", "A"]),
            Ok(vec![(2 << 32) | 1, 7])
        );
        assert!(btf.enum_values("e", &["WIDE"]).is_err());
    }

    /// A raw tracepoint's prototype (a typedef of a pointer to a function of the context and
    /// its arguments) read as the structs it hands over.
    #[test]
    fn a_tracepoints_arguments_are_read_from_its_prototype() {
        // strings: 0 "", 1 "bio", 5 "btf_trace_q", 17 "int", 21 "btf_trace_c"
        let s = b"\0bio\0btf_trace_q\0int\0btf_trace_c\0";
        let params = |p: &[u32]| -> Vec<u8> {
            p.iter()
                .flat_map(|&t| [0u32, t])
                .flat_map(u32::to_le_bytes)
                .collect()
        };
        let types = [
            (1, 4 << 24, 8, vec![]),                    // 1: struct bio, no members
            (0, 2 << 24, 1, vec![]),                    // 2: bio *
            (17, 1 << 24, 4, vec![0; 4]),               // 3: int
            (0, 2 << 24, 0, vec![]),                    // 4: void *
            (0, (13 << 24) | 3, 0, params(&[4, 2, 3])), // 5: (void *, bio *, int)
            (0, 2 << 24, 5, vec![]),                    // 6: pointer to 5
            (5, 8 << 24, 6, vec![]),                    // 7: typedef btf_trace_q
        ];
        let d = blob(&types, s);
        let btf = Btf::parse(&d).expect("a BTF blob");
        let got = btf.tracepoint_args(&["q", "c"]);
        println!("{got:?}");
        assert_eq!(
            got,
            [Some(vec!["bio".to_string(), "int".to_string()]), None]
        );
    }

    /// Types found by kind and name: a function and a typedef of the same name as a struct
    /// are told apart, the first of each kept, one not there is none.
    #[test]
    fn finds_types_by_kind_and_name() {
        // strings: 0 "", 1 "bio", 5 "cast"
        let s = b"\0bio\0cast\0";
        let types = [
            (1, 8 << 24, 2, vec![]),        // 1: typedef bio
            (1, 4 << 24, 8, vec![]),        // 2: struct bio
            (5, (12 << 24) | 1, 4, vec![]), // 3: func cast
            (1, 4 << 24, 8, vec![]),        // 4: struct bio again
        ];
        let d = blob(&types, s);
        let btf = Btf::parse(&d).expect("a BTF blob");
        let got = btf.ids_of(&[
            (STRUCT, "bio"),
            (FUNC, "cast"),
            (TYPEDEF, "bio"),
            (FUNC, "bio"),
        ]);
        println!("{got:?}");
        assert_eq!(got, [Some(2), Some(3), Some(1), None]);
    }

    /// The running kernel's, where it has one: `struct bio`'s fields the counting program
    /// reads lie inside it, at the offsets its own record says.
    #[test]
    fn the_running_kernels_bio_fields_are_found() {
        let Ok(d) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            println!("skipped: no /sys/kernel/btf/vmlinux");
            return;
        };
        let btf = Btf::parse(&d).expect("the kernel's BTF parses");
        let off = |s: &str, p: &[&str]| btf.offset_of(s, p).unwrap();
        let got = [
            off("bio", &["bi_bdev"]),
            off("bio", &["bi_opf"]),
            off("bio", &["bi_iter", "bi_size"]),
            off("block_device", &["bd_dev"]),
        ];
        println!("bio.bi_bdev, bi_opf, bi_iter.bi_size, block_device.bd_dev: {got:?}");
        assert!(got[0] < got[2] && got[1] < got[2] && got[2] < 64, "{got:?}");
    }
}

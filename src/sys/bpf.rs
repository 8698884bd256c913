//! The bpf(2) system call, as much of it as counting in the kernel needs: maps, a program
//! loaded with the verifier's words on failure, a raw tracepoint it runs on, and the maps'
//! entries read and written. The programs themselves are built elsewhere (`trace::bpf`); no
//! libbpf, no compiler (docs/architecture.md, "Counting in the kernel").

use std::ffi::CStr;
use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const MAP_CREATE: libc::c_long = 0;
const MAP_LOOKUP_ELEM: libc::c_long = 1;
const MAP_UPDATE_ELEM: libc::c_long = 2;
const MAP_GET_NEXT_KEY: libc::c_long = 4;
const PROG_LOAD: libc::c_long = 5;
const RAW_TRACEPOINT_OPEN: libc::c_long = 17;

/// `bpf_attr`: a union of each command's fields, 128 bytes here (the kernel takes a shorter
/// one and zeroes what it lacks).
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Self {
        Self([0; 128])
    }

    fn u32_at(mut self, at: usize, v: u32) -> Self {
        self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }

    fn u64_at(mut self, at: usize, v: u64) -> Self {
        self.0[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

/// bpf(`cmd`, `attr`): its result (a descriptor, or 0), or the error.
fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, writable 128-byte buffer laid out as `bpf_attr` for `cmd`;
    // every pointer stored in it (keys, values, instructions, names, the log) points into
    // memory the caller keeps alive and sized for the call until it returns.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.0.as_mut_ptr(),
            std::mem::size_of::<Attr>(),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A descriptor bpf(2) returned: ours to own and close.
fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: a command that makes an object returns a new descriptor no one else owns.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// Loads program `insns` of `kind` (17: a raw tracepoint's), GPL-licensed (for its helpers);
/// where the verifier refuses it, loaded again with its log on, whose last line the error
/// carries (the log costs the verifier time: not asked for the first time).
pub fn prog_load(kind: u32, insns: &[u64]) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let attr = || {
        Attr::new()
            .u32_at(0, kind)
            .u32_at(4, insns.len() as u32)
            .u64_at(8, insns.as_ptr() as u64)
            .u64_at(16, license.as_ptr() as u64)
    };
    let e = match bpf(PROG_LOAD, &mut attr()) {
        Ok(fd) => return Ok(owned(fd)),
        Err(e) => e,
    };
    let mut log = vec![0u8; 1 << 16];
    let mut a = attr()
        .u32_at(24, 1)
        .u32_at(28, log.len() as u32)
        .u64_at(32, log.as_mut_ptr() as u64);
    let _ = bpf(PROG_LOAD, &mut a).map(owned);
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let said = String::from_utf8_lossy(&log[..end]);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(io::Error::new(
        e.kind(),
        format!("the kernel refused a BPF program ({e}): {last}"),
    ))
}

/// Runs `prog` at the raw tracepoint `name` (`block_bio_queue`) until the returned descriptor
/// is closed.
pub fn raw_tracepoint_open(name: &CStr, prog: BorrowedFd) -> io::Result<OwnedFd> {
    let mut a = Attr::new()
        .u64_at(0, name.as_ptr() as u64)
        .u32_at(8, prog.as_raw_fd() as u32);
    bpf(RAW_TRACEPOINT_OPEN, &mut a).map(owned)
}

/// A map, with the sizes of its keys and values: every key and value handed to the kernel is
/// checked against them first, since the kernel reads and writes that many bytes at the
/// pointers it is given.
pub struct Map {
    fd: OwnedFd,
    key: usize,
    value: usize,
}

impl Map {
    /// A map of `kind` (1 a hash, 2 an array) with keys and values of those sizes.
    pub fn create(kind: u32, key: u32, value: u32, entries: u32) -> io::Result<Self> {
        let mut a = Attr::new()
            .u32_at(0, kind)
            .u32_at(4, key)
            .u32_at(8, value)
            .u32_at(12, entries);
        Ok(Self {
            fd: bpf(MAP_CREATE, &mut a).map(owned)?,
            key: key as usize,
            value: value as usize,
        })
    }

    /// Its descriptor, as a program's instructions name it.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// The attr of a command on one of its entries, once the key and value (or next key)
    /// have the map's sizes.
    fn elem(&self, key: Option<&[u8]>, value: *mut u8, value_len: usize) -> io::Result<Attr> {
        if key.is_some_and(|k| k.len() != self.key) || value_len != self.value {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a BPF map's key or value of another size than the map's",
            ));
        }
        let at = key.map_or(std::ptr::null(), |k| k.as_ptr());
        Ok(Attr::new()
            .u32_at(0, self.fd.as_raw_fd() as u32)
            .u64_at(8, at as u64)
            .u64_at(16, value as u64))
    }

    /// Reads the entry at `key` into `value`; false where there is none.
    pub fn lookup(&self, key: &[u8], value: &mut [u8]) -> io::Result<bool> {
        let mut a = self.elem(Some(key), value.as_mut_ptr(), value.len())?;
        found(bpf(MAP_LOOKUP_ELEM, &mut a))
    }

    /// Sets the entry at `key` to `value`.
    pub fn update(&self, key: &[u8], value: &[u8]) -> io::Result<()> {
        let mut a = self.elem(Some(key), value.as_ptr() as *mut u8, value.len())?;
        bpf(MAP_UPDATE_ELEM, &mut a).map(|_| ())
    }

    /// The key after `key` (the first with None) into `next`; false after the last.
    pub fn next_key(&self, key: Option<&[u8]>, next: &mut [u8]) -> io::Result<bool> {
        if next.len() != self.key {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a BPF map's next key of another size than the map's",
            ));
        }
        // The next key has the key's size, where `elem` checks the value's.
        let mut a = self.elem(key, std::ptr::null_mut(), self.value)?;
        a = a.u64_at(16, next.as_mut_ptr() as u64);
        found(bpf(MAP_GET_NEXT_KEY, &mut a))
    }
}

/// A BPF ring buffer (a map of kind 27) that programs write records into and this process
/// reads in place: the kernel's consumer position on a page of its own (ours to write), then
/// its producer position's page and the data, mapped twice over so that a record that wraps
/// reads as one (bpf(2)'s `BPF_MAP_TYPE_RINGBUF`).
pub struct Ring {
    // Unmapped before the map's descriptor closes (fields drop in this order).
    consumer: memmap2::MmapMut,
    producer: memmap2::Mmap,
    map: Map,
    page: usize,
    size: usize,
}

/// A record's header: its length with these two flags, then its page offset.
const BUSY: u32 = 1 << 31;
const DISCARDED: u32 = 1 << 30;
const HEADER: usize = 8;

impl Ring {
    /// A ring of `size` bytes (a power of two, a page or more).
    pub fn create(size: usize) -> io::Result<Self> {
        let page = crate::sys::page_size() as usize;
        if !size.is_power_of_two() || size < page {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a BPF ring's size is a power of two of a page or more",
            ));
        }
        let map = Map::create(27, 0, 0, size as u32)?;
        let fd = map.raw_fd();
        // SAFETY: the kernel's shared pages of a ring map, at the offsets and lengths bpf(2)
        // gives them: the consumer page writable, the rest read-only. The kernel keeps them
        // while the map's descriptor (held in `map`, dropped after them) is open, and both
        // sides only ever change them through the positions' atomics.
        let (consumer, producer) = unsafe {
            (
                memmap2::MmapOptions::new().len(page).map_mut(fd)?,
                memmap2::MmapOptions::new()
                    .offset(page as u64)
                    .len(page + 2 * size)
                    .map(fd)?,
            )
        };
        Ok(Self {
            consumer,
            producer,
            map,
            page,
            size,
        })
    }

    /// Its descriptor, as a program's instructions name it.
    pub fn raw_fd(&self) -> i32 {
        self.map.raw_fd()
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer page's first word, page-aligned and as long as the mapping
        // lives (as long as `self`); the kernel reads it as an atomic too.
        unsafe { &*(self.consumer.as_ptr() as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: the producer page's first word, page-aligned, living as long as `self`;
        // the kernel writes it with release ordering, read here with acquire.
        unsafe { &*(self.producer.as_ptr() as *const AtomicU64) }
    }

    /// The bytes written and not yet read (records and their headers).
    pub fn held(&self) -> u64 {
        let prod = self.producer_pos().load(Ordering::Acquire);
        prod.saturating_sub(self.consumer_pos().load(Ordering::Relaxed))
    }

    /// Hands each record written so far to `on`, about `limit` bytes at the most, and frees
    /// their room; true where it stopped at the limit with more to read. A record still being
    /// written ends the read (its writer finishes it by the next).
    pub fn read(&mut self, limit: usize, mut on: impl FnMut(&[u8])) -> bool {
        let data = &self.producer[self.page..];
        let mask = self.size as u64 - 1;
        let mut cons = self.consumer_pos().load(Ordering::Relaxed);
        let prod = self.producer_pos().load(Ordering::Acquire);
        let mut read = 0;
        while cons < prod {
            if read >= limit {
                self.consumer_pos().store(cons, Ordering::Release);
                return true;
            }
            let at = (cons & mask) as usize;
            let header = self.header(at);
            if header & BUSY != 0 {
                break;
            }
            let len = (header & !(BUSY | DISCARDED)) as usize;
            if header & DISCARDED == 0 {
                on(&data[at + HEADER..at + HEADER + len]);
            }
            let step = (HEADER + len).next_multiple_of(8);
            cons += step as u64;
            read += step;
        }
        self.consumer_pos().store(cons, Ordering::Release);
        false
    }

    /// The length word of the record at `at`, read as the kernel's writer publishes it.
    fn header(&self, at: usize) -> u32 {
        let data = &self.producer[self.page..];
        // SAFETY: `at` is a multiple of 8 within the data's first copy, so the word is in the
        // mapping and aligned; the kernel sets it with release ordering when a record is done.
        let word = unsafe { &*(data.as_ptr().add(at) as *const AtomicU32) };
        word.load(Ordering::Acquire)
    }
}

/// A lookup's result: ENOENT is "none", not an error.
fn found(r: io::Result<libc::c_long>) -> io::Result<bool> {
    match r {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The kernel's own BPF Type Format, as [`vmlinux_btf`] got it.
pub enum Btf {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl Deref for Btf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Btf::Mapped(m) => m,
            Btf::Read(v) => v,
        }
    }
}

/// /sys/kernel/btf/vmlinux, mapped where the kernel lets it be (private and read-only, since
/// 6.16), else read: 5.5 MB here, 2-5 ms to read, against only the pages a scan touches.
pub fn vmlinux_btf() -> io::Result<Btf> {
    const VMLINUX: &str = "/sys/kernel/btf/vmlinux";
    let file = std::fs::File::open(VMLINUX)?;
    // SAFETY: a private, read-only map of the kernel's BTF, which no one can write and which
    // does not change while the kernel runs, so the bytes behind the slice stay as they are.
    let mapped = unsafe { memmap2::MmapOptions::new().map_copy_read_only(&file) };
    match mapped {
        Ok(m) => Ok(Btf::Mapped(m)),
        Err(_) => std::fs::read(VMLINUX).map(Btf::Read),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key or value of another size than the map's never reaches the kernel, which would
    /// read or write the map's size at its pointer.
    #[test]
    fn keys_and_values_of_another_size_are_refused() {
        let m = match Map::create(2, 4, 8, 1) {
            Ok(m) => m,
            Err(e) => return println!("skipped: no BPF map here ({e})"),
        };
        let (key, mut small, mut next) = ([0u8; 4], [0u8; 4], [0u8; 2]);
        let refused = |r: io::Result<bool>| r.unwrap_err().kind() == io::ErrorKind::InvalidInput;
        assert!(refused(m.lookup(&key, &mut small)));
        assert!(refused(m.lookup(&key[..2], &mut [0u8; 8])));
        assert!(refused(m.next_key(None, &mut next)));
        assert!(m.update(&key, &small).is_err());
        m.update(&key, &7u64.to_ne_bytes()).unwrap();
        let mut v = [0u8; 8];
        assert!(m.lookup(&key, &mut v).unwrap());
        assert_eq!(u64::from_ne_bytes(v), 7);
    }
}

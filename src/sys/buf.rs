//! Aligned buffers and the huge-page arena the io_uring queue registers.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::io;
use std::ptr::NonNull;

use super::page_size;

/// A zeroed heap buffer whose address is a multiple of `align` (O_DIRECT needs this).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>; moving it to another
// thread moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Panics only if `len` is 0 or `align` is not a power of two (programming errors).
    pub fn new(len: usize, align: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), align.max(1)).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Self { ptr, layout }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialised (zeroed at allocation) and borrowed
        // immutably for the lifetime of &self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was returned by alloc_zeroed with this very layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The I/O buffers of one queue: `slots` page-aligned buffers of `slot_len` bytes, one after
/// another in one anonymous mapping. When the whole is 2 MiB or more, the mapping starts on a
/// 2 MiB boundary and is advised as transparent huge pages before anything touches it (the
/// kernel's THP setting is "madvise" on most distributions, so nothing else gets them). Why: a
/// 1 MiB buffer on 4 KiB pages is up to 256 scattered pages, each its own segment of the request,
/// which the block layer then splits by the device's segment limits (a loop device allows 128);
/// on a huge page it is a few large segments. Where THP is off or no huge page is free, the
/// buffers are ordinary pages and nothing else changes.
pub struct BufferArena {
    ptr: NonNull<u8>,
    map_len: usize,
    slot_len: usize,
    slots: usize,
    huge: bool,
}

// SAFETY: the arena owns its mapping exclusively, like a Box<[u8]>; moving it to another thread
// moves that ownership.
unsafe impl Send for BufferArena {}

const HUGE_PAGE: usize = 2 << 20;

impl BufferArena {
    /// Maps `slots` buffers of `len` bytes each (rounded up to whole pages), zero-filled.
    pub fn new(slots: usize, len: usize) -> io::Result<Self> {
        let page = page_size() as usize;
        let slot_len = len.max(1).div_ceil(page) * page;
        let want = slot_len
            .checked_mul(slots.max(1))
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        let huge = want >= HUGE_PAGE;
        let map_len = if huge {
            want.div_ceil(HUGE_PAGE) * HUGE_PAGE
        } else {
            want
        };
        // Over-map by one huge page so that a 2 MiB boundary lies inside, then unmap the slop.
        let raw_len = if huge { map_len + HUGE_PAGE } else { map_len };
        // SAFETY: a fresh private anonymous mapping; no existing memory is referenced.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                raw_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = raw as usize;
        let start = if huge {
            base.div_ceil(HUGE_PAGE) * HUGE_PAGE
        } else {
            base
        };
        let head = start - base;
        let tail = raw_len - head - map_len;
        // SAFETY: both ranges lie inside the mapping just made and nothing points into them; a
        // failure leaves them mapped, which wastes address space but is not unsound.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((start + map_len) as *mut libc::c_void, tail);
            }
        }
        if huge {
            // SAFETY: advice on our own mapping, which nothing has touched yet; it changes how
            // the kernel backs the pages, never their contents. Refused advice (THP not built
            // in) leaves ordinary pages.
            unsafe {
                libc::madvise(start as *mut libc::c_void, map_len, libc::MADV_HUGEPAGE);
            }
        }
        Ok(Self {
            ptr: NonNull::new(start as *mut u8).expect("mmap returned a null mapping"),
            map_len,
            slot_len,
            slots: slots.max(1),
            huge,
        })
    }

    /// Whether the mapping was advised as huge pages (2 MiB or more in all).
    pub fn huge(&self) -> bool {
        self.huge
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The bytes of one slot (its length rounded up to whole pages).
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// The address of the whole mapping (for tests that look it up in /proc/self/smaps).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    pub(super) fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots, "slot {slot} out of {}", self.slots);
        // SAFETY: slot < slots, so the offset stays inside the mapping of slots * slot_len bytes.
        unsafe { self.ptr.as_ptr().add(slot * self.slot_len) }
    }

    pub fn slot(&self, slot: usize) -> &[u8] {
        // SAFETY: the slot's range is inside the mapping, initialised (anonymous memory is
        // zero-filled) and borrowed immutably for the lifetime of &self.
        unsafe { std::slice::from_raw_parts(self.slot_ptr(slot), self.slot_len) }
    }

    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }
}

impl Drop for BufferArena {
    fn drop(&mut self) {
        // SAFETY: the range is exactly what new() kept mapped, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.map_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_aligned_and_zeroed() {
        let mut b = AlignedBuf::new(8192, 4096);
        assert_eq!(b.as_slice().as_ptr() as usize % 4096, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[8191] = 7;
        assert_eq!(b.as_slice()[8191], 7);
    }

    /// The smaps block of the mapping that starts at `addr`.
    fn smaps_of(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut out = String::new();
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, _)) = head.split_once('-')
                && !head.contains(':')
                && a.chars().all(|c| c.is_ascii_hexdigit())
            {
                inside = usize::from_str_radix(a, 16) == Ok(addr);
            }
            if inside {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn large_buffers_are_advised_as_huge_pages_on_a_huge_page_boundary() {
        let mut a = BufferArena::new(8, 1 << 20).unwrap();
        assert!(a.huge());
        assert_eq!(a.addr() % HUGE_PAGE, 0, "address {:#x}", a.addr());
        assert_eq!((a.slots(), a.slot_len()), (8, 1 << 20));
        for s in 0..8 {
            assert!(a.slot(s).iter().all(|&b| b == 0));
            a.slot_mut(s).fill(s as u8 + 1);
        }
        for s in 0..8 {
            assert!(a.slot(s).iter().all(|&b| b == s as u8 + 1), "slot {s}");
        }
        let block = smaps_of(a.addr());
        eprintln!("{block}");
        let flags = block
            .lines()
            .find_map(|l| l.strip_prefix("VmFlags:"))
            .unwrap_or_else(|| panic!("no VmFlags for {:#x} in:\n{block}", a.addr()));
        // "hg" is the VMA flag MADV_HUGEPAGE sets; the kernel reports it whether or not a huge
        // page could be had (that depends on free memory, so it is printed, not asserted).
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        match thp {
            Ok(t) if !t.contains("[never]") => assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "VmFlags:{flags} (THP {t:?})"
            ),
            other => eprintln!("THP is off here ({other:?}): only the layout is checked"),
        }
    }

    #[test]
    fn small_buffers_stay_on_ordinary_pages_and_round_up_to_a_page() {
        let a = BufferArena::new(32, 512).unwrap();
        assert!(!a.huge());
        assert_eq!(a.slot_len(), page_size() as usize);
        assert_eq!(a.addr() % page_size() as usize, 0);
        let block = smaps_of(a.addr());
        let flags = block.lines().find_map(|l| l.strip_prefix("VmFlags:"));
        assert!(
            flags.is_some_and(|f| !f.split_whitespace().any(|x| x == "hg")),
            "{block}"
        );
    }
}

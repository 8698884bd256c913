//! The blank test's whole read: every byte of a device, in order, at the device's speed, with
//! progress and a way to stop.

use super::*;
use std::fs::File;
use std::io;
use std::time::Instant;

/// Bytes per read of the whole read.
pub const WHOLE_CHUNK: usize = 1 << 20;

/// How long a whole read may take to be done without being asked for (`check`, and the check
/// before a write, read a device whole when the blank test's own rate says it takes no longer).
pub const WHOLE_BY_DEFAULT: f64 = 2.0;

/// How long a whole read of `size` bytes takes at the rate `blank` was read, if it says.
pub fn whole_read_estimate(blank: &Blank, size: u64) -> Option<f64> {
    match blank {
        Blank::Blank {
            bytes_read,
            seconds,
            ..
        } if *bytes_read > 0 && *seconds > 0.0 => Some(size as f64 * seconds / *bytes_read as f64),
        _ => None,
    }
}

/// Reads every byte of `f` (a device or image of `size` bytes; opened with O_DIRECT or not)
/// in [`WHOLE_CHUNK`] reads, and says what it holds: blank (read `Whole`) or the first byte of
/// data. `progress(bytes done)` is called after each read; when it answers false the read stops
/// and None is returned. A buffered `f` has what was read dropped from the page cache again.
pub fn read_whole(
    f: &File,
    size: u64,
    progress: &mut dyn FnMut(u64) -> bool,
) -> io::Result<Option<Blank>> {
    let t = Instant::now();
    let mut buf = crate::sys::AlignedBuf::new(WHOLE_CHUNK, 4096);
    let mut same = vec![0u8; WHOLE_CHUNK];
    let mut first = None;
    let mut pos = 0u64;
    while pos < size {
        // Whole 4 KiB blocks, so an O_DIRECT descriptor serves; the end comes back short.
        let want = ((size - pos).min(WHOLE_CHUNK as u64) as usize + 0xfff) & !0xfff;
        let got = read_into(f, &mut buf.as_mut_slice()[..want], pos)?;
        let _ = crate::sys::drop_cache_range(f, pos, got as u64);
        let got = got.min((size - pos) as usize);
        if got == 0 {
            break;
        }
        if let Some(at) = not_blank(&buf.as_slice()[..got], &mut first, &mut same) {
            return Ok(Some(Blank::Data { offset: pos + at }));
        }
        pos += got as u64;
        if !progress(pos) {
            return Ok(None);
        }
    }
    Ok(Some(match first {
        Some(byte) => Blank::Blank {
            byte,
            bytes_read: pos,
            read: Coverage::Whole,
            places: 1,
            seconds: t.elapsed().as_secs_f64(),
        },
        None => Blank::unknown("nothing could be read from it"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    fn zeros(size: u64) -> File {
        let f = tempfile::tempfile().unwrap();
        f.set_len(size).unwrap();
        f
    }

    #[test]
    fn whole_read_finds_data_between_the_samples_and_says_where() {
        // 40 MiB: samples every 1/65th, 48 KiB each; 20 MiB + 100 KiB lies between two.
        let size = 40u64 << 20;
        let at = (20 << 20) + (100 << 10) + 7;
        let f = zeros(size);
        f.write_all_at(b"x", at).unwrap();
        let sampled = scan_blank(&f, size, &Extra::default()).unwrap();
        assert!(matches!(sampled, Blank::Blank { .. }), "{sampled:?}");
        let mut calls = 0;
        let whole = read_whole(&f, size, &mut |_| {
            calls += 1;
            true
        })
        .unwrap();
        assert_eq!(whole, Some(Blank::Data { offset: at }));
        assert_eq!(calls, 20, "a progress call per MiB before the data");
    }

    #[test]
    fn whole_read_of_a_blank_image_counts_every_byte_and_can_stop() {
        let size = (3u64 << 20) + 512;
        let mut f = zeros(size);
        f.flush().unwrap();
        match read_whole(&f, size, &mut |_| true).unwrap() {
            Some(Blank::Blank {
                bytes_read, read, ..
            }) => {
                assert_eq!((bytes_read, read), (size, Coverage::Whole));
            }
            other => panic!("{other:?}"),
        }
        let mut seen = Vec::new();
        let stopped = read_whole(&f, size, &mut |n| {
            seen.push(n);
            n < 2 << 20
        })
        .unwrap();
        assert_eq!((stopped, seen), (None, vec![1 << 20, 2 << 20]));
    }

    #[test]
    fn estimate_scales_the_blank_tests_rate() {
        let b = Blank::Blank {
            byte: 0,
            bytes_read: 6 << 20,
            read: Coverage::Sampled,
            places: 96,
            seconds: 0.01,
        };
        let e = whole_read_estimate(&b, 600 << 20).unwrap();
        assert!((e - 1.0).abs() < 1e-9, "{e}");
        assert_eq!(whole_read_estimate(&Blank::Data { offset: 0 }, 1), None);
    }
}

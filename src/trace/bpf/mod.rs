//! Counting the block layer's I/O in the kernel: a BPF program, assembled here, on the
//! `block_bio_queue` raw tracepoint adds each bio's bytes to a map by device, process and
//! direction, and user space reads the map, not an event at a time. The first part of the plan
//! in docs/architecture.md ("Counting in the kernel: measured before it is built"); the trace
//! (`super`) does not use it yet.

pub mod asm;
pub mod btf;
mod count;

pub use count::{Counted, Counter};

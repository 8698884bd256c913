//! BPF programs of blkscope's own, assembled here (`asm`) at offsets from the kernel's BTF
//! (`btf`, `layout`: found once a boot and kept, `cached`), no compiler and no libbpf:
//! `events`, the trace's events written to a ring buffer
//! (what `super` reads by default), and `count`, each bio's bytes added to a map by device,
//! process and direction, read as a map and not an event at a time (built and tested, not yet
//! used: docs/architecture.md, "Counting in the kernel: measured before it is built").

pub mod asm;
pub mod btf;
mod cached;
mod count;
pub mod events;
pub mod layout;

pub use count::{Counted, Counter};
pub use events::{Events, Filter, Record, Which};

//! blkscope: test and watch Linux block devices honestly.
//!
//! - [`device`]: discovery of every block device from sysfs/procfs, on-disk signatures, and the
//!   safety check that stands before any write.
//! - [`engine`]: the I/O engine (io_uring, or pread/pwrite) that runs a job on a target and
//!   streams live samples.
//! - [`stats`]: /proc/diskstats in `iostat -x` terms, and findings that explain them.
//! - [`ui`]: the terminal UI, a view over state that the engine and the sampler feed.
//! - [`cli`]: the `blkscope` command line (the binary is a thin shell around it).
//!
//! The device and engine code know nothing of any user interface. `unsafe` lives only in [`sys`].
#![deny(unsafe_code)]

pub mod cli;
pub mod device;
pub mod engine;
pub mod error;
pub mod lab;
pub mod report;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod sysroot;
pub mod ui;
pub mod units;

pub use error::Error;
pub use sysroot::SysRoot;

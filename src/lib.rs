//! blkscope: test and watch Linux block devices honestly.
//!
//! The layers, each importing only from those below it:
//!
//! - [`cli`]: the `blkscope` command line (the binary is a thin shell around it): clap
//!   definitions, dispatch, one file per command.
//! - [`remote`]: many machines through the OpenSSH client: blkscope runs itself on each host.
//! - [`ui`]: the terminal UI, a view over state that the engine and the sampler feed.
//! - [`plot`]: charts as SVG and self-contained HTML reports (plotters).
//! - [`output`]: human formatting (sizes, rates, durations, tables, results) for both.
//! - [`doctor`]: findings about a device (SMART, other processes' I/O, alignment, settings).
//! - [`session`]: one path to run a test with repeats, or a suite, and save the outcome;
//!   [`suite`] (the suites' TOML and `explain`), [`runs`] (saved runs, reports, compare) and
//!   [`sweep`] (queue-depth and block-size sweeps, and their knee), [`lab`] (throwaway loop
//!   devices), [`tuning`] (schedulers and write caches changed by a
//!   suite, always put back).
//! - [`engine`]: the I/O engine (io_uring, or pread/pwrite) that runs a job on a target and
//!   streams live samples; a run's result and the findings that explain its diskstats.
//! - [`stats`]: /proc/diskstats in `iostat -x` terms.
//! - [`device`]: discovery of every block device from sysfs/procfs, on-disk signatures, and the
//!   safety check that stands before any write.
//! - [`sys`], [`sysroot`], [`units`], [`error`]: system calls, the sysfs/procfs root, units.
//!
//! Nothing below [`ui`] knows of any user interface. `unsafe` lives only in [`sys`].
#![deny(unsafe_code)]

pub mod cli;
pub mod device;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod lab;
pub mod output;
pub mod plot;
pub mod remote;
pub mod runs;
pub mod session;
pub mod stats;
pub mod suite;
pub mod sweep;
pub mod sys;
pub mod sysroot;
pub mod tuning;
pub mod ui;
pub mod units;

pub use error::Error;
pub use sysroot::SysRoot;

//! blkscope: test and watch Linux block devices honestly.
//!
//! The layers, each importing only from those below it (top first):
//!
//! - [`cli`]: the `blkscope` command line (the binary is a thin shell around it): clap
//!   definitions, dispatch, one file per command.
//! - [`ui`]: the terminal UI, a view over state that the engine and the sampler feed.
//! - [`output`], [`plot`], [`report`]: human formatting (sizes, rates, tables, results) for
//!   both; charts as SVG; reports of saved runs (Markdown, CSV, JSON, self-contained HTML).
//! - [`learn`]: lessons that predict, measure and explain, on the lab's devices: their TOML,
//!   the claims checked on the figures measured, the student's progress.
//! - [`session`]: one path to run a test with repeats, a suite or a sweep, and save the
//!   outcome; a run there is the engine's, then the read-back, then the analysis. [`remote`]:
//!   many machines through the OpenSSH client.
//! - [`runs`]: saved runs (typed, schema checked), their storage, compare and fleet tables.
//! - [`result`] (a test's result: the engine's figures with the analysis and the read-back),
//!   [`suite`] (suite definitions, TOML, and the built-in tests), [`doctor`] (findings about a
//!   device), [`lab`] (throwaway loop devices), [`tuning`] (schedulers and write caches changed
//!   by a suite, always put back).
//! - [`analysis`]: what a run's figures mean (diskstats findings, other processes, reads of
//!   unwritten blocks, the dd and fio lines, a sweep's knee), each taking a job, what was
//!   measured and counters, returning data. [`verify`]: reading back what a write put where.
//! - [`engine`]: runs a job on a target (io_uring, or pread/pwrite) and streams live samples;
//!   the target, the job threads, the data pattern, the figures. Nothing of what they mean.
//! - [`trace`]: the block layer's tracepoints in a tracefs instance of blkscope's own: who did
//!   each I/O on the devices under a test, and where its time went.
//! - [`stats`]: /proc/diskstats in `iostat -x` terms, and other processes' I/O.
//! - [`device`]: discovery of every block device from sysfs/procfs, on-disk signatures, and the
//!   safety check that stands before any write.
//! - [`sys`], [`sysroot`], [`units`], [`error`], [`xdg`]: system calls, the sysfs/procfs root,
//!   units, the user's directories.
//!
//! Nothing below [`ui`] knows of any user interface. `unsafe` lives only in [`sys`].
#![deny(unsafe_code)]

pub mod analysis;
pub mod cli;
pub mod device;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod lab;
pub mod learn;
pub mod output;
pub mod plot;
pub mod remote;
pub mod report;
pub mod result;
pub mod runs;
pub mod session;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod sysroot;
pub mod trace;
pub mod tuning;
pub mod ui;
pub mod units;
pub mod verify;
pub mod xdg;

pub use error::Error;
pub use sysroot::SysRoot;

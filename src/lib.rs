//! blkscope: test and watch Linux block devices honestly.
//!
//! The layers, each importing only from those below it (top first):
//!
//! - [`cli`]: the `blkscope` command line (the binary is a thin shell around it): clap
//!   definitions in shared groups, dispatch, the exit statuses, one file per command.
//! - [`ui`]: the terminal UIs, views over state that the engine and the sampler feed: the
//!   state and a table of keys per view (`app`), a file per pane and overlay (`render`), and
//!   the shell both the main TUI and the lessons' run in (terminal, events, signals, panics).
//! - [`output`], [`plot`], [`report`]: human formatting (a file per command's text, the
//!   findings reference), charts as SVG, reports of saved runs (Markdown, CSV, JSON, HTML).
//! - [`learn`]: lessons that predict, measure and explain, on the lab's devices: their TOML,
//!   the claims checked on the figures measured, the student's progress.
//! - [`session`]: one path to run a test with repeats, a suite or a sweep, and save the
//!   outcome; a run there is the engine's, then the read-back, then the analysis, with the
//!   analysis so far beside each live sample. [`remote`]: many machines through OpenSSH.
//! - [`runs`]: saved runs (typed, schema checked), their storage, compare and fleet tables.
//! - [`result`] (a test's result: the engine's figures with the analysis and the read-back),
//!   [`suite`] (suite definitions, TOML, and the built-in tests), [`doctor`] (SMART, who does
//!   I/O now, and the device checks, as findings), [`lab`] (throwaway loop devices),
//!   [`tuning`] (schedulers and write caches changed by a suite, always put back).
//! - [`analysis`]: what figures mean, as one findings model (a kind that carries its meaning,
//!   typed evidence, words written from it) with a file per source: diskstats, how the test
//!   ran, unwritten data, other processes, a device's settings; the same analysis live and at
//!   the end; the dd and fio lines; a sweep's knee. [`verify`]: reading back what a write put
//!   where, and capacity.
//! - [`engine`]: runs a job on a target (io_uring, or pread/pwrite) and streams live samples;
//!   the job and its validation, the target (block device, scratch file, named file), the job
//!   threads, the data pattern, the figures. Nothing of what they mean.
//! - [`trace`]: the block layer's tracepoints, by BPF programs of blkscope's own (or a tracefs
//!   instance): who did each I/O on the devices under a test, and where its time went.
//! - [`stats`]: /proc/diskstats in `iostat -x` terms, and other processes' I/O.
//! - [`device`]: discovery of every block device from sysfs/procfs, on-disk signatures (the
//!   probe, the blank test, hidden backups), and the safety check that stands before any write.
//! - [`sys`], [`sysroot`], [`units`], [`error`], [`xdg`]: system calls, the sysfs/procfs root,
//!   sizes and durations (printed and parsed), errors, the user's directories.
//!
//! The design decisions and their measurements: docs/architecture.md.
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

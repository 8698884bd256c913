//! The command line's definitions (clap derive): options, subcommands and their value parsers.
//! Nothing here runs anything.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::engine::job::SizeSpec;
use crate::engine::{Data, EngineKind, Job, Mode, Op};
use crate::units::{parse_duration, parse_interval, parse_size, parse_size_or_percent};

/// The headings options are grouped under in `--help`.
const TEST: &str = "Test";
const TARGET: &str = "Target and safety";
const OUTPUT: &str = "Output";
const HOSTS: &str = "Hosts";
const TUI: &str = "Terminal UI";
const READ_BACK: &str = "Read-back";

/// `0.1.0 (commit 1a2b3c4d5e6f)`: the version and the commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("BLKSCOPE_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "blkscope",
    version = VERSION,
    about = "Test and watch Linux block devices honestly",
    long_about = "Test and watch Linux block devices honestly.\n\n\
                  Without a subcommand blkscope opens its terminal UI: every block device with \
                  the properties that decide how to test it and a write-safety verdict, the \
                  built-in tests and the articles' suites, live throughput and latency beside \
                  /proc/diskstats in iostat -x terms, and results with the matching dd and fio \
                  command lines. Everything it does is also a headless command with JSON \
                  output.\n\n\
                  A write test never runs on a device that is mounted, used as swap or held \
                  (dm/md/LVM), needs the device's name typed back unless blkscope has seen it \
                  is blank, and holds the device open with O_EXCL while it runs. Reads are \
                  always allowed.",
    after_long_help = crate::cli::exit::help() + "\n\n\
                       Environment: NO_COLOR turns colour off in the TUI; \
                       BLKSCOPE_DISABLE_URING=1 uses pread/pwrite instead of io_uring; \
                       XDG_DATA_HOME and XDG_CONFIG_HOME place saved runs and user suites.\n\n\
                       Files: $XDG_DATA_HOME/blkscope/runs/*.json (saved runs, default \
                       ~/.local/share), $XDG_CONFIG_HOME/blkscope/suites/*.toml (your suites, \
                       default ~/.config), /run/blkscope (the lab's state, for cleanup after a \
                       crash)."
)]
pub struct Cli {
    /// Read sysfs and procfs under this directory instead of / (for fixture trees and chroots).
    #[arg(long, global = true, value_name = "DIR", env = "BLKSCOPE_ROOT")]
    pub root: Option<PathBuf>,

    /// Where the TUI's scratch file goes (default: the current directory).
    #[arg(long, value_name = "DIR", help_heading = TUI)]
    pub dir: Option<PathBuf>,

    /// Draw the TUI with ASCII and dot markers instead of line drawing and braille (automatic
    /// on TERM=linux, vt100 and dumb).
    #[arg(long, help_heading = TUI)]
    pub ascii: bool,

    /// Do not capture the mouse in the TUI (clicks select and the wheel scrolls otherwise);
    /// for terminals where capturing gets in the way of selecting text to copy.
    #[arg(long, global = true, help_heading = TUI)]
    pub no_mouse: bool,

    /// Do not trace the block layer while tests run (who did each I/O, where its time went);
    /// findings then cannot tell the test's I/O from another process's. Also
    /// BLKSCOPE_NO_TRACE=1.
    #[arg(long, global = true)]
    pub no_trace: bool,

    /// Run the command on this host instead of here, through the system's ssh
    /// ([USER@]HOST[:PORT]; repeatable; patterns as pdsh writes them: web[01-40], h[1-3,7],
    /// db1,db2): each host's blkscope does the work and decides safety there. With no command:
    /// the TUI, each host a node of the device tree.
    #[arg(long, global = true, value_name = "HOST", help_heading = HOSTS)]
    pub host: Vec<String>,

    /// Hosts from a file, one host or pattern a line (# comments).
    #[arg(long, global = true, value_name = "FILE", help_heading = HOSTS)]
    pub hosts_file: Option<PathBuf>,

    /// Hosts from an Ansible inventory (INI, YAML, or the JSON of ansible-inventory --list),
    /// all of them or one group with its children (FILE:GROUP); ansible_host, ansible_port and
    /// ansible_user say how to reach each. Repeatable.
    #[arg(long, global = true, value_name = "FILE[:GROUP]", help_heading = HOSTS)]
    pub inventory: Vec<String>,

    /// At most this many hosts at once (pdsh's -f; sshd takes 10 unauthenticated connections
    /// before it starts refusing some: MaxStartups).
    #[arg(long, global = true, value_name = "N", default_value_t = crate::remote::DEFAULT_FANOUT, value_parser = clap::value_parser!(u16).range(1..=1024), help_heading = HOSTS)]
    pub fanout: u16,

    /// Seconds to wait for a host to connect and greet (ssh's ConnectTimeout).
    #[arg(long, global = true, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=3600), help_heading = HOSTS)]
    pub connect_timeout: u32,

    /// Stop a host's command when it has not finished within this long (e.g. 5m); the others
    /// go on. Without it, as long as it takes.
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration, help_heading = HOSTS)]
    pub timeout: Option<std::time::Duration>,

    /// Copy a blkscope to each host for the run (to a private temporary directory, removed
    /// afterwards): this one, or the file given with --push=FILE (e.g. the static build).
    #[arg(long, global = true, value_name = "BINARY", num_args = 0..=1, require_equals = true, default_missing_value = "", help_heading = HOSTS)]
    pub push: Option<String>,

    /// An ssh config file for the hosts (ssh -F); ~/.ssh/config otherwise.
    #[arg(long, global = true, value_name = "FILE", help_heading = HOSTS)]
    pub ssh_config: Option<PathBuf>,

    /// The blkscope to run on the hosts (default: blkscope on their PATH).
    #[arg(long, global = true, value_name = "PATH", help_heading = HOSTS)]
    pub remote_blkscope: Option<String>,

    /// Redraw the TUI at most this many times a second.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=60), help_heading = TUI)]
    pub fps: u32,

    #[command(subcommand)]
    pub command: Option<Command>,
}

const RUN_EXAMPLES: &str = "Examples:
  blkscope run /dev/sdb --op randread --bs 4k --iodepth 32 --runtime 10s
  blkscope run . --op write --mode fdatasync     (a scratch file here)
  blkscope run /dev/sdb --op write --bs 4k --mode dsync --confirm sdb --json";

const SUITE_EXAMPLES: &str = "Examples:
  blkscope suites                              (what there is)
  blkscope suite fedora-four /dev/sdb --confirm sdb
  blkscope suite cache-trap . --repeat 5 --ndjson";

const DOCTOR_EXAMPLES: &str = "Examples:
  blkscope doctor                              (every disk)
  blkscope doctor /var/lib/mysql --json        (the device under a directory)
  blkscope doctor sda --watch --interval 2s    (who does I/O on it, by the block layer's trace)";

const LEARN_EXAMPLES: &str = "Examples:
  blkscope learn                               (the lessons' TUI)
  blkscope learn --list
  blkscope learn queue-depth --json            (headless: each claim checked on this machine)";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every block device, tree-ordered like lsblk, with its write safety.
    List {
        /// Print {"devices": [...]} as JSON.
        #[arg(long)]
        json: bool,
        /// The same JSON on one line (for scripts, and for --host's results as each host
        /// finishes).
        #[arg(long, conflicts_with = "json")]
        ndjson: bool,
        /// Do not read device nodes for signatures (faster; no root needed).
        #[arg(long)]
        no_signatures: bool,
        /// Draw the tree with ASCII instead of line-drawing characters.
        #[arg(long)]
        ascii: bool,
        /// Also list empty loop devices and RAM disks (lsblk hides them too).
        #[arg(long, short)]
        all: bool,
    },
    /// Say whether a write test may run on TARGET, and why.
    ///
    /// Exit status: 0 clear, 3 confirm (the device name must be typed back), 4 blocked.
    Check {
        /// A block device (/dev/sdb or sdb), a directory, or a regular file.
        target: String,
        /// Print {"target", "write_safety", "reasons": [...], "blank": {...}} as JSON.
        #[arg(long)]
        json: bool,
        /// The same JSON on one line (for scripts, and for --host's results as each host
        /// finishes).
        #[arg(long, conflicts_with = "json")]
        ndjson: bool,
        /// Read every byte of a device whose samples are blank before calling it clear, with
        /// a progress bar (Ctrl-C stops it; the sampled verdict then stands). Without it, a
        /// device is read whole only where that takes under about 2 s.
        #[arg(long)]
        full: bool,
    },
    /// Show /proc/diskstats in `iostat -x` terms, every interval (like `iostat -x -d -y`).
    Stat {
        /// Devices by name (sda) or path (/dev/sda), or a file or directory for the device
        /// that holds it (/var/lib/mysql); none means every whole device.
        devices: Vec<String>,
        /// Time between reports (e.g. 1s, 500ms).
        #[arg(long, default_value = "1s", value_parser = parse_interval)]
        interval: std::time::Duration,
        /// Stop after N reports (default: until Ctrl-C).
        #[arg(long, value_parser = parse_count)]
        count: Option<u64>,
        /// One JSON object per report: {"timestamp", "devices": [...]}, with sysstat's keys.
        #[arg(long)]
        json: bool,
    },
    /// Run a test on TARGET (a block device, a directory for a scratch file, or a file).
    ///
    /// Exit status: 0 done, 1 failed at run time, 2 invalid job, 3 confirmation missing,
    /// 4 blocked, 6 --verify read back something bad.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// List the suites: the articles' recipes, and yours from $XDG_CONFIG_HOME/blkscope/suites.
    Suites {
        #[arg(long)]
        json: bool,
    },
    /// Run a suite on TARGET, each test repeated (default: the suite's own count, usually 3).
    ///
    /// Exit status: as for run.
    #[command(after_help = SUITE_EXAMPLES)]
    Suite(SuiteArgs),
    /// Explain a suite or a test: the dd and fio lines, what each flag does, the trap it avoids,
    /// and what the article found. NAME: a suite, SUITE/TEST, or a built-in test (seq-write, ...).
    Explain {
        name: String,
        /// The target to put in the command lines.
        #[arg(long, default_value = "/dev/sdX")]
        target: String,
        /// The target's logical block size, for tests sized in logical blocks.
        #[arg(long, default_value_t = 512)]
        logical_block_size: u64,
    },
    /// List the saved runs, newest last: each id (which starts with its time), what ran and on
    /// what, and each test's throughput. An id, or a unique start of one, names the run to
    /// report or compare.
    Runs {
        /// How many of the newest to list.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        last: u64,
        #[arg(long)]
        json: bool,
    },
    /// Export a saved run (a path, an id, `last`, or `last~N` for the Nth before it) as Markdown,
    /// CSV or JSON.
    Report {
        run: String,
        /// md, csv, json, html (one self-contained page with every chart) or svg (one chart).
        #[arg(long, default_value = "md", value_parser = ["md", "csv", "json", "html", "svg"])]
        format: String,
        /// With --format svg: throughput, iops, heatmap, histogram or sweep (default: sweep for a
        /// sweep, throughput otherwise).
        #[arg(long, value_parser = ["throughput", "iops", "heatmap", "histogram", "sweep"])]
        chart: Option<String>,
        /// With --format svg: the test to draw (default: the first).
        #[arg(long, value_name = "NAME")]
        test: Option<String>,
        /// With --host: one table over the hosts' saved runs RUN: a row per host per test,
        /// the spread across hosts and the outliers named.
        #[arg(long)]
        fleet: bool,
    },
    /// Make throwaway loop devices (512- and 4096-byte sectors) to practise on, and open the TUI
    /// with them; everything is removed on exit (or at the next start, after a crash).
    Lab {
        /// Size of each lab device.
        #[arg(long, allow_hyphen_values = true, default_value = "256M", value_parser = parse_size)]
        size: u64,
        /// Give each device a GPT with two partitions.
        #[arg(long)]
        partitioned: bool,
        /// Print the devices as one JSON line and wait for Ctrl-C or SIGTERM instead of opening
        /// the TUI (for scripts).
        #[arg(long)]
        json: bool,
        /// Only remove labs left by a blkscope that did not exit cleanly.
        #[arg(long)]
        cleanup: bool,
        /// Directory for the devices' backing files. By default the first of $XDG_RUNTIME_DIR,
        /// $TMPDIR (or /tmp) and /var/tmp that is not a tmpfs: a lab in RAM measures memory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Lessons that predict, measure and explain, on throwaway lab devices: the question, your
    /// prediction, the tests with live charts, and the answer from the figures measured just
    /// now. Without arguments, the TUI on the list of lessons.
    #[command(after_help = LEARN_EXAMPLES)]
    Learn(LearnArgs),
    /// Compare two saved runs test by test: throughput, IOPS and latency, with the ratio. A run
    /// is a path, an id, `last`, `last~N` (the Nth before the newest), or HOST:RUN for a run
    /// saved on another host (through ssh).
    Compare {
        a: String,
        b: String,
        #[arg(long)]
        json: bool,
        /// text (default) or html (both runs on the same axes, test by test).
        #[arg(long, default_value = "text", value_parser = ["text", "html"])]
        format: String,
    },
    /// Sweep one test over queue depths (--qd 1,2,4,...) or block sizes (--bs 4k,64k,1M): IOPS,
    /// throughput and latency at each, and the knee where latency starts growing faster than
    /// throughput.
    Sweep(SweepArgs),
    /// Why is this disk slow, or dying? SMART (smartctl), the processes doing I/O on it now,
    /// alignment, the write cache, the scheduler and queue limits, each finding with what it
    /// means and what to do, worst first.
    ///
    /// Exit status: 0 no finding is a problem, 5 one is.
    #[command(after_help = DOCTOR_EXAMPLES)]
    Doctor {
        /// Devices by name (sda) or path, or a file or directory for the device that holds
        /// it (/var/lib/mysql); none means every disk.
        devices: Vec<String>,
        /// Print {"devices": [{"name", "path", "findings": [...]}]} as JSON (with --watch,
        /// one object per interval: {"seconds", "sampled", "lost", "rows": [...]}).
        #[arg(long)]
        json: bool,
        /// The same JSON on one line (for scripts, and for --host's results as each host
        /// finishes).
        #[arg(long, conflicts_with = "json")]
        ndjson: bool,
        /// A `top` of the processes doing I/O on the devices, from the block layer's trace:
        /// bytes read and written, IOPS and time in the device (D2C) per process, every
        /// interval, most first (root).
        #[arg(long)]
        watch: bool,
        /// With --watch: the time each table covers.
        #[arg(long, default_value = "1s", value_parser = parse_interval, requires = "watch")]
        interval: std::time::Duration,
        /// With --watch: stop after N tables (default: until Ctrl-C).
        #[arg(long, value_parser = parse_count, requires = "watch")]
        count: Option<u64>,
    },
    /// Read back what a write run put on TARGET (`--stamp RUN`: after a reboot or a power cut),
    /// or check a device's real capacity (`--capacity full|sampled`, destructive, as f3 does).
    ///
    /// Exit status: 0 everything came back, 6 something is bad (listed, with a map), 1-4 as
    /// for run.
    Verify(VerifyArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish, elvish or powershell).
    ///
    /// bash: `blkscope completions bash > /etc/bash_completion.d/blkscope`;
    /// zsh: into a directory on $fpath as `_blkscope`; fish: `~/.config/fish/completions/`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `blkscope man | man -l -`.
    Man,
}

/// What a write may overwrite: a device that carries data once its name is typed back, a
/// file when told.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = TARGET)]
pub struct Safety {
    /// The device name, typed back, to allow a write on a device that carries data (what
    /// `blkscope check` calls confirm).
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// Allow a write test to overwrite an existing regular file named as TARGET.
    #[arg(long)]
    pub force: bool,
}

/// How the results are printed and kept.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = OUTPUT)]
pub struct Output {
    /// Print the results as one JSON document at the end: {"version": 1, "target": {...},
    /// "results": [...]}.
    #[arg(long, conflicts_with = "ndjson")]
    pub json: bool,
    /// Stream JSON lines: {"type": "sample"} every interval ({"type": "progress"} as each test
    /// of a suite starts), then {"type": "result"} with what --json prints.
    #[arg(long)]
    pub ndjson: bool,
    /// Do not save the run in $XDG_DATA_HOME/blkscope/runs.
    #[arg(long)]
    pub no_save: bool,
}

#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// The suite (`blkscope suites` lists them).
    pub name: String,
    /// A block device, a directory (a scratch file is created there and removed), or a file.
    #[arg(help_heading = TARGET)]
    pub target: String,
    /// Runs of each test, 1 to 100 (default: the suite's own).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100), help_heading = TEST)]
    pub repeat: Option<u32>,
    /// Run every test on these CPUs, as `run --cpus` (over what the suite file says).
    #[arg(long, value_name = "LIST", value_parser = parse_cpus, help_heading = TEST)]
    pub cpus: Option<crate::engine::cpus::CpuList>,
    /// Allow `suite write-cache` to turn the device's write cache off (and back).
    #[arg(long, help_heading = TARGET)]
    pub allow_cache_toggle: bool,
    #[command(flatten)]
    pub safety: Safety,
    #[command(flatten)]
    pub output: Output,
    /// Read back and check what each write test (random data, not mixed) wrote.
    #[arg(long, help_heading = READ_BACK)]
    pub verify: bool,
}

#[derive(Debug, clap::Args)]
#[command(next_help_heading = TEST)]
pub struct SweepArgs {
    /// A block device, a directory (scratch file) or a file.
    #[arg(help_heading = TARGET)]
    pub target: String,
    /// Queue depths to sweep, e.g. 1,2,4,8,16,32 (one depth with a --bs list: the depth of
    /// that sweep).
    #[arg(long, value_name = "LIST", required_unless_present = "bs")]
    pub qd: Option<String>,
    /// Block sizes to sweep, e.g. 4k,16k,64k,256k,1M (one size with a --qd list: the block
    /// size of that sweep).
    #[arg(long, value_name = "LIST")]
    pub bs: Option<String>,
    /// The test (default: randread for --qd, read for --bs).
    #[arg(long, value_parser = parse_op)]
    pub op: Option<Op>,
    /// The block size of a --qd sweep (or give --bs 4k).
    #[arg(long, allow_hyphen_values = true, default_value = "4k", value_parser = parse_size, conflicts_with = "bs")]
    pub block: u64,
    /// The queue depth of a --bs sweep (or give --qd 8).
    #[arg(long, default_value_t = 1, conflicts_with = "qd")]
    pub depth: u32,
    /// How long each point runs.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub runtime: std::time::Duration,
    /// The region the I/Os cover (bytes or a percentage; for a directory, the scratch
    /// file's size).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_size_or_percent)]
    pub size: Option<crate::engine::job::Sized>,
    /// direct (O_DIRECT), dsync, sync, fdatasync, buffered or nocache, as `run --mode`.
    #[arg(long, default_value = "direct", value_parser = parse_mode)]
    pub mode: Mode,
    /// Run every point on these CPUs, as `run --cpus`.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<crate::engine::cpus::CpuList>,
    #[command(flatten)]
    pub safety: Safety,
    /// Print the sweep as JSON: its points, each a result, and the knee.
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,
    /// Do not save the sweep in $XDG_DATA_HOME/blkscope/runs.
    #[arg(long, help_heading = OUTPUT)]
    pub no_save: bool,
}

#[derive(Debug, clap::Args)]
pub struct LearnArgs {
    /// The lesson to run (`--list` names them); in the TUI, opened at its question.
    pub lesson: Option<String>,
    /// List the lessons, one line each (with when each was last done).
    #[arg(long)]
    pub list: bool,
    /// Run the lesson without the TUI and without a prediction; print each step's figures and
    /// whether each claim held, as JSON. Exit 0 when it ran, whatever the claims.
    #[arg(long)]
    pub json: bool,
    /// Size of each lab device.
    #[arg(long, allow_hyphen_values = true, default_value = "256M", value_parser = parse_size)]
    pub size: u64,
    /// Directory for the lab devices' backing files (as `lab --dir`).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
    /// Run each test N times (1 to 20; default: the lesson's `repeat`, else 3). The answer is
    /// taken from the medians; a claim the runs' spread could overturn is "not clear on this
    /// machine".
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=20))]
    pub repeat: Option<u16>,
    /// Do not save the lesson run to the progress kept in $XDG_DATA_HOME/blkscope/lessons.
    #[arg(long)]
    pub no_save: bool,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The device (or file) the run wrote to; for --capacity, a block device.
    pub target: String,
    /// A saved write run: a path, an id, or `last`.
    #[arg(long, value_name = "RUN", required_unless_present = "capacity")]
    pub stamp: Option<String>,
    /// Write stamped blocks over the whole device (full) or spread over it (sampled), read
    /// them back, and report the real usable size. Destroys what is on the device.
    #[arg(long, value_parser = ["full", "sampled"], conflicts_with = "stamp")]
    pub capacity: Option<String>,
    /// The device name, typed back, for --capacity on a device that carries data.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// Stop after this many I/O errors (the rest is not read).
    #[arg(long, default_value_t = 1000)]
    pub max_errors: u64,
    /// Print {"verify": {...}} (and "capacity") as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
#[command(next_help_heading = TEST)]
pub struct RunArgs {
    /// A block device (/dev/sdb), a directory (a scratch file is created there and removed), or
    /// an existing file (writes need --force).
    #[arg(help_heading = TARGET)]
    pub target: String,
    /// read, write, randread, randwrite or randrw (fio's --rw is accepted too).
    #[arg(long, visible_alias = "rw", default_value = "write", value_parser = parse_op)]
    pub op: Op,
    /// Block size: 512, 4k, 1M, 1G (K/M/G powers of 1024; KB/MB/GB powers of 1000).
    #[arg(long, allow_hyphen_values = true, default_value = "1M", value_parser = parse_size)]
    pub bs: u64,
    /// Bytes over all jobs, or a percentage of the device (default 1G, or the whole target if
    /// smaller; with --runtime, the whole target).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_size_or_percent)]
    pub size: Option<crate::engine::job::Sized>,
    /// Run for this long (e.g. 10s) instead of once over the size.
    #[arg(long, value_parser = parse_duration)]
    pub runtime: Option<std::time::Duration>,
    /// Run this long first without counting it (e.g. 2s).
    #[arg(long, value_parser = parse_duration)]
    pub ramp: Option<std::time::Duration>,
    /// I/Os in flight per job (io_uring); --qd as in `sweep --qd`.
    #[arg(long, visible_alias = "qd", default_value_t = 1)]
    pub iodepth: u32,
    /// Concurrent jobs (threads), each in its own region: job j starts at offset + j x region
    /// (fio's --numjobs is accepted too).
    #[arg(long, visible_alias = "numjobs", default_value_t = 1)]
    pub jobs: u32,
    /// Where the first region starts.
    #[arg(long, allow_hyphen_values = true, default_value = "0", value_parser = parse_size)]
    pub offset: u64,
    /// direct (O_DIRECT), dsync (O_DSYNC), sync (O_SYNC), fdatasync (buffered + fdatasync at the
    /// end, timed), buffered (no sync: measures RAM), nocache (reads after dropping the cache).
    #[arg(long, default_value = "direct", value_parser = parse_mode)]
    pub mode: Mode,
    /// random (incompressible, unique per block) or zero (compresses: flatters some storage).
    #[arg(long, default_value = "random", value_parser = parse_data)]
    pub data: Data,
    /// auto (the least overhead for the job: pread/pwrite at one I/O in flight per job, io_uring
    /// deeper or with --hipri/--sqpoll, polled (as --hipri) for direct I/O on a device with
    /// poll queues; at depth with blocks under 1 MiB where io_uring hands
    /// I/O to kernel workers, as on zram, the one that does more I/Os for its CPU in a short
    /// probe of each), uring (io_uring), psync (pread/pwrite), or null (no I/O: the harness's
    /// own ceiling).
    #[arg(long, default_value = "auto", value_parser = parse_engine)]
    pub engine: EngineKind,
    /// For randrw: percent of I/Os that read (default 50).
    #[arg(long)]
    pub rwmixread: Option<u8>,
    /// Use io_uring SQPOLL: a kernel thread polls the submission queue, and with more than
    /// one CPU the job polls for its completions, as fio's --sqthread_poll does (costs two
    /// cores).
    #[arg(long)]
    pub sqpoll: bool,
    /// Use io_uring IOPOLL: poll the device for completions instead of interrupts (needs
    /// --mode direct and a device with poll queues, e.g. NVMe with nvme.poll_queues=N).
    #[arg(long)]
    pub hipri: bool,
    /// Interval between live samples (--ndjson).
    #[arg(long, default_value = "100ms", value_parser = parse_interval, help_heading = OUTPUT)]
    pub interval: std::time::Duration,
    /// Run the test N times (1 to 1000) and report min/median/max.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Run the job threads, and the kernel worker threads io_uring hands their I/O to, only on
    /// these CPUs: 0, 0,2 or 0-3 (fio's --cpus_allowed, taskset -c).
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<crate::engine::cpus::CpuList>,
    #[command(flatten)]
    pub safety: Safety,
    #[command(flatten)]
    pub output: Output,
    /// After the writes, read every written sector back (O_DIRECT) and check its offset, run
    /// stamp and content; bad ranges are listed and the exit status is 6.
    #[arg(long, help_heading = READ_BACK)]
    pub verify: bool,
    /// Record in the saved run what was acknowledged, to check after a power cut or a reboot
    /// with `blkscope verify TARGET --stamp last` (use with --mode dsync).
    #[arg(long, conflicts_with = "no_save", help_heading = READ_BACK)]
    pub verify_later: bool,
    /// With --verify: stop reading back after this many I/O errors.
    #[arg(long, default_value_t = 1000, requires = "verify", help_heading = READ_BACK)]
    pub max_errors: u64,
}

/// `stat --count`: 0 would report nothing and exit at once.
fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err(
            "0 reports nothing: give 1 or more, or leave --count out to report until \
                      Ctrl-C"
                .into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "'{s}' is not a number of reports: use e.g. --count 5"
        )),
    }
}

fn parse_cpus(s: &str) -> Result<crate::engine::cpus::CpuList, String> {
    crate::engine::cpus::CpuList::parse(s)
}

fn parse_op(s: &str) -> Result<Op, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use read, write, randread, randwrite or randrw"))
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use direct, dsync, sync, fdatasync, buffered or nocache"))
}

fn parse_data(s: &str) -> Result<Data, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use random or zero"))
}

fn parse_engine(s: &str) -> Result<EngineKind, String> {
    match s.to_ascii_lowercase().as_str() {
        "auto" => Ok(EngineKind::Auto),
        "uring" | "io_uring" => Ok(EngineKind::Uring),
        "psync" | "sync" | "pread" => Ok(EngineKind::Psync),
        "null" => Ok(EngineKind::Null),
        _ => Err(format!("'{s}': use auto, uring, psync or null")),
    }
}

impl RunArgs {
    pub fn job(&self) -> Job {
        Job {
            op: self.op,
            bs: self.bs,
            iodepth: self.iodepth,
            jobs: self.jobs,
            offset: self.offset,
            size: self.size.map(SizeSpec::Text),
            runtime: self.runtime,
            ramp: self.ramp,
            mode: self.mode,
            data: self.data,
            engine: self.engine,
            rwmixread: self.rwmixread.unwrap_or(50),
            sqpoll: self.sqpoll,
            interval: Some(self.interval),
            drop_cache_first: false,
            verify: self.verify || self.verify_later,
            hipri: self.hipri,
            max_errors: Some(self.max_errors),
            cpus: self.cpus.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cpus::CpuList;
    use std::time::Duration;

    /// The `blkscope run` line that explain and the results show runs the same job again:
    /// parsed back, it gives every setting of the job it was made from.
    #[test]
    fn the_shown_blkscope_line_runs_the_same_job() {
        let base = Job::default();
        let jobs = [
            base.clone(),
            Job {
                op: Op::Randrw,
                bs: 4096,
                iodepth: 32,
                jobs: 4,
                offset: 1 << 20,
                size: Some(SizeSpec::Bytes(64 << 20)),
                runtime: Some(Duration::from_millis(1500)),
                ramp: Some(Duration::from_secs(2)),
                mode: Mode::Dsync,
                data: Data::Zero,
                rwmixread: 70,
                sqpoll: true,
                hipri: true,
                cpus: Some(CpuList::parse("0,2-3").unwrap()),
                ..base.clone()
            },
            Job {
                op: Op::Read,
                bs: 512,
                engine: EngineKind::Psync,
                runtime: Some(Duration::from_secs(10)),
                ..base.clone()
            },
        ];
        // The device is 256 MiB; callers pass the job's resolved total size.
        let size = |j: &Job| j.size.map(|s| s.resolve(256 << 20)).unwrap_or(256 << 20);
        for job in jobs {
            let line = crate::analysis::explain::blkscope_command(&job, "/dev/sdX", size(&job));
            println!("{line}");
            let cli =
                Cli::try_parse_from(line.split(' ')).unwrap_or_else(|e| panic!("{line}: {e}"));
            let Some(Command::Run(args)) = cli.command else {
                panic!("{line}: not a run");
            };
            let back = args.job();
            assert_eq!(
                (
                    back.op,
                    back.bs,
                    back.iodepth,
                    back.jobs,
                    back.offset,
                    size(&back)
                ),
                (
                    job.op,
                    job.bs,
                    job.iodepth,
                    job.jobs,
                    job.offset,
                    size(&job)
                ),
                "{line}"
            );
            assert_eq!((back.runtime, back.ramp), (job.runtime, job.ramp), "{line}");
            assert_eq!(
                (back.mode, back.data, back.engine),
                (job.mode, job.data, job.engine),
                "{line}"
            );
            assert_eq!(
                (back.rwmixread, back.sqpoll, back.hipri, &back.cpus),
                (job.rwmixread, job.sqpoll, job.hipri, &job.cpus),
                "{line}"
            );
        }
    }
}

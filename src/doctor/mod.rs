//! `blkscope doctor`: why is this disk slow, or dying? For each device, findings worst first,
//! each with what it means and what to do:
//!
//! - [`smart`]: health from the real smartmontools (`smartctl --json=c -x`), or why there is
//!   none (`smart_unavailable`).
//! - `busy_processes`: who else is doing I/O now ([`crate::stats::procs`], about one second).
//! - what the device's settings mean for a test: the checks of
//!   [`crate::analysis::findings::device`] (`backing_cache`, `never_written`, `misaligned`,
//!   `write_cache`, `scheduler`, `queue_limits`, `stats_off`, `in_use`, ...).
//!
//! Its findings are the one [`Finding`] model, each rated with a [`Severity`].

pub mod smart;
pub mod watch;

use serde::Serialize;

use crate::device::{DeviceTree, DiscoverOptions};
use crate::sysroot::SysRoot;

pub use crate::analysis::findings::{Evidence, Finding, Kind, Severity};

/// The findings of one device, worst first.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    pub name: String,
    pub path: String,
    /// The file or directory named for it: the device holds its file system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holds: Option<String>,
    pub findings: Vec<Finding>,
}

impl DeviceReport {
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity()).max()
    }
}

/// What to look at, and how.
pub struct Options {
    /// How long to watch processes' I/O.
    pub sample: std::time::Duration,
    /// The smartctl to run (`smartctl` on PATH unless given).
    pub smartctl: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            sample: std::time::Duration::from_millis(1000),
            smartctl: std::env::var("BLKSCOPE_SMARTCTL").unwrap_or_else(|_| "smartctl".into()),
        }
    }
}

/// The devices named (kernel names, /dev paths, or a file or directory for the device
/// holding it: then with the path), or every whole disk when none is.
fn chosen(
    root: &SysRoot,
    tree: &DeviceTree,
    names: &[String],
) -> Result<Vec<(String, Option<String>)>, crate::Error> {
    if names.is_empty() {
        return Ok(tree
            .listed(false)
            .devices
            .iter()
            .filter(|d| d.depth == 0 && d.size_bytes > 0)
            .map(|d| (d.name.clone(), None))
            .collect());
    }
    names
        .iter()
        .map(|n| match tree.named(root, n) {
            Ok((name, held)) => Ok((name, held.then(|| n.clone()))),
            Err(detail) => Err(crate::Error::UnknownDevice {
                path: std::path::PathBuf::from(n),
                detail,
            }),
        })
        .collect()
}

/// Who is doing I/O now, over one sample: by the block layer's trace of the devices where it can
/// be had (root, tracefs: exact bytes per device, and each process's time in the device), by
/// /proc/PID/io otherwise (tied to a device when the process holds it open).
enum Busy {
    Traced(watch::Interval),
    Proc(Vec<crate::stats::procs::BusyProcess>),
}

fn busy_now(
    root: &SysRoot,
    tree: &DeviceTree,
    wanted: &[(String, Option<String>)],
    opts: &Options,
) -> Busy {
    let mut names: Vec<String> = Vec::new();
    for (n, _) in wanted {
        for r in crate::stats::related(tree, n) {
            if !names.contains(&r) {
                names.push(r);
            }
        }
    }
    if root.is_live()
        && crate::trace::wanted()
        && let Ok(iv) = watch::watch_once(
            root,
            &names,
            opts.sample,
            &std::sync::atomic::AtomicBool::new(false),
        )
    {
        return Busy::Traced(iv);
    }
    let a = crate::stats::procs::ProcSnapshot::read(root);
    std::thread::sleep(opts.sample);
    let b = crate::stats::procs::ProcSnapshot::read(root);
    let mut busy = crate::stats::procs::busy(root, &a, &b, &[std::process::id()]);
    crate::stats::procs::tie_to_devices(root, &mut busy, tree);
    Busy::Proc(busy)
}

/// The processes doing I/O on a device's family now, worst first, named with where the figures
/// came from.
fn busy_finding(busy: &Busy, family: &[String]) -> Option<Finding> {
    let fmt = |b: f64| crate::units::fmt_size(b as u64);
    let (list, procs, source): (Vec<String>, serde_json::Value, &str) = match busy {
        Busy::Traced(iv) => {
            let rows: Vec<&watch::TopRow> = iv
                .rows
                .iter()
                .filter(|r| !r.kernel && r.pid != std::process::id() && family.contains(&r.device))
                .collect();
            let list = rows
                .iter()
                .map(|r| {
                    format!(
                        "{} (pid {}) on {} {}/s read, {}/s written, {:.0} IOPS{}",
                        r.comm,
                        r.pid,
                        r.device,
                        fmt(r.read_bytes_per_sec),
                        fmt(r.write_bytes_per_sec),
                        r.iops,
                        r.d2c_mean_us
                            .map(|us| format!(", {us:.0} us in the device"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            let procs = rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "pid": r.pid, "comm": r.comm, "devices": [r.device],
                        "read_bytes_per_sec": r.read_bytes_per_sec,
                        "write_bytes_per_sec": r.write_bytes_per_sec,
                        "iops": r.iops, "d2c_mean_us": r.d2c_mean_us,
                    })
                })
                .collect();
            (list, procs, "the block layer's trace")
        }
        Busy::Proc(busy) => {
            let mine: Vec<&crate::stats::procs::BusyProcess> = busy
                .iter()
                .filter(|p| p.devices.iter().any(|x| family.contains(x)))
                .collect();
            let list = mine
                .iter()
                .map(|p| {
                    format!(
                        "{} (pid {}) {}/s read, {}/s written",
                        p.comm,
                        p.pid,
                        fmt(p.read_bytes_per_sec),
                        fmt(p.write_bytes_per_sec)
                    )
                })
                .collect();
            (list, serde_json::json!(mine), "/proc/PID/io")
        }
    };
    if list.is_empty() {
        return None;
    }
    let shown: Vec<&str> = list.iter().take(5).map(String::as_str).collect();
    let numbers = Evidence::from_json(serde_json::json!({ "processes": procs, "source": source }));
    Some(
        Finding::new(Kind::BusyProcesses, numbers, |_| {
            format!(
                "other processes are doing I/O on it now ({source}): {}. A test run now \
                 measures what is left over; stop them or expect the figures to move",
                shown.join("; ")
            )
        })
        .rated(Severity::Warning),
    )
}

/// Examines each named device (every whole disk when none): SMART, the processes doing I/O,
/// and the device's settings. Findings come worst first.
pub fn examine(
    root: &SysRoot,
    names: &[String],
    opts: &Options,
) -> Result<Vec<DeviceReport>, crate::Error> {
    // Properties only: the doctor reads no device node (its reads would show up as I/O).
    let tree = crate::device::discover(
        root,
        &DiscoverOptions {
            skip_signatures: true,
            ..Default::default()
        },
    )?;
    let wanted = chosen(root, &tree, names)?;
    // Who is doing I/O: one sample over `opts.sample`, shared by all devices.
    let busy = busy_now(root, &tree, &wanted, opts);
    let mut out = Vec::new();
    for (name, holds) in wanted {
        let d = tree.get(&name).expect("chosen from the tree");
        let mut findings = smart::examine(root, &tree, d, &opts.smartctl);
        findings.extend(crate::analysis::findings::device::examine(
            &crate::analysis::findings::device::Context {
                root,
                tree: &tree,
                device: d,
            },
        ));
        let family: Vec<String> = crate::stats::related(&tree, &name);
        findings.extend(busy_finding(&busy, &family));
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity()));
        out.push(DeviceReport {
            name: d.name.clone(),
            path: d.path.display().to_string(),
            holds,
            findings,
        });
    }
    Ok(out)
}

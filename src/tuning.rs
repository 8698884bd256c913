//! Settings a suite changes and must put back: a device's I/O scheduler and its write cache.
//! The original is always restored: when the [`Tweak`] is dropped (the suite ends, Ctrl-C,
//! SIGTERM, SIGHUP, a panic), and, after a `kill -9`, at the next start of blkscope from the
//! state file each tweak leaves in `/run/blkscope/tweaks` ([`restore_stale`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sysroot::SysRoot;

pub const STATE_DIR: &str = "/run/blkscope/tweaks";

/// How a setting is changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    /// `/sys/block/NAME/queue/scheduler`.
    Scheduler,
    /// The kernel's view of the write cache, `/sys/block/NAME/queue/write_cache` ("write back"
    /// or "write through"): whether the kernel sends flushes. For virtual devices (loop,
    /// virtio) that have no cache of their own to switch.
    KernelWriteCache,
    /// The drive's volatile write cache through hdparm -W (ATA).
    Hdparm,
    /// ... through `nvme set-feature -f 6` (NVMe).
    Nvme,
    /// ... through `sdparm --set WCE` (SCSI, SAS, USB bridges).
    Sdparm,
}

/// What a state file records: enough to put the setting back without the process that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    pid: u32,
    device: String,
    knob: Knob,
    original: String,
}

/// A changed setting, put back on drop.
pub struct Tweak {
    root: SysRoot,
    state: State,
    file: PathBuf,
}

fn run_tool(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(cmd)
        .args(args)
        .env("PATH", crate::lab::sbin_path())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!("{cmd} is not installed")
            } else {
                format!("{cmd}: {e}")
            }
        })?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Reads the current value of `knob` on `device` ("mq-deadline"; "on"/"off" for caches).
pub fn read(root: &SysRoot, device: &str, knob: &Knob) -> Result<String, String> {
    let attr = |a: &str| {
        std::fs::read_to_string(root.sys(format!("block/{device}/queue/{a}")))
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("{device}: {a}: {e}"))
    };
    let dev = format!("/dev/{device}");
    match knob {
        Knob::Scheduler => {
            let s = attr("scheduler")?;
            crate::device::active_scheduler(&s).ok_or_else(|| format!("{device}: no scheduler"))
        }
        Knob::KernelWriteCache => Ok(if attr("write_cache")? == "write back" {
            "on".into()
        } else {
            "off".into()
        }),
        Knob::Hdparm => {
            let out = run_tool("hdparm", &["-W", &dev])?;
            Ok(if out.contains("= 1") || out.contains("(on)") {
                "on".into()
            } else {
                "off".into()
            })
        }
        Knob::Nvme => {
            let out = run_tool("nvme", &["get-feature", "-f", "6", &dev])?;
            Ok(
                if out.contains("0x00000001") || out.trim_end().ends_with('1') {
                    "on".into()
                } else {
                    "off".into()
                },
            )
        }
        Knob::Sdparm => {
            let out = run_tool("sdparm", &["--get", "WCE", &dev])?;
            Ok(if out.contains("WCE         1") || out.contains("WCE 1") {
                "on".into()
            } else {
                "off".into()
            })
        }
    }
}

/// Sets `knob` on `device` to `value`.
pub fn write(root: &SysRoot, device: &str, knob: &Knob, value: &str) -> Result<(), String> {
    let dev = format!("/dev/{device}");
    let sysfs = |a: &str, v: &str| {
        std::fs::write(root.sys(format!("block/{device}/queue/{a}")), v)
            .map_err(|e| format!("{device}: writing {v:?} to queue/{a}: {e}"))
    };
    let on = value == "on";
    match knob {
        Knob::Scheduler => sysfs("scheduler", value),
        Knob::KernelWriteCache => sysfs(
            "write_cache",
            if on { "write back" } else { "write through" },
        ),
        Knob::Hdparm => run_tool("hdparm", &[if on { "-W1" } else { "-W0" }, &dev]).map(|_| ()),
        Knob::Nvme => run_tool(
            "nvme",
            &[
                "set-feature",
                "-f",
                "6",
                "-v",
                if on { "1" } else { "0" },
                &dev,
            ],
        )
        .map(|_| ()),
        Knob::Sdparm => run_tool(
            "sdparm",
            &[if on { "--set" } else { "--clear" }, "WCE", &dev],
        )
        .map(|_| ()),
    }
}

fn state_file(device: &str, knob: &Knob) -> PathBuf {
    let k = serde_json::to_value(knob)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    Path::new(STATE_DIR).join(format!("{device}-{k}.json"))
}

impl Tweak {
    /// Records the original value of `knob` on `device` (in memory and in a state file) before
    /// anything is changed.
    pub fn begin(root: &SysRoot, device: &str, knob: Knob) -> Result<Self, String> {
        let original = read(root, device, &knob)?;
        let state = State {
            pid: std::process::id(),
            device: device.to_string(),
            knob,
            original,
        };
        let file = state_file(device, &state.knob);
        if root.is_live() {
            std::fs::create_dir_all(STATE_DIR).map_err(|e| format!("{STATE_DIR}: {e}"))?;
            let text = serde_json::to_string(&state).map_err(|e| e.to_string())?;
            std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        Ok(Self {
            root: root.clone(),
            state,
            file,
        })
    }

    pub fn original(&self) -> &str {
        &self.state.original
    }

    pub fn set(&self, value: &str) -> Result<(), String> {
        write(&self.root, &self.state.device, &self.state.knob, value)
    }
}

impl Drop for Tweak {
    fn drop(&mut self) {
        let s = &self.state;
        if write(&self.root, &s.device, &s.knob, &s.original).is_ok() {
            let _ = std::fs::remove_file(&self.file);
        }
    }
}

/// Puts back the settings of tweaks whose process is gone (killed with -9); returns what it
/// restored, as (device, what, value).
pub fn restore_stale(root: &SysRoot) -> Vec<(String, String, String)> {
    let mut done = Vec::new();
    let Ok(rd) = std::fs::read_dir(STATE_DIR) else {
        return done;
    };
    for e in rd.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(s) = serde_json::from_str::<State>(&text) else {
            continue;
        };
        if s.pid == std::process::id() || crate::sys::pid_alive(s.pid) {
            continue;
        }
        if write(root, &s.device, &s.knob, &s.original).is_ok() {
            let _ = std::fs::remove_file(e.path());
            let what = serde_json::to_value(s.knob)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            done.push((s.device, what, s.original));
        }
    }
    done
}

/// How the write cache of `d` is switched: the drive's own through its tool, by transport,
/// or the kernel's view for virtual devices.
pub fn cache_knob(d: &crate::device::Device) -> Knob {
    use crate::device::Kind;
    match (d.kind, d.transport.as_deref()) {
        (Kind::Nvme, _) => Knob::Nvme,
        (Kind::Disk, Some("sata" | "ata")) => Knob::Hdparm,
        (Kind::Disk, Some("sas" | "scsi" | "usb" | "fc" | "iscsi")) => Knob::Sdparm,
        _ => Knob::KernelWriteCache,
    }
}

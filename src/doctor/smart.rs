//! SMART health from the real smartmontools: `smartctl --json=c -x DEVICE` (version 7 or
//! later prints JSON), read as smartctl prints it for ATA, NVMe and SCSI devices. No hand-made
//! ATA or NVMe pass-through: smartctl knows the drives' quirks and the database of attributes.

use serde_json::{Value, json};

use super::{Evidence, Finding, Kind as Found, Severity};
use crate::device::{Device, DeviceTree, Kind};
use crate::sysroot::SysRoot;

/// Why there is no SMART: in smartctl's words or the system's where they say it, which are the
/// finding's evidence too (a version, an errno).
fn unavailable(why: String) -> Vec<Finding> {
    let e = Evidence::new().with("why", why.as_str());
    vec![Finding::new(Found::SmartUnavailable, e, |_| why).rated(Severity::Info)]
}

/// The SMART findings of a device: runs smartctl for a disk (a partition's disk), says why
/// there is no SMART for a virtual device.
pub fn examine(root: &SysRoot, tree: &DeviceTree, d: &Device, smartctl: &str) -> Vec<Finding> {
    let disk = tree.whole(d);
    let virtual_kind = match disk.kind {
        Kind::Loop => Some("a loop device"),
        Kind::Zram => Some("a zram device (compressed RAM)"),
        Kind::Ram => Some("a RAM disk"),
        Kind::Dm => Some("a device-mapper device"),
        Kind::Md => Some("an md RAID device"),
        _ => None,
    };
    if let Some(what) = virtual_kind {
        let below = tree.below(&disk.name);
        let under = if below.is_empty() {
            String::new()
        } else {
            format!(
                "; check the devices under it: {}",
                below
                    .iter()
                    .map(|x| x.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return unavailable(format!("no SMART: {} is {what}{under}", disk.name));
    }
    // In a fixture tree only a smartctl named explicitly (BLKSCOPE_SMARTCTL) is run.
    if !root.is_live() && smartctl == "smartctl" {
        return unavailable("no SMART in a fixture tree (--root)".into());
    }
    let out = match std::process::Command::new(smartctl)
        .args(["--json=c", "-x"])
        .arg(&disk.path)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unavailable(
                "smartctl is not installed: install smartmontools (apt-get install \
                 smartmontools, dnf install smartmontools) to read SMART"
                    .into(),
            );
        }
        Err(e) => return unavailable(format!("cannot run {smartctl}: {e}")),
    };
    let v: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(_) => {
            return unavailable(format!(
                "{smartctl} printed no JSON: smartmontools 7 or later is needed for --json"
            ));
        }
    };
    parse(&v, &disk.name)
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The raw value of an ATA attribute by id.
fn ata_raw(v: &Value, id: u64) -> Option<u64> {
    v["ata_smart_attributes"]["table"]
        .as_array()?
        .iter()
        .find(|a| a["id"].as_u64() == Some(id))
        .and_then(|a| a["raw"]["value"].as_u64())
}

/// Findings from smartctl's JSON for the disk `name`.
pub fn parse(v: &Value, name: &str) -> Vec<Finding> {
    if let Some(f) = unreadable(v, name) {
        return f;
    }
    let protocol = v["device"]["protocol"].as_str().unwrap_or("");
    let mut numbers = json!({ "protocol": protocol });
    if let Some(m) = v["model_name"].as_str() {
        numbers["model"] = m.into();
    }
    let temp = num(&v["temperature"]["current"]);
    let hours = num(&v["power_on_time"]["hours"]);
    if let Some(t) = temp {
        numbers["temperature_c"] = t.into();
    }
    if let Some(h) = hours {
        numbers["power_on_hours"] = h.into();
    }
    let mut out: Vec<Finding> = overall_health(v, &numbers).into_iter().collect();
    let mut push = |sev: Severity, msg: String, n: Value| {
        out.push(smart(sev, msg, n));
    };
    ata_attributes(v, &mut push);
    nvme_health(v, &mut push);
    scsi_counters(v, &mut push);
    temperature(temp, &mut push);
    let worst = out.iter().map(|f| f.severity()).max();
    if worst.is_none_or(|w| w == Severity::Info) {
        let mut parts = vec![format!("{protocol} drive: SMART health passed")];
        if let Some(t) = temp {
            parts.push(format!("{t:.0} C"));
        }
        if let Some(h) = hours {
            parts.push(format!("{h:.0} power-on hours"));
        }
        out.push(smart(Severity::Info, parts.join(", "), numbers));
    }
    out
}

/// A SMART finding: how much it matters, its words and the figures smartctl gave.
fn smart(severity: Severity, message: String, numbers: Value) -> Finding {
    Finding::new(Found::Smart, Evidence::from_json(numbers), |_| message).rated(severity)
}

/// Where a finding goes: its severity, its words and its numbers.
type Push<'a> = dyn FnMut(Severity, String, Value) + 'a;

/// When smartctl could not read the device at all: why, in one finding.
fn unreadable(v: &Value, name: &str) -> Option<Vec<Finding>> {
    let msgs: Vec<String> = v["smartctl"]["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|x| x["string"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let exit = v["smartctl"]["exit_status"].as_u64().unwrap_or(0);
    // Bits 0 and 1: the command line did not parse, or the device could not be opened.
    if exit & 0b11 == 0 || !v["smart_status"].is_null() {
        return None;
    }
    let why = msgs.join("; ");
    let hint = if why.contains("Permission denied") || why.contains("Operation not permitted") {
        ": smartctl needs root (sudo)"
    } else if why.contains("Unable to detect device type") {
        ": the device reports no SMART (virtual disks such as virtio do not)"
    } else {
        ""
    };
    Some(unavailable(format!(
        "smartctl could not read {name}: {why}{hint}"
    )))
}

/// The drive's own verdict: failed, or not reported.
fn overall_health(v: &Value, numbers: &Value) -> Option<Finding> {
    match v["smart_status"]["passed"].as_bool() {
        Some(false) => Some(smart(
            Severity::Problem,
            "SMART overall health: FAILED. The drive predicts its own failure: copy the \
                 data off now, then replace it; do not run write tests on it"
                .into(),
            numbers.clone(),
        )),
        Some(true) => None,
        None => Some(smart(
            Severity::Info,
            "SMART overall health not reported (SMART may be disabled: smartctl -s on)".into(),
            json!({}),
        )),
    }
}

/// ATA attributes: reallocated, pending and uncorrectable sectors, CRC errors, the error log.
fn ata_attributes(v: &Value, push: &mut Push) {
    if let Some(n) = ata_raw(v, 5).filter(|&n| n > 0) {
        push(
            if n >= 100 {
                Severity::Problem
            } else {
                Severity::Warning
            },
            format!(
                "{n} reallocated sectors: the drive has replaced bad sectors with spares; a \
                 growing count means the surface is failing"
            ),
            json!({ "reallocated_sectors": n }),
        );
    }
    if let Some(n) = ata_raw(v, 197).filter(|&n| n > 0) {
        push(
            Severity::Problem,
            format!(
                "{n} pending sectors: the drive could not read them and waits to reallocate \
                 them; what was there may be lost. Back up now"
            ),
            json!({ "pending_sectors": n }),
        );
    }
    if let Some(n) = ata_raw(v, 198).filter(|&n| n > 0) {
        push(
            Severity::Problem,
            format!("{n} offline-uncorrectable sectors: unreadable even in the drive's own scan"),
            json!({ "offline_uncorrectable": n }),
        );
    }
    if let Some(n) = ata_raw(v, 199).filter(|&n| n > 0) {
        push(
            Severity::Warning,
            format!(
                "{n} UDMA CRC errors: data was corrupted on the way between drive and host: a \
                 cable or connector, not the disk. Reseat or replace the SATA cable"
            ),
            json!({ "udma_crc_errors": n }),
        );
    }
    let ata_errors = v["ata_smart_error_log"]["extended"]["count"]
        .as_u64()
        .or_else(|| v["ata_smart_error_log"]["summary"]["count"].as_u64());
    if let Some(n) = ata_errors.filter(|&n| n > 0) {
        push(
            Severity::Warning,
            format!(
                "{n} entries in the drive's error log: it has failed commands (smartctl -x \
                 shows them)"
            ),
            json!({ "error_log_entries": n }),
        );
    }
}

/// What the bits of an NVMe critical warning say (NVMe base specification, SMART / Health
/// Information log, byte 0).
pub fn critical_warning_bits(w: u64) -> Vec<&'static str> {
    const BITS: [&str; 6] = [
        "the spare capacity is below its threshold",
        "a temperature is outside its thresholds",
        "reliability is degraded by media errors",
        "the media is read-only",
        "the volatile memory backup failed",
        "the persistent memory region is read-only",
    ];
    let mut v: Vec<&str> = BITS
        .iter()
        .enumerate()
        .filter(|(i, _)| w >> i & 1 == 1)
        .map(|(_, b)| *b)
        .collect();
    if w >> 6 != 0 {
        v.push("a bit this version does not know");
    }
    v
}

/// The NVMe health log: critical warning, endurance, media errors, unsafe shutdowns.
fn nvme_health(v: &Value, push: &mut Push) {
    let h = &v["nvme_smart_health_information_log"];
    if !h.is_object() {
        return;
    }
    if let Some(w) = h["critical_warning"].as_u64().filter(|&w| w != 0) {
        push(
            Severity::Problem,
            format!(
                "NVMe critical warning {w:#x}: {}; back up now",
                critical_warning_bits(w).join(", ")
            ),
            json!({ "critical_warning": w }),
        );
    }
    if let Some(p) = h["percentage_used"].as_u64() {
        let sev = match p {
            100.. => Severity::Problem,
            80..=99 => Severity::Warning,
            _ => Severity::Info,
        };
        push(
            sev,
            format!("{p}% of the rated write endurance used"),
            json!({ "percentage_used": p }),
        );
    }
    if let Some(n) = h["media_errors"].as_u64().filter(|&n| n > 0) {
        push(
            Severity::Problem,
            format!("{n} media errors: data the drive could not read or write correctly"),
            json!({ "media_errors": n }),
        );
    }
    if let Some(n) = h["unsafe_shutdowns"].as_u64().filter(|&n| n > 0) {
        push(
            Severity::Info,
            format!(
                "{n} unsafe shutdowns (power lost without a flush): each may have lost \
                 data in a volatile cache"
            ),
            json!({ "unsafe_shutdowns": n }),
        );
    }
    if let Some(n) = h["num_err_log_entries"].as_u64().filter(|&n| n > 0) {
        push(
            Severity::Info,
            format!("{n} entries in the NVMe error log (nvme error-log shows them)"),
            json!({ "error_log_entries": n }),
        );
    }
}

/// SCSI: grown defects and uncorrected errors.
fn scsi_counters(v: &Value, push: &mut Push) {
    if let Some(n) = v["scsi_grown_defect_list"].as_u64().filter(|&n| n > 0) {
        push(
            Severity::Warning,
            format!("{n} grown defects: blocks the drive has remapped since it was made"),
            json!({ "grown_defects": n }),
        );
    }
    let uncorrected: u64 = ["read", "write", "verify"]
        .iter()
        .filter_map(|k| v["scsi_error_counter_log"][k]["total_uncorrected_errors"].as_u64())
        .sum();
    if uncorrected > 0 {
        push(
            Severity::Problem,
            format!("{uncorrected} uncorrected errors in the SCSI error counters"),
            json!({ "uncorrected_errors": uncorrected }),
        );
    }
}

/// A drive running hot.
fn temperature(temp: Option<f64>, push: &mut Push) {
    if let Some(t) = temp.filter(|&t| t >= 60.0) {
        push(
            if t >= 70.0 {
                Severity::Problem
            } else {
                Severity::Warning
            },
            format!("{t:.0} C: hot; drives throttle (and age faster) above about 60 C"),
            json!({ "temperature_c": t, "hot_above_c": 60 }),
        );
    }
}

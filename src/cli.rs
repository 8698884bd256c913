//! The `blkscope` command line: clap definitions and the headless commands.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::device::{self, Device, DeviceTree, DiscoverOptions, SafetyReport, WriteSafety};
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

#[derive(Debug, Parser)]
#[command(
    name = "blkscope",
    version,
    about = "Test and watch Linux block devices honestly",
    long_about = "Test and watch Linux block devices honestly: every device with the properties \
                  that decide how to test it, a safety check before any write, and (in later \
                  versions) io_uring tests with live iostat -x figures."
)]
pub struct Cli {
    /// Read sysfs and procfs under this directory instead of / (for fixture trees and chroots).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every block device, tree-ordered like lsblk, with its write safety.
    List {
        /// Print {"devices": [...]} as JSON.
        #[arg(long)]
        json: bool,
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
        /// Print {"target", "write_safety", "reasons": [...]} as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command line; returns the process exit status.
pub fn run(cli: Cli) -> Result<i32, crate::Error> {
    let root = cli.root.map(SysRoot::at).unwrap_or_default();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        None => {
            let tree = device::discover(&root, &DiscoverOptions::default())?.listed(false);
            write_table(&mut out, &tree, !utf8_locale())?;
            writeln_io(
                &mut out,
                "\nblkscope's interactive view is not built yet; headless commands: \
                 `blkscope list --json`, `blkscope check TARGET` (see `blkscope --help`).",
            )?;
            Ok(0)
        }
        Some(Command::List {
            json,
            no_signatures,
            ascii,
            all,
        }) => {
            let opts = DiscoverOptions {
                skip_signatures: no_signatures,
            };
            let tree = device::discover(&root, &opts)?.listed(all);
            if json {
                write_json(&mut out, &tree)?;
            } else {
                write_table(&mut out, &tree, ascii || !utf8_locale())?;
            }
            Ok(0)
        }
        Some(Command::Check { target, json }) => {
            let report = device::safety::check(&root, &target)?;
            if json {
                write_json(&mut out, &report)?;
            } else {
                write_check(&mut out, &report)?;
            }
            Ok(report.write_safety.exit_code())
        }
    }
}

fn stdout_err(e: io::Error) -> crate::Error {
    crate::Error::io(std::path::Path::new("<stdout>"), e)
}

fn writeln_io(out: &mut impl Write, s: &str) -> Result<(), crate::Error> {
    writeln!(out, "{s}").map_err(stdout_err)
}

fn write_json<T: serde::Serialize>(out: &mut impl Write, v: &T) -> Result<(), crate::Error> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(|e| stdout_err(e.into()))?;
    writeln_io(out, "")
}

fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// Tree prefixes (`├─`, `└─`, `│ `) for devices in tree order.
fn tree_prefixes(devices: &[Device], ascii: bool) -> Vec<String> {
    let (tee, ell, bar) = if ascii {
        ("|-", "`-", "| ")
    } else {
        ("├─", "└─", "│ ")
    };
    let is_last = |i: usize| {
        let d = devices[i].depth;
        devices[i + 1..]
            .iter()
            .find(|x| x.depth <= d)
            .is_none_or(|x| x.depth < d)
    };
    let mut open: Vec<bool> = Vec::new(); // per depth: does a later sibling follow?
    let mut out = Vec::with_capacity(devices.len());
    for (i, d) in devices.iter().enumerate() {
        if d.depth == 0 {
            out.push(String::new());
            open.clear();
            continue;
        }
        open.truncate(d.depth - 1);
        let mut s = String::new();
        for &o in open.iter() {
            s.push_str(if o { bar } else { "  " });
        }
        let last = is_last(i);
        s.push_str(if last { ell } else { tee });
        open.push(!last);
        out.push(s);
    }
    out
}

/// The `list` table, readable at 80 columns.
pub fn write_table(
    out: &mut impl Write,
    tree: &DeviceTree,
    ascii: bool,
) -> Result<(), crate::Error> {
    let prefixes = tree_prefixes(&tree.devices, ascii);
    let mut lines = vec![format!(
        "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
        "NAME", "SIZE", "TYPE", "LOG/PHY", "ROTA", "WRITE", "NOTES"
    )];
    for (d, pre) in tree.devices.iter().zip(&prefixes) {
        let mut why: Vec<String> = Vec::new();
        let mut badges: Vec<&str> = d.safety_reasons.iter().map(|r| r.code.badge()).collect();
        badges.dedup();
        if !badges.is_empty() {
            why.push(badges.join(","));
        }
        if !d.mountpoints.is_empty() {
            why.push(d.mountpoints.join(","));
        }
        if d.swap {
            why.push("[SWAP]".into());
        }
        if let Some(sig) = d.signatures.first() {
            why.push(sig.kind.clone());
        }
        if let Some(m) = &d.model {
            why.push(m.clone());
        } else if let Some(b) = &d.loop_backing_file {
            why.push(b.clone());
        } else if let Some(dm) = &d.dm_name {
            why.push(dm.clone());
        }
        let name = format!("{pre}{}", d.name);
        let line = format!(
            "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
            name,
            fmt_size(d.size_bytes),
            d.lsblk_type,
            format!("{}/{}", d.logical_block_size, d.physical_block_size),
            if d.rotational { "yes" } else { "no" },
            d.write_safety.as_str(),
            why.join(" ")
        );
        lines.push(line);
    }
    for l in lines {
        writeln_io(out, &truncate_cols(&l, 80))?;
    }
    Ok(())
}

fn truncate_cols(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.trim_end().to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('~');
    t
}

fn write_check(out: &mut impl Write, r: &SafetyReport) -> Result<(), crate::Error> {
    let what = match &r.device {
        Some(d) => format!("{} ({d})", r.target),
        None => r.target.clone(),
    };
    writeln_io(out, &format!("{what}: {}", r.write_safety.as_str()))?;
    for reason in &r.reasons {
        writeln_io(
            out,
            &format!("  [{}] {}", reason.code.badge(), reason.detail),
        )?;
    }
    for note in &r.read_notes {
        writeln_io(out, &format!("  note: {}", note.detail))?;
    }
    let advice = match (r.write_safety, &r.device) {
        (WriteSafety::Clear, _) => "A write test may run.".to_string(),
        (WriteSafety::Confirm, Some(d)) => {
            format!("A write test destroys what is on it: it needs --confirm {d}.")
        }
        (WriteSafety::Confirm, None) => "A write test needs confirmation.".to_string(),
        (WriteSafety::Blocked, _) => "Write tests are refused; read tests are allowed.".to_string(),
    };
    writeln_io(out, &advice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Kind, WriteSafety};

    fn dev(name: &str, depth: usize) -> Device {
        Device {
            name: name.into(),
            path: PathBuf::from("/dev").join(name),
            maj_min: "0:0".into(),
            kind: Kind::Disk,
            lsblk_type: "disk".into(),
            size_bytes: 0,
            model: None,
            vendor: None,
            serial: None,
            wwid: None,
            transport: None,
            logical_block_size: 512,
            physical_block_size: 512,
            minimum_io_size: None,
            optimal_io_size: None,
            alignment_offset: None,
            rotational: false,
            removable: false,
            read_only: false,
            scheduler: None,
            schedulers_available: vec![],
            write_cache: None,
            nr_requests: None,
            max_sectors_kb: None,
            max_hw_sectors_kb: None,
            read_ahead_kb: None,
            iostats: None,
            discard: false,
            discard_granularity: None,
            discard_max_bytes: None,
            zoned: None,
            partition_number: None,
            start_sector: None,
            parent: None,
            partitions: vec![],
            holders: vec![],
            slaves: vec![],
            dm_name: None,
            dm_uuid: None,
            md_level: None,
            loop_backing_file: None,
            loop_direct_io: None,
            mountpoints: vec![],
            swap: false,
            signatures: vec![],
            signature_error: None,
            depth,
            write_safety: WriteSafety::Clear,
            safety_reasons: vec![],
        }
    }

    #[test]
    fn tree_prefixes_like_lsblk() {
        let devs = vec![
            dev("sda", 0),
            dev("sda1", 1),
            dev("sda2", 1),
            dev("vg-lv", 2),
            dev("sdb", 0),
            dev("sdb1", 1),
            dev("md0", 2),
            dev("sdb2", 1),
        ];
        let p = tree_prefixes(&devs, true);
        assert_eq!(p, ["", "|-", "`-", "  `-", "", "|-", "| `-", "`-"]);
    }

    #[test]
    fn truncation_marks_cut_lines() {
        assert_eq!(truncate_cols("abc   ", 80), "abc");
        let long = "x".repeat(90);
        let t = truncate_cols(&long, 80);
        assert_eq!(t.chars().count(), 80);
        assert!(t.ends_with('~'));
    }
}

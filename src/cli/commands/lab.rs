//! `blkscope lab`: throwaway loop devices to practise on, in the TUI or for scripts.

use std::io::{self, IsTerminal, Write};

use crate::cli::{println, say, stdout_err};
use crate::sysroot::SysRoot;

pub struct LabArgs {
    pub size: u64,
    pub partitioned: bool,
    pub json: bool,
    pub cleanup: bool,
    pub dir: Option<std::path::PathBuf>,
    pub ascii: bool,
    pub fps: u32,
    pub mouse: bool,
}

pub fn run(root: &SysRoot, a: &LabArgs, out: &mut impl Write) -> Result<i32, crate::Error> {
    if a.cleanup {
        let (n, dirs) = crate::lab::cleanup_stale();
        let dirs = match dirs {
            0 => String::new(),
            d => format!(" and {d} lab directory(ies) left by a lab before a reboot"),
        };
        println(out, &format!("removed {n} leftover lab device(s){dirs}"))?;
        return Ok(0);
    }
    let lab = crate::lab::Lab::create(&crate::lab::LabOptions {
        size: a.size,
        partitioned: a.partitioned,
        cached: false,
        zram: false,
        dir: a.dir.clone(),
    })?;
    // A lab in RAM still shows the safety checks and the TUI, but every figure is memory's.
    if let Some(fs) = &lab.in_ram {
        say!(
            "blkscope: the lab's files are in RAM ({fs} at {}): tests on its devices measure \
             memory, not a disk; give a directory on a disk with --dir",
            lab.dir.display()
        );
    }
    if !a.json && io::stdout().is_terminal() && io::stdin().is_terminal() {
        let names = lab
            .devices
            .iter()
            .map(|d| {
                let ram = lab.in_ram.as_ref().map(|fs| format!(", in RAM ({fs})"));
                (
                    d.name.clone(),
                    format!("lab, {}-byte sectors{}", d.sector, ram.unwrap_or_default()),
                )
            })
            .collect();
        let r = crate::ui::run(crate::ui::UiOptions {
            hosts: Vec::new(),
            ssh: Default::default(),
            root: root.clone(),
            dir: lab.dir.clone(),
            fps: a.fps,
            look: crate::ui::look_from_env(a.ascii),
            lab: names,
            mouse: a.mouse,
        });
        drop(lab);
        r?;
        return Ok(0);
    }
    let cancel = crate::cli::signals::cancel_on_signals();
    if a.json {
        let v = serde_json::json!({"dir": lab.dir, "in_ram": lab.in_ram, "devices": lab.devices});
        println(out, &v.to_string())?;
    } else {
        for d in &lab.devices {
            println(
                out,
                &format!(
                    "{}  {}-byte sectors  over {}",
                    d.path,
                    d.sector,
                    d.backing.display()
                ),
            )?;
        }
        println(out, "The lab stays until Ctrl-C (or SIGTERM).")?;
    }
    out.flush().map_err(stdout_err)?;
    while !cancel.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(lab);
    say!("blkscope: lab removed");
    Ok(0)
}

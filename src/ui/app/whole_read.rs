//! `b`: the blank test's whole read of the selected device from the TUI, as `check --full`
//! does it: progress, rate and ETA in the status line, `b` again stops it, and the device's
//! verdict and reasons as the read leaves them.

use std::time::Instant;

use super::*;
use crate::device::SafetyReport;

/// A whole read under way.
#[derive(Debug, Clone)]
pub struct WholeRead {
    pub device: String,
    pub done: u64,
    pub size: u64,
    pub started: Instant,
}

impl WholeRead {
    /// "reading loop0 whole: 412M of 1G at 830M/s, ETA 1 s (b stops)".
    pub fn line(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        };
        let eta = if rate > 0.0 {
            format!(
                ", ETA {:.0} s",
                (self.size - self.done.min(self.size)) as f64 / rate
            )
        } else {
            String::new()
        };
        format!(
            "reading {} whole: {} of {} at {}/s{eta} (b stops)",
            self.device,
            fmt_size(self.done),
            fmt_size(self.size),
            fmt_size(rate as u64)
        )
    }
}

impl App {
    /// `b`: start a whole read of the selected device here, or stop the one under way.
    pub(super) fn read_whole(&mut self) -> Action {
        if let Some(w) = &self.whole_read {
            self.status = Some(format!("stopping the whole read of {}...", w.device));
            return Action::StopWholeRead;
        }
        let t = self.target();
        let (device, host) = (t.device.clone(), t.host.clone());
        match (device, host) {
            (Some(d), Some(h)) => {
                self.status = Some(format!(
                    "a whole read runs on this machine only: on {h}, run blkscope check --full {d}"
                ));
                Action::None
            }
            (Some(device), None) => {
                let size = t.size;
                self.whole_read = Some(WholeRead {
                    device: device.clone(),
                    done: 0,
                    size,
                    started: Instant::now(),
                });
                self.status = self.whole_read.as_ref().map(WholeRead::line);
                Action::ReadWhole { device }
            }
            (None, _) => {
                self.status = Some("select a block device to read it whole".into());
                Action::None
            }
        }
    }

    /// The whole read got this far.
    pub fn on_whole_progress(&mut self, done: u64, size: u64) {
        if let Some(w) = self.whole_read.as_mut() {
            (w.done, w.size) = (done, size);
            self.status = Some(w.line());
        }
    }

    /// The whole read ended: the check's report (or why there is none), and the device as
    /// the check left it.
    pub fn on_whole_read(
        &mut self,
        r: Result<(SafetyReport, Option<crate::device::Device>), String>,
    ) {
        let Some(w) = self.whole_read.take() else {
            return;
        };
        let (report, dev) = match r {
            Ok(x) => x,
            Err(e) => {
                self.status = Some(format!("{}: the whole read failed: {e}", w.device));
                return;
            }
        };
        if let Some(d) = dev {
            for t in self
                .targets
                .iter_mut()
                .filter(|t| t.host.is_none() && t.device.as_deref() == Some(&d.name))
            {
                let fresh = TargetEntry::of_device(&d, None, 0);
                (t.safety, t.badges, t.reasons) = (fresh.safety, fresh.badges, fresh.reasons);
            }
            if let Some(old) = self.tree.devices.iter_mut().find(|x| x.name == d.name) {
                (old.blank, old.write_safety, old.safety_reasons) =
                    (d.blank, d.write_safety, d.safety_reasons);
            }
        }
        let first = crate::output::text::check(&report);
        let mut line = first.lines().next().unwrap_or_default().to_string();
        if let Some(stopped) = &report.whole_read {
            line = format!("{}: whole read {stopped}", w.device);
        } else if report.write_safety != WriteSafety::Clear
            && let Some(r) = report.reasons.first()
        {
            line = format!("{line}: {}", r.detail);
        }
        self.status = Some(line);
    }
}

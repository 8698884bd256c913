//! The test form (`e`): each field's text, typed values and cycling through choices; invalid
//! values are refused with the reason and the job is left as it was.

use super::bindings::Cmd;
use super::*;
use crate::engine::job::{MAX_IODEPTH, MAX_JOBS};

impl App {
    /// The form's keys: move between fields, change or type a value, keep or give up what
    /// was typed.
    pub(super) fn on_form_command(&mut self, cmd: Cmd) {
        let Overlay::Form(mut form) = self.overlay.clone() else {
            return;
        };
        match cmd {
            Cmd::Field(by) => {
                form.field = (form.field as isize + isize::from(by))
                    .clamp(0, FORM_FIELDS.len() as isize - 1) as usize
            }
            Cmd::Value(fwd) => form.error = self.cycle(form.field, fwd).err(),
            Cmd::EditValue
                if matches!(
                    FORM_FIELDS[form.field],
                    "mode" | "data" | "engine" | "verify"
                ) =>
            {
                if let Err(e) = self.cycle(form.field, true) {
                    form.error = Some(e);
                }
            }
            Cmd::EditValue => {
                form.editing = Some(self.field_value(form.field));
                form.error = None;
            }
            Cmd::Accept => {
                let text = form.editing.take().unwrap_or_default();
                match self.apply_text(form.field, &text) {
                    Ok(()) => form.error = None,
                    Err(e) => {
                        form.error = Some(e);
                        form.editing = Some(text);
                    }
                }
            }
            Cmd::Undo => {
                form.editing = None;
                form.error = None;
            }
            _ => {}
        }
        self.overlay = Overlay::Form(form);
    }

    /// The field's value as text.
    pub fn field_value(&self, field: usize) -> String {
        let j = &self.test().job;
        match FORM_FIELDS[field] {
            "bs" => fmt_size(j.bs).replace('B', ""),
            "size" => match j.size {
                None => "auto".into(),
                Some(SizeSpec::Bytes(b)) => fmt_size(b),
                Some(SizeSpec::Text(crate::engine::job::Sized::Bytes(b))) => fmt_size(b),
                Some(SizeSpec::Text(crate::engine::job::Sized::Percent(p))) => format!("{p}%"),
            },
            "runtime" => match j.runtime {
                None => "none".into(),
                Some(d) => format!("{}s", d.as_secs_f64()),
            },
            "iodepth" => j.iodepth.to_string(),
            "jobs" => j.jobs.to_string(),
            "mode" => j.mode.as_str().into(),
            "data" => match j.data {
                Data::Random => "random".into(),
                Data::Zero => "zero".into(),
            },
            "engine" => match j.engine {
                EngineKind::Auto if j.may_probe_engine() => {
                    "auto: uring, or psync if faster".into()
                }
                EngineKind::Auto => format!("auto: {}", j.engine_to_use().engine.as_str()),
                named => named.as_str().into(),
            },
            "verify" => if j.verify {
                "yes: read back and check"
            } else {
                "no"
            }
            .into(),
            "cpus" => match &j.cpus {
                None => "all".into(),
                Some(c) => c.to_string(),
            },
            _ => String::new(),
        }
    }

    /// Applies a typed value if it parses and the job stays valid on the target.
    pub(super) fn apply_text(&mut self, field: usize, text: &str) -> Result<(), String> {
        use crate::units::{parse_duration, parse_size, parse_size_or_percent};
        let mut j = self.test().job.clone();
        let t = text.trim();
        match FORM_FIELDS[field] {
            "bs" => j.bs = parse_size(t)?,
            "size" => {
                j.size = if t.is_empty() || t == "auto" {
                    None
                } else {
                    Some(SizeSpec::Text(parse_size_or_percent(t)?))
                }
            }
            "runtime" => {
                j.runtime = if t.is_empty() || t == "none" {
                    None
                } else {
                    Some(parse_duration(t)?)
                }
            }
            "iodepth" => {
                j.iodepth = t
                    .parse()
                    .map_err(|_| format!("'{t}' is not a number: use 1 to {MAX_IODEPTH}"))?
            }
            "jobs" => {
                j.jobs = t
                    .parse()
                    .map_err(|_| format!("'{t}' is not a number: use 1 to {MAX_JOBS}"))?
            }
            "cpus" => {
                j.cpus = if t.is_empty() || t == "all" {
                    None
                } else {
                    Some(crate::engine::cpus::CpuList::parse(t)?)
                }
            }
            _ => return Ok(()),
        }
        self.set_job(j)
    }

    pub(super) fn cycle(&mut self, field: usize, fwd: bool) -> Result<(), String> {
        let mut j = self.test().job.clone();
        fn step<T: Copy + PartialEq>(all: &[T], cur: T, fwd: bool) -> T {
            let i = all.iter().position(|x| *x == cur).unwrap_or(0);
            let n = all.len();
            all[if fwd { (i + 1) % n } else { (i + n - 1) % n }]
        }
        match FORM_FIELDS[field] {
            "mode" => {
                let modes = [
                    Mode::Direct,
                    Mode::Dsync,
                    Mode::Sync,
                    Mode::Fdatasync,
                    Mode::Buffered,
                    Mode::Nocache,
                ];
                j.mode = step(&modes, j.mode, fwd);
            }
            "data" => j.data = step(&[Data::Random, Data::Zero], j.data, fwd),
            "engine" => {
                j.engine = step(
                    &[EngineKind::Auto, EngineKind::Uring, EngineKind::Psync],
                    j.engine,
                    fwd,
                )
            }
            "verify" => j.verify = !j.verify,
            _ => return Ok(()),
        }
        self.set_job(j)
    }

    /// Keeps the edited job only when it is valid on the selected target.
    pub(super) fn set_job(&mut self, j: Job) -> Result<(), String> {
        match j.validate(&self.facts()) {
            Ok(_) => {
                self.tests[self.selected_test].job = j;
                Ok(())
            }
            Err(e) => Err(e.into_iter().map(|x| x.0).collect::<Vec<_>>().join("; ")),
        }
    }

    pub fn op_label(op: Op) -> &'static str {
        op.as_str()
    }
}

//! The TUI's state and what each key does to it. No terminal here: the event loop
//! (`ui::run`) feeds keys, engine samples and diskstats in, and carries out the [`Action`]s that
//! come back; `render` draws the state. So every key can be tested on the state alone.

pub mod bindings;
mod form;
mod host_tree;
mod hosts;
mod keys;
mod results;
mod whole_read;
pub use whole_read::WholeRead;

pub use hosts::{HostView, RemoteDone, run_args, suite_args};

use std::path::PathBuf;

use crate::analysis::explain;
use crate::device::{DeviceTree, WriteSafety};
use crate::engine::job::{Data, EngineKind, Job, Mode, Op, SizeSpec, TargetFacts};
use crate::engine::result::Sample;
use crate::engine::{TargetInfo, TargetSpec};
use crate::output::fmt_size;
use crate::result::RunResult;
use crate::stats::IostatX;
use crate::suite::presets::{self, Preset};

/// Something the test could run on.
#[derive(Debug, Clone)]
pub struct TargetEntry {
    /// Device kernel name, or None for the scratch file (or a host's own node).
    pub device: Option<String>,
    /// The host it is on (`--host`); None on this machine. With no device, the host's node.
    pub host: Option<String>,
    pub label: String,
    pub depth: usize,
    pub size: u64,
    pub safety: WriteSafety,
    pub badges: Vec<&'static str>,
    pub reasons: Vec<String>,
    pub lbs: u64,
    pub model: Option<String>,
}

impl TargetEntry {
    /// A device as a row of the tree: on `host` (None: here), `indent` levels deeper than on
    /// its own machine.
    pub fn of_device(d: &crate::device::Device, host: Option<String>, indent: usize) -> Self {
        let mut badges: Vec<&'static str> =
            d.safety_reasons.iter().map(|r| r.code.badge()).collect();
        badges.dedup();
        TargetEntry {
            device: Some(d.name.clone()),
            host,
            label: d.name.clone(),
            depth: d.depth + indent,
            size: d.size_bytes,
            safety: d.write_safety,
            badges,
            reasons: d.safety_reasons.iter().map(|r| r.detail.clone()).collect(),
            lbs: d.logical_block_size,
            model: d.model.clone().or(d.dm_name.clone()),
        }
    }

    pub fn is_scratch(&self) -> bool {
        self.device.is_none() && self.host.is_none()
    }

    /// The label with its host, when it is on one (`db1:sdb`).
    pub fn full_label(&self) -> String {
        match &self.host {
            Some(h) if !self.is_host() => format!("{h}:{}", self.label),
            _ => self.label.clone(),
        }
    }

    /// A host's node in the tree (`--host`): not a target itself.
    pub fn is_host(&self) -> bool {
        self.device.is_none() && self.host.is_some()
    }
}

/// The main view's panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Devices,
    Tests,
    Properties,
    Iostat,
}

impl Focus {
    fn next(self) -> Self {
        match self {
            Focus::Devices => Focus::Tests,
            Focus::Tests => Focus::Properties,
            Focus::Properties => Focus::Iostat,
            Focus::Iostat => Focus::Devices,
        }
    }

    fn prev(self) -> Self {
        match self {
            Focus::Devices => Focus::Iostat,
            Focus::Tests => Focus::Devices,
            Focus::Properties => Focus::Tests,
            Focus::Iostat => Focus::Properties,
        }
    }
}

/// Where the pointer was, as the drawing knows it: a pane of the main view (with the list row
/// under it, if any) or a row of the results table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Pane(Focus, Option<usize>),
    Result(usize),
    /// The results' explanation pane (the wheel scrolls it).
    Notes,
    Nothing,
}

/// How far the scrolling panes can go, as last drawn (the drawing knows how many lines fit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScrollLimits {
    pub properties: u16,
    pub iostat_rows: u16,
    /// The results' explanation pane.
    pub notes: u16,
    /// The explain, doctor or refusal pane over the screen.
    pub overlay: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Main,
    Run,
    Results,
}

/// The fields of the test form.
pub const FORM_FIELDS: [&str; 10] = [
    "bs", "size", "runtime", "iodepth", "jobs", "mode", "data", "engine", "verify", "cpus",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub field: usize,
    /// Text being typed into the field, when editing.
    pub editing: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    Form(Form),
    /// Typing the device name back before a write on a `confirm` device.
    Confirm {
        device: String,
        typed: String,
        error: Option<String>,
    },
    /// What the selected test or suite does, in dd and fio terms.
    Explain {
        title: String,
        lines: Vec<String>,
    },
    /// A write refused on a `blocked` device.
    Refused {
        device: String,
        reasons: Vec<String>,
    },
    /// `d`: the doctor's findings for a device (None while it examines it).
    Doctor {
        device: String,
        findings: Option<Result<Vec<crate::doctor::Finding>, String>>,
    },
    /// `/` with hosts: typing the text the hosts shown must hold.
    Filter,
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    None,
    Start {
        spec: TargetSpec,
        job: Job,
    },
    /// Load saved runs from disk into the results.
    Reopen,
    /// Run a whole suite.
    StartSuite {
        spec: TargetSpec,
        suite: Box<crate::suite::Suite>,
    },
    Cancel,
    /// Cancel what runs (if anything), then quit.
    Quit,
    /// Ctrl-C: quit at once.
    QuitNow,
    /// Examine a device (`d`): SMART, other processes, settings; on its host with `--host`.
    Doctor {
        device: String,
        host: Option<String>,
    },
    /// Run blkscope with `args` on `host` (a test there, or a suite), through ssh.
    StartRemote {
        host: String,
        args: Vec<String>,
    },
    /// `b`: read the device here whole (the blank test's whole read).
    ReadWhole {
        device: String,
    },
    /// `b` again: stop it.
    StopWholeRead,
}

/// A test that runs or ran.
#[derive(Debug, Clone)]
pub struct RunView {
    pub test: String,
    pub target: String,
    pub job: Job,
    pub samples: Vec<Sample>,
    /// What the analysis makes of the test so far (the same findings as its result's).
    pub findings: Vec<crate::analysis::findings::Finding>,
    pub cancelling: bool,
    /// The suite this run belongs to.
    pub suite: Option<String>,
}

/// A finished test in the results table.
#[derive(Debug, Clone)]
pub struct ResultRow {
    pub test: String,
    pub target: String,
    pub info: Option<TargetInfo>,
    pub result: Option<RunResult>,
    pub error: Option<String>,
    pub dd: String,
    pub fio: String,
    /// The id it was saved under.
    pub saved_id: Option<String>,
    /// A run reopened from disk: its figures.
    pub reopened: Option<crate::runs::Figures>,
    /// What a saved run (reopened, or run on a host) said besides its figures, for the views
    /// to show as a live result's: see [`ResultRow::engine_chosen`] and [`ResultRow::warnings`].
    pub saved: Option<SavedSaid>,
    /// The time series of a reopened run or of a run on a host (a run here keeps its own in
    /// `result`).
    pub series: Vec<Sample>,
    /// The sweep this result is a point of (its op's series, with the knee), and which point,
    /// when it is one.
    pub sweep: Option<(std::sync::Arc<crate::analysis::sweep::Series>, usize)>,
    /// What the suite this result is a test of found on its target, where the suite says how
    /// to tell (its contrast: zeros against random data, ...).
    pub found_here: Option<std::sync::Arc<str>>,
}

/// What a saved result said besides its figures.
#[derive(Debug, Clone)]
pub struct SavedSaid {
    /// The engine blkscope chose and why ([`crate::engine::result::engine_chosen`]).
    pub engine_chosen: Option<String>,
    pub warnings: Vec<crate::analysis::Warning>,
}

impl SavedSaid {
    pub fn of(r: &crate::runs::SavedResult) -> Self {
        Self {
            engine_chosen: r
                .engine
                .as_deref()
                .zip(r.engine_why.as_deref())
                .map(|(e, why)| crate::engine::result::engine_chosen(e, why)),
            warnings: r.warnings.clone(),
        }
    }
}

impl ResultRow {
    /// The engine blkscope chose for the run and why, live or saved.
    pub fn engine_chosen(&self) -> Option<String> {
        match (&self.result, &self.saved) {
            (Some(x), _) => x.engine_chosen(),
            (None, Some(s)) => s.engine_chosen.clone(),
            (None, None) => None,
        }
    }

    /// The run's notes, live or saved.
    pub fn warnings(&self) -> &[crate::analysis::Warning] {
        match (&self.result, &self.saved) {
            (Some(x), _) => &x.warnings,
            (None, Some(s)) => &s.warnings,
            (None, None) => &[],
        }
    }

    /// A test that did not finish: its name, target and why.
    pub fn failed(test: String, target: String, error: String) -> Self {
        ResultRow {
            test,
            target,
            info: None,
            result: None,
            error: Some(error),
            dd: String::new(),
            fio: String::new(),
            saved_id: None,
            reopened: None,
            saved: None,
            series: Vec::new(),
            sweep: None,
            found_here: None,
        }
    }

    /// The time series the charts draw.
    pub fn samples(&self) -> &[Sample] {
        match &self.result {
            Some(r) => &r.samples,
            None => &self.series,
        }
    }

    /// The figures compared and shown, live or reopened.
    pub fn figures(&self) -> Option<crate::runs::Figures> {
        if let Some(f) = &self.reopened {
            return Some(f.clone());
        }
        Some(crate::runs::Figures::of_result(
            &self.test,
            self.result.as_ref()?,
        ))
    }
}

pub struct App {
    pub tree: DeviceTree,
    pub scratch_dir: PathBuf,
    pub targets: Vec<TargetEntry>,
    pub selected_target: usize,
    /// The tests, with the parameters as edited for this session.
    pub tests: Vec<Preset>,
    /// The suites, listed after the tests in the picker.
    pub suites: Vec<crate::suite::Suite>,
    /// Index into tests, then suites.
    pub selected_test: usize,
    pub focus: Focus,
    pub screen: Screen,
    pub overlay: Overlay,
    pub run: Option<RunView>,
    pub results: Vec<ResultRow>,
    pub selected_result: usize,
    /// iostat -x of the devices related to the selected (or running) target.
    pub diskstats: Vec<IostatX>,
    /// The device names the side panel shows.
    pub watched: Vec<String>,
    pub status: Option<String>,
    /// `l` in the run view: the latency heatmap and histogram instead of the IOPS chart.
    pub latency_view: bool,
    /// `g` in the results: the selected run's charts instead of its explanation.
    pub result_charts: bool,
    /// After `c`: (earlier, selected) results whose charts are drawn on the same axes.
    pub compare_with: Option<(usize, usize)>,
    /// Other processes doing I/O while a test runs (top three, sampled every second).
    pub busy: Vec<crate::stats::procs::BusyProcess>,
    /// The doctor pane's live top: the device, and its last interval (or why there is none).
    pub doctor_top: Option<(String, Result<crate::doctor::watch::Interval, String>)>,
    /// Lines scrolled off the top of the properties pane.
    pub props_scroll: u16,
    /// Lines scrolled off the top of the results' explanation pane, and the result they were
    /// scrolled on: another result's explanation starts at its top.
    pub notes_scroll: (usize, u16),
    /// Lines scrolled off the top of the explain, doctor or refusal pane (0 when one opens).
    pub overlay_scroll: u16,
    /// The first related device the iostat panel shows (its columns scroll sideways) ...
    pub iostat_first: usize,
    /// ... and rows scrolled off its top.
    pub iostat_scroll: u16,
    /// Set by the drawing: how far each pane can scroll.
    pub limits: std::cell::Cell<ScrollLimits>,
    /// Devices this session wrote to after seeing them blank: the data on them is the
    /// session's own, so later writes need no typed confirmation.
    pub written_blank: std::collections::BTreeSet<String>,
    /// With `--host`: the hosts, each a top-level node of the device tree (this machine's
    /// devices are not listed then).
    pub hosts: Vec<hosts::HostView>,
    /// `/`: only the hosts whose name holds this text are shown (empty: all).
    pub host_filter: String,
    /// `b`: a whole read of a device under way.
    pub whole_read: Option<WholeRead>,
    pub quit: bool,
}

impl App {
    pub fn new(tree: DeviceTree, scratch_dir: PathBuf) -> Self {
        let mut targets = vec![TargetEntry {
            device: None,
            host: None,
            label: format!("scratch file in {}", scratch_dir.display()),
            depth: 0,
            size: crate::engine::target::DEFAULT_FILE_SIZE,
            safety: WriteSafety::Clear,
            badges: vec!["FILE"],
            reasons: vec!["a test file of its own, removed afterwards".into()],
            lbs: 4096,
            model: None,
        }];
        for d in tree.listed(false).devices {
            targets.push(TargetEntry::of_device(&d, None, 0));
        }
        let mut app = Self {
            tree,
            scratch_dir,
            targets,
            selected_target: 0,
            tests: presets::builtin(4096),
            suites: crate::suite::builtin(),
            selected_test: 0,
            focus: Focus::Devices,
            screen: Screen::Main,
            overlay: Overlay::None,
            run: None,
            results: Vec::new(),
            selected_result: 0,
            diskstats: Vec::new(),
            watched: Vec::new(),
            status: None,
            latency_view: false,
            result_charts: false,
            compare_with: None,
            busy: Vec::new(),
            doctor_top: None,
            props_scroll: 0,
            notes_scroll: (0, 0),
            overlay_scroll: 0,
            iostat_first: 0,
            iostat_scroll: 0,
            limits: Default::default(),
            written_blank: Default::default(),
            whole_read: None,
            hosts: Vec::new(),
            host_filter: String::new(),
            quit: false,
        };
        app.update_watch();
        app
    }

    /// What a quit says when the test's thread has not ended (a device that does not complete
    /// what the test issued): the process ends when the device completes it.
    pub fn still_in_flight(&self) -> String {
        let run = self.run.as_ref();
        let on = run.map_or(String::new(), |r| format!(" on {}", r.target));
        let what = match run.and_then(|r| r.samples.last()).and_then(|s| s.stopping) {
            Some(st) if st.in_flight == 1 => "the test's last I/O".to_string(),
            Some(st) if st.in_flight > 1 => format!("the test's last {} I/Os", st.in_flight),
            _ => "what the test issued".to_string(),
        };
        format!(
            "blkscope: the test{on} has not ended: the device has not completed {what}; \
             blkscope exits when it does"
        )
    }

    /// Marks the lab's devices (badge LAB, a note) and selects the first.
    pub fn mark_lab(&mut self, lab: &[(String, String)]) {
        let mut first = None;
        for (i, t) in self.targets.iter_mut().enumerate() {
            if let Some((_, note)) = lab.iter().find(|(n, _)| t.device.as_deref() == Some(n)) {
                t.badges.insert(0, "LAB");
                t.model = Some(note.clone());
                first.get_or_insert(i);
            }
        }
        if let Some(i) = first {
            self.selected_target = i;
            self.target_changed();
        }
    }

    /// A new target: watch its devices, and measure sync-write latency at its logical block
    /// size (unless the user set another block size).
    fn target_changed(&mut self) {
        self.update_watch();
        self.props_scroll = 0;
        self.diskstats.clear();
        self.show_host_stats();
        let lbs = self.target().lbs.max(512);
        if let Some(p) = self.tests.iter_mut().find(|p| p.id == "sync-latency")
            && (p.job.bs == 512 || p.job.bs == 4096)
        {
            p.job.bs = lbs;
        }
    }

    pub fn target(&self) -> &TargetEntry {
        &self.targets[self.selected_target]
    }

    /// The selected test (or, when a suite is selected, the last test: the form is not for
    /// suites).
    pub fn test(&self) -> &Preset {
        &self.tests[self.selected_test.min(self.tests.len() - 1)]
    }

    /// How far the selected result's explanation is scrolled (0 after another result was
    /// selected).
    pub fn notes_offset(&self) -> u16 {
        match self.notes_scroll {
            (i, off) if i == self.selected_result => off,
            _ => 0,
        }
    }

    /// Scrolls the selected result's explanation by `by` lines, within what the drawing said
    /// is there to see.
    pub(super) fn scroll_notes(&mut self, by: isize) {
        // Not while the charts are shown in its place.
        if self.result_charts {
            return;
        }
        let max = self.limits.get().notes as isize;
        let off = (self.notes_offset() as isize + by).clamp(0, max) as u16;
        self.notes_scroll = (self.selected_result, off);
    }

    /// Scrolls the explain, doctor or refusal pane by `by` lines.
    pub(super) fn scroll_overlay(&mut self, by: isize) {
        let max = self.limits.get().overlay as isize;
        self.overlay_scroll = (self.overlay_scroll as isize + by).clamp(0, max) as u16;
    }

    /// The selected suite, when the picker is on one.
    pub fn selected_suite(&self) -> Option<&crate::suite::Suite> {
        self.selected_test
            .checked_sub(self.tests.len())
            .and_then(|i| self.suites.get(i))
    }

    pub fn running(&self) -> bool {
        self.screen == Screen::Run
    }

    /// The device whose figures explain the selected target: the device itself, or for the
    /// scratch file the device holding its directory.
    pub fn update_watch(&mut self) {
        let name = match &self.target().device {
            Some(d) => Some(d.clone()),
            None if self.target().is_host() => None,
            None => self.tree.holding(&self.scratch_dir).map(|d| d.name.clone()),
        };
        self.watched = match (name, self.tree_of_target()) {
            (Some(n), Some(tree)) => crate::stats::related(tree, &n),
            _ => Vec::new(),
        };
        self.iostat_first = 0;
        self.iostat_scroll = 0;
    }

    fn open_form(&mut self) {
        if let Some(s) = self.selected_suite() {
            self.status = Some(format!(
                "suite {} runs as written (`blkscope explain {}` shows it); edit a single test instead",
                s.name, s.name
            ));
            return;
        }
        self.overlay = Overlay::Form(Form {
            field: 0,
            editing: None,
            error: None,
        });
    }

    /// `r`: run the selected test (or suite) on the selected target, through the safety
    /// check.
    pub fn request_run(&mut self) -> Action {
        let t = self.target().clone();
        if t.is_host() {
            self.status = Some(match t.reasons.first() {
                Some(e) => format!("{} cannot be reached: {e}", t.label),
                None => format!("{} is a host: select one of its devices to test", t.label),
            });
            return Action::None;
        }
        if let Some(suite) = self.selected_suite().cloned() {
            let writes = suite.tests.iter().any(|x| x.op.writes());
            if let Some(a) = self.safety_gate(&t, writes) {
                return a;
            }
            return self.start_suite(suite, None);
        }
        let job = self.test().job.clone();
        if let Err(e) = job.validate(&self.facts()) {
            self.status = Some(format!(
                "cannot run: {}",
                e.iter().map(|x| x.0.clone()).collect::<Vec<_>>().join("; ")
            ));
            return Action::None;
        }
        if let Some(a) = self.safety_gate(&t, job.op.writes()) {
            return a;
        }
        self.start(None)
    }

    /// Opens the refusal or the confirmation when a write needs one.
    fn safety_gate(&mut self, t: &TargetEntry, writes: bool) -> Option<Action> {
        let dev = t.device.as_ref()?;
        if !writes {
            return None;
        }
        match t.safety {
            WriteSafety::Blocked => {
                self.overlay = Overlay::Refused {
                    device: dev.clone(),
                    reasons: t.reasons.clone(),
                };
                Some(Action::None)
            }
            WriteSafety::Confirm => {
                self.overlay = Overlay::Confirm {
                    device: dev.clone(),
                    typed: String::new(),
                    error: None,
                };
                Some(Action::None)
            }
            WriteSafety::Clear => None,
        }
    }

    /// The confirmation to hand the engine: the typed one, or the device's name when this
    /// session wrote to it after seeing it blank.
    fn confirmation(&self, typed: Option<String>) -> Option<String> {
        typed.or_else(|| {
            let d = self.target().device.clone()?;
            self.written_key()
                .filter(|k| self.written_blank.contains(k))
                .map(|_| d)
        })
    }

    /// The doctor's findings arrived (for the device the pane is open for).
    pub fn on_doctor(&mut self, device: &str, r: Result<Vec<crate::doctor::Finding>, String>) {
        if let Overlay::Doctor {
            device: d,
            findings,
        } = &mut self.overlay
            && d == device
        {
            *findings = Some(r);
        }
    }

    /// An interval of the doctor pane's top arrived (kept while the pane is open on it).
    pub fn on_doctor_top(
        &mut self,
        device: &str,
        r: Result<crate::doctor::watch::Interval, String>,
    ) {
        match &self.overlay {
            Overlay::Doctor { device: d, .. } if d == device => {
                self.doctor_top = Some((device.to_string(), r))
            }
            _ => self.doctor_top = None,
        }
    }

    /// A write finished on a device that was blank when it started: it now holds this
    /// session's data.
    pub(super) fn note_written(&mut self, info: &TargetInfo, wrote: bool) {
        if wrote
            && info.kind == "block"
            && info.write_safety == WriteSafety::Clear
            && let Some(d) = &info.device
        {
            self.written_blank.insert(d.clone());
        }
    }

    /// What the engine opens: the device, or the scratch directory.
    fn target_path(&self) -> String {
        match &self.target().device {
            Some(d) => format!("/dev/{d}"),
            None => self.scratch_dir.display().to_string(),
        }
    }

    /// What the dd and fio lines name: the device, or a file in the scratch directory.
    fn command_line_target(&self) -> String {
        crate::engine::target::command_line_target(
            self.target().device.as_deref(),
            &self.scratch_dir,
        )
    }

    fn start_suite(&mut self, suite: crate::suite::Suite, confirm: Option<String>) -> Action {
        let t = self.target().clone();
        let first = suite.tests[0].job(t.lbs);
        self.run = Some(RunView {
            test: format!("{}: {}", suite.name, suite.tests[0].name),
            target: t.full_label(),
            job: first,
            samples: Vec::new(),
            findings: Vec::new(),
            cancelling: false,
            suite: Some(suite.name.clone()),
        });
        self.screen = Screen::Run;
        self.status = None;
        if let Some(host) = t.host.clone() {
            return Action::StartRemote {
                host,
                args: hosts::suite_args(
                    &suite.name,
                    &self.target_path(),
                    self.confirmation(confirm).as_deref(),
                ),
            };
        }
        Action::StartSuite {
            spec: TargetSpec {
                path: self.target_path(),
                confirm: self.confirmation(confirm),
                force: false,
            },
            suite: Box::new(suite),
        }
    }

    /// The explain pane for the selected test or suite, on the selected target.
    pub fn explain(&self) -> Overlay {
        let path = self.command_line_target();
        let total = self.target().size;
        let job_lines = |job: &Job, lines: &mut Vec<String>| {
            let c = explain::commands(job, &path, total);
            lines.push(format!(
                "dd:  {}",
                c.dd.unwrap_or_else(|why| format!("(none: {why})"))
            ));
            lines.push(format!("fio: {}", c.fio));
            for n in explain::flag_notes(job) {
                lines.push(format!("  - {n}"));
            }
            for t in explain::traps(job) {
                lines.push(format!("trap: {t}"));
            }
        };
        let mut lines = Vec::new();
        if let Some(s) = self.selected_suite() {
            if !s.about.is_empty() {
                lines.push(s.about.clone());
            }
            if let Some(f) = &s.found {
                lines.push(format!("What the article found: {f}"));
            }
            if let Some(c) = &s.contrast {
                lines.push(format!("After the run blkscope says {}.", c.promise()));
            }
            lines.push(format!("{} runs of each test:", s.repeat));
            for t in &s.tests {
                lines.push(format!(
                    "  {}: {}",
                    t.name,
                    t.job(self.target().lbs).label()
                ));
            }
            return Overlay::Explain {
                title: format!("{}: {}", s.name, s.title),
                lines,
            };
        }
        let p = self.test();
        lines.push(p.about.to_string());
        job_lines(&p.job, &mut lines);
        Overlay::Explain {
            title: format!("{} ({})", p.name, p.job.label()),
            lines,
        }
    }

    fn start(&mut self, confirm: Option<String>) -> Action {
        let t = self.target().clone();
        let test = self.test().clone();
        let path = self.target_path();
        self.run = Some(RunView {
            test: test.name.to_string(),
            target: t.full_label(),
            job: test.job.clone(),
            samples: Vec::new(),
            findings: Vec::new(),
            cancelling: false,
            suite: None,
        });
        self.screen = Screen::Run;
        self.status = None;
        if let Some(host) = t.host.clone() {
            return Action::StartRemote {
                host,
                args: hosts::run_args(&test.job, &path, self.confirmation(confirm).as_deref()),
            };
        }
        Action::Start {
            spec: TargetSpec {
                path,
                confirm: self.confirmation(confirm),
                force: false,
            },
            job: test.job,
        }
    }

    /// What validation knows of the selected target.
    pub fn facts(&self) -> TargetFacts {
        let t = self.target();
        TargetFacts {
            size: t.size,
            direct_align: t.lbs,
            is_block: !t.is_scratch(),
        }
    }

    /// A live sample of the test, with what the analysis makes of it so far.
    pub fn on_sample(&mut self, s: Sample, findings: Vec<crate::analysis::findings::Finding>) {
        if let Some(r) = self.run.as_mut() {
            r.samples.push(s);
            r.findings = findings;
        }
    }
}

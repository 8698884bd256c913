//! The TUI's state and what each key does to it. No terminal here: the event loop
//! (`ui::run`) feeds keys, engine samples and diskstats in, and carries out the [`Action`]s that
//! come back; `render` draws the state. So every key can be tested on the state alone.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::device::{DeviceTree, WriteSafety};
use crate::engine::job::{Data, EngineKind, Job, Mode, Op, SizeSpec, TargetFacts};
use crate::engine::presets::{self, Preset};
use crate::engine::report::{RunResult, Sample};
use crate::engine::{TargetInfo, TargetSpec, explain};
use crate::stats::IostatX;
use crate::units::fmt_size;

/// Something the test could run on.
#[derive(Debug, Clone)]
pub struct TargetEntry {
    /// Device kernel name, or None for the scratch file.
    pub device: Option<String>,
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
    pub fn is_scratch(&self) -> bool {
        self.device.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Devices,
    Tests,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Main,
    Run,
    Results,
}

/// The fields of the test form.
pub const FORM_FIELDS: [&str; 8] = [
    "bs", "size", "runtime", "iodepth", "jobs", "mode", "data", "engine",
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
}

/// A test that runs or ran.
#[derive(Debug, Clone)]
pub struct RunView {
    pub test: String,
    pub target: String,
    pub job: Job,
    pub samples: Vec<Sample>,
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
    pub reopened: Option<crate::report::Figures>,
}

impl ResultRow {
    /// The figures compared and shown, live or reopened.
    pub fn figures(&self) -> Option<crate::report::Figures> {
        if let Some(f) = &self.reopened {
            return Some(f.clone());
        }
        let r = serde_json::to_value(self.result.as_ref()?).ok()?;
        Some(crate::report::figures_of(&self.test, &r))
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
    pub quit: bool,
}

impl App {
    pub fn new(tree: DeviceTree, scratch_dir: PathBuf) -> Self {
        let mut targets = vec![TargetEntry {
            device: None,
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
            let mut badges: Vec<&'static str> =
                d.safety_reasons.iter().map(|r| r.code.badge()).collect();
            badges.dedup();
            targets.push(TargetEntry {
                device: Some(d.name.clone()),
                label: d.name.clone(),
                depth: d.depth,
                size: d.size_bytes,
                safety: d.write_safety,
                badges,
                reasons: d.safety_reasons.iter().map(|r| r.detail.clone()).collect(),
                lbs: d.logical_block_size,
                model: d.model.clone().or(d.dm_name.clone()),
            });
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
            quit: false,
        };
        app.update_watch();
        app
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
        self.diskstats.clear();
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
            None => self.tree.holding(&self.scratch_dir).map(|d| d.name.clone()),
        };
        self.watched = match name {
            Some(n) => crate::stats::related(&self.tree, &n)
                .into_iter()
                .take(3)
                .collect(),
            None => Vec::new(),
        };
    }

    /// The keys that work in the current view, for the footer.
    pub fn footer(&self) -> Vec<(&'static str, &'static str)> {
        match (&self.overlay, self.screen) {
            (Overlay::Help, _) => vec![("Esc", "close")],
            (Overlay::Form(f), _) if f.editing.is_some() => {
                vec![("Enter", "accept"), ("Esc", "undo"), ("Ctrl-C", "quit")]
            }
            (Overlay::Form(_), _) => vec![
                ("↑↓", "field"),
                ("←→", "change"),
                ("Enter", "edit"),
                ("Esc", "done"),
            ],
            (Overlay::Confirm { .. }, _) => {
                vec![("type the name", ""), ("Enter", "start"), ("Esc", "cancel")]
            }
            (Overlay::Refused { .. }, _) | (Overlay::Explain { .. }, _) => vec![("Esc", "back")],
            (Overlay::None, Screen::Run) => {
                vec![("Esc", "cancel test"), ("q", "cancel+quit"), ("?", "help")]
            }
            (Overlay::None, Screen::Results) => vec![
                ("↑↓", "result"),
                ("r", "run again"),
                ("c", "compare"),
                ("o", "reopen saved"),
                ("Esc", "back"),
                ("?", "help"),
                ("q", "quit"),
            ],
            (Overlay::None, Screen::Main) => vec![
                ("↑↓/jk", "move"),
                ("Tab", "pane"),
                ("r", "run"),
                ("e", "edit"),
                ("x", "explain"),
                ("v", "results"),
                ("?", "help"),
                ("q", "quit"),
            ],
        }
    }

    /// Handles one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return Action::QuitNow;
        }
        match self.overlay.clone() {
            Overlay::Help => {
                if matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
                ) {
                    self.overlay = Overlay::None;
                }
                Action::None
            }
            Overlay::Refused { .. } | Overlay::Explain { .. } => {
                if matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('x')
                ) {
                    self.overlay = Overlay::None;
                }
                Action::None
            }
            Overlay::Confirm {
                device, mut typed, ..
            } => match key.code {
                KeyCode::Esc => {
                    self.overlay = Overlay::None;
                    self.status = Some("write test not started".into());
                    Action::None
                }
                KeyCode::Backspace => {
                    typed.pop();
                    self.overlay = Overlay::Confirm {
                        device,
                        typed,
                        error: None,
                    };
                    Action::None
                }
                KeyCode::Enter => {
                    if typed.trim() == device {
                        self.overlay = Overlay::None;
                        match self.selected_suite().cloned() {
                            Some(s) => self.start_suite(s, Some(device)),
                            None => self.start(Some(device)),
                        }
                    } else {
                        self.overlay = Overlay::Confirm {
                            device: device.clone(),
                            typed,
                            error: Some(format!("that is not {device}; type {device} exactly")),
                        };
                        Action::None
                    }
                }
                KeyCode::Char(c) => {
                    typed.push(c);
                    self.overlay = Overlay::Confirm {
                        device,
                        typed,
                        error: None,
                    };
                    Action::None
                }
                _ => Action::None,
            },
            Overlay::Form(form) => self.on_form_key(form, key),
            Overlay::None => match self.screen {
                Screen::Run => match key.code {
                    KeyCode::Esc => {
                        if let Some(r) = self.run.as_mut() {
                            r.cancelling = true;
                        }
                        Action::Cancel
                    }
                    KeyCode::Char('q') => {
                        self.quit = true;
                        Action::Quit
                    }
                    KeyCode::Char('?') => {
                        self.overlay = Overlay::Help;
                        Action::None
                    }
                    _ => Action::None,
                },
                Screen::Results => match key.code {
                    KeyCode::Esc | KeyCode::Backspace => {
                        self.screen = Screen::Main;
                        Action::None
                    }
                    KeyCode::Up | KeyCode::Char('k') => {
                        self.selected_result = self.selected_result.saturating_sub(1);
                        Action::None
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        if self.selected_result + 1 < self.results.len() {
                            self.selected_result += 1;
                        }
                        Action::None
                    }
                    KeyCode::Char('r') => self.request_run(),
                    KeyCode::Char('c') => {
                        self.compare_selected();
                        Action::None
                    }
                    KeyCode::Char('o') => Action::Reopen,
                    KeyCode::Char('?') => {
                        self.overlay = Overlay::Help;
                        Action::None
                    }
                    KeyCode::Char('q') => {
                        self.quit = true;
                        Action::Quit
                    }
                    _ => Action::None,
                },
                Screen::Main => self.on_main_key(key),
            },
        }
    }

    fn on_main_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Char('q') => {
                self.quit = true;
                Action::Quit
            }
            KeyCode::Char('?') => {
                self.overlay = Overlay::Help;
                Action::None
            }
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = match self.focus {
                    Focus::Devices => Focus::Tests,
                    Focus::Tests => Focus::Devices,
                };
                Action::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.move_selection(-1);
                Action::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.move_selection(1);
                Action::None
            }
            KeyCode::Enter => {
                match self.focus {
                    Focus::Devices => self.focus = Focus::Tests,
                    Focus::Tests => self.open_form(),
                }
                Action::None
            }
            KeyCode::Char('e') => {
                self.open_form();
                Action::None
            }
            KeyCode::Char('r') => self.request_run(),
            KeyCode::Char('x') => {
                self.overlay = self.explain();
                Action::None
            }
            KeyCode::Char('v') => {
                if self.results.is_empty() {
                    self.status = Some("no results yet: press r to run a test".into());
                } else {
                    self.screen = Screen::Results;
                }
                Action::None
            }
            KeyCode::Esc => {
                self.status = None;
                Action::None
            }
            _ => Action::None,
        }
    }

    fn move_selection(&mut self, by: isize) {
        match self.focus {
            Focus::Devices => {
                let n = self.targets.len() as isize;
                self.selected_target =
                    (self.selected_target as isize + by).clamp(0, n - 1) as usize;
                self.target_changed();
            }
            Focus::Tests => {
                let n = (self.tests.len() + self.suites.len()) as isize;
                self.selected_test = (self.selected_test as isize + by).clamp(0, n - 1) as usize;
            }
        }
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

    fn target_path(&self) -> String {
        match &self.target().device {
            Some(d) => format!("/dev/{d}"),
            None => self.scratch_dir.display().to_string(),
        }
    }

    fn start_suite(&mut self, suite: crate::suite::Suite, confirm: Option<String>) -> Action {
        let t = self.target().clone();
        let first = suite.tests[0].job(t.lbs);
        self.run = Some(RunView {
            test: format!("{}: {}", suite.name, suite.tests[0].name),
            target: t.label.clone(),
            job: first,
            samples: Vec::new(),
            cancelling: false,
            suite: Some(suite.name.clone()),
        });
        self.screen = Screen::Run;
        self.status = None;
        Action::StartSuite {
            spec: TargetSpec {
                path: self.target_path(),
                confirm,
                force: false,
            },
            suite: Box::new(suite),
        }
    }

    /// The explain pane for the selected test or suite, on the selected target.
    pub fn explain(&self) -> Overlay {
        let path = match &self.target().device {
            Some(d) => format!("/dev/{d}"),
            None => format!("{}/blkscope.fio.tmp", self.scratch_dir.display()),
        };
        let total = self.target().size;
        let job_lines = |job: &Job, lines: &mut Vec<String>| {
            lines.push(format!(
                "dd:  {}",
                explain::dd_command(job, &path, total)
                    .unwrap_or_else(|why| format!("(none: {why})"))
            ));
            lines.push(format!("fio: {}", explain::fio_command(job, &path, total)));
            for n in explain::flag_notes(job) {
                lines.push(format!("  - {n}"));
            }
            for t in explain::traps(job) {
                lines.push(format!("trap: {t}"));
            }
        };
        let mut lines = Vec::new();
        if let Some(s) = self.selected_suite() {
            lines.push(s.about.clone());
            if let Some(f) = &s.found {
                lines.push(format!("What the article found: {f}"));
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

    /// `c`: the selected result against the latest earlier result of the same test.
    pub fn compare_selected(&mut self) {
        let i = self.selected_result;
        let Some(cur) = self.results.get(i).and_then(|r| r.figures()) else {
            self.status = Some("nothing to compare: this result has no figures".into());
            return;
        };
        let prev = self.results[..i]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, r)| r.test == self.results[i].test && r.figures().is_some());
        self.status = Some(match prev {
            None => format!(
                "no earlier result of {} to compare with: run it again (r), or reopen saved runs (o)",
                self.results[i].test
            ),
            Some((j, p)) => {
                let p = p.figures().expect("checked");
                let ratio = |a: f64, b: f64| {
                    if a > 0.0 {
                        format!("{:.2}x", b / a)
                    } else {
                        "-".into()
                    }
                };
                format!(
                    "#{} vs #{}: MB/s {}  IOPS {}  p50 {}  p99 {}",
                    i + 1,
                    j + 1,
                    ratio(p.mb_s, cur.mb_s),
                    ratio(p.iops, cur.iops),
                    ratio(p.p50_us, cur.p50_us),
                    ratio(p.p99_us, cur.p99_us)
                )
            }
        });
    }

    /// Adds saved runs (oldest first) to the results as rows.
    pub fn add_reopened(&mut self, runs: Vec<serde_json::Value>) {
        let mut n = 0;
        for v in runs {
            let id = v["id"].as_str().unwrap_or("").to_string();
            let target = v["target"]["path"].as_str().unwrap_or("-").to_string();
            for (k, f) in crate::report::figures(&v).into_iter().enumerate() {
                let t = &v["tests"][k];
                let job: Option<Job> = serde_json::from_value(t["job"].clone()).ok();
                let total = v["target"]["size_bytes"].as_u64().unwrap_or(0);
                let (dd, fio) = match &job {
                    Some(j) => (
                        explain::dd_command(j, &target, total)
                            .unwrap_or_else(|why| format!("(no dd equivalent: {why})")),
                        explain::fio_command(j, &target, total),
                    ),
                    None => (String::new(), String::new()),
                };
                let name = if v["kind"] == "suite" {
                    format!("{}/{}", v["name"].as_str().unwrap_or(""), f.name)
                } else {
                    f.name.clone()
                };
                self.results.push(ResultRow {
                    test: name,
                    target: target.clone(),
                    info: None,
                    result: None,
                    error: None,
                    dd,
                    fio,
                    saved_id: Some(id.clone()),
                    reopened: Some(f),
                });
                n += 1;
            }
        }
        self.status = Some(format!("reopened {n} saved result(s)"));
        if !self.results.is_empty() {
            self.selected_result = self.results.len() - 1;
            self.screen = Screen::Results;
        }
    }

    /// The suite moved on to another test (or run of it).
    pub fn on_suite_progress(&mut self, test: &str, run: u32, of: u32) {
        let lbs = self.target().lbs;
        if let Some(r) = self.run.as_mut()
            && let Some(name) = r.suite.clone()
            && let Some(s) = self.suites.iter().find(|s| s.name == name)
        {
            if let Some(t) = s.tests.iter().find(|t| t.name == test) {
                r.job = t.job(lbs);
            }
            r.test = format!("{name}: {test} ({run}/{of})");
            r.samples.clear();
        }
    }

    /// The suite finished: one result row per test.
    pub fn on_suite_finished(&mut self, outcome: Result<crate::suite::SuiteOutcome, String>) {
        let Some(run) = self.run.clone() else { return };
        let suite = run.suite.clone().unwrap_or_default();
        let path = self.target_path();
        match outcome {
            Ok(o) => {
                for (t, job, r) in o.tests {
                    let total = o
                        .target
                        .as_ref()
                        .map(|i| i.size_bytes)
                        .unwrap_or(self.target().size);
                    self.results.push(ResultRow {
                        test: format!("{suite}/{}", t.name),
                        target: run.target.clone(),
                        info: o.target.clone(),
                        dd: explain::dd_command(&job, &path, total)
                            .unwrap_or_else(|why| format!("(no dd equivalent: {why})")),
                        fio: explain::fio_command(&job, &path, total),
                        result: Some(r),
                        error: None,
                        saved_id: None,
                        reopened: None,
                    });
                }
            }
            Err(e) => self.results.push(ResultRow {
                test: suite,
                target: run.target.clone(),
                info: None,
                result: None,
                error: Some(e),
                dd: String::new(),
                fio: String::new(),
                saved_id: None,
                reopened: None,
            }),
        }
        if !self.results.is_empty() {
            self.selected_result = self.results.len() - 1;
        }
        if !self.quit {
            self.screen = Screen::Results;
        }
    }

    fn start(&mut self, confirm: Option<String>) -> Action {
        let t = self.target().clone();
        let test = self.test().clone();
        let path = match &t.device {
            Some(d) => format!("/dev/{d}"),
            None => self.scratch_dir.display().to_string(),
        };
        self.run = Some(RunView {
            test: test.name.to_string(),
            target: t.label.clone(),
            job: test.job.clone(),
            samples: Vec::new(),
            cancelling: false,
            suite: None,
        });
        self.screen = Screen::Run;
        self.status = None;
        Action::Start {
            spec: TargetSpec {
                path,
                confirm,
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

    pub fn on_sample(&mut self, s: Sample) {
        if let Some(r) = self.run.as_mut() {
            r.samples.push(s);
        }
    }

    /// The engine finished (or failed to start).
    pub fn on_finished(&mut self, outcome: Result<(TargetInfo, RunResult), String>) {
        let Some(run) = self.run.clone() else { return };
        let t = self.target();
        let path = match &t.device {
            Some(d) => format!("/dev/{d}"),
            None => format!("{}/blkscope.fio.tmp", self.scratch_dir.display()),
        };
        let total = match &outcome {
            Ok((info, _)) => info.size_bytes.saturating_sub(run.job.offset),
            Err(_) => t.size,
        };
        // dd runs over a size: for a timed test, over the bytes this run moved.
        let mut dd_job = run.job.clone();
        let mut dd_note = "";
        if dd_job.runtime.is_some()
            && let Ok((_, r)) = &outcome
        {
            let per = r.bytes / dd_job.jobs.max(1) as u64 / dd_job.bs * dd_job.bs;
            dd_job.runtime = None;
            dd_job.size = Some(SizeSpec::Bytes(per * dd_job.jobs.max(1) as u64));
            dd_note = "  # as much as this run moved";
        }
        let dd = explain::dd_command(&dd_job, &path, total)
            .map(|c| format!("{c}{dd_note}"))
            .unwrap_or_else(|why| format!("(no dd equivalent: {why})"));
        let fio = explain::fio_command(&run.job, &path, total);
        let (info, result, error) = match outcome {
            Ok((i, r)) => (Some(i), Some(r), None),
            Err(e) => (None, None, Some(e)),
        };
        self.results.push(ResultRow {
            test: run.test,
            target: run.target,
            info,
            result,
            error,
            dd,
            fio,
            saved_id: None,
            reopened: None,
        });
        self.selected_result = self.results.len() - 1;
        if !self.quit {
            self.screen = Screen::Results;
        }
    }

    fn on_form_key(&mut self, mut form: Form, key: KeyEvent) -> Action {
        if let Some(mut text) = form.editing.take() {
            match key.code {
                KeyCode::Esc => {
                    form.error = None;
                }
                KeyCode::Backspace => {
                    text.pop();
                    form.editing = Some(text);
                }
                KeyCode::Enter => match self.apply_text(form.field, &text) {
                    Ok(()) => form.error = None,
                    Err(e) => {
                        form.error = Some(e);
                        form.editing = Some(text);
                    }
                },
                KeyCode::Char(c) => {
                    text.push(c);
                    form.editing = Some(text);
                }
                _ => form.editing = Some(text),
            }
            self.overlay = Overlay::Form(form);
            return Action::None;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                self.overlay = Overlay::None;
                return Action::None;
            }
            KeyCode::Up | KeyCode::Char('k') => form.field = form.field.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                form.field = (form.field + 1).min(FORM_FIELDS.len() - 1)
            }
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' ') => {
                let fwd = key.code != KeyCode::Left;
                if let Err(e) = self.cycle(form.field, fwd) {
                    form.error = Some(e);
                } else {
                    form.error = None;
                }
            }
            KeyCode::Enter => {
                if matches!(FORM_FIELDS[form.field], "mode" | "data" | "engine") {
                    if let Err(e) = self.cycle(form.field, true) {
                        form.error = Some(e);
                    }
                } else {
                    form.editing = Some(self.field_value(form.field));
                    form.error = None;
                }
            }
            KeyCode::Char('r') => {
                self.overlay = Overlay::None;
                return self.request_run();
            }
            _ => {}
        }
        self.overlay = Overlay::Form(form);
        Action::None
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
            "engine" => j.engine.as_str().into(),
            _ => String::new(),
        }
    }

    /// Applies a typed value if it parses and the job stays valid on the target.
    fn apply_text(&mut self, field: usize, text: &str) -> Result<(), String> {
        use crate::engine::job::{parse_duration, parse_size, parse_size_or_percent};
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
                    .map_err(|_| format!("'{t}' is not a number: use 1 to 4096"))?
            }
            "jobs" => {
                j.jobs = t
                    .parse()
                    .map_err(|_| format!("'{t}' is not a number: use 1 to 256"))?
            }
            _ => return Ok(()),
        }
        self.set_job(j)
    }

    fn cycle(&mut self, field: usize, fwd: bool) -> Result<(), String> {
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
            "engine" => j.engine = step(&[EngineKind::Uring, EngineKind::Psync], j.engine, fwd),
            _ => return Ok(()),
        }
        self.set_job(j)
    }

    /// Keeps the edited job only when it is valid on the selected target.
    fn set_job(&mut self, j: Job) -> Result<(), String> {
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

//! The terminal UI: [`app`] is its state and what each key does, [`render`] draws it, and
//! this module runs it in the [`shell`] (the terminal, the event loop, signals, the panic hook
//! the lessons' TUI shares): key events, a render tick (`--fps`), engine messages and a
//! diskstats tick. The engine runs on its own thread and never blocks the UI.

pub mod app;
pub mod keymap;
pub mod learn;
mod remote;
pub mod render;
pub mod shell;
mod whole_read;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEventKind};

use crate::device::{DiscoverOptions, discover};
use crate::engine::result::Sample;
use crate::engine::{self, TargetInfo};
use crate::result::RunResult;
use crate::stats::Sampler;
use crate::sysroot::SysRoot;
use app::{Action, App};
pub use render::Look;

pub struct UiOptions {
    pub root: SysRoot,
    /// Where the scratch file goes.
    pub dir: PathBuf,
    pub fps: u32,
    pub look: Look,
    /// Lab devices (kernel name, note), marked and offered first.
    pub lab: Vec<(String, String)>,
    /// Capture the mouse (click to select, wheel to scroll); off with --no-mouse, for terminals
    /// where it gets in the way of selecting text to copy.
    pub mouse: bool,
    /// `--host`: the hosts whose devices the tree shows (this machine's are not shown then).
    pub hosts: Vec<crate::remote::Host>,
    /// How to reach them.
    pub ssh: crate::remote::Ssh,
}

/// Colour unless NO_COLOR is set (non-empty); ASCII on consoles without braille fonts.
pub fn look_from_env(force_ascii: bool) -> Look {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let term = std::env::var("TERM").unwrap_or_default();
    let plain_term = term.is_empty()
        || term == "linux"
        || term == "dumb"
        || term == "ansi"
        || term.starts_with("vt");
    Look {
        color: !no_color && term != "dumb",
        ascii: force_ascii || plain_term,
    }
}

enum EngineMsg {
    /// A live sample, with what the analysis makes of the test so far.
    Sample(Sample, Vec<crate::analysis::findings::Finding>),
    SuiteProgress(String, u32, u32),
    /// A suite's outcome, and the id it was saved under.
    SuiteFinished(Box<Result<crate::session::Outcome, String>>, Option<String>),
    /// The doctor's findings for a device.
    Doctor(String, Result<Vec<crate::doctor::Finding>, String>),
    /// One interval of the doctor pane's live top (who does I/O on the device now).
    DoctorTop(String, Result<crate::doctor::watch::Interval, String>),
    /// A test's target and result, and the id it was saved under.
    Finished(Box<Result<(TargetInfo, RunResult), String>>, Option<String>),
    /// A host answered (its link and devices), or why it did not.
    HostUp(
        String,
        Box<Result<(crate::remote::Link, crate::device::DeviceTree), String>>,
    ),
    /// A host's devices listed again (after a run there).
    HostTree(String, Result<crate::device::DeviceTree, String>),
    /// A host's iostat report, or why its stream ended.
    HostStats(String, Result<Vec<crate::stats::IostatX>, String>),
    /// A test or suite on a host ended: what its blkscope printed, and whether it was
    /// cancelled.
    RemoteFinished(Box<crate::remote::HostOutcome>, bool),
    /// The hosts' newest saved runs (ids as HOST:ID), and what could not be read.
    Reopened(Vec<crate::runs::SavedRun>, Vec<String>),
    /// A whole read's bytes done, of its size.
    WholeProgress(u64, u64),
    /// A whole read ended: the check's report and the device as it left it.
    WholeRead(Box<Result<(crate::device::SafetyReport, Option<crate::device::Device>), String>>),
}

/// Saved runs `o` fetches from each host: one ssh call each, after one to list them.
const REOPEN_PER_HOST: usize = 10;

/// Runs `work` on the engine thread with a fresh cancel flag; its final message is sent when it
/// returns. The shell's panic hook knows of it meanwhile ([`shell::Work`]).
fn spawn_engine<F>(
    tx: &tokio::sync::mpsc::UnboundedSender<EngineMsg>,
    work: F,
) -> std::io::Result<(std::thread::JoinHandle<()>, Arc<AtomicBool>)>
where
    F: FnOnce(Arc<AtomicBool>, &tokio::sync::mpsc::UnboundedSender<EngineMsg>) -> EngineMsg
        + Send
        + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let (tx2, flag2) = (tx.clone(), flag.clone());
    let working = shell::Work::started(&flag);
    let h = std::thread::Builder::new()
        .name("blkscope-engine".into())
        .spawn(move || {
            let msg = work(flag2, &tx2);
            drop(working);
            let _ = tx2.send(msg);
        });
    h.map(|h| (h, flag))
}

/// Hands the session's live samples and progress to the UI thread.
struct ToUi<'a>(&'a tokio::sync::mpsc::UnboundedSender<EngineMsg>);

impl crate::session::Observer for ToUi<'_> {
    fn run_starting(&mut self, test: &str, run: u32, of: u32) {
        let _ = self
            .0
            .send(EngineMsg::SuiteProgress(test.to_string(), run, of));
    }
    fn wants_findings(&self) -> bool {
        true
    }
    fn sample(&mut self, s: &Sample, findings: &[crate::analysis::findings::Finding]) {
        let _ = self.0.send(EngineMsg::Sample(s.clone(), findings.to_vec()));
    }
}

/// Saves an outcome the way the command line does; returns its id (None if it was not saved).
fn save(root: &SysRoot, kind: &str, name: &str, o: &crate::session::Outcome) -> Option<String> {
    if o.tests.is_empty() {
        return None;
    }
    let path = crate::session::save(root, kind, name, o).ok()?;
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// Runs the TUI until the user quits.
pub fn run(opts: UiOptions) -> Result<(), crate::Error> {
    // Labs left by a blkscope that was killed outright go at the next start at the latest.
    if opts.root.is_live() && crate::sys::geteuid() == 0 {
        crate::lab::cleanup_stale();
    }
    let stale = engine::target::remove_stale_scratch_files(&opts.dir);
    let mut app = if opts.hosts.is_empty() {
        App::new(
            discover(&opts.root, &DiscoverOptions::default())?,
            opts.dir.clone(),
        )
    } else {
        let labels: Vec<String> = opts.hosts.iter().map(|h| h.label.clone()).collect();
        App::for_hosts(&labels, opts.dir.clone())
    };
    app.mark_lab(&opts.lab);
    match crate::suite::all() {
        Ok(all) => app.suites = all,
        Err(e) => app.status = Some(format!("your suite file is refused: {e}")),
    }
    if stale > 0 {
        app.status = Some(format!(
            "removed {stale} scratch file(s) left by an earlier blkscope that did not exit cleanly"
        ));
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<EngineMsg>();
    let mut sampler = Sampler::new(opts.root.clone());
    let _ = sampler.prime();
    let mut lp = Loop {
        app: &mut app,
        opts: &opts,
        tx,
        sampler,
        procs: None,
        cancel: None,
        worker: None,
        quitting: false,
        hosts: remote::Hosts::default(),
        top_running: Arc::new(AtomicBool::new(false)),
        whole_cancel: None,
    };
    remote::connect(&opts.hosts, &opts.ssh, &lp.tx);
    let shell = shell::Options {
        mouse: opts.mouse,
        fps: opts.fps,
    };
    shell::run(&shell, &mut lp, rx)
}

impl shell::Program for Loop<'_> {
    type Msg = EngineMsg;

    fn draw(&mut self, f: &mut ratatui::Frame) {
        render::draw(f, self.app, self.opts.look);
    }

    fn on_event(&mut self, ev: Event, area: ratatui::layout::Rect) {
        match ev {
            Event::Key(k) if k.kind == KeyEventKind::Press => self.on_key(k),
            Event::Mouse(m) => self.on_mouse(m, area),
            _ => {}
        }
    }

    fn on_msg(&mut self, m: EngineMsg) {
        self.on_engine(m);
    }

    fn on_tick(&mut self) {
        self.on_stats_tick();
    }

    fn quit(&mut self) {
        Loop::quit(self);
    }

    fn done(&self) -> bool {
        self.quitting
    }

    fn shut_down(&mut self) -> Option<String> {
        Loop::shut_down(self)
    }
}

/// The event loop's state beside the app's: the engine thread and its cancel flag, the
/// samplers, the hosts' links and streams, and whether to redraw or stop.
struct Loop<'a> {
    app: &'a mut App,
    opts: &'a UiOptions,
    tx: tokio::sync::mpsc::UnboundedSender<EngineMsg>,
    sampler: Sampler,
    /// Every process's I/O counters at the last stats tick, while a test runs.
    procs: Option<crate::stats::procs::ProcSnapshot>,
    cancel: Option<Arc<AtomicBool>>,
    worker: Option<std::thread::JoinHandle<()>>,
    quitting: bool,
    hosts: remote::Hosts,
    /// A doctor-pane top interval is being traced.
    top_running: Arc<AtomicBool>,
    /// Stops the whole read under way (`b`).
    whole_cancel: Option<Arc<AtomicBool>>,
}

/// An engine thread that started (and its cancel flag), or why it did not.
type Spawned = std::io::Result<(std::thread::JoinHandle<()>, Arc<AtomicBool>)>;

impl Loop<'_> {
    fn on_key(&mut self, k: crossterm::event::KeyEvent) {
        // Debug builds only: a key that panics, so tests can check that a panic stops the
        // engine, removes the scratch file and restores the terminal.
        #[cfg(debug_assertions)]
        if let crossterm::event::KeyCode::Char(c) = k.code
            && std::env::var("BLKSCOPE_DEBUG_PANIC_KEY").ok() == Some(c.to_string())
        {
            panic!("BLKSCOPE_DEBUG_PANIC_KEY pressed");
        }
        match self.app.on_key(k) {
            Action::None => {}
            Action::Start { spec, job } => self.start_test(spec, job),
            Action::StartSuite { spec, suite } => self.start_suite(spec, suite),
            Action::StartRemote { host, args } => self.start_remote(host, args),
            Action::Doctor { device, host } => self.doctor(device, host),
            Action::ReadWhole { device } => self.read_whole(device),
            Action::StopWholeRead => self.stop_whole_read(),
            // Over hosts, their saved runs (an ssh call a run, so fewer).
            Action::Reopen if self.app.remote() => self.reopen_remote(),
            Action::Reopen => self.app.add_reopened(crate::runs::newest(20)),
            Action::Cancel => self.cancel(),
            Action::Quit | Action::QuitNow => self.quit(),
        }
    }

    fn on_mouse(&mut self, m: crossterm::event::MouseEvent, area: ratatui::layout::Rect) {
        use crossterm::event::{MouseButton, MouseEventKind};
        let hit = render::hit_test(self.app, area, m.column, m.row);
        // A click or a turn of the wheel selects or scrolls; neither starts anything.
        let _ = match m.kind {
            MouseEventKind::Down(MouseButton::Left) => self.app.on_click(hit),
            MouseEventKind::ScrollDown => self.app.on_wheel(hit, 1),
            MouseEventKind::ScrollUp => self.app.on_wheel(hit, -1),
            _ => return,
        };
    }

    /// Tells a running engine to stop.
    fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.store(true, Ordering::Relaxed);
        }
    }

    /// Stops what runs and ends the loop (q, SIGTERM, SIGHUP).
    fn quit(&mut self) {
        self.cancel();
        self.stop_whole_read();
        self.quitting = true;
    }

    /// Keeps a started engine thread, or hands why it could not start to `failed`.
    fn started(&mut self, r: Spawned, failed: impl FnOnce(&mut App, String)) {
        match r {
            Ok((h, flag)) => {
                self.worker = Some(h);
                self.cancel = Some(flag);
            }
            Err(e) => failed(self.app, format!("cannot start the engine thread: {e}")),
        }
    }

    /// The engine thread sent its last message: it is done.
    fn engine_done(&mut self) {
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
        self.cancel = None;
    }

    fn start_test(&mut self, spec: crate::engine::TargetSpec, job: crate::engine::Job) {
        let root = self.opts.root.clone();
        let name = self
            .app
            .run
            .as_ref()
            .map(|r| r.test.clone())
            .unwrap_or_else(|| job.label());
        let r = spawn_engine(&self.tx, move |flag, tx| {
            let mut obs = ToUi(tx);
            let r = crate::session::run_test(&root, &spec, &name, &job, 1, flag, &mut obs);
            let saved = r.as_ref().ok().and_then(|o| save(&root, "run", &name, o));
            let r = r.map_err(|e| e.to_string()).and_then(|o| {
                match (o.target, o.tests.into_iter().next()) {
                    (Some(info), Some(t)) => Ok((info, t.result)),
                    _ => Err("cancelled before the test started".to_string()),
                }
            });
            EngineMsg::Finished(Box::new(r), saved)
        });
        self.started(r, |app, e| app.on_finished(Err(e)));
    }

    fn start_suite(&mut self, spec: crate::engine::TargetSpec, suite: Box<crate::suite::Suite>) {
        let root = self.opts.root.clone();
        let r = spawn_engine(&self.tx, move |flag, tx| {
            let mut obs = ToUi(tx);
            let r = crate::session::run_suite(
                &root,
                &suite,
                &spec,
                suite.repeat,
                false,
                flag,
                &mut obs,
            );
            let saved = r
                .as_ref()
                .ok()
                .and_then(|o| save(&root, "suite", &suite.name, o));
            EngineMsg::SuiteFinished(Box::new(r.map_err(|e| e.to_string())), saved)
        });
        self.started(r, |app, e| app.on_suite_finished(Err(e)));
    }

    fn start_remote(&mut self, host: String, args: Vec<String>) {
        let Some(link) = self.hosts.links.get(&host).cloned() else {
            self.app
                .on_remote_finished(Err(format!("{host} has not answered")));
            return;
        };
        let r = spawn_engine(&self.tx, move |flag, tx| {
            let o = remote::run(&link, &args, &flag, tx);
            EngineMsg::RemoteFinished(Box::new(o), flag.load(Ordering::Relaxed))
        });
        self.started(r, |app, e| app.on_remote_finished(Err(e)));
    }

    /// The doctor's findings for a device, here or on its host, on a thread of their own.
    fn doctor(&mut self, device: String, host: Option<String>) {
        let (root, tx) = (self.opts.root.clone(), self.tx.clone());
        let link = host.and_then(|h| self.hosts.links.get(&h).cloned());
        let spawned = std::thread::Builder::new()
            .name("blkscope-doctor".into())
            .spawn(move || {
                let r = match link {
                    Some(link) => remote::doctor(&link, &device),
                    None => crate::doctor::examine(
                        &root,
                        std::slice::from_ref(&device),
                        &crate::doctor::Options::default(),
                    )
                    .map(|mut v| v.pop().map(|d| d.findings).unwrap_or_default())
                    .map_err(|e| e.to_string()),
                };
                let _ = tx.send(EngineMsg::Doctor(device, r));
            });
        if let Err(e) = spawned {
            self.app.status = Some(format!("cannot start the doctor: {e}"));
        }
    }

    /// While the doctor pane is open on a device here (its findings in), one more second of the
    /// block layer's trace of it, on a thread of its own: the pane's live top.
    fn doctor_top(&mut self) {
        let crate::ui::app::Overlay::Doctor {
            device,
            findings: Some(_),
        } = &self.app.overlay
        else {
            return;
        };
        if self.app.target().host.is_some() || self.top_running.load(Ordering::Relaxed) {
            return;
        }
        self.top_running.store(true, Ordering::Relaxed);
        let (root, tx, device) = (self.opts.root.clone(), self.tx.clone(), device.clone());
        let running = self.top_running.clone();
        let spawned = std::thread::Builder::new()
            .name("blkscope-top".into())
            .spawn(move || {
                let r = crate::doctor::watch::devices(&root, std::slice::from_ref(&device))
                    .map_err(|e| e.to_string())
                    .and_then(|devs| {
                        crate::doctor::watch::watch_once(
                            &root,
                            &devs,
                            Duration::from_secs(1),
                            &AtomicBool::new(false),
                        )
                    });
                let _ = tx.send(EngineMsg::DoctorTop(device, r));
            });
        if spawned.is_err() {
            running.store(false, Ordering::Relaxed);
        }
    }

    /// The hosts' newest saved runs, fetched on a thread of their own.
    fn reopen_remote(&mut self) {
        let links: Vec<crate::remote::Link> = self.hosts.links.values().cloned().collect();
        let tx = self.tx.clone();
        self.app.status = Some(format!(
            "fetching the newest saved runs of {}...",
            crate::output::count(links.len(), "host")
        ));
        let spawned = std::thread::Builder::new()
            .name("blkscope-reopen".into())
            .spawn(move || {
                let (mut runs, mut errors) = (Vec::new(), Vec::new());
                for link in links {
                    let (r, e) = link.saved_runs(REOPEN_PER_HOST);
                    runs.extend(r);
                    errors.extend(e);
                }
                let _ = tx.send(EngineMsg::Reopened(runs, errors));
            });
        if let Err(e) = spawned {
            self.app.status = Some(format!("cannot fetch the hosts' runs: {e}"));
        }
    }

    fn on_engine(&mut self, msg: EngineMsg) {
        let app = &mut *self.app;
        match msg {
            EngineMsg::Sample(s, found) => app.on_sample(s, found),
            EngineMsg::Doctor(d, r) => app.on_doctor(&d, r),
            EngineMsg::WholeProgress(done, size) => app.on_whole_progress(done, size),
            EngineMsg::WholeRead(r) => {
                self.whole_cancel = None;
                app.on_whole_read(*r);
            }
            EngineMsg::DoctorTop(d, r) => {
                self.top_running.store(false, Ordering::Relaxed);
                app.on_doctor_top(&d, r);
            }
            EngineMsg::SuiteProgress(t, i, n) => app.on_suite_progress(&t, i, n),
            EngineMsg::SuiteFinished(r, saved) => {
                app.on_suite_saved(*r, saved);
                self.engine_done();
            }
            EngineMsg::HostUp(label, r) => self.on_host_up(label, *r),
            EngineMsg::HostStats(label, r) => app.on_host_stats(&label, r),
            EngineMsg::HostTree(label, r) => app.on_host_tree(&label, r),
            EngineMsg::RemoteFinished(o, cancelled) => self.on_remote_finished(&o, cancelled),
            EngineMsg::Reopened(runs, errors) => {
                app.add_reopened(runs);
                if let Some(e) = errors.first() {
                    let more = errors.len() - 1;
                    let tail = if more > 0 {
                        format!(" (and {more} more)")
                    } else {
                        String::new()
                    };
                    app.status = Some(format!(
                        "{}; not read: {e}{tail}",
                        app.status.clone().unwrap_or_default()
                    ));
                }
            }
            EngineMsg::Finished(r, saved) => {
                app.on_finished(*r);
                if let (Some(id), Some(row)) = (saved, app.results.last_mut()) {
                    row.saved_id = Some(id);
                }
                self.engine_done();
            }
        }
    }

    /// A host answered: its iostat stream starts and its devices join the tree.
    fn on_host_up(
        &mut self,
        label: String,
        r: Result<(crate::remote::Link, crate::device::DeviceTree), String>,
    ) {
        let (link, tree) = match r {
            Ok(x) => x,
            Err(e) => return self.app.on_host_tree(&label, Err(e)),
        };
        let names: Vec<String> = tree
            .listed(false)
            .devices
            .iter()
            .map(|d| d.name.clone())
            .collect();
        match remote::stream_stats(&link, &names, &self.tx) {
            Ok(c) => self.hosts.streams.push(c),
            Err(e) => self
                .app
                .on_host_stats(&label, Err(format!("iostat stream: {e}"))),
        }
        self.hosts.links.insert(label.clone(), link);
        self.app.on_host_tree(&label, Ok(tree));
    }

    fn on_remote_finished(&mut self, o: &crate::remote::HostOutcome, cancelled: bool) {
        let job = self
            .app
            .run
            .as_ref()
            .map(|r| r.job.clone())
            .unwrap_or_default();
        if o.code == 3 && !cancelled {
            let why = o
                .stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            self.app
                .on_remote_needs_confirm(&format!("{}: {why}", o.host));
        } else {
            self.app
                .on_remote_finished(remote::outcome(o, &job, cancelled));
        }
        // What the run wrote changes what the host's tree says of its devices.
        if let Some(link) = self.hosts.links.get(&o.host) {
            remote::relist(link, &self.tx);
        }
        self.engine_done();
    }

    /// Once a second: diskstats for the panel, and who else does I/O while a test runs (not
    /// when idle: it costs a /proc walk). With --host, the hosts' own `stat` streams feed the
    /// panel instead.
    fn on_stats_tick(&mut self) {
        if self.app.remote() {
            return;
        }
        self.doctor_top();
        let root = &self.opts.root;
        if self.app.running() {
            let now = crate::stats::procs::ProcSnapshot::read(root);
            if let Some(prev) = &self.procs {
                let mut b = crate::stats::procs::busy(root, prev, &now, &[std::process::id()]);
                b.truncate(3);
                crate::stats::procs::tie_to_devices(root, &mut b, &self.app.tree);
                self.app.busy = b;
            }
            self.procs = Some(now);
        } else if self.procs.is_some() {
            self.procs = None;
            self.app.busy.clear();
        }
        if let Ok(v) = self.sampler.sample() {
            let app = &mut *self.app;
            app.diskstats = v
                .into_iter()
                .filter(|x| app.watched.contains(&x.disk_device))
                .collect();
        }
    }

    /// Stops the engine (it was told to cancel) and lets it remove its scratch file; closes the
    /// hosts' links.
    fn shut_down(&mut self) -> Option<String> {
        let mut stuck = false;
        if let Some(w) = self.worker.take() {
            let t = Instant::now();
            while !w.is_finished() && t.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if w.is_finished() {
                let _ = w.join();
            } else {
                stuck = true;
            }
        }
        self.hosts.close();
        stuck.then(|| self.app.still_in_flight())
    }
}

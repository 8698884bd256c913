//! `blkscope learn` in the terminal: the list of lessons, a lesson's question (pick a
//! prediction with a key or a click), the run (live MB/s, the iostat -x panel of the lab device
//! with the columns that matter highlighted, the step's "look at"), and the answer (each claim
//! with its numbers, the prediction against what was measured, the dd and fio lines).
//!
//! It runs in the main TUI's [`shell`](super::shell). The lesson runs on its own thread, which
//! makes and removes the lab; quitting, SIGTERM, SIGHUP, a terminal that went away or a panic
//! cancels it and waits for it, so the lab is gone when the TUI is.

mod draw;
mod keys;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEventKind};
use ratatui::layout::Rect;
use tokio::sync::mpsc::UnboundedSender;

use super::Look;
use crate::engine::Job;
use crate::engine::result::Sample;
use crate::learn::progress::Done;
use crate::learn::run::{self as lesson_run, LessonRun, StepRun, TestRun};
use crate::learn::{Lesson, Step};
use crate::stats::{IostatX, Sampler};
use crate::sysroot::SysRoot;
use keys::Cmd;

pub struct Options {
    pub root: SysRoot,
    pub lessons: Vec<Lesson>,
    /// A lesson to open at its question.
    pub open: Option<String>,
    pub look: Look,
    pub fps: u32,
    pub mouse: bool,
    pub size: u64,
    pub dir: Option<PathBuf>,
    /// `--repeat`: how many times each test runs.
    pub repeat: Option<usize>,
    pub save: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    List,
    Question,
    Running,
    Answer,
}

/// What the lesson thread says.
pub enum Msg {
    Status(String),
    Step {
        index: usize,
        step: Box<Step>,
        path: String,
    },
    Test(String, Box<Job>),
    Sample(Box<Sample>),
    TestDone(Box<TestRun>),
    StepDone(Box<StepRun>),
    Finished(Result<Box<LessonRun>, String>),
}

/// The state the panes draw.
pub struct LearnApp {
    pub lessons: Vec<Lesson>,
    pub done: BTreeMap<String, Done>,
    pub selected: usize,
    pub pane: Pane,
    pub prediction: Option<usize>,
    pub status: String,
    /// The step running: its index, definition and device path.
    pub step: Option<(usize, Step, String)>,
    pub test: Option<(String, Job)>,
    pub samples: Vec<Sample>,
    /// The lab device's iostat -x over the last second.
    pub iostat: Option<IostatX>,
    pub steps_done: Vec<StepRun>,
    /// Every test finished so far, for "measured so far".
    pub tests_done: Vec<TestRun>,
    pub result: Option<LessonRun>,
    pub error: Option<String>,
    pub saved: Option<String>,
    pub scroll: u16,
}

impl LearnApp {
    pub fn new(lessons: Vec<Lesson>, open: Option<&str>) -> Self {
        let selected = open
            .and_then(|n| lessons.iter().position(|l| l.name == n))
            .unwrap_or(0);
        LearnApp {
            pane: if open.is_some() {
                Pane::Question
            } else {
                Pane::List
            },
            lessons,
            done: crate::learn::progress::done(),
            selected,
            prediction: None,
            status: String::new(),
            step: None,
            test: None,
            samples: Vec::new(),
            iostat: None,
            steps_done: Vec::new(),
            tests_done: Vec::new(),
            result: None,
            error: None,
            saved: None,
            scroll: 0,
        }
    }

    pub fn lesson(&self) -> &Lesson {
        &self.lessons[self.selected]
    }

    /// Applies a message from the lesson thread.
    pub fn on_msg(&mut self, m: Msg) {
        match m {
            Msg::Status(s) => self.status = s,
            Msg::Step { index, step, path } => {
                self.status = format!("step {}: {}", index + 1, step.name);
                self.step = Some((index, *step, path));
            }
            Msg::Test(name, job) => {
                self.status = format!("running {name}");
                self.test = Some((name, *job));
                self.samples.clear();
            }
            Msg::Sample(s) => self.samples.push(*s),
            Msg::TestDone(t) => self.tests_done.push(*t),
            Msg::StepDone(r) => self.steps_done.push(*r),
            Msg::Finished(r) => {
                match r {
                    Ok(r) => {
                        self.result = Some(*r);
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e),
                }
                self.pane = Pane::Answer;
                self.scroll = 0;
            }
        }
    }

    /// Back to the list (from the question or the answer).
    fn back(&mut self) {
        self.pane = Pane::List;
        self.done = crate::learn::progress::done();
    }

    /// What a key does, as the pane's table binds it: true to start the lesson; `quit` set
    /// on q.
    fn on_key(&mut self, e: &KeyEvent, quit: &mut bool) -> bool {
        let n = self.lessons.len();
        match keys::command(self, e) {
            Some(Cmd::Quit) => *quit = true,
            Some(Cmd::Select(by)) => {
                self.selected =
                    (self.selected as isize + isize::from(by)).rem_euclid(n as isize) as usize
            }
            Some(Cmd::Open) => {
                self.pane = Pane::Question;
                self.prediction = None;
            }
            Some(Cmd::Predict) => {
                if let KeyCode::Char(c) = e.code
                    && c.is_ascii_lowercase()
                {
                    let i = (c as u8 - b'a') as usize;
                    if i < self.lesson().choices.len() {
                        self.prediction = Some(i);
                    }
                }
            }
            Some(Cmd::Run) => return true,
            Some(Cmd::Back) => self.back(),
            Some(Cmd::Scroll(by)) => {
                self.scroll = (self.scroll as i32 + i32::from(by)).clamp(0, u16::MAX as i32) as u16
            }
            None => {}
        }
        false
    }

    /// A click: a lesson in the list, a choice in the question; the wheel scrolls the answer.
    /// `screen`: the whole terminal, laid out as the draw lays it out.
    fn on_mouse(&mut self, kind: MouseEventKind, row: u16, screen: Rect) -> bool {
        match (self.pane, kind) {
            (Pane::List, MouseEventKind::Down(MouseButton::Left)) => {
                if let Some(i) = draw::list_row_at(self, row, screen) {
                    if i == self.selected {
                        self.pane = Pane::Question;
                        self.prediction = None;
                    }
                    self.selected = i;
                }
            }
            (Pane::Question, MouseEventKind::Down(MouseButton::Left)) => {
                if let Some(i) = draw::choice_at(self, row, screen) {
                    self.prediction = Some(i);
                } else if draw::run_button_at(self, row, screen) {
                    return true;
                }
            }
            (Pane::Answer, MouseEventKind::ScrollDown) => {
                self.scroll = self.scroll.saturating_add(3)
            }
            (Pane::Answer, MouseEventKind::ScrollUp) => self.scroll = self.scroll.saturating_sub(3),
            _ => {}
        }
        false
    }

    /// Clears what the last run showed, for a new one.
    fn start(&mut self) {
        self.pane = Pane::Running;
        self.status = "starting".into();
        self.step = None;
        self.test = None;
        self.samples.clear();
        self.iostat = None;
        self.steps_done.clear();
        self.tests_done.clear();
        self.result = None;
        self.error = None;
        self.saved = None;
    }
}

/// Sends what the lesson does to the UI thread.
struct ToUi(UnboundedSender<Msg>);

impl lesson_run::Observer for ToUi {
    fn status(&mut self, what: &str) {
        let _ = self.0.send(Msg::Status(what.to_string()));
    }
    fn step_starting(&mut self, index: usize, step: &Step, path: &str) {
        let _ = self.0.send(Msg::Step {
            index,
            step: Box::new(step.clone()),
            path: path.to_string(),
        });
    }
    fn test_starting(&mut self, name: &str, job: &Job, _path: &str) {
        let _ = self
            .0
            .send(Msg::Test(name.to_string(), Box::new(job.clone())));
    }
    fn sample(&mut self, s: &Sample) {
        let _ = self.0.send(Msg::Sample(Box::new(s.clone())));
    }
    fn test_done(&mut self, t: &TestRun) {
        let _ = self.0.send(Msg::TestDone(Box::new(t.clone())));
    }
    fn step_done(&mut self, _i: usize, r: &StepRun) {
        let _ = self.0.send(Msg::StepDone(Box::new(r.clone())));
    }
}

/// The lesson thread: runs the lesson (making and removing its lab), saves it, says it ended.
/// The shell's panic hook knows of it while it runs.
fn spawn_lesson(
    opts: &Options,
    lesson: Lesson,
    prediction: Option<usize>,
    tx: UnboundedSender<Msg>,
    cancel: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let (root, size, dir, save) = (opts.root.clone(), opts.size, opts.dir.clone(), opts.save);
    let repeat = opts.repeat;
    let working = super::shell::Work::started(&cancel);
    std::thread::Builder::new()
        .name("blkscope-lesson".into())
        .spawn(move || {
            let o = lesson_run::Options {
                size,
                dir,
                prediction,
                repeat,
            };
            let r = lesson_run::run(&root, &lesson, &o, cancel, &mut ToUi(tx.clone()));
            if let Ok(r) = &r
                && save
                && !r.cancelled
            {
                let _ = crate::learn::progress::save(r);
            }
            drop(working);
            let _ = tx.send(Msg::Finished(r.map(Box::new).map_err(|e| e.to_string())));
        })
}

/// Runs the lessons' TUI until the user quits.
pub fn run(opts: Options) -> Result<(), crate::Error> {
    if opts.lessons.is_empty() {
        return Err(crate::Error::Usage("no lessons to show".into()));
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let mut sampler = Sampler::new(opts.root.clone());
    let _ = sampler.prime();
    let mut lp = Lessons {
        app: LearnApp::new(opts.lessons.clone(), opts.open.as_deref()),
        opts: &opts,
        tx,
        worker: None,
        sampler,
        quit: false,
    };
    let shell = super::shell::Options {
        mouse: opts.mouse,
        fps: opts.fps,
    };
    super::shell::run(&shell, &mut lp, rx)
}

/// The lessons' TUI in the shell: the state, the lesson thread and the lab device's sampler.
struct Lessons<'a> {
    app: LearnApp,
    opts: &'a Options,
    tx: UnboundedSender<Msg>,
    worker: Option<(std::thread::JoinHandle<()>, Arc<AtomicBool>)>,
    sampler: Sampler,
    quit: bool,
}

impl Lessons<'_> {
    /// What one terminal event does: whether to start the lesson (quit is set on q).
    fn on_input(&mut self, ev: Event, screen: Rect) -> bool {
        match ev {
            Event::Key(k) if k.kind == KeyEventKind::Press => self.app.on_key(&k, &mut self.quit),
            Event::Mouse(m) => self.app.on_mouse(m.kind, m.row, screen),
            _ => false,
        }
    }

    /// Starts the lesson on its thread, with the prediction made.
    fn start(&mut self) {
        if self.worker.is_some() || self.quit {
            return;
        }
        self.app.start();
        let cancel = Arc::new(AtomicBool::new(false));
        match spawn_lesson(
            self.opts,
            self.app.lesson().clone(),
            self.app.prediction,
            self.tx.clone(),
            cancel.clone(),
        ) {
            Ok(h) => self.worker = Some((h, cancel)),
            Err(e) => self.app.on_msg(Msg::Finished(Err(e.to_string()))),
        }
    }
}

impl super::shell::Program for Lessons<'_> {
    type Msg = Msg;

    fn draw(&mut self, f: &mut ratatui::Frame) {
        draw::draw(f, &self.app, self.opts.look);
    }

    fn on_event(&mut self, ev: Event, screen: Rect) {
        if self.on_input(ev, screen) {
            self.start();
        }
    }

    fn on_msg(&mut self, m: Msg) {
        self.app.on_msg(m);
        if self.app.pane == Pane::Answer
            && let Some((h, _)) = self.worker.take()
        {
            let _ = h.join();
        }
    }

    /// The lab device's iostat -x over the last second, while a step runs.
    fn on_tick(&mut self) {
        let Ok(all) = self.sampler.sample() else {
            return;
        };
        let name = self
            .app
            .step
            .as_ref()
            .map(|(_, _, p)| p.trim_start_matches("/dev/").to_string());
        self.app.iostat = name.and_then(|n| all.into_iter().find(|x| x.disk_device == n));
    }

    fn quit(&mut self) {
        self.quit = true;
    }

    fn done(&self) -> bool {
        self.quit
    }

    /// The lesson stops and removes its lab before the terminal is given back.
    fn shut_down(&mut self) -> Option<String> {
        if let Some((h, cancel)) = self.worker.take() {
            cancel.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    /// The screen the tests draw on.
    const SCREEN: Rect = Rect::new(0, 0, 80, 24);

    fn screen(app: &LearnApp) -> (ratatui::Terminal<TestBackend>, String) {
        let mut t = ratatui::Terminal::new(TestBackend::new(80, 24)).unwrap();
        let look = Look {
            color: false,
            ascii: true,
        };
        t.draw(|f| draw::draw(f, app, look)).unwrap();
        let buf = t.backend().buffer().clone();
        let text: String = (0..24)
            .map(|y| {
                let row: String = (0..80).map(|x| buf[(x, y)].symbol().to_string()).collect();
                row + "\n"
            })
            .collect();
        (t, text)
    }

    fn row_of(text: &str, needle: &str) -> u16 {
        text.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not on\n{text}")) as u16
    }

    #[test]
    fn a_click_picks_a_lesson_a_prediction_and_runs() {
        let click = MouseEventKind::Down(MouseButton::Left);
        let mut app = LearnApp::new(crate::learn::builtin(), None);
        let (_t, text) = screen(&app);
        println!("{text}");
        // A click on a lesson selects it; a second click opens it.
        let y = row_of(&text, "queue-depth");
        assert!(!app.on_mouse(click, y, SCREEN));
        assert_eq!(app.lesson().name, "queue-depth");
        assert_eq!(app.pane, Pane::List);
        app.on_mouse(click, y, SCREEN);
        assert_eq!(app.pane, Pane::Question);
        let (_t, text) = screen(&app);
        println!("{text}");
        assert!(text.is_ascii());
        app.on_mouse(click, row_of(&text, "b) about 32x"), SCREEN);
        assert_eq!(app.prediction, Some(1));
        let (_t, text) = screen(&app);
        assert!(text.contains("> b) about 32x"), "{text}");
        // A click elsewhere changes nothing; on the button it runs.
        assert!(!app.on_mouse(click, 0, SCREEN));
        assert_eq!(app.prediction, Some(1));
        assert!(app.on_mouse(click, row_of(&text, "Enter: run it, predicting b)"), SCREEN));
    }

    #[test]
    fn keys_predict_and_the_answer_names_the_prediction() {
        let mut app = LearnApp::new(crate::learn::builtin(), Some("zeros"));
        assert_eq!(app.pane, Pane::Question);
        let mut quit = false;
        assert!(
            !app.on_key(&KeyCode::Char('z').into(), &mut quit),
            "no choice z"
        );
        assert_eq!(app.prediction, None);
        app.on_key(&KeyCode::Char('a').into(), &mut quit);
        assert_eq!(app.prediction, Some(0));
        assert!(app.on_key(&KeyCode::Enter.into(), &mut quit));
        app.start();
        let (_t, text) = screen(&app);
        assert!(text.contains("iostat -x"), "{text}");
        let run = LessonRun {
            lesson: "zeros".into(),
            title: "Zeros".into(),
            question: String::new(),
            created: "2026-11-25T00:00:00Z".into(),
            lab_fs: Some("ext4".into()),
            in_ram: false,
            repeats: 3,
            prediction: Some(lesson_run::Pick {
                choice: 'a',
                text: "the same".into(),
            }),
            answer: Some(lesson_run::Pick {
                choice: 'b',
                text: "zeros are much faster".into(),
            }),
            unclear: None,
            predicted_right: Some(false),
            steps: Vec::new(),
            cancelled: false,
            takeaway: None,
        };
        app.on_msg(Msg::Finished(Ok(Box::new(run))));
        assert_eq!(app.pane, Pane::Answer);
        let (_t, text) = screen(&app);
        println!("{text}");
        assert!(
            text.contains("Measured here: b) zeros are much faster"),
            "{text}"
        );
        assert!(
            text.contains("You predicted: a) the same (not what this machine"),
            "{text}"
        );
        assert!(!quit);
        app.on_key(&KeyCode::Char('q').into(), &mut quit);
        assert!(quit);
    }
}

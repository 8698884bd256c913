//! The terminal shell both TUIs run in (the main one and the lessons'): raw mode and the
//! alternate screen (and the mouse), one tokio loop over the terminal's events, the program's
//! messages, a render tick that redraws only what changed, a one-second tick, SIGTERM and
//! SIGHUP; and the terminal given back on every way out: a quit, a signal, a terminal that went
//! away (a dropped SSH session, a killed tmux: the event stream ends), and a panic, after the
//! work on other threads was told to stop and given half a second to clean up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use ratatui::Frame;
use ratatui::layout::Rect;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

/// A program the shell runs: it draws its state and takes the shell's events.
pub trait Program {
    /// What the program's own threads send it.
    type Msg;
    fn draw(&mut self, f: &mut Frame);
    /// A key, a click or a turn of the wheel (`area`: the whole screen).
    fn on_event(&mut self, ev: Event, area: Rect);
    fn on_msg(&mut self, m: Self::Msg);
    /// Once a second (diskstats for the panels).
    fn on_tick(&mut self);
    /// SIGTERM, SIGHUP, or the terminal went away: stop what runs, and end.
    fn quit(&mut self);
    /// Whether the loop is over.
    fn done(&self) -> bool;
    /// After the loop, with the terminal still held: wait for the work to stop; what to say
    /// once the terminal is given back (work that would not stop).
    fn shut_down(&mut self) -> Option<String>;
}

/// How the shell draws and reads.
pub struct Options {
    pub mouse: bool,
    /// Redraws a second, at most.
    pub fps: u32,
}

/// The cancel flag of the work running on another thread (a test, a lesson), for the panic
/// hook, and whether it still runs.
static WORK: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);
static WORKING: AtomicBool = AtomicBool::new(false);

/// Work running on another thread, as the panic hook knows it: it is told to stop and waited
/// for (so its scratch file or its lab is removed) before the terminal is given back. Dropped
/// where the work ends.
pub struct Work;

impl Work {
    pub fn started(cancel: &Arc<AtomicBool>) -> Work {
        *WORK.lock().unwrap_or_else(|e| e.into_inner()) = Some(cancel.clone());
        WORKING.store(true, Ordering::Relaxed);
        Work
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        WORKING.store(false, Ordering::Relaxed);
    }
}

/// Restores the terminal when dropped, whatever happened.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Raw mode off, main screen back, cursor shown. Errors are ignored, silently: after a hang-up
/// there is no terminal left to restore, and printing about it to a closed stderr would panic
/// (inside the panic hook, an abort that skips every cleanup).
fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        crossterm::event::DisableMouseCapture,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

fn init_terminal(mouse: bool) -> std::io::Result<ratatui::DefaultTerminal> {
    crossterm::terminal::enable_raw_mode()?;
    if let Err(e) =
        crossterm::execute!(std::io::stdout(), crossterm::terminal::EnterAlternateScreen)
    {
        restore_terminal();
        return Err(e);
    }
    if mouse
        && let Err(e) = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture)
    {
        restore_terminal();
        return Err(e);
    }
    ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))
        .inspect_err(|_| restore_terminal())
}

fn io_err(e: std::io::Error) -> crate::Error {
    crate::Error::io(std::path::Path::new("terminal"), e)
}

/// On a panic: stop the work (so its scratch file or lab goes), restore the terminal, then let
/// the default hook report it (it ignores a closed stderr).
fn install_panic_hook() {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(c) = WORK.lock().ok().and_then(|g| g.clone()) {
            c.store(true, Ordering::Relaxed);
        }
        let t = Instant::now();
        while WORKING.load(Ordering::Relaxed) && t.elapsed() < Duration::from_millis(500) {
            std::thread::sleep(Duration::from_millis(5));
        }
        restore_terminal();
        prev(info);
    }));
}

/// Takes the terminal, runs `program` until it is done, and gives the terminal back.
pub fn run<P: Program>(
    opts: &Options,
    program: &mut P,
    rx: UnboundedReceiver<P::Msg>,
) -> Result<(), crate::Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io_err)?;
    let mut terminal = init_terminal(opts.mouse).map_err(io_err)?;
    let guard = TerminalGuard;
    install_panic_hook();
    let r = rt.block_on(event_loop(&mut terminal, opts.fps, program, rx));
    let last_words = program.shut_down();
    drop(guard);
    if let Some(w) = last_words {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{w}");
    }
    let _ = std::panic::take_hook();
    r
}

async fn event_loop<P: Program>(
    terminal: &mut ratatui::DefaultTerminal,
    fps: u32,
    program: &mut P,
    mut rx: UnboundedReceiver<P::Msg>,
) -> Result<(), crate::Error> {
    let mut events = EventStream::new();
    let mut render = tokio::time::interval(Duration::from_secs_f64(1.0 / fps.clamp(1, 60) as f64));
    render.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut second = tokio::time::interval(Duration::from_secs(1));
    second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut sigterm = signal(SignalKind::terminate()).map_err(io_err)?;
    let mut sighup = signal(SignalKind::hangup()).map_err(io_err)?;
    let mut dirty = true;
    while !program.done() {
        tokio::select! {
            ev = events.next() => match ev {
                Some(Ok(Event::Resize(_, _))) => dirty = true,
                Some(Ok(e)) => {
                    let size = terminal.size().map_err(io_err)?;
                    program.on_event(e, Rect::new(0, 0, size.width, size.height));
                    dirty = true;
                }
                // The terminal is gone.
                Some(Err(_)) | None => program.quit(),
            },
            Some(m) = rx.recv() => {
                program.on_msg(m);
                dirty = true;
            }
            _ = second.tick() => {
                program.on_tick();
                dirty = true;
            }
            _ = render.tick() => {
                if dirty {
                    terminal.draw(|f| program.draw(f)).map_err(io_err)?;
                    dirty = false;
                }
            }
            _ = sigterm.recv() => program.quit(),
            _ = sighup.recv() => program.quit(),
        }
    }
    Ok(())
}

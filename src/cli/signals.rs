//! Ctrl-C, SIGTERM and SIGHUP for the headless commands: the first cancels (a run stops
//! issuing, waits for what it issued, and reports what it measured); a second exits at once,
//! saying so, for a device that does not complete what was issued.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::cli::say;

/// The exit status of a second signal.
pub const SECOND: i32 = 130;

/// What a second signal says before the process exits.
pub const SECOND_SAYS: &str = "blkscope: a second interrupt: exiting at once, without waiting \
     for what is still in flight (a run's I/Os: its result is lost)";

/// A cancel flag raised by Ctrl-C, SIGTERM and SIGHUP; a second one of them (or one after the
/// flag was raised otherwise) says [`SECOND_SAYS`] and exits with [`SECOND`].
pub fn cancel_on_signals() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(mut signals) => {
            let c = cancel.clone();
            let spawned = std::thread::Builder::new()
                .name("blkscope-signals".into())
                .spawn(move || {
                    for _ in signals.forever() {
                        if c.swap(true, Ordering::Relaxed) {
                            // Below a progress bar's line, where there is one.
                            let nl = if std::io::stderr().is_terminal() {
                                "\n"
                            } else {
                                ""
                            };
                            say!("{nl}{SECOND_SAYS}");
                            std::process::exit(SECOND);
                        }
                    }
                });
            if spawned.is_err() {
                in_the_handler(&cancel);
            }
        }
        Err(_) => in_the_handler(&cancel),
    }
    // Run over ssh by another blkscope (`--host`): standard input is the ssh channel, and its
    // end (the connection gone, Ctrl-C on the other side) cancels like a hang-up.
    if std::env::var("BLKSCOPE_EXIT_ON_EOF").as_deref() == Ok("1") {
        let c = cancel.clone();
        let _ = std::thread::Builder::new()
            .name("blkscope-stdin".into())
            .spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                c.store(true, Ordering::Relaxed);
            });
    }
    cancel
}

/// Where no thread can take the signals: the flag raised in the handler, and a second signal
/// exits there, silently.
fn in_the_handler(cancel: &Arc<AtomicBool>) {
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, SECOND, cancel.clone());
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
}

/// What a headless command says on stderr, where no progress bar shows it, when a run waits
/// for its device after it stopped issuing: once, and again once cancelled (then with what a
/// second Ctrl-C does). Start a new one for each run.
#[derive(Default)]
pub struct StoppingSaid(Option<bool>);

impl StoppingSaid {
    pub fn say(&mut self, st: &crate::engine::result::Stopping) {
        if self.0.replace(st.cancelled) == Some(st.cancelled) {
            return;
        }
        let how = if st.cancelled {
            "Ctrl-C again exits without waiting"
        } else {
            "Ctrl-C twice exits without waiting"
        };
        say!("blkscope: {} ({how})", st.line());
    }
}

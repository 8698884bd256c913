//! The `blkscope` binary: parse the command line, run it, and turn any error into one line on
//! stderr with a non-zero exit status (anyhow at this edge; the library's errors are typed).

use clap::Parser;

fn run() -> anyhow::Result<i32> {
    let cli = blkscope::cli::Cli::parse();
    Ok(blkscope::cli::run(cli)?)
}

fn main() {
    match run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // A reader that stopped reading (`blkscope stat | head`): no message, which would
            // only be noise, and status 141, as a C tool killed by SIGPIPE gives, not 0: a run
            // whose live output went nowhere may have stopped before its end.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                std::process::exit(141);
            }
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "blkscope: {}", message(&e));
            let code = e
                .downcast_ref::<blkscope::Error>()
                .map(blkscope::Error::exit_code)
                .unwrap_or(1);
            std::process::exit(code);
        }
    }
}

/// The error and its causes, each once: an error whose text already ends with its cause's (as
/// `<stdout>: No space left on device (os error 28)` does) does not get it a second time.
fn message(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.ends_with(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

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
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "blkscope: {e:#}");
            let code = e
                .downcast_ref::<blkscope::Error>()
                .map(blkscope::Error::exit_code)
                .unwrap_or(1);
            std::process::exit(code);
        }
    }
}

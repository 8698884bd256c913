//! The `blkscope` binary: parse the command line, run it, and turn any error into one line on
//! stderr with a non-zero exit status.

use clap::Parser;

fn main() {
    let cli = blkscope::cli::Cli::parse();
    match blkscope::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("blkscope: {e}");
            std::process::exit(e.exit_code());
        }
    }
}

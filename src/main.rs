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
            eprintln!("blkscope: {e:#}");
            let code = e
                .downcast_ref::<blkscope::Error>()
                .map(blkscope::Error::exit_code)
                .unwrap_or(1);
            std::process::exit(code);
        }
    }
}

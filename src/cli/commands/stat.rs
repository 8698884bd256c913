//! `blkscope stat`: /proc/diskstats in `iostat -x` terms, every interval.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::cli::{print, println, stdout_err};
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    names: &[String],
    interval: Duration,
    count: Option<u64>,
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let wanted = crate::stats::resolve_devices(root, names)?;
    let cancel = crate::cli::signals::cancel_on_signals();
    let mut sampler = crate::stats::Sampler::new(root.clone());
    sampler.prime()?;
    let mut n = 0u64;
    while count.is_none_or(|c| n < c) {
        // Sleep in short steps so Ctrl-C ends it promptly.
        let until = Instant::now() + interval;
        while Instant::now() < until {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(0);
            }
            std::thread::sleep(
                until
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(50)),
            );
        }
        let all = sampler.sample()?;
        let rows: Vec<&crate::stats::IostatX> = wanted
            .iter()
            .filter_map(|w| all.iter().find(|x| &x.disk_device == w))
            .collect();
        if json {
            let doc = serde_json::json!({
                "timestamp": crate::runs::rfc3339_now(),
                "devices": rows,
            });
            println(out, &doc.to_string())?;
        } else {
            print(out, &crate::output::table::iostat_table(&rows))?;
        }
        out.flush().map_err(stdout_err)?;
        n += 1;
    }
    Ok(0)
}

//! %util beside the queue depth, and another process's share of a busy device.

use crate::units::fmt_size;

use super::super::{Evidence, Finding, Kind};
use super::{Activity, Context, processes};

/// %util next to the queue depth.
pub(super) fn util_saturation(c: &Context) -> Option<Finding> {
    let (target, td, x) = (c.name, c.counters, &c.x);
    if td.reads + td.writes == 0 || c.act.seconds < 0.5 {
        return None;
    }
    let mut e = Evidence::from([
        ("util", x.util),
        ("aqu-sz", x.aqu_sz),
        ("r/s", x.r_s),
        ("w/s", x.w_s),
        ("r_await", x.r_await),
        ("w_await", x.w_await),
    ]);
    let others = others_busy(c.act, target, &mut e);
    let asked = c.job.iodepth as u64 * c.job.jobs as u64;
    e.insert("in_flight_asked", asked);
    let f = if x.util >= 95.0 && x.aqu_sz < 1.5 {
        Finding::new(Kind::UtilSaturation, e, |e| {
            format!(
                "%util is {:.0}% with {:.1} requests in flight on average: %util is the share \
                 of time with at least one request in flight, not capacity. {}{others}",
                e.num("util"),
                e.num("aqu-sz"),
                util_advice(asked, e.num("aqu-sz")),
            )
        })
    } else if x.util < 90.0 && x.aqu_sz >= 4.0 {
        Finding::new(Kind::UtilSaturation, e, |e| {
            format!(
                "%util is {:.0}% although {:.1} requests were queued on average: %util counts \
                 busy time, so it says little about how close a parallel device is to its \
                 limit; read it next to aqu-sz, IOPS and latency.{others}",
                e.num("util"),
                e.num("aqu-sz"),
            )
        })
    } else {
        return None;
    };
    Some(f.on(target.as_str()))
}

/// What to do about a device busy all the time with little in flight. When the test kept more
/// in flight than reached the device, a deeper queue is not the advice (docs/architecture.md,
/// "util_saturation with io-wq").
fn util_advice(asked: u64, aqu_sz: f64) -> String {
    if asked as f64 >= 2.0 * aqu_sz.max(1.0) {
        format!(
            "The test kept {asked} I/Os in flight, yet the device had {aqu_sz:.1} on average: \
             the rest waited above it, in the kernel. One cause: a driver that cannot take an \
             I/O without blocking (zram) has io_uring hand the I/Os to a kernel worker thread, \
             and a worker that never has to wait runs them one after another, so a deeper \
             queue only waits longer there; more jobs (--jobs N, a worker each) run in \
             parallel."
        )
    } else {
        "A device that serves requests in parallel (SSD, NVMe, RAID) can often do more with a \
         deeper queue (--iodepth 32 or --jobs 4)."
            .to_string()
    }
}

/// With a trace, another process's share of the device's I/O while the test ran: %util and
/// aqu-sz count its requests too, so the figures are not the test's alone.
pub(super) fn others_busy(act: &Activity, target: &str, e: &mut Evidence) -> String {
    let Some(t) = act.traced.as_ref().filter(|t| t.traced()) else {
        return String::new();
    };
    let (theirs, who) = t.others_moved(target);
    let all: u64 = theirs + t.reads_not_others(target, 1.0) + t.writes_not_others(target, 1.0);
    // Under a tenth of the bytes: the figures are the test's, near enough.
    if who.is_empty() || theirs * 10 < all {
        return String::new();
    }
    let named: Vec<String> = who
        .iter()
        .map(|(c, p, b)| format!("{c} (pid {p}) {}", fmt_size(*b)))
        .collect();
    e.insert("others_bytes", theirs);
    e.insert("device_bytes", all);
    e.insert("named", processes(&who, "bytes"));
    format!(
        " Other processes moved {} of the {} on {target} meanwhile ({}): %util and aqu-sz \
         count their requests too, so these figures are not the test's alone.",
        fmt_size(theirs),
        fmt_size(all),
        named.join(", ")
    )
}

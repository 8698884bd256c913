//! One table across hosts, worst first: the doctor's problems, the slowest devices. Each host's
//! blkscope, asked by `BLKSCOPE_FLEET_SUMMARY=1`, ends with one line on stderr
//! (`blkscope-fleet-summary {json}`) holding the figures the table needs, whatever it printed
//! on stdout; the line is taken out of what the host said.

use serde_json::{Value, json};

/// The environment variable that asks a host for its summary line.
pub const ASK: &str = "BLKSCOPE_FLEET_SUMMARY";
const PREFIX: &str = "blkscope-fleet-summary ";

/// Says the summary `of` makes on stderr when this blkscope runs for a fleet (and makes
/// none otherwise).
pub fn emit(of: impl FnOnce() -> Value) {
    if std::env::var_os(ASK).is_some() {
        eprintln!("{PREFIX}{}", of());
    }
}

/// The summary of a `run`'s document (target and results).
pub fn of_run(doc: &Value) -> Value {
    let t = &doc["target"];
    let device = t["device"].as_str().or(t["path"].as_str()).unwrap_or("?");
    let tests: Vec<Value> = doc["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            json!({
                "test": test_label(r),
                "mb_s": r["bytes_per_sec"].as_f64().unwrap_or(0.0) / 1e6,
                "iops": r["iops"].as_f64().unwrap_or(0.0),
                "p99_us": r["latency_ns"]["p99"].as_f64().unwrap_or(0.0) / 1e3,
            })
        })
        .collect();
    json!({ "kind": "run", "device": device, "tests": tests })
}

/// `randread 4K QD32 x1 direct`, from a result's fields.
fn test_label(r: &Value) -> String {
    format!(
        "{} {} QD{} x{} {}",
        r["op"].as_str().unwrap_or("?"),
        crate::units::fmt_size(r["bs"].as_u64().unwrap_or(0)),
        r["iodepth"],
        r["jobs"],
        r["mode"].as_str().unwrap_or("")
    )
}

/// The summary of the doctor's reports (as serialised).
pub fn of_doctor(reports: &Value) -> Value {
    let devices: Vec<Value> = reports
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let fs: Vec<&Value> = d["findings"].as_array().into_iter().flatten().collect();
            let count = |s: &str| fs.iter().filter(|f| f["severity"] == s).count();
            let worst = fs
                .iter()
                .find(|f| f["severity"] == "problem" || f["severity"] == "warning");
            json!({
                "device": d["name"],
                "problems": count("problem"),
                "warnings": count("warning"),
                "worst": worst.map(|f| format!("{}: {}", f["kind"].as_str().unwrap_or(""), f["message"].as_str().unwrap_or(""))),
            })
        })
        .collect();
    json!({ "kind": "doctor", "devices": devices })
}

/// `stderr` without the summary line, and the summary it held.
pub fn take(stderr: &str) -> (String, Option<Value>) {
    let mut summary = None;
    let rest: Vec<&str> = stderr
        .lines()
        .filter(|l| match l.strip_prefix(PREFIX) {
            Some(j) => {
                summary = serde_json::from_str(j).ok();
                false
            }
            None => true,
        })
        .collect();
    let mut s = rest.join("\n");
    if !s.is_empty() {
        s.push('\n');
    }
    (s, summary)
}

/// The table over the hosts' summaries, worst first; empty when none is of a kind with one.
pub fn table(summaries: &[(String, Value)], missing: &[String]) -> String {
    let mut t = match summaries.first().map(|(_, s)| s["kind"].as_str()) {
        Some(Some("doctor")) => doctor_table(summaries),
        Some(Some("run")) => run_table(summaries),
        _ => return String::new(),
    };
    if !missing.is_empty() {
        t.push_str(&format!(
            "no figures from {} (an older blkscope there? --push copies this one)\n",
            crate::units::count(missing.len(), "host")
        ));
    }
    t
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n - 3).collect::<String>())
    }
}

fn doctor_table(summaries: &[(String, Value)]) -> String {
    let mut rows: Vec<(u64, u64, &str, &str, String)> = Vec::new();
    let mut fine = 0;
    for (host, s) in summaries {
        let mut any = false;
        for d in s["devices"].as_array().into_iter().flatten() {
            let (p, w) = (
                d["problems"].as_u64().unwrap_or(0),
                d["warnings"].as_u64().unwrap_or(0),
            );
            if p + w > 0 {
                any = true;
                let worst = d["worst"].as_str().unwrap_or("").to_string();
                rows.push((p, w, host, d["device"].as_str().unwrap_or("?"), worst));
            }
        }
        fine += usize::from(!any);
    }
    rows.sort_by_key(|r| std::cmp::Reverse((r.0, r.1)));
    let mut t = format!(
        "\nacross {}, worst first:\n{:<20} {:<12} {:>8} {:>8}  {}\n",
        crate::units::count(summaries.len(), "host"),
        "host",
        "device",
        "problems",
        "warnings",
        "worst finding"
    );
    for (p, w, host, dev, worst) in &rows {
        t.push_str(&format!(
            "{:<20} {:<12} {p:>8} {w:>8}  {}\n",
            cut(host, 20),
            cut(dev, 12),
            cut(worst, 60)
        ));
    }
    if fine > 0 {
        t.push_str(&format!(
            "{} with nothing worse than info\n",
            crate::units::count(fine, "host")
        ));
    }
    t
}

fn run_table(summaries: &[(String, Value)]) -> String {
    let mut rows: Vec<(String, f64, f64, f64, &str, &str)> = Vec::new();
    for (host, s) in summaries {
        for r in s["tests"].as_array().into_iter().flatten() {
            rows.push((
                r["test"].as_str().unwrap_or("?").to_string(),
                r["mb_s"].as_f64().unwrap_or(0.0),
                r["iops"].as_f64().unwrap_or(0.0),
                r["p99_us"].as_f64().unwrap_or(0.0),
                host,
                s["device"].as_str().unwrap_or("?"),
            ));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut t = format!(
        "\nacross {}, slowest first:\n{:<28} {:<20} {:<12} {:>10} {:>10} {:>10}\n",
        crate::units::count(summaries.len(), "host"),
        "test",
        "host",
        "device",
        "MB/s",
        "IOPS",
        "p99 us"
    );
    for (test, mb, iops, p99, host, dev) in &rows {
        t.push_str(&format!(
            "{:<28} {:<20} {:<12} {mb:>10.1} {iops:>10.0} {p99:>10.1}\n",
            cut(test, 28),
            cut(host, 20),
            cut(dev, 12)
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_is_taken_out_of_what_the_host_said() {
        let err = "blkscope: saved /x\nblkscope-fleet-summary {\"kind\":\"run\",\"device\":\"sdb\",\"tests\":[]}\n";
        let (rest, s) = take(err);
        assert_eq!(rest, "blkscope: saved /x\n");
        assert_eq!(s.unwrap()["device"], "sdb");
        assert_eq!(take("").0, "");
    }

    #[test]
    fn doctor_rows_worst_first_and_the_fine_counted() {
        let s = |p: u64, w: u64| json!({"kind": "doctor", "devices": [{"device": "sda", "problems": p, "warnings": w, "worst": "smart: failing"}]});
        let t = table(
            &[
                ("a".into(), s(0, 1)),
                ("b".into(), s(2, 0)),
                ("c".into(), s(0, 0)),
            ],
            &["d".to_string()],
        );
        println!("{t}");
        let (a, b) = (t.find("\na ").unwrap(), t.find("\nb ").unwrap());
        assert!(b < a, "problems before warnings: {t}");
        assert!(t.contains("1 host with nothing worse than info"), "{t}");
        assert!(t.contains("no figures from 1 host"), "{t}");
    }

    #[test]
    fn run_rows_slowest_first() {
        let r = |mb: f64| json!({"target": {"device": "sdb"}, "results": [{"op": "read", "bs": 1048576, "iodepth": 1, "jobs": 1, "mode": "direct", "bytes_per_sec": mb * 1e6, "iops": mb, "latency_ns": {"p99": 1000.0}}]});
        let t = table(
            &[
                ("fast".into(), of_run(&r(900.0))),
                ("slow".into(), of_run(&r(90.0))),
            ],
            &[],
        );
        println!("{t}");
        assert!(t.find("slow").unwrap() < t.find("fast").unwrap(), "{t}");
        assert!(t.contains("read 1M QD1 x1 direct"), "{t}");
    }
}

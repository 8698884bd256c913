//! Two saved runs compared test by test: MB/s, IOPS, p50 and p99, where a middle I/O's time
//! went when both were traced at every step, and their ratios.

use serde::Serialize;

use super::{Figures, SavedRecord, SavedRun};

/// One line of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// The test's name (A's, when two lone tests of different names are compared).
    pub test: String,
    /// B's test name, when it differs from A's (two runs of one test each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_test: Option<String>,
    pub metric: &'static str,
    pub a: f64,
    pub b: f64,
    /// b / a.
    pub ratio: Option<f64>,
    /// A's and B's engines, when they differ: the engine alone can change the figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engines: Option<(String, String)>,
    /// Where A's or B's parts of a middle I/O (the `submit us` to `complete us` rows) are those
    /// of its trace's windows only, whose I/Os took another time than the rest of its run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts_note: Option<String>,
}

/// The tests of two saved runs that compare: those with the same name, in A's order. Two runs
/// of one test each compare with each other whatever their names, since that is what `compare
/// A B` on two single runs (QD1 against QD8, this disk against that one) means.
pub fn pairs<'a>(a: &'a SavedRun, b: &'a SavedRun) -> Vec<(&'a SavedRecord, &'a SavedRecord)> {
    let same: Vec<_> = a
        .tests
        .iter()
        .filter_map(|x| b.tests.iter().find(|y| y.name == x.name).map(|y| (x, y)))
        .collect();
    match (&a.tests[..], &b.tests[..]) {
        ([x], [y]) if same.is_empty() => vec![(x, y)],
        _ => same,
    }
}

/// The name a pair goes by: the test's, or both when a lone test is compared with another.
pub fn pair_name(x: &SavedRecord, y: &SavedRecord) -> String {
    name_of_pair(&x.name, Some(&y.name))
}

/// `a`, or "a vs b" when B's test has another name.
pub fn name_of_pair(a: &str, b: Option<&str>) -> String {
    match b {
        Some(b) if b != a => format!("{a} vs {b}"),
        _ => a.to_string(),
    }
}

impl Diff {
    /// The name its pair goes by (see [`pair_name`]).
    pub fn name(&self) -> String {
        name_of_pair(&self.test, self.b_test.as_deref())
    }

    /// What to keep in mind when A and B ran on different engines.
    pub fn engine_note(&self) -> Option<String> {
        let (a, b) = self.engines.as_ref()?;
        Some(format!(
            "A ran on {a}, B on {b}: the engine alone can change these figures \
             (`--engine {a}` runs B's test as A ran)"
        ))
    }

    /// What to keep in mind reading the pair's rows: the engines, the parts' windows.
    pub fn notes(&self) -> Vec<String> {
        self.engine_note()
            .into_iter()
            .chain(self.parts_note.clone())
            .collect()
    }
}

/// "A's parts are those of its trace's windows, whose I/Os took 2.08x as long as the rest of
/// its run's (p50 226.0 us against 108.6 us), not its typical I/O's", for each of A and B where
/// that is so (the run's own text says it under its parts: `output::text::run`).
fn parts_note(a: &SavedRecord, b: &SavedRecord) -> Option<String> {
    use crate::analysis::steps::{parts_are_the_windows, windows_against_rest};
    let us = |ns: u64| format!("{:.1} us", ns as f64 / 1e3);
    let said: Vec<String> = [("A", a), ("B", b)]
        .into_iter()
        .filter_map(|(side, r)| {
            let s = r.result.trace.as_ref()?.steps?;
            let ratio = windows_against_rest(&s).filter(|x| parts_are_the_windows(*x))?;
            Some(format!(
                "{side}'s parts are those of its trace's windows, whose I/Os took {ratio:.2}x as \
                 long as the rest of its run's (p50 {} against {}), not its typical I/O's",
                us(s.in_windows_p50_ns?),
                us(s.between_p50_ns?)
            ))
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// Where a middle I/O's time went in each, where both were timed at every step
/// (`analysis::steps`): which part moved.
fn steps_rows(a: &SavedRecord, b: &SavedRecord) -> Vec<(&'static str, f64, f64)> {
    let steps = |r: &SavedRecord| r.result.trace.as_ref().and_then(|t| t.steps);
    let (Some(x), Some(y)) = (steps(a), steps(b)) else {
        return Vec::new();
    };
    let us = |ns: u64| ns as f64 / 1e3;
    vec![
        ("submit us", us(x.submit_ns), us(y.submit_ns)),
        ("queue us", us(x.queue_ns), us(y.queue_ns)),
        ("device us", us(x.device_ns), us(y.device_ns)),
        ("complete us", us(x.complete_ns), us(y.complete_ns)),
    ]
}

/// Compares two saved runs test by test (see [`pairs`]).
pub fn compare(a: &SavedRun, b: &SavedRun) -> Vec<Diff> {
    let mut out = Vec::new();
    for (ta, tb) in pairs(a, b) {
        let x = Figures::of_saved(&ta.name, &ta.result);
        let y = Figures::of_saved(&tb.name, &tb.result);
        let b_test = (ta.name != tb.name).then(|| tb.name.clone());
        let engines = match (&ta.result.engine, &tb.result.engine) {
            (Some(x), Some(y)) if x != y => Some((x.clone(), y.clone())),
            _ => None,
        };
        let mut rows = vec![
            ("MB/s", x.mb_s, y.mb_s),
            ("IOPS", x.iops, y.iops),
            ("p50 us", x.p50_us, y.p50_us),
            ("p99 us", x.p99_us, y.p99_us),
        ];
        let steps = steps_rows(ta, tb);
        let parts_note = (!steps.is_empty()).then(|| parts_note(ta, tb)).flatten();
        rows.extend(steps);
        for (metric, va, vb) in rows {
            out.push(Diff {
                test: ta.name.clone(),
                b_test: b_test.clone(),
                metric,
                a: va,
                b: vb,
                ratio: (va > 0.0).then(|| vb / va),
                engines: engines.clone(),
                parts_note: parts_note.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved run of one test whose middle I/O's parts were timed, in the trace's windows at
    /// `in_windows` us and between them at `between` us (p50).
    fn saved(in_windows: u64, between: u64) -> SavedRecord {
        let lat = serde_json::json!({"min": 1, "mean": 1.0, "p50": between * 1000, "p90": 1,
            "p99": 1, "p99_9": 1, "p99_99": 1, "max": 1});
        serde_json::from_value(serde_json::json!({
            "name": "randread 4K QD8",
            "job": crate::engine::Job::default(),
            "result": {
                "engine": "uring", "bytes_per_sec": 1e8, "iops": 24000.0, "latency_ns": lat,
                "warnings": [],
                "trace": {"mode": "sampled", "steps": {
                    "timed": 1824, "middle": 365, "total_ns": in_windows * 1000,
                    "submit_ns": 5845, "queue_ns": 3020, "device_ns": 129025,
                    "complete_ns": 90731, "in_windows_p50_ns": in_windows * 1000,
                    "between_p50_ns": between * 1000}}
            }
        }))
        .unwrap()
    }

    /// Seen comparing two saved runs: A's parts summed to 228.6 us beside its p50 of 113.2 us,
    /// the run's own text having said they were its windows' I/Os' (2.08x the rest), `compare`
    /// nothing.
    #[test]
    fn parts_of_the_windows_only_are_said_beside_them() {
        let (a, b) = (saved(226, 108), saved(100, 98));
        let note = parts_note(&a, &b).expect("A's note");
        println!("{note}");
        assert_eq!(
            note,
            "A's parts are those of its trace's windows, whose I/Os took 2.09x as long as the \
             rest of its run's (p50 226.0 us against 108.0 us), not its typical I/O's"
        );
        assert_eq!(parts_note(&b, &b), None, "within a quarter: the run's own");
        let both = parts_note(&a, &a).unwrap();
        assert!(
            both.contains("A's parts") && both.contains("; B's parts"),
            "{both}"
        );
    }
}

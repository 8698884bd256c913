//! A lesson's tests run several times: each test's figures become their medians with the
//! range they spanned, and a claim or an answer is decided by the medians only where the spread
//! of the runs cannot overturn it; where it could, the lesson says it is not clear on this
//! machine.

use std::collections::BTreeMap;

use super::run::{ClaimRun, TestRun};
use super::{Claim, Expr, Lesson, letter};

/// Every figure measured so far, as `test.figure`.
pub type Figures = BTreeMap<String, f64>;

/// One test's runs as one: each figure's median (over the runs that have it) with its range,
/// the first run's command lines, every warning any run raised, the first error.
pub fn combine(runs: &[TestRun]) -> TestRun {
    let mut values: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.error.is_none()) {
        for (k, v) in &r.figures {
            values.entry(k).or_default().push(*v);
        }
    }
    let mut out = runs[0].clone();
    out.figures.clear();
    out.spread.clear();
    for (k, mut v) in values {
        v.sort_by(f64::total_cmp);
        out.figures.insert(k.to_string(), median(&v));
        if v.len() > 1 {
            out.spread.insert(k.to_string(), [v[0], v[v.len() - 1]]);
        }
    }
    out.runs = runs.len();
    out.warnings = runs.iter().flat_map(|r| r.warnings.clone()).collect();
    out.warnings.sort();
    out.warnings.dedup();
    out.error = runs.iter().find_map(|r| r.error.clone());
    out
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// How far from its median a figure is taken to reach at least, however close its runs came:
/// a few runs that happen to agree do not make a shared machine's figures steadier than this.
pub const RESOLUTION: f64 = 0.05;

/// The lowest and highest value each figure took over the runs, and for a measured one (not a
/// setting such as `qd`: see [`super::figures::SETTINGS`]) at least its median [`RESOLUTION`]
/// either side.
fn ranges<'a>(per_run: &'a [Figures], medians: &Figures) -> BTreeMap<&'a str, [f64; 2]> {
    let mut out: BTreeMap<&str, [f64; 2]> = BTreeMap::new();
    for f in per_run {
        for (k, v) in f {
            let r = out.entry(k).or_insert([*v, *v]);
            r[0] = r[0].min(*v);
            r[1] = r[1].max(*v);
        }
    }
    let setting = |k: &str| {
        let fig = k.rsplit_once('.').map_or(k, |(_, f)| f);
        super::figures::SETTINGS.contains(&fig)
    };
    for (k, r) in out.iter_mut().filter(|(k, _)| !setting(k)) {
        if let Some(m) = medians.get(*k) {
            let (a, b) = (m * (1.0 - RESOLUTION), m * (1.0 + RESOLUTION));
            r[0] = r[0].min(a.min(b));
            r[1] = r[1].max(a.max(b));
        }
    }
    out
}

/// Every corner of the box the runs spanned for `vars`: each figure at its lowest or highest,
/// the others at their medians. A verdict that is the same at every corner is one the spread
/// cannot overturn.
fn corners<'a>(
    vars: &'a [String],
    medians: &'a Figures,
    ranges: &'a BTreeMap<&str, [f64; 2]>,
) -> impl Iterator<Item = impl Fn(&str) -> Option<f64> + 'a> + 'a {
    let vars: Vec<&String> = vars
        .iter()
        .filter(|v| ranges.contains_key(v.as_str()))
        .collect();
    (0u32..1 << vars.len().min(12)).map(move |mask| {
        let vars = vars.clone();
        move |n: &str| match vars.iter().position(|v| v.as_str() == n) {
            Some(i) => ranges.get(n).map(|r| r[((mask >> i) & 1) as usize]),
            None => medians.get(n).copied(),
        }
    })
}

/// The figures `exprs` name, each once.
fn variables<'a>(exprs: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut v: Vec<String> = exprs
        .filter_map(|e| Expr::parse(e).ok())
        .flat_map(|e| e.variables())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// A claim checked on the medians; `held_in` counts the runs it held in. It is not clear
/// (`held` None) where the spread could overturn it: at some corner of the range its figures
/// spanned over the runs (at least [`RESOLUTION`] either side), the verdict is not the
/// medians'.
pub fn check(c: &Claim, medians: &Figures, per_run: &[Figures]) -> ClaimRun {
    let mut r = super::run::check_claim(c, medians);
    if per_run.len() < 2 || r.held.is_none() {
        return r;
    }
    // Parsed once for every run and corner (None from `holds`: a figure it names is missing).
    let Ok(expr) = Expr::parse(c.check.get_ref()) else {
        return r;
    };
    let holds = |get: &dyn Fn(&str) -> Option<f64>| expr.holds(get).ok();
    let verdicts: Vec<bool> = per_run
        .iter()
        .filter_map(|f| holds(&|n: &str| f.get(n).copied()))
        .collect();
    let held = verdicts.iter().filter(|v| **v).count();
    r.held_in = Some([held, verdicts.len()]);
    let ranges = ranges(per_run, medians);
    let mut vars = expr.variables();
    vars.sort();
    vars.dedup();
    if of_one_run(&vars) {
        // One measurement each run: judged run by run, and by nothing in between.
        if verdicts.len() < per_run.len() || verdicts.iter().any(|v| Some(*v) != r.held) {
            r.held = None;
            r.meaning = format!(
                "not clear on this machine: its runs disagree (it held in {held} of {}; the \
                 numbers are the medians)",
                verdicts.len()
            );
        }
        return r;
    }
    if corners(&vars, medians, &ranges).any(|get| holds(&get) != r.held) {
        r.held = None;
        r.meaning = format!(
            "not clear on this machine: within the spread of its runs ({}) it can go either \
             way (it held in {held} of {} runs; the numbers are the medians)",
            spans(&vars, &ranges),
            verdicts.len()
        );
    }
    r
}

/// Whether a check's measured figures (two or more; settings aside) are all one test's: each
/// run's are then one measurement whose figures move together (Little's law's IOPS and mean
/// latency, one up where the other is down), and a box's corner that takes one figure's
/// highest beside another's highest from another run is no run at all: a claim that held in
/// 3 of 3 runs came out "not clear" that way.
fn of_one_run(vars: &[String]) -> bool {
    let measured: Vec<&str> = vars
        .iter()
        .filter_map(|v| v.rsplit_once('.'))
        .filter(|(_, fig)| !super::figures::SETTINGS.contains(fig))
        .map(|(test, _)| test)
        .collect();
    measured.len() >= 2 && measured.iter().all(|t| *t == measured[0])
}

/// `x.mbps 1800-2400, y.mbps 2100-2900 (each run's lowest to highest, at least 5% either side
/// of the median)`: the ranges of the figures named.
fn spans(vars: &[String], ranges: &BTreeMap<&str, [f64; 2]>) -> String {
    let fmt = super::figures::fmt_figure;
    let each: Vec<String> = vars
        .iter()
        .filter_map(|v| ranges.get(v.as_str()).map(|r| (v, r)))
        .map(|(v, r)| format!("{v} {}-{}", fmt(r[0]), fmt(r[1])))
        .collect();
    format!(
        "{}: the runs' lowest to highest, at least {:.0}% either side of the median",
        each.join(", "),
        RESOLUTION * 100.0
    )
}

/// The choice the medians support, or, where the spread could change it (at some corner of the
/// range the figures spanned over the runs another choice fits), why the answer is not clear.
pub fn answer(
    lesson: &Lesson,
    medians: &Figures,
    per_run: &[Figures],
) -> Result<Option<usize>, String> {
    let want = lesson.answer(&|n: &str| medians.get(n).copied());
    if per_run.len() < 2 {
        return Ok(want);
    }
    let ranges = ranges(per_run, medians);
    let vars = variables(lesson.choices.iter().map(|c| c.when.get_ref().as_str()));
    let mut others: Vec<Option<usize>> = corners(&vars, medians, &ranges)
        .map(|get| lesson.answer(&get))
        .filter(|a| *a != want)
        .collect();
    if others.is_empty() {
        return Ok(want);
    }
    others.sort();
    others.dedup();
    let name = |a: &Option<usize>| match a {
        Some(i) => format!("{})", letter(*i)),
        None => "none of the choices".to_string(),
    };
    let each: Vec<String> = per_run
        .iter()
        .map(|f| name(&lesson.answer(&|n: &str| f.get(n).copied())))
        .collect();
    Err(format!(
        "the medians say {}, but within the spread of the runs ({}) {} fits too; the runs \
         answered {}",
        name(&want),
        spans(&vars, &ranges),
        others.iter().map(name).collect::<Vec<_>>().join(" or "),
        each.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mbps: f64) -> TestRun {
        TestRun {
            test: "t".into(),
            figures: [("mbps".to_string(), mbps)].into(),
            spread: BTreeMap::new(),
            runs: 1,
            dd: String::new(),
            fio: String::new(),
            warnings: vec![],
            error: None,
        }
    }

    fn figs(a: f64, b: f64) -> Figures {
        [("x.mbps".to_string(), a), ("y.mbps".to_string(), b)].into()
    }

    /// A lesson whose claim and choices compare x and y.
    fn lesson() -> Lesson {
        let text = r#"
name = "t"
title = "t"
about = "t"
question = "x or y?"
[[choice]]
text = "x is faster"
when = "x.mbps >= 1.3 * y.mbps"
[[choice]]
text = "about the same"
when = "x.mbps < 1.3 * y.mbps"
[[step]]
name = "s"
look = "l"
device = "lab-4096"
[[step.test]]
name = "x"
op = "write"
bs = "1M"
[[step.test]]
name = "y"
op = "write"
bs = "1M"
[[step.claim]]
text = "x is faster"
check = "x.mbps >= 1.3 * y.mbps"
held = "yes"
failed = "no"
"#;
        super::super::parse(text, std::path::Path::new("t.toml")).unwrap()
    }

    #[test]
    fn a_spread_that_could_overturn_a_claim_or_the_answer_makes_it_not_clear() {
        let l = lesson();
        let claim = &l.steps[0].claims[0];
        // Every run says x is faster, and so does every corner of their ranges: held, a.
        let runs = [figs(400.0, 100.0), figs(390.0, 110.0), figs(420.0, 90.0)];
        let medians = figs(400.0, 100.0);
        let c = check(claim, &medians, &runs);
        assert_eq!((c.held, c.held_in), (Some(true), Some([3, 3])), "{c:?}");
        assert_eq!(answer(&l, &medians, &runs), Ok(Some(0)));
        // One run of three says otherwise: the medians say a, the spread does not.
        let runs = [figs(400.0, 100.0), figs(120.0, 110.0), figs(420.0, 90.0)];
        let c = check(claim, &medians, &runs);
        assert_eq!((c.held, c.held_in), (None, Some([2, 3])), "{c:?}");
        assert!(
            c.meaning.starts_with(
                "not clear on this machine: within the spread of its runs (x.mbps 120.0-420.0, \
                 y.mbps 90.0-110.0: the runs' lowest to highest, at least 5% either side of the \
                 median) it can go either way (it held in 2 of 3 runs"
            ),
            "{c:?}"
        );
        let a = answer(&l, &medians, &runs);
        assert_eq!(
            a,
            Err(
                "the medians say a), but within the spread of the runs (x.mbps 120.0-420.0, \
                 y.mbps 90.0-110.0: the runs' lowest to highest, at least 5% either side of the \
                 median) b) fits too; the runs answered a), b), a)"
                    .into()
            ),
            "{a:?}"
        );
        // Each run held, by a little (1.5x and 1.33x), but the ranges overlap across 1.3x: the
        // slowest x beside the fastest y is 1.0x. Not clear either.
        let runs = [figs(150.0, 100.0), figs(200.0, 150.0)];
        let c = check(claim, &figs(175.0, 125.0), &runs);
        assert_eq!((c.held, c.held_in), (None, Some([2, 2])), "{c:?}");
        // Three runs that agree to 1%, 1.31x to 1.32x: within 5% of each median the claim can
        // go either way (124.5 against 105 is 1.19x), so three close runs decide nothing either.
        let runs = [figs(131.0, 100.0), figs(131.5, 100.0), figs(132.0, 100.0)];
        let c = check(claim, &figs(131.5, 100.0), &runs);
        assert_eq!((c.held, c.held_in), (None, Some([3, 3])), "{c:?}");
    }

    /// Little's law at QD32, as the queue-depth lesson said it: IOPS 44239-81893 and mean
    /// latency 390.7-723.3 us over three runs, each run's product about 32, "not clear" by the
    /// box's corners (the fastest run's IOPS beside the slowest run's latency). Now each run
    /// is checked as the measurement it is.
    #[test]
    fn figures_of_one_test_are_judged_run_by_run() {
        let claim = Claim {
            text: "Little".into(),
            check: toml::Spanned::new(
                0..0,
                "abs(q.iops * q.lat_mean_us / 1e6 - q.qd) <= 0.15 * q.qd".into(),
            ),
            held: "yes".into(),
            failed: "no".into(),
        };
        let run = |iops: f64, lat: f64| -> Figures {
            [
                ("q.iops".to_string(), iops),
                ("q.lat_mean_us".to_string(), lat),
                ("q.qd".to_string(), 32.0),
            ]
            .into()
        };
        let runs = [
            run(44239.0, 723.3),
            run(54802.0, 583.9),
            run(81893.0, 390.7),
        ];
        let c = check(&claim, &runs[1], &runs);
        println!("{c:?}");
        assert_eq!((c.held, c.held_in), (Some(true), Some([3, 3])), "{c:?}");
        // A run in which it did not hold: not clear, and said so.
        let runs = [
            run(44239.0, 723.3),
            run(54802.0, 583.9),
            run(81893.0, 300.0),
        ];
        let c = check(&claim, &runs[1], &runs);
        assert_eq!((c.held, c.held_in), (None, Some([2, 3])), "{c:?}");
        assert!(
            c.meaning
                .starts_with("not clear on this machine: its runs disagree (it held in 2 of 3"),
            "{c:?}"
        );
        assert!(of_one_run(&[
            "q.iops".into(),
            "q.lat_mean_us".into(),
            "q.qd".into()
        ]));
        assert!(!of_one_run(&["q.iops".into(), "q.qd".into()]), "one figure");
        assert!(
            !of_one_run(&["a.iops".into(), "b.iops".into()]),
            "two tests"
        );
    }

    /// A measured figure reaches at least 5% either side of its median; a setting none.
    #[test]
    fn a_settings_range_is_what_it_was_set_to() {
        let f: Figures = [("t.qd".to_string(), 32.0), ("t.mbps".to_string(), 100.0)].into();
        let r = ranges(std::slice::from_ref(&f), &f);
        assert_eq!(r["t.qd"], [32.0, 32.0], "{r:?}");
        assert_eq!(r["t.mbps"], [95.0, 105.0], "{r:?}");
    }

    #[test]
    fn the_figures_are_medians_with_their_range() {
        let c = combine(&[run(300.0), run(3800.0), run(500.0)]);
        assert_eq!(c.figures["mbps"], 500.0, "{c:?}");
        assert_eq!(c.spread["mbps"], [300.0, 3800.0], "{c:?}");
        assert_eq!(c.runs, 3);
        let c = combine(&[run(100.0), run(200.0)]);
        assert_eq!(c.figures["mbps"], 150.0, "{c:?}");
    }
}

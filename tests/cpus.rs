//! `--cpus`: a job and the io_uring worker threads (io-wq) its I/O goes through run only on the
//! CPUs given, and a QD1 run whose I/O went through io-wq on several CPUs says why its latency
//! may be wake-ups. On zram, a driver without NOWAIT support, where io_uring hands every I/O
//! to io-wq.

mod common;

use std::process::Stdio;

use blkscope::engine::cpus::CpuList;
use common::*;

/// The CPUs this process may use, from /proc/self/status (Cpus_allowed_list: "0-3,6"), read
/// with the list syntax `--cpus` takes.
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    CpuList::parse(list).unwrap().cpus().to_vec()
}

/// (thread id, thread name, Cpus_allowed_list) of each thread of `pid` now.
fn threads(pid: u32) -> Vec<(String, String, String)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                .trim()
                .to_string();
            let tid = t.file_name().to_string_lossy().into_owned();
            Some((tid, comm.trim().to_string(), cpus))
        })
        .collect()
}

/// Runs a QD1 4K random read of `secs` on `z` with `extra` arguments, watching the process's
/// threads while it runs; returns the result and each thread's (name, CPUs) as last seen. (A
/// job thread binds itself to `--cpus` as its first step: seen in the moment before, it still
/// has every CPU. That moment was once caught, so a thread is judged by its last state.)
fn run_watched(z: &Zram, secs: u32, extra: &[&str]) -> (serde_json::Value, Vec<(String, String)>) {
    let runtime = format!("{secs}s");
    let mut args = vec![
        "run",
        z.dev(),
        "--op",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "1",
        // io_uring named: at QD1 the default is pread/pwrite, and these runs are about io-wq.
        "--engine",
        "uring",
        "--runtime",
        &runtime,
        "--confirm",
        &z.name,
        "--no-save",
        "--json",
    ];
    args.extend_from_slice(extra);
    let child = bin()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut last: Vec<(String, String, String)> = Vec::new();
    // Watch until the run ends: its threads, and any io-wq worker (iou-wrk-*) it started.
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        for t in threads(pid) {
            match last.iter_mut().find(|x| x.0 == t.0) {
                Some(x) => *x = t,
                None => last.push(t),
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let seen: Vec<(String, String)> = last.into_iter().map(|(_, n, c)| (n, c)).collect();
    let out = child.wait_with_output().unwrap();
    let (doc, code) = json_of(&out, &args);
    assert_eq!(code, 0, "{args:?} exited {code}: {doc}");
    (doc["results"][0].clone(), seen)
}

/// Runs a suite or a sweep (`args`, with `--json`) and returns the `cpus` of each test's job.
fn jobs_cpus(args: &[&str]) -> Vec<serde_json::Value> {
    let (doc, code) = blkscope_json(args);
    let jobs: Vec<serde_json::Value> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["job"]["cpus"].clone())
        .collect();
    println!("{args:?}: exit {code}, jobs' cpus {jobs:?}");
    assert_eq!(code, 0, "{doc}");
    jobs
}

#[test]
fn cpus_keep_the_job_and_its_io_workers_there_and_unpinned_qd1_is_explained() {
    if !require(true, &[]) {
        return;
    }
    let Some(z) = Zram::new(64 << 20) else {
        return;
    };
    let allowed = allowed_cpus();
    let cpu = *allowed.last().unwrap();
    println!("allowed CPUs {allowed:?}; pinning to {cpu}");

    // Unpinned: the job's I/O goes through io-wq; on two or more CPUs the result says why the
    // latency may be wake-ups, and names --cpus, unless the job polled for its completions
    // (`busy_polled`: no wake-up of the job to save, and --cpus would take the worker's CPU;
    // whether its polls caught their completions depends on the machine's load).
    let (r, seen) = run_watched(&z, 1, &[]);
    let kinds = finding_kinds(&r);
    assert!(
        r.get("cpus").is_none(),
        "unpinned: no cpus in the result: {}",
        r["cpus"]
    );
    let workers = seen
        .iter()
        .filter(|(n, _)| n.starts_with("iou-wrk-"))
        .count();
    println!(
        "unpinned: threads {seen:?}; findings {kinds:?}; {} IOPS",
        r["iops"]
    );
    assert!(
        workers > 0,
        "no io-wq worker seen for QD1 reads on zram (a kernel whose zram issues without blocking?): {seen:?}"
    );
    let polled = r.get("busy_polled") == Some(&serde_json::json!(true));
    let expected = allowed.len() >= 2 && !polled;
    println!("busy_polled {polled}: io_worker_wakeups expected {expected}");
    assert_eq!(
        kinds.iter().any(|k| k == "io_worker_wakeups"),
        expected,
        "io_worker_wakeups with io-wq workers seen, {} CPUs, busy_polled {polled}: {kinds:?}",
        allowed.len()
    );
    if expected {
        let w = r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == "io_worker_wakeups")
            .expect("the finding is a warning too");
        let msg = w["message"].as_str().unwrap();
        assert!(msg.contains("--cpus N") && msg.contains(&z.name), "{msg}");
        // In a KVM guest whose idle vCPUs halt at once, that is named as the cost; not
        // elsewhere (the parameter is the machine's: read it as the run did).
        let governor = ["current_governor", "current_governor_ro"]
            .iter()
            .find_map(|f| {
                std::fs::read_to_string(format!("/sys/devices/system/cpu/cpuidle/{f}")).ok()
            });
        let halt = std::fs::read_to_string("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|_| governor.as_deref().map(str::trim) == Some("haltpoll"));
        let f = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "io_worker_wakeups")
            .unwrap();
        println!(
            "guest_halt_poll_ns {halt:?}; finding numbers {}",
            f["numbers"]
        );
        assert_eq!(
            msg.contains("guest_halt_poll_ns is 0"),
            halt == Some(0),
            "{msg}"
        );
        assert_eq!(
            f["numbers"]["guest_halt_poll_ns"].as_f64(),
            halt.map(|h| h as f64),
            "{}",
            f["numbers"]
        );
    }

    // Pinned: the job thread and every io-wq worker run only on that CPU; no finding.
    let list = cpu.to_string();
    let (r, seen) = run_watched(&z, 2, &["--cpus", &list]);
    let kinds = finding_kinds(&r);
    println!(
        "--cpus {list}: threads {seen:?}; findings {kinds:?}; {} IOPS",
        r["iops"]
    );
    let job: Vec<_> = seen.iter().filter(|(n, _)| n == "blkscope-job-0").collect();
    let wrk: Vec<_> = seen
        .iter()
        .filter(|(n, _)| n.starts_with("iou-wrk-"))
        .collect();
    assert!(
        !job.is_empty() && !wrk.is_empty(),
        "job thread and worker seen: {seen:?}"
    );
    for (n, c) in job.iter().chain(wrk.iter()) {
        assert_eq!(c, &list, "{n} may run on CPUs {c}, not only {list}");
    }
    assert!(!kinds.iter().any(|k| k == "io_worker_wakeups"), "{kinds:?}");
    assert!(r["ios"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["cpus"], list.as_str(), "the result says where it ran");
}

#[test]
fn cpus_this_process_may_not_use_are_refused_in_one_line() {
    // Needs no device: a regular file serves as the target, and the CPUs are checked with the
    // rest of the job, before any I/O.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let allowed = allowed_cpus();
    let past = allowed.last().unwrap() + 1;
    let list = format!("0,{past}");
    let out = blkscope(&["run", f.to_str().unwrap(), "--op", "read", "--cpus", &list]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("exit {:?}: {err}", out.status.code());
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("not {past}")), "{err}");
    assert!(err.contains("use --cpus with CPUs from"), "{err}");

    let out = blkscope(&["run", f.to_str().unwrap(), "--op", "read", "--cpus", "1-0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("exit {:?}: {err}", out.status.code());
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("write the lower CPU first (0-1)"), "{err}");
}

#[test]
fn suites_and_sweeps_take_cpus_too() {
    let allowed = allowed_cpus();
    let cpu = allowed.last().unwrap().to_string();
    let past = (allowed.last().unwrap() + 1).to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();

    // Every test of a suite runs on the CPUs given, and its job says so.
    let args = [
        "suite",
        "hdparm-t",
        d,
        "--repeat",
        "1",
        "--cpus",
        &cpu,
        "--no-save",
        "--json",
    ];
    let jobs = jobs_cpus(&args);
    assert!(
        !jobs.is_empty() && jobs.iter().all(|c| *c == cpu.as_str()),
        "{jobs:?}"
    );

    // A run's summary names them.
    let out = blkscope(&["run", d, "--size", "8M", "--cpus", &cpu, "--no-save"]);
    let text = stdout_of(&out);
    println!("run --cpus {cpu}:\n{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.ends_with(&format!(" via psync on CPUs {cpu}")),
        "{first}"
    );

    // And a sweep's points.
    let args = [
        "sweep",
        d,
        "--qd",
        "1,2",
        "--runtime",
        "200ms",
        "--size",
        "8M",
        "--cpus",
        &cpu,
        "--no-save",
        "--json",
    ];
    let jobs = jobs_cpus(&args);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs.iter().all(|c| *c == cpu.as_str()), "{jobs:?}");

    // A CPU this process may not use: one line, exit 2, no scratch file left.
    let out = blkscope(&["suite", "hdparm-t", d, "--cpus", &past, "--no-save"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    println!(
        "suite --cpus {past}: exit {:?}: {err}; left {left:?}",
        out.status.code()
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "before any test starts: {err}"
    );
    assert!(err.contains(&format!("not {past}")), "{err}");
    assert!(left.is_empty(), "{left:?}");

    // The scheduler and write-cache suites run fixed jobs of their own: refused, not ignored.
    let out = blkscope(&["suite", "scheduler", "/dev/null", "--cpus", &cpu]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!(
        "suite scheduler --cpus: exit {:?}: {err}",
        out.status.code()
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("run it without --cpus"), "{err}");
}

/// `run DEV --op randread --bs 4k --iodepth DEPTH --size SIZE` confirmed with `name`, and
/// `extra`.
fn read_args<'a>(
    dev: &'a str,
    name: &'a str,
    size: &'a str,
    depth: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        dev,
        "--op",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        depth,
        "--size",
        size,
        "--confirm",
        name,
        "--no-save",
    ];
    args.extend_from_slice(extra);
    args
}

/// Writes the first 32 MiB of `dev` (`name` to confirm), so that reads find data.
fn fill_32m(dev: &str, name: &str) {
    let fill = blkscope(&[
        "run",
        dev,
        "--op",
        "write",
        "--bs",
        "1M",
        "--size",
        "32M",
        "--confirm",
        name,
        "--no-save",
    ]);
    ok_stdout(&fill, "fill");
}

/// A 4K random read of the filled 32 MiB at `depth`, with `extra`: the result, and the text of
/// the same run again.
fn read_32m(dev: &str, name: &str, depth: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let args = read_args(dev, name, "32M", depth, extra);
    let text = ok_stdout(&blkscope(&args), &args);
    let json = read_args(dev, name, "32M", depth, &[extra, &["--json"]].concat());
    let doc = ok_json(&blkscope(&json), &json);
    (first_result(&doc).clone(), text)
}

#[test]
fn io_the_kernel_hands_to_io_wq_is_handed_over_unless_the_job_polls_and_inline_io_is_not() {
    if !require(true, &["losetup"]) {
        return;
    }
    let Some(z) = Zram::new(64 << 20) else {
        return;
    };
    fill_32m(z.dev(), &z.name);
    // zram has no NOWAIT: io_uring's non-blocking attempt fails and every I/O goes to io-wq,
    // so after the first ring's worth a deep ring's job (which sleeps, never polls) sends them
    // there itself (IOSQE_ASYNC). io_uring by name: `auto` might take a loop here (below).
    let uring = ["--engine", "uring"];
    let (r, text) = read_32m(z.dev(), &z.name, "32", &uring);
    let first = text.lines().next().unwrap_or_default();
    println!(
        "zram QD32: to_workers {}, busy_polled {}; {first}",
        r["to_workers"], r["busy_polled"]
    );
    assert_eq!(r["to_workers"], true, "{r}");
    assert!(r.get("busy_polled").is_none(), "{r}");
    // Waking for few is tried only where the device completes the I/O (engine/few.rs).
    assert!(r.get("few_per_wake").is_none(), "{r}");
    assert!(first.contains("via uring, handed to io-wq"), "{text}");
    assert!(
        r["ios"].as_u64().unwrap() >= 8192,
        "the whole span read: {r}"
    );

    // A shallow ring either polls for its completions (a worker on another CPU does them) or,
    // where its polls run out (a busy machine), sleeps and hands them over: one or the other.
    let (r, text) = read_32m(z.dev(), &z.name, "8", &uring);
    let first = text.lines().next().unwrap_or_default();
    println!(
        "zram QD8: to_workers {}, busy_polled {}; {first}",
        r["to_workers"], r["busy_polled"]
    );
    let polled = r.get("busy_polled") == Some(&serde_json::json!(true));
    let handed = r.get("to_workers") == Some(&serde_json::json!(true));
    assert!(polled != handed, "exactly one of the two: {r}");
    // The text line is another run of the same job, which may have gone the other way: it says
    // one of the two, never both and never neither.
    let says = |w: &str| first.contains(w);
    assert!(
        says("busy-polling") != says("handed to io-wq"),
        "one of busy-polling and handed to io-wq: {text}"
    );

    // A loop device is blk-mq: io_uring issues its 4K reads without blocking, nothing goes to
    // io-wq, and the job leaves them inline; `auto` takes the ring without a probe.
    let lo = Loop::new(64 << 20, None, false);
    fill_32m(lo.dev(), &lo.name);
    let (r, text) = read_32m(lo.dev(), &lo.name, "32", &[]);
    let first = text.lines().next().unwrap_or_default();
    println!(
        "{}: to_workers {}, engine {}, probe {}; {first}",
        lo.name, r["to_workers"], r["engine"], r["engine_probe"]
    );
    assert!(r.get("to_workers").is_none(), "{r}");
    assert!(!first.contains("io-wq"), "{text}");
    assert_eq!(r["engine"], "uring", "{r}");
    assert!(r.get("engine_probe").is_none(), "no probe on a queue: {r}");

    // --hipri (IOPOLL) is issued by polling, never handed over (zram refuses it: not asserted
    // here); --sqpoll neither: the SQ thread submits. With more than one CPU the job polls the
    // completion ring instead of sleeping, as fio's --sqthread_poll does, where the poller
    // issues the I/O itself (the loop device); where it hands it to io-wq (zram) the job
    // sleeps, leaving the CPU to the workers; on one CPU it always sleeps.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (dev, name, polls) in [(z.dev(), &z.name, false), (lo.dev(), &lo.name, cpus > 1)] {
        for depth in ["1", "8"] {
            let args = read_args(dev, name, "8M", depth, &["--sqpoll", "--json"]);
            let args = [&args[..], &uring].concat();
            let doc = ok_json(&blkscope(&args), &args);
            let r = first_result(&doc);
            println!(
                "{name} --sqpoll QD{depth} on {cpus} CPUs: to_workers {}, busy_polled {}, ios {}",
                r["to_workers"], r["busy_polled"], r["ios"]
            );
            assert!(r.get("to_workers").is_none(), "{r}");
            assert_eq!(r.get("busy_polled").is_some(), polls, "{r}");
            assert_eq!(
                r["ios"].as_u64(),
                Some(2048),
                "the whole 8M read in 4K: {r}"
            );
        }
    }
}

/// `auto` at depth where io_uring can only hand the I/O to io-wq (zram): a probe of the ring
/// against a pread/pwrite loop chooses, and the result says both figures; the winner is the
/// probe's by its own figures (which one wins is the machine's: not asserted).
/// Repeats keep the first run's engine; a named engine, a sweep at depth and QD1 never probe.
#[test]
fn auto_at_depth_probes_the_ring_against_a_loop_where_io_goes_to_io_wq() {
    if !require(true, &[]) {
        return;
    }
    let Some(z) = Zram::new(64 << 20) else {
        return;
    };
    fill_32m(z.dev(), &z.name);
    let (r, text) = read_32m(z.dev(), &z.name, "8", &["--runtime", "300ms"]);
    let engine_line = text.lines().find(|l| l.trim_start().starts_with("engine:"));
    println!(
        "zram QD8 auto: engine {}, probe {}, why {}; text: {engine_line:?}",
        r["engine"], r["engine_probe"], r["engine_why"]
    );
    let p = &r["engine_probe"];
    let (ring, each) = (
        p["ring_iops"].as_f64().unwrap(),
        p["loop_iops"].as_f64().unwrap(),
    );
    assert!(ring > 0.0 && each > 0.0, "both paths measured: {p}");
    assert_eq!(p["seconds"].as_f64(), Some(0.06), "{p}");
    // The ring when its IOPS over the loop's are more than its CPU per I/O over the loop's.
    let cpu = |k: &str| p[k].as_f64().unwrap();
    let want = if ring * cpu("loop_cpu_us") > each * cpu("ring_cpu_us") {
        "uring"
    } else {
        "psync"
    };
    assert_eq!(r["engine"], want, "the probe's winner: {r}");
    let why = r["engine_why"].as_str().unwrap();
    for n in [ring.round() as u64, each.round() as u64] {
        assert!(why.contains(&n.to_string()), "{n} in {why:?}");
    }
    // The text run probed again: its engine line says a probe chose.
    let line = engine_line.unwrap_or_default();
    assert!(line.contains("probe of each"), "{text}");
    if r["engine"] == "psync" {
        let w = r["warnings"].as_array().unwrap();
        assert!(
            w.iter().any(|w| w["kind"] == "psync_iodepth"
                && w["message"].as_str().unwrap().contains("--engine uring")),
            "{w:?}"
        );
    }

    // Repeats: one probe, one engine for all.
    let args = read_args(
        z.dev(),
        &z.name,
        "32M",
        "8",
        &["--runtime", "200ms", "--repeat", "3", "--json"],
    );
    let doc = ok_json(&blkscope(&args), &args);
    let reps: Vec<_> = first_result(&doc)["repeats"].as_array().unwrap().clone();
    let seen: Vec<_> = reps
        .iter()
        .map(|x| (x["engine"].clone(), x["engine_probe"].clone()))
        .collect();
    println!("repeats: {seen:?}");
    assert_eq!(reps.len(), 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");

    // Named, at QD1, or a sweep at depth: no probe.
    for (what, depth, extra) in [
        ("--engine uring", "8", &["--engine", "uring"][..]),
        ("QD1", "1", &[][..]),
    ] {
        let args = read_args(
            z.dev(),
            &z.name,
            "8M",
            depth,
            &[extra, &["--json"]].concat(),
        );
        let doc = ok_json(&blkscope(&args), &args);
        let r = first_result(&doc);
        println!(
            "{what}: engine {}, probe {}",
            r["engine"], r["engine_probe"]
        );
        assert!(r.get("engine_probe").is_none(), "{what}: {r}");
    }
    // Blocks of 1 MiB at depth: the ring by rule, said so.
    let args = [
        "run",
        z.dev(),
        "--op",
        "read",
        "--bs",
        "1M",
        "--iodepth",
        "4",
        "--size",
        "8M",
        "--confirm",
        &z.name,
        "--no-save",
        "--json",
    ];
    let doc = ok_json(&blkscope(&args), args);
    let r = first_result(&doc);
    println!(
        "1M QD4: engine {}, probe {}, why {}",
        r["engine"], r["engine_probe"], r["engine_why"]
    );
    assert_eq!(r["engine"], "uring", "{r}");
    assert!(r.get("engine_probe").is_none(), "{r}");
    assert!(
        r["engine_why"].as_str().unwrap().contains("1 MiB or more"),
        "{r}"
    );
    let args = [
        "sweep",
        z.dev(),
        "--op",
        "randread",
        "--bs",
        "4k,64k",
        "--qd",
        "8",
        "--size",
        "8M",
        "--runtime",
        "200ms",
        "--confirm",
        &z.name,
        "--no-save",
        "--json",
    ];
    let doc = ok_json(&blkscope(&args), args);
    let points: Vec<_> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["result"]["engine"].clone(),
                t["result"].get("engine_probe").cloned(),
            )
        })
        .collect();
    println!("sweep at QD8: {points:?}");
    assert_eq!(points.len(), 2, "{doc}");
    assert!(
        points.iter().all(|(e, p)| e == "uring" && p.is_none()),
        "{points:?}"
    );
}

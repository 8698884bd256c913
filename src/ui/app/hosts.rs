//! `blkscope --host a --host b`: each host a top-level node of the device tree, its devices
//! beneath it as its own `list --json` reported them, its iostat panel fed by its own
//! `stat --json` over the ssh channel, and tests run there by the blkscope there (which decides
//! safety again, as it would locally).

use super::*;

/// One host as the TUI knows it.
#[derive(Debug, Clone)]
pub struct HostView {
    /// As the user named it (`[USER@]HOST[:PORT]`).
    pub label: String,
    /// Its devices, once `list --json` there answered.
    pub tree: Option<DeviceTree>,
    /// Why it has none: unreachable, a refused key, no blkscope there, ...
    pub error: Option<String>,
    /// The latest `stat --json` report from it.
    pub stats: Vec<IostatX>,
    /// Why its iostat stream stopped, when it did.
    pub stats_error: Option<String>,
    /// Its devices shown beneath it (Enter on its node opens and closes it).
    pub open: bool,
}

/// A test or suite that ran on a host, as its blkscope printed it.
#[derive(Debug, Clone)]
pub struct RemoteDone {
    pub target: Option<crate::runs::SavedTarget>,
    /// The remote safety verdict on the target when the run started.
    pub write_safety: Option<WriteSafety>,
    /// (test name, job, result, bytes moved), in order.
    pub tests: Vec<(String, Job, crate::runs::SavedResult, Option<u64>)>,
    /// The id the run was saved under there.
    pub saved_id: Option<String>,
}

impl RemoteDone {
    /// Reads what `run --ndjson` (sample lines, then a result line) or `suite --json` printed,
    /// and the `saved PATH` line from its standard error.
    pub fn parse(stdout: &str, stderr: &str, job: &Job) -> Result<RemoteDone, String> {
        let doc = stdout
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v.get("type").is_none_or(|t| t == "result"))
            .or_else(|| serde_json::from_str(stdout.trim()).ok())
            .ok_or("the remote blkscope printed no result")?;
        let target = serde_json::from_value(doc["target"].clone()).ok();
        let write_safety = serde_json::from_value(doc["target"]["write_safety"].clone()).ok();
        let mut tests = Vec::new();
        if let Some(rs) = doc["results"].as_array() {
            for r in rs {
                let res = serde_json::from_value(r.clone())
                    .map_err(|e| format!("a result the remote blkscope printed: {e}"))?;
                tests.push((job.label(), job.clone(), res, r["bytes"].as_u64()));
            }
        } else if let Some(ts) = doc["tests"].as_array() {
            for t in ts {
                let name = t["name"].as_str().unwrap_or("-").to_string();
                let job = serde_json::from_value(t["job"].clone())
                    .map_err(|e| format!("a job the remote blkscope printed: {e}"))?;
                let res = serde_json::from_value(t["result"].clone())
                    .map_err(|e| format!("a result the remote blkscope printed: {e}"))?;
                tests.push((name, job, res, t["result"]["bytes"].as_u64()));
            }
        }
        let saved_id = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("blkscope: saved "))
            .filter_map(|p| std::path::Path::new(p.trim()).file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .next_back();
        Ok(RemoteDone {
            target,
            write_safety,
            tests,
            saved_id,
        })
    }
}

impl App {
    /// The TUI over `hosts`: their nodes, filled in as each answers.
    pub fn for_hosts(labels: &[String], scratch_dir: PathBuf) -> Self {
        let mut app = App::new(DeviceTree { devices: vec![] }, scratch_dir);
        // A handful of hosts open, a fleet closed: a line each.
        let open = labels.len() <= super::host_tree::OPEN_UP_TO;
        app.hosts = labels
            .iter()
            .map(|l| HostView {
                label: l.clone(),
                tree: None,
                error: None,
                stats: Vec::new(),
                stats_error: None,
                open,
            })
            .collect();
        app.rebuild_targets();
        app
    }

    /// Hosts mode: the tree is the hosts' (`--host`).
    pub fn remote(&self) -> bool {
        !self.hosts.is_empty()
    }

    pub(super) fn host(&self, label: &str) -> Option<&HostView> {
        self.hosts.iter().find(|h| h.label == label)
    }

    /// A host's devices arrived, or why they will not.
    pub fn on_host_tree(&mut self, label: &str, r: Result<DeviceTree, String>) {
        if let Some(h) = self.hosts.iter_mut().find(|h| h.label == label) {
            match r {
                Ok(t) => {
                    h.tree = Some(t.listed(false));
                    h.error = None;
                }
                Err(e) => h.error = Some(e),
            }
        }
        self.rebuild_targets();
    }

    /// A host's `stat --json` report (or the end of its stream).
    pub fn on_host_stats(&mut self, label: &str, r: Result<Vec<IostatX>, String>) {
        if let Some(h) = self.hosts.iter_mut().find(|h| h.label == label) {
            match r {
                Ok(v) => h.stats = v,
                Err(e) => {
                    // Figures that no longer come are not shown as current.
                    h.stats.clear();
                    h.stats_error = Some(e);
                }
            }
        }
        if self.target().host.as_deref() == Some(label) {
            self.show_host_stats();
        }
    }

    /// The iostat panel from the selected target's host.
    pub(super) fn show_host_stats(&mut self) {
        let Some(h) = self.target().host.as_deref().and_then(|l| self.host(l)) else {
            return;
        };
        self.diskstats = h
            .stats
            .iter()
            .filter(|x| self.watched.contains(&x.disk_device))
            .cloned()
            .collect();
    }

    /// The device behind a target entry, on this machine or on its host.
    pub fn device_of(&self, t: &TargetEntry) -> Option<&crate::device::Device> {
        let name = t.device.as_deref()?;
        match &t.host {
            None => self.tree.get(name),
            Some(h) => self.host(h)?.tree.as_ref()?.get(name),
        }
    }

    /// The tree the selected target belongs to.
    pub(super) fn tree_of_target(&self) -> Option<&DeviceTree> {
        match &self.target().host {
            None => Some(&self.tree),
            Some(h) => self.host(h)?.tree.as_ref(),
        }
    }

    /// The key under which a write to the selected target is remembered as the session's own.
    pub(super) fn written_key(&self) -> Option<String> {
        let d = self.target().device.as_ref()?;
        Some(match &self.target().host {
            Some(h) => format!("{h}:{d}"),
            None => d.clone(),
        })
    }

    /// The host's blkscope refused a write because the device holds data it did not know
    /// of when the tree was listed (`why`, its own line): ask for the name to be typed, as for
    /// any device that needs it.
    pub fn on_remote_needs_confirm(&mut self, why: &str) {
        self.screen = Screen::Main;
        self.run = None;
        if let Some(device) = self.target().device.clone() {
            self.overlay = Overlay::Confirm {
                device,
                typed: String::new(),
                error: None,
            };
        }
        self.status = Some(why.to_string());
    }

    /// A test or suite on a host finished (or failed, or was cancelled).
    pub fn on_remote_finished(&mut self, outcome: Result<RemoteDone, String>) {
        let Some(run) = self.run.clone() else { return };
        let host = self.target().host.clone().unwrap_or_default();
        let path = self.target_path();
        match outcome {
            Ok(done) => {
                let wrote = done.tests.iter().any(|(_, j, _, _)| j.op.writes());
                if wrote
                    && done.write_safety == Some(WriteSafety::Clear)
                    && done.target.as_ref().is_some_and(|t| t.kind == "block")
                    && let Some(k) = self.written_key()
                {
                    self.written_blank.insert(k);
                }
                let total = done
                    .target
                    .as_ref()
                    .map(|t| t.size_bytes)
                    .unwrap_or(self.target().size);
                let n = done.tests.len();
                let pairs: Vec<_> = done.tests.iter().map(|(_, j, r, _)| (j, r)).collect();
                let sweeps: Vec<_> = crate::plot::sweeps_in(&pairs)
                    .into_iter()
                    .map(std::sync::Arc::new)
                    .collect();
                let found_here = self.found_here(
                    run.suite.as_deref(),
                    done.tests
                        .iter()
                        .map(|(n, _, r, _)| (n.as_str(), r.median_rate())),
                    &path,
                );
                let mut seen = Vec::new();
                for (name, job, res, moved) in done.tests {
                    let sweep = super::results::point_of(&sweeps, job.op, &mut seen);
                    let test = match &run.suite {
                        Some(s) => format!("{s}/{name}"),
                        None if n == 1 => run.test.clone(),
                        None => name.clone(),
                    };
                    self.results.push(ResultRow {
                        test: test.clone(),
                        target: run.target.clone(),
                        info: None,
                        result: None,
                        error: None,
                        dd: explain::dd_line_for_run(&job, &path, total, moved),
                        fio: super::results::saved_fio(&job, &res, &path, total),
                        saved_id: done.saved_id.as_ref().map(|id| format!("{host}:{id}")),
                        reopened: Some(crate::runs::Figures::of_saved(&test, &res)),
                        saved: Some(SavedSaid::of(&res)),
                        series: res.samples.clone(),
                        sweep,
                        found_here: found_here.clone(),
                    });
                }
                if n == 0 {
                    self.results.push(ResultRow::failed(
                        run.test.clone(),
                        run.target.clone(),
                        "cancelled before the test started".into(),
                    ));
                }
            }
            Err(e) => self
                .results
                .push(ResultRow::failed(run.test.clone(), run.target.clone(), e)),
        }
        self.selected_result = self.results.len() - 1;
        if !self.quit {
            self.screen = Screen::Results;
        }
    }
}

/// The arguments of `blkscope run` for `job` on `target`, streaming samples (`--ndjson`): what
/// the TUI asks a host's blkscope to run.
pub fn run_args(job: &Job, target: &str, confirm: Option<&str>) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into(), target.into()];
    let mut kv = |k: &str, v: String| {
        a.push(format!("--{k}"));
        a.push(v);
    };
    kv("op", job.op.as_str().into());
    kv("bs", job.bs.to_string());
    kv("iodepth", job.iodepth.to_string());
    kv("jobs", job.jobs.to_string());
    kv("offset", job.offset.to_string());
    kv("mode", job.mode.as_str().into());
    kv(
        "data",
        match job.data {
            crate::engine::job::Data::Random => "random",
            crate::engine::job::Data::Zero => "zero",
        }
        .into(),
    );
    kv("engine", job.engine.as_str().into());
    // Only where they mean something: the host refuses --rwmixread outside randrw and
    // --max-errors without --verify.
    if job.op == crate::engine::Op::Randrw {
        kv("rwmixread", job.rwmixread.to_string());
    }
    if let Some(s) = job.size {
        kv(
            "size",
            match s {
                SizeSpec::Bytes(b) | SizeSpec::Text(crate::engine::job::Sized::Bytes(b)) => {
                    b.to_string()
                }
                SizeSpec::Text(crate::engine::job::Sized::Percent(p)) => format!("{p}%"),
            },
        );
    }
    let ms = |d: std::time::Duration| format!("{}ms", d.as_millis().max(1));
    if let Some(r) = job.runtime {
        kv("runtime", ms(r));
    }
    if let Some(r) = job.ramp {
        kv("ramp", ms(r));
    }
    if let Some(i) = job.interval {
        kv("interval", ms(i));
    }
    if let Some(m) = job.max_errors
        && job.verify
    {
        kv("max-errors", m.to_string());
    }
    if let Some(c) = &job.cpus {
        kv("cpus", c.to_string());
    }
    if let Some(c) = confirm {
        kv("confirm", c.into());
    }
    for (on, flag) in [
        (job.sqpoll, "--sqpoll"),
        (job.hipri, "--hipri"),
        (job.verify, "--verify"),
    ] {
        if on {
            a.push(flag.into());
        }
    }
    a.push("--ndjson".into());
    a
}

/// The arguments of `blkscope suite` for `suite` on `target`, streaming progress and samples
/// (`--ndjson`).
pub fn suite_args(suite: &str, target: &str, confirm: Option<&str>) -> Vec<String> {
    let mut a: Vec<String> = vec!["suite".into(), suite.into(), target.into()];
    if let Some(c) = confirm {
        a.push("--confirm".into());
        a.push(c.into());
    }
    a.push("--ndjson".into());
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::{Data, EngineKind, Mode, Op, Sized};
    use clap::Parser;

    /// What the remote blkscope would run, read back by its own argument parser.
    fn parsed(args: &[String]) -> crate::cli::Cli {
        let mut argv = vec!["blkscope".to_string()];
        argv.extend(args.iter().cloned());
        crate::cli::Cli::try_parse_from(&argv)
            .unwrap_or_else(|e| panic!("{argv:?} does not parse: {e}"))
    }

    #[test]
    fn a_job_goes_to_the_host_unchanged() {
        let jobs = [
            Job {
                op: Op::Randrw,
                bs: 16384,
                iodepth: 32,
                jobs: 2,
                offset: 1 << 20,
                size: Some(SizeSpec::Text(Sized::Percent(50.0))),
                runtime: Some(std::time::Duration::from_millis(2500)),
                ramp: Some(std::time::Duration::from_secs(1)),
                mode: Mode::Dsync,
                data: Data::Zero,
                engine: EngineKind::Psync,
                rwmixread: 70,
                sqpoll: true,
                interval: Some(std::time::Duration::from_millis(250)),
                drop_cache_first: false,
                verify: true,
                hipri: true,
                max_errors: Some(7),
                cpus: Some(crate::engine::cpus::CpuList::parse("0,2-3").unwrap()),
            },
            Job {
                op: Op::Write,
                size: Some(SizeSpec::Bytes(64 << 20)),
                verify: true,
                interval: Some(std::time::Duration::from_millis(100)),
                max_errors: Some(1000),
                ..Job::default()
            },
            // A read: no --rwmixread and no --max-errors, which the host would refuse there.
            Job {
                op: Op::Randread,
                interval: Some(std::time::Duration::from_millis(100)),
                max_errors: Some(1000),
                ..Job::default()
            },
        ];
        for job in jobs {
            let args = run_args(&job, "/dev/sdb", Some("sdb"));
            if job.op != Op::Randrw {
                assert!(!args.contains(&"--rwmixread".into()), "{args:?}");
            }
            if !job.verify {
                assert!(!args.contains(&"--max-errors".into()), "{args:?}");
            }
            let cli = parsed(&args);
            let Some(crate::cli::Command::Run(r)) = cli.command else {
                panic!("{args:?} is not a run");
            };
            let mut back = r.job();
            // --size comes back as the text form; compare the bytes it stands for.
            assert_eq!(
                back.size.map(|s| s.resolve(1 << 30)),
                job.size.map(|s| s.resolve(1 << 30)),
                "{args:?}"
            );
            back.size = job.size;
            assert_eq!(back, job, "{args:?}");
            assert_eq!(r.safety.confirm.as_deref(), Some("sdb"), "{args:?}");
            assert!(r.output.ndjson, "{args:?}");
        }
        let cli = parsed(&suite_args("fedora-four", "/dev/sdb", Some("sdb")));
        assert!(
            matches!(cli.command, Some(crate::cli::Command::Suite(ref a)) if a.output.ndjson && a.safety.confirm.as_deref() == Some("sdb"))
        );
    }
}

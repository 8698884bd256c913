//! Shared helpers for the integration tests: running the binary, and guards for the loop
//! devices, mounts, swap areas and device-mapper targets a test creates. Every guard undoes
//! exactly what it made when it is dropped, also when the test fails.
//!
//! Tests that need root, loop devices or an external tool call [`require`]: outside CI they skip
//! with a printed reason; with `BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1` a missing privilege, device
//! or tool is a failure.
#![allow(dead_code)]

pub mod svg;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A data and config home of this test binary's own (saved runs, user suites), removed when the
/// test binary exits.
pub fn test_home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("blkscope-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("test home");
        extern "C" fn cleanup() {
            let dir = std::env::temp_dir().join(format!("blkscope-tests-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(dir);
        }
        // SAFETY: registering a plain function with no captured state to run at exit.
        unsafe { libc::atexit(cleanup) };
        dir
    })
}

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_blkscope"));
    c.env("XDG_DATA_HOME", test_home().join("data"))
        .env("XDG_CONFIG_HOME", test_home().join("config"));
    c
}

/// Makes `cmd` run where the kernel refuses bpf(2) with EPERM, as a container's default
/// seccomp profile or a locked-down kernel does: a seccomp filter installed in the child before
/// it runs the program (x86_64 only; false elsewhere, where a test skips).
pub fn refusing_bpf(cmd: &mut Command) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::os::unix::process::CommandExt;
        #[repr(C)]
        struct Insn {
            code: u16,
            jt: u8,
            jf: u8,
            k: u32,
        }
        #[repr(C)]
        struct Prog {
            len: u16,
            filter: *const Insn,
        }
        const LD_W_ABS: u16 = 0x20;
        const JEQ_K: u16 = 0x15;
        const RET_K: u16 = 0x06;
        const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
        const ALLOW: u32 = 0x7fff_0000;
        const ERRNO: u32 = 0x0005_0000;
        let insn = |code, jt, jf, k| Insn { code, jt, jf, k };
        // seccomp_data: nr at 0, arch at 4. Another architecture's calls pass; bpf(2) fails
        // with EPERM; everything else passes.
        let filter = [
            insn(LD_W_ABS, 0, 0, 4),
            insn(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
            insn(RET_K, 0, 0, ALLOW),
            insn(LD_W_ABS, 0, 0, 0),
            insn(JEQ_K, 0, 1, libc::SYS_bpf as u32),
            insn(RET_K, 0, 0, ERRNO | libc::EPERM as u32),
            insn(RET_K, 0, 0, ALLOW),
        ];
        // SAFETY: between fork and exec only prctl(2) runs, which is async-signal-safe; the
        // filter is moved into the closure and read by the kernel during the call.
        unsafe {
            cmd.pre_exec(move || {
                let prog = Prog {
                    len: filter.len() as u16,
                    filter: filter.as_ptr(),
                };
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const Prog, 0, 0) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = cmd;
        false
    }
}

pub fn required() -> bool {
    std::env::var("BLKSCOPE_REQUIRE_PRIVILEGED_TESTS").as_deref() == Ok("1")
}

/// Returns true when the test may go on. Otherwise skips (prints why) or, in CI, panics.
#[must_use]
pub fn require(root: bool, tools: &[&str]) -> bool {
    let mut missing = Vec::new();
    if root {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        if euid != 0 {
            missing.push("root".to_string());
        } else if !Path::new("/dev/loop-control").exists() {
            missing.push("/dev/loop-control (loop devices)".to_string());
        }
    }
    for t in tools {
        if !tool_exists(t) {
            missing.push(format!("the `{t}` command"));
        }
    }
    if missing.is_empty() {
        return true;
    }
    let msg = format!("needs {}", missing.join(", "));
    if required() {
        panic!("BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 but this test {msg}");
    }
    eprintln!("SKIPPED: this test {msg}");
    false
}

pub fn tool_exists(t: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .chain(["/usr/sbin".into(), "/sbin".into()])
                .any(|d| d.join(t).is_file())
        })
        .unwrap_or(false)
}

/// Runs blkscope as user nobody (uid/gid 65534, no groups), through setpriv.
pub fn blkscope_as_nobody(args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(args)
        .output()
        .expect("setpriv")
}

/// Runs a command and panics with its output when it fails.
pub fn sh(cmd: &str, args: &[&str]) -> Output {
    let out = Command::new(cmd)
        .args(args)
        .env("PATH", path_with_sbin())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn path_with_sbin() -> String {
    let p = std::env::var("PATH").unwrap_or_default();
    format!("{p}:/usr/sbin:/sbin")
}

pub fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn blkscope(args: &[&str]) -> Output {
    bin().args(args).output().expect("run blkscope")
}

/// Runs blkscope with one environment variable set (a config or data home of a test's own).
pub fn blkscope_with(var: &str, value: &Path, args: &[&str]) -> Output {
    bin()
        .env(var, value)
        .args(args)
        .output()
        .expect("run blkscope")
}

pub fn blkscope_json(args: &[&str]) -> (serde_json::Value, i32) {
    json_of(&blkscope(args), args)
}

/// The JSON a blkscope run with `args` printed, and its exit status.
pub fn json_of(out: &Output, args: &[&str]) -> (serde_json::Value, i32) {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "blkscope {args:?} printed no JSON ({e}): {}{}",
            stdout_of(out),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.code().unwrap_or(-1))
}

/// The stdout of a command that must have exited 0 (else its status and stderr, and `what` it
/// was, in the failure).
pub fn ok_stdout(out: &Output, what: impl std::fmt::Debug) -> String {
    assert!(
        out.status.success(),
        "{what:?}: {:?} {}{}",
        out.status,
        stdout_of(out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_of(out)
}

/// The JSON a command printed, once it exited 0.
pub fn ok_json(out: &Output, what: impl std::fmt::Debug) -> serde_json::Value {
    let text = ok_stdout(out, &what);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what:?} printed no JSON ({e}): {text}"))
}

/// The first result of a `run --json` or `suite --json` document.
pub fn first_result(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["results"][0]
}

/// Saved runs of a test's own: a data home (XDG_DATA_HOME) that blkscope saves runs into and
/// reads them back from, removed on drop.
pub struct SavedRuns {
    pub data: tempfile::TempDir,
}

impl SavedRuns {
    pub fn new() -> Self {
        Self {
            data: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.data.path()
    }

    /// A blkscope command with these saved runs, for a test to add to.
    pub fn command(&self) -> Command {
        let mut cmd = bin();
        cmd.env("XDG_DATA_HOME", self.path());
        cmd
    }

    /// blkscope with these saved runs.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run blkscope")
    }

    /// The stdout of a command with these saved runs that must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        ok_stdout(&self.run(args), args)
    }

    /// The ids of the saved runs, oldest first (an id starts with its time).
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.path().join("blkscope/runs"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.path().file_stem().unwrap().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids
    }
}

/// The id of the run that a command's `saved PATH` line on stderr names.
pub fn saved_id(stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr);
    let line = err
        .lines()
        .find(|l| l.contains("saved "))
        .unwrap_or_else(|| panic!("not saved: {err}"));
    Path::new(line.rsplit(' ').next().unwrap())
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// A sparse file of `size` bytes in its own temporary directory.
pub struct Image {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Image {
    pub fn new(size: u64) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("disk.img");
        let f = std::fs::File::create(&path).expect("create image");
        f.set_len(size).expect("size image");
        Self { dir, path }
    }

    pub fn path_str(&self) -> &str {
        self.path.to_str().expect("utf-8 path")
    }
}

/// Writes a partition table to an image (or device) with sfdisk, from a script on stdin.
pub fn sfdisk(target: &str, script: &str) {
    use std::io::Write;
    let mut child = Command::new("sfdisk")
        .env("PATH", path_with_sbin())
        .args(["--quiet", target])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("sfdisk");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "sfdisk {target} failed");
}

/// A loop device over an image; detached on drop.
pub struct Loop {
    pub path: PathBuf,
    pub name: String,
    pub image: Image,
}

impl Loop {
    /// `losetup --find --show [-b SECTOR] [-P] FILE` over a new sparse image.
    pub fn new(size: u64, sector: Option<u32>, partscan: bool) -> Self {
        Self::over(Image::new(size), sector, partscan)
    }

    pub fn over(image: Image, sector: Option<u32>, partscan: bool) -> Self {
        let mut args: Vec<String> = vec!["--find".into(), "--show".into()];
        if let Some(s) = sector {
            args.push("-b".into());
            args.push(s.to_string());
        }
        if partscan {
            args.push("-P".into());
        }
        args.push(image.path_str().into());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = sh("losetup", &a);
        let path = PathBuf::from(stdout_of(&out).trim());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        Self { path, name, image }
    }

    pub fn dev(&self) -> &str {
        self.path.to_str().unwrap()
    }

    /// `/dev/loopNpK`
    pub fn part(&self, k: u32) -> String {
        format!("{}p{k}", self.dev())
    }

    /// Waits until the kernel shows partition `k`. Kernels built without partition-table
    /// parsers (this project's CI machine has none) do not scan on `losetup -P`; then the
    /// partitions are added from user space with `partx -a` (the BLKPG ioctl), as util-linux does.
    pub fn wait_part(&self, k: u32) -> String {
        let p = self.part(k);
        for i in 0..100 {
            if Path::new(&p).exists() {
                return p;
            }
            if i == 10 {
                let _ = Command::new("partx")
                    .env("PATH", path_with_sbin())
                    .args(["-a", self.dev()])
                    .status();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("{p} did not appear");
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup")
            .env("PATH", path_with_sbin())
            .args(["-d", self.dev()])
            .status();
    }
}

/// A mount in a temporary directory; unmounted on drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(dev: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        sh("mount", &[dev, dir.path().to_str().unwrap()]);
        Self { dir }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        umount(self.dir.path());
    }
}

/// A tmpfs of `size` (mount's `size=`, e.g. "16m") in a temporary directory; unmounted on drop.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn new(size: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = format!("size={size}");
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &opts,
                "blkscope-test",
                dir.path().to_str().unwrap(),
            ],
        );
        Self { dir }
    }

    pub fn path_str(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        umount(self.dir.path());
    }
}

/// Unmounts, retrying while the kernel still releases what used the mount (a loop device
/// detaches asynchronously), then lazily as a last resort so nothing stays mounted.
pub fn umount(path: &Path) {
    for _ in 0..50 {
        let ok = Command::new("umount")
            .env("PATH", path_with_sbin())
            .arg(path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(40));
    }
    let _ = Command::new("umount")
        .env("PATH", path_with_sbin())
        .args(["-l"])
        .arg(path)
        .status();
}

/// An active swap area; swapoff on drop.
pub struct Swap {
    pub dev: String,
}

impl Swap {
    pub fn new(dev: &str) -> Self {
        sh("mkswap", &[dev]);
        sh("swapon", &[dev]);
        Self {
            dev: dev.to_string(),
        }
    }
}

impl Drop for Swap {
    fn drop(&mut self) {
        let _ = Command::new("swapoff")
            .env("PATH", path_with_sbin())
            .arg(&self.dev)
            .status();
    }
}

/// The device object named `name` in `list --json` output.
pub fn device<'a>(list: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    list["devices"]
        .as_array()
        .expect("devices array")
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in list --json"))
}

pub fn reason_codes(report: &serde_json::Value) -> Vec<String> {
    report["reasons"]
        .as_array()
        .or_else(|| report["safety_reasons"].as_array())
        .expect("reasons")
        .iter()
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect()
}

/// blkscope running in a tmux session of its own at 80x24; the session is killed on drop.
pub struct Tmux {
    session: String,
}

impl Tmux {
    /// `cd DIR && [EXTRA_ENV] blkscope ARGS`, then `BLKSCOPE-EXITED` is printed.
    pub fn start(dir: &Path, extra_env: &str, args: &str) -> Self {
        // Saved runs and user suites go to the test's own home, not the real one.
        let home = test_home();
        let cmd = format!(
            "cd {} && XDG_DATA_HOME={} XDG_CONFIG_HOME={} {extra_env} {} {args}; echo BLKSCOPE-EXITED; sleep 60",
            dir.display(),
            home.join("data").display(),
            home.join("config").display(),
            env!("CARGO_BIN_EXE_blkscope")
        );
        Self::command(&cmd, &[])
    }

    /// Any shell command line in a session of its own at 80x24 (TERM=xterm-256color), with
    /// `env` set: a blkscope started some other way (in a chroot, say).
    pub fn command(cmd: &str, env: &[(&str, &str)]) -> Self {
        let session = format!("blkscope-e2e-{}-{}", std::process::id(), fastrand::u32(..));
        let ok = tmux(&session)
            .args([
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                "80",
                "-y",
                "24",
                cmd,
            ])
            .env("TERM", "xterm-256color")
            .envs(env.iter().copied())
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux new-session failed");
        Self { session }
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            assert!(
                tmux(&self.session)
                    .args(["send-keys", "-t", &self.session, k])
                    .status()
                    .unwrap()
                    .success()
            );
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// Resizes the session's window (as a user dragging the terminal's corner).
    pub fn resize(&self, w: u16, h: u16) {
        assert!(
            tmux(&self.session)
                .args([
                    "resize-window",
                    "-t",
                    &self.session,
                    "-x",
                    &w.to_string(),
                    "-y",
                    &h.to_string(),
                ])
                .status()
                .unwrap()
                .success(),
            "tmux resize-window"
        );
    }

    pub fn screen(&self) -> String {
        let out = tmux(&self.session)
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn display(&self, fmt: &str) -> String {
        let out = tmux(&self.session)
            .args(["display-message", "-p", "-t", &self.session, fmt])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn pid(&self) -> i32 {
        // The pane runs a shell; blkscope is its child.
        let shell: i32 = self.display("#{pane_pid}").parse().unwrap();
        let out = Command::new("pgrep")
            .args(["-P", &shell.to_string(), "blkscope"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no blkscope under the pane's shell {shell}"))
    }

    /// Waits until the screen contains every needle.
    pub fn wait_for(&self, needles: &[&str], secs: u64) -> String {
        let t = Instant::now();
        loop {
            let s = self.screen();
            if needles.iter().all(|n| s.contains(n)) {
                return s;
            }
            if t.elapsed() > Duration::from_secs(secs) {
                panic!("waited {secs} s for {needles:?}; the screen shows:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// tmux on a server of the session's own (`-L`): the default server is shared by every session
/// and exits when its last one ends, and a session started in that moment fails with "server
/// exited unexpectedly" (seen in a CI run when the tests ran side by side).
fn tmux(session: &str) -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", session]);
    c
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is this session's alone: ending it ends the session and takes its socket.
        let _ = tmux(&self.session).arg("kill-server").status();
    }
}

/// Another process running `dd ARGS` over and over (in a shell loop), in a process group of its
/// own that is killed on drop, also when the test fails.
pub struct Neighbour(std::process::Child);

impl Neighbour {
    pub fn dd(args: &str) -> Self {
        Self::sh(&format!("while :; do dd {args} status=none; done"))
    }

    /// A shell running `script`.
    pub fn sh(script: &str) -> Self {
        use std::os::unix::process::CommandExt;
        let child = Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Self(child)
    }

    /// The shell's pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// A reader of the whole of `dev` (`dd iflag=direct`).
    pub fn reader(dev: &str) -> Self {
        Self::dd(&format!("if={dev} of=/dev/null bs=1M iflag=direct"))
    }

    /// A reader of loop device `lo`, once its reads show in /proc/diskstats.
    pub fn reading(lo: &Loop) -> Self {
        let (r0, _) = diskstats_sectors(&lo.name);
        let reader = Self::reader(lo.dev());
        wait_until(10, "the reader to read", || {
            diskstats_sectors(&lo.name).0 > r0 + 4096
        });
        reader
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        // `--`: a negative pid (the group) is not an option.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

/// Waits until `cond` holds, polling every 20 ms, for at most `secs` seconds; panics naming
/// `what` when it never does. Tests wait for conditions, never for fixed times.
pub fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !cond() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(secs),
            "waited {secs} s for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// (sectors read, sectors written) of a device in /proc/diskstats.
pub fn diskstats_sectors(name: &str) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() > 9 && f[2] == name {
            return (f[5].parse().unwrap(), f[9].parse().unwrap());
        }
    }
    panic!("{name} not in /proc/diskstats");
}

/// Lets the neighbours of a new device finish with it: `udevadm settle` where udev runs, then
/// waits until its diskstats stop moving (unchanged over 200 ms, for at most 5 s). A probe by
/// blkid or udev on a new loop device otherwise lands in the middle of a measurement.
pub fn settle(name: &str) {
    if tool_exists("udevadm") {
        let _ = Command::new("udevadm")
            .env("PATH", path_with_sbin())
            .args(["settle", "--timeout=5"])
            .status();
    }
    let t = std::time::Instant::now();
    let mut last = diskstats_sectors(name);
    while t.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = diskstats_sectors(name);
        if now == last {
            return;
        }
        last = now;
    }
}

/// A chroot holding a blkscope binary as /blkscope (and, with `libs`, the shared libraries it
/// links), an empty /tmp, and /proc, /sys and /dev mounted: all unmounted and removed on drop.
pub struct Chroot {
    pub dir: tempfile::TempDir,
    mounts: Vec<PathBuf>,
}

impl Chroot {
    pub fn new(bin: &Path, libs: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = bin.to_path_buf();
        let mut files = vec![bin.clone()];
        if libs {
            let ldd = Command::new("ldd").arg(&bin).output().unwrap();
            for l in String::from_utf8_lossy(&ldd.stdout).lines() {
                if let Some(p) = l.split_whitespace().find(|w| w.starts_with('/')) {
                    files.push(PathBuf::from(p));
                }
            }
        }
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        for f in &files {
            let to = if *f == bin {
                dir.path().join("blkscope")
            } else {
                dir.path().join(f.strip_prefix("/").unwrap())
            };
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(f, &to).unwrap();
        }
        let mut c = Self {
            dir,
            mounts: Vec::new(),
        };
        for (what, fstype, at) in [
            ("proc", "proc", "proc"),
            ("sysfs", "sysfs", "sys"),
            ("devtmpfs", "devtmpfs", "dev"),
        ] {
            let p = c.dir.path().join(at);
            std::fs::create_dir_all(&p).unwrap();
            sh("mount", &["-t", fstype, what, p.to_str().unwrap()]);
            c.mounts.push(p);
        }
        c
    }

    pub fn blkscope(&self, args: &[&str]) -> std::process::Output {
        Command::new("chroot")
            .env("PATH", path_with_sbin())
            .env("HOME", "/")
            .arg(self.dir.path())
            .arg("/blkscope")
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Chroot {
    fn drop(&mut self) {
        for m in self.mounts.iter().rev() {
            umount(m);
        }
    }
}

/// A zram device of the test's own (`/sys/class/zram-control/hot_add`), reset and removed
/// (`hot_remove`) on drop; zram0 and any other zram device are left alone.
pub struct Zram {
    pub name: String,
    pub path: PathBuf,
}

impl Zram {
    /// A new zram device of `size` bytes, or None (with the reason printed, or a panic when the
    /// privileged tests are required) where the kernel has no zram-control.
    pub fn new(size: u64) -> Option<Self> {
        let ctl = Path::new("/sys/class/zram-control/hot_add");
        if !ctl.exists() {
            let msg = "needs zram (/sys/class/zram-control: CONFIG_ZRAM, or modprobe zram)";
            if required() {
                panic!("BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 but this test {msg}");
            }
            eprintln!("SKIPPED: this test {msg}");
            return None;
        }
        let id = std::fs::read_to_string(ctl).expect("zram hot_add");
        let name = format!("zram{}", id.trim());
        let z = Self {
            path: PathBuf::from(format!("/dev/{name}")),
            name,
        };
        std::fs::write(format!("/sys/block/{}/disksize", z.name), size.to_string())
            .expect("zram disksize");
        wait_until(10, "the zram device node", || z.path.exists());
        Some(z)
    }

    pub fn dev(&self) -> &str {
        self.path.to_str().expect("utf-8 path")
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let id = self.name.trim_start_matches("zram").to_string();
        // The device may still be closing (a probe by udev): retry for a few seconds.
        for _ in 0..50 {
            let reset = std::fs::write(format!("/sys/block/{}/reset", self.name), "1");
            if reset.is_ok() && std::fs::write("/sys/class/zram-control/hot_remove", &id).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove {}", self.name);
    }
}

/// The finding of `kind` of an object with `findings` (a run's result, or a device of `doctor
/// --json`), if it has one.
pub fn finding_of<'a>(holder: &'a serde_json::Value, kind: &str) -> Option<&'a serde_json::Value> {
    holder["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
}

/// The `kind` of each finding of a result object (or a device of `doctor --json`).
pub fn finding_kinds(result: &serde_json::Value) -> Vec<String> {
    result["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts that the document at `rel` (from the crate's root) is `text`, what the code makes
/// of it now; with `BLKSCOPE_WRITE_DOCS=1` writes it instead (docs/findings.md, the pictures).
pub fn current(rel: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("BLKSCOPE_WRITE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        println!("wrote {}", path.display());
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "{rel} is not what the code writes: run BLKSCOPE_WRITE_DOCS=1 cargo test --test docs --test tui_views\n\
         --- the code writes ---\n{text}"
    );
}

/// A block device's (major, minor), by kernel name.
pub fn dev_of(name: &str) -> (u32, u32) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
    let (a, b) = s.trim().split_once(':').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

/// dd with `args`, its pid once it has ended.
pub fn dd(args: &str) -> u32 {
    let mut c = Command::new("dd")
        .args(args.split_whitespace())
        .args(["status=none"])
        .spawn()
        .unwrap();
    let pid = c.id();
    assert!(c.wait().unwrap().success(), "dd {args}");
    pid
}

/// This process's descriptors of BPF objects (maps, programs, links).
pub fn bpf_fds() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .filter(|l| l.contains("bpf"))
        .collect()
}

/// The samples of a `run --ndjson` and its final document.
pub fn ndjson(text: &str) -> (Vec<serde_json::Value>, serde_json::Value) {
    let docs: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let samples = docs
        .iter()
        .filter(|v| v["type"] == "sample")
        .cloned()
        .collect();
    (samples, docs.last().cloned().unwrap_or_default())
}

//! What every test of a suite or sweep would be refused for, said at once before the first runs.

use super::*;
use crate::engine::RunError;
use crate::engine::job::Job;
use crate::sysroot::SysRoot;

/// What the jobs of a suite or sweep get wrong on `spec`'s target, found before the first one
/// runs, so that a bad point cannot fail after the points before it have run (or written): each
/// job's parameters and the memory its buffers need, and on a block device its size and
/// O_DIRECT alignment too. `jobs` are (test name, job); each problem is named by the tests
/// that have it.
/// Anything this cannot see (a scratch file's free space, a file's alignment) is still
/// checked when each test opens its target. `suite_sizes`: the sizes are a suite file's, which
/// the user cannot change with --size; a test too large for the device then says how large a
/// device it needs.
pub fn precheck(
    root: &SysRoot,
    spec: &TargetSpec,
    device: Option<&crate::device::Device>,
    jobs: &[(&str, &Job)],
    suite_sizes: bool,
) -> Result<(), RunError> {
    // Sizes are checked against a device named by its /dev/ path.
    let device = device.filter(|_| spec.path.starts_with("/dev/"));
    let mem = root.mem_available();
    // (problem, the tests that have it), in the order first seen: a problem several tests
    // share (a sweep's --size on every point) is said once, naming them all.
    let mut problems: Vec<(String, Vec<&str>)> = Vec::new();
    // The suite's largest test that does not fit the device: (bytes needed, test).
    let mut too_large: Option<(u64, &str)> = None;
    for &(name, job) in jobs {
        let mut e = Vec::new();
        if let Some(avail) = mem
            && let Err(x) = job.check_memory(avail)
        {
            e.push(x);
        }
        match &device {
            Some(d) => {
                let need = job
                    .size
                    .map_or(0, |s| s.resolve(d.size_bytes))
                    .saturating_add(job.offset);
                if suite_sizes && d.size_bytes > 0 && need > d.size_bytes {
                    if too_large.is_none_or(|(n, _)| need > n) {
                        too_large = Some((need, name));
                    }
                } else {
                    e.extend(job.validate(&block_facts(d)).err().unwrap_or_default());
                }
            }
            None => e.extend(job.check_params(1, false)),
        }
        for x in e {
            match problems.iter_mut().find(|(p, _)| *p == x.0) {
                Some((_, names)) => names.push(name),
                None => problems.push((x.0, vec![name])),
            }
        }
    }
    let mut errs: Vec<String> = Vec::new();
    if let (Some((need, name)), Some(d)) = (too_large, &device) {
        // Whole MiB, as the command line takes it back (`1G`, not `1024M`).
        let at_least = crate::units::exact_size(need.div_ceil(1 << 20) << 20);
        errs.push(format!(
            "{name} needs {} of the device and {} has {}: run the suite on a device of at least \
             {at_least} (`blkscope lab --size {at_least}` makes lab devices that large)",
            crate::units::fmt_size(need),
            d.name,
            crate::units::fmt_size(d.size_bytes),
        ));
    }
    errs.extend(
        problems
            .into_iter()
            .map(|(p, names)| format!("{}: {p}", names.join(", "))),
    );
    if errs.is_empty() {
        Ok(())
    } else {
        Err(RunError::Invalid(errs))
    }
}

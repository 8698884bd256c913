//! `--cpus`: the CPUs a test's job threads (and their io_uring worker threads) may run on,
//! written as fio's `cpus_allowed` and taskset's `-c` write them: `0`, `0,2`, `0-3,6`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A set of CPU numbers, ascending and without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    /// Parses `0`, `0,2`, `0-3,6`. Every number must be below [`crate::sys::MAX_CPUS`] (what a
    /// CPU set can name).
    pub fn parse(s: &str) -> Result<Self, String> {
        let max = crate::sys::MAX_CPUS;
        let mut cpus = Vec::new();
        if s.trim().is_empty() {
            return Err("an empty CPU list: give CPUs as 0, 0,2 or 0-3".into());
        }
        for part in s.split(',') {
            let part = part.trim();
            let num = |t: &str| -> Result<usize, String> {
                let n: usize = t.trim().parse().map_err(|_| {
                    format!("'{s}' is not a CPU list: '{t}' is not a CPU number; use 0, 0,2 or 0-3")
                })?;
                if n >= max {
                    return Err(format!(
                        "CPU {n} is past the {max} CPUs a CPU set can name: use lower numbers"
                    ));
                }
                Ok(n)
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(format!(
                            "'{part}' runs backwards: write the lower CPU first ({b}-{a})"
                        ));
                    }
                    cpus.extend(a..=b);
                }
                None => cpus.push(num(part)?),
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Self(cpus))
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// The CPUs of this list that are not in `allowed`.
    pub fn outside(&self, allowed: &[usize]) -> Vec<usize> {
        self.0
            .iter()
            .copied()
            .filter(|c| !allowed.contains(c))
            .collect()
    }
}

/// `0-3,6`: runs of consecutive CPUs as ranges (the form of /proc's Cpus_allowed_list).
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            parts.push(if j > i {
                format!("{}-{}", self.0[i], self.0[j])
            } else {
                self.0[i].to_string()
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl Serialize for CpuList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuList::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Err with one line naming the CPUs of `list` this process may not run on, and those it may.
pub fn check_allowed(list: &CpuList) -> Result<(), String> {
    let Ok(allowed) = crate::sys::allowed_cpus() else {
        return Ok(());
    };
    let outside = list.outside(&allowed);
    if outside.is_empty() {
        return Ok(());
    }
    let allowed = describe(&allowed);
    Err(format!(
        "--cpus {list}: this process may run only on CPUs {allowed}, not {}: use --cpus with \
         CPUs from {allowed}",
        describe(&outside)
    ))
}

/// A CPU list as `allowed_cpus` gives it, for messages.
fn describe(cpus: &[usize]) -> String {
    CpuList(cpus.to_vec()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_as_taskset_writes_them() {
        for (text, cpus, back) in [
            ("0", vec![0], "0"),
            ("0,2", vec![0, 2], "0,2"),
            ("0-3,6", vec![0, 1, 2, 3, 6], "0-3,6"),
            ("3,1,2,2", vec![1, 2, 3], "1-3"),
            (" 4 - 5 , 7", vec![4, 5, 7], "4-5,7"),
        ] {
            let l = CpuList::parse(text).unwrap();
            assert_eq!(l.cpus(), &cpus[..], "parsed {text:?}");
            assert_eq!(l.to_string(), back, "printed {text:?}");
        }
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        for (text, says) in [
            ("", "empty CPU list"),
            ("a", "'a' is not a CPU number"),
            ("0,,1", "'' is not a CPU number"),
            ("3-1", "write the lower CPU first (1-3)"),
            ("1024", "CPU 1024 is past the 1024 CPUs"),
            ("-1", "is not a CPU number"),
        ] {
            let e = CpuList::parse(text).unwrap_err();
            assert!(
                e.contains(says),
                "{text:?} gave {e:?}, expected it to say {says:?}"
            );
        }
    }

    #[test]
    fn a_suite_file_names_cpus_as_a_string() {
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct T {
            cpus: CpuList,
        }
        let t: T = toml::from_str("cpus = \"2,0-1\"").unwrap();
        assert_eq!(t.cpus.cpus(), &[0, 1, 2]);
        assert_eq!(toml::to_string(&t).unwrap().trim(), "cpus = \"0-2\"");
        let e = toml::from_str::<T>("cpus = \"x\"").unwrap_err().to_string();
        assert!(e.contains("not a CPU number"), "{e}");
    }

    #[test]
    fn outside_names_the_cpus_not_allowed() {
        let l = CpuList::parse("0-3").unwrap();
        assert_eq!(l.outside(&[0, 1]), vec![2, 3]);
        assert!(l.outside(&[0, 1, 2, 3, 4]).is_empty());
        assert_eq!(describe(&[0, 1, 5]), "0-1,5");
    }
}

//! A host as the user names it (`[USER@]HOST[:PORT]`), and the host patterns pdsh and
//! ClusterShell users write (`web[01-40]`, `h[1-3,7]`, `db1,db2`).

/// A host as named: `[USER@]HOST[:PORT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub user: Option<String>,
    /// The name (or address) ssh connects to.
    pub name: String,
    pub port: Option<u16>,
    /// As the user wrote it (the label in output, and in `--confirm HOST:DEV`).
    pub label: String,
}

/// More hosts than any fleet has: a pattern that expands beyond it is a typo.
pub const MOST_HOSTS: usize = 100_000;

impl Host {
    pub fn parse(s: &str) -> Result<Host, String> {
        let t = s.trim();
        // ssh reads a word that begins with '-' as an option (-oProxyCommand=... runs a
        // command here), whatever blkscope meant by it.
        if t.starts_with('-') || t.contains("@-") {
            return Err(format!(
                "'{t}' is not a host: it begins with '-', which ssh would read as an option; \
                 use [USER@]HOST[:PORT]"
            ));
        }
        if t.is_empty() || t.contains(char::is_whitespace) {
            return Err(format!("'{s}' is not a host: use [USER@]HOST[:PORT]"));
        }
        let (user, rest) = match t.split_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            Some(_) => return Err(format!("'{s}': an empty user before @")),
            None => (None, t),
        };
        let (name, port) = match rest.rsplit_once(':') {
            // [::1]:22 style, or a bare IPv6 address: no port split inside brackets.
            Some((h, p)) if !h.contains(':') || h.ends_with(']') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| format!("'{s}': port '{p}' is not a number from 1 to 65535"))?;
                (h.trim_matches(['[', ']']).to_string(), Some(port))
            }
            _ => (rest.to_string(), None),
        };
        // A bare IPv6 address in brackets, without a port.
        let name = match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
            Some(inner) if inner.contains(':') => inner.to_string(),
            _ => name,
        };
        if name.is_empty() {
            return Err(format!("'{s}': no host name"));
        }
        if name.contains(['[', ']']) {
            return Err(format!(
                "'{s}' is not a host: brackets hold a range such as web[01-40] or an IPv6 \
                 address"
            ));
        }
        Ok(Host {
            user,
            name,
            port,
            label: t.to_string(),
        })
    }

    /// Every host a pattern names: a comma-separated list whose words may hold ranges in
    /// brackets (`web[01-40]`: zero-padded as written; `h[1-3,7]`; several brackets multiply).
    /// An IPv6 address in brackets (`[::1]:22`) is a host, not a range.
    pub fn parse_pattern(s: &str) -> Result<Vec<Host>, String> {
        let mut hosts = Vec::new();
        for word in split_outside_brackets(s.trim()) {
            for name in expand(word)? {
                hosts.push(Host::parse(&name)?);
                if hosts.len() > MOST_HOSTS {
                    return Err(too_many(s));
                }
            }
        }
        if hosts.is_empty() {
            return Err(format!("'{s}' names no host: use [USER@]HOST[:PORT]"));
        }
        Ok(hosts)
    }

    /// `[USER@]NAME` for ssh.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.name),
            None => self.name.clone(),
        }
    }
}

fn too_many(s: &str) -> String {
    format!("'{s}' names more than {MOST_HOSTS} hosts: is a range mistyped?")
}

/// `s` split at the commas that are not inside brackets.
fn split_outside_brackets(s: &str) -> Vec<&str> {
    let (mut words, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                words.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    words.push(&s[start..]);
    words.into_iter().filter(|w| !w.is_empty()).collect()
}

/// Whether a bracket's inside is a range set (`1-3,07,9-10`) rather than an IPv6 address.
fn is_range_set(inside: &str) -> bool {
    !inside.is_empty()
        && inside
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '-')
        && inside.chars().any(|c| c.is_ascii_digit())
}

/// The names one word expands to: its first range set in brackets, each value in turn, with the
/// rest expanded likewise.
fn expand(word: &str) -> Result<Vec<String>, String> {
    let Some((open, close)) = first_range(word) else {
        return Ok(vec![word.to_string()]);
    };
    let values = range_values(&word[open + 1..close], word)?;
    let rest = expand(&word[close + 1..])?;
    if values.len().saturating_mul(rest.len()) > MOST_HOSTS {
        return Err(too_many(word));
    }
    let head = &word[..open];
    let mut names = Vec::with_capacity(values.len() * rest.len());
    for v in &values {
        for r in &rest {
            names.push(format!("{head}{v}{r}"));
        }
    }
    Ok(names)
}

/// Where the first bracketed range set of `word` opens and closes.
fn first_range(word: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(o) = word[from..].find('[').map(|i| i + from) {
        let c = word[o..].find(']')? + o;
        if is_range_set(&word[o + 1..c]) {
            return Some((o, c));
        }
        from = c + 1;
    }
    None
}

/// `1-3,07,9-10` as its values, each as wide as the range's first bound was written.
fn range_values(set: &str, word: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    for part in set.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let bad = || format!("'{word}': '{part}' is not a range such as 1-40 or 01-40");
        let (lo, hi) = (
            a.parse::<u64>().map_err(|_| bad())?,
            b.parse::<u64>().map_err(|_| bad())?,
        );
        if hi < lo {
            return Err(format!("'{word}': the range {part} runs backwards"));
        }
        if hi - lo >= MOST_HOSTS as u64 || values.len() + (hi - lo) as usize >= MOST_HOSTS {
            return Err(too_many(word));
        }
        let width = if a.starts_with('0') { a.len() } else { 0 };
        values.extend((lo..=hi).map(|n| format!("{n:0width$}")));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &str) -> Vec<String> {
        Host::parse_pattern(p)
            .unwrap()
            .into_iter()
            .map(|h| h.label)
            .collect()
    }

    #[test]
    fn hosts_as_people_write_them() {
        let h = Host::parse("root@db1:2222").unwrap();
        assert_eq!(
            (h.user.as_deref(), h.name.as_str(), h.port),
            (Some("root"), "db1", Some(2222))
        );
        let h = Host::parse("127.0.0.2").unwrap();
        assert_eq!((h.user, h.port), (None, None));
        assert!(Host::parse("a b").is_err());
        assert!(Host::parse("db1:x").is_err());
        assert!(Host::parse("@db1").is_err());
    }

    #[test]
    fn patterns_as_pdsh_writes_them() {
        assert_eq!(names("h[1-3]"), ["h1", "h2", "h3"]);
        assert_eq!(names("web[01-03]"), ["web01", "web02", "web03"]);
        assert_eq!(names("web[08-10]"), ["web08", "web09", "web10"]);
        assert_eq!(names("h[1-2,7]"), ["h1", "h2", "h7"]);
        assert_eq!(names("db1,db2"), ["db1", "db2"]);
        assert_eq!(names("root@r[1-2]n[1-2]:22").len(), 4);
        assert_eq!(names("r[1-2]n[1-2]")[1], "r1n2");
        assert_eq!(names("h[1-2],x"), ["h1", "h2", "x"]);
        assert_eq!(names("h[1-200]").len(), 200);
        // An IPv6 address in brackets is one host.
        assert_eq!(names("[::1]:2222"), ["[::1]:2222"]);
        let h = Host::parse_pattern("[::1]:2222").unwrap();
        assert_eq!((h[0].name.as_str(), h[0].port), ("::1", Some(2222)));
    }

    #[test]
    fn a_mistyped_range_is_refused_before_anything_is_allocated() {
        for (bad, says) in [
            ("h[1-99999999999]", "more than"),
            ("h[1-100][1-100][1-100]", "more than"),
            ("h[3-1]", "backwards"),
            ("h[1-x]", "brackets hold a range"),
            ("h[-]", "brackets hold a range"),
            ("h[1--3]", "not a range"),
        ] {
            let e = Host::parse_pattern(bad).unwrap_err();
            println!("{bad}: {e}");
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}

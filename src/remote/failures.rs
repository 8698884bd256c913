//! Why a host failed, as a cause shared by many: ssh's own words sorted into what an
//! administrator acts on, each with its way out, so that a fleet's failures are said once per
//! cause with the hosts it hit, not once per host.

use super::ssh::{HostOutcome, TIMED_OUT};

/// The exit status of a remote command whose copy of blkscope did not arrive whole.
pub const PUSH_FAILED: i32 = 97;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// sshd dropped the connection before or during key exchange: its MaxStartups, or a
    /// bastion's, when many connect at once. Worth another try.
    KexReset,
    Refused,
    ConnectTimeout,
    Unreachable,
    Unresolved,
    Denied,
    HostKey,
    NotInstalled,
    CommandTimeout,
    PushFailed,
    /// ssh could not be started here.
    Local(String),
    /// Anything else, by the last line it printed.
    Other(String),
}

impl Cause {
    pub fn of(o: &HostOutcome) -> Cause {
        let last = o.last_error_line();
        let has = |s: &str| o.stderr.contains(s);
        match o.code {
            127 => Cause::NotInstalled,
            TIMED_OUT => Cause::CommandTimeout,
            PUSH_FAILED => Cause::PushFailed,
            -1 => Cause::Local(last.to_string()),
            255 if has("kex_exchange_identification")
                || has("ssh_exchange_identification")
                || (has("Connection reset by") && !has("Permission denied")) =>
            {
                Cause::KexReset
            }
            255 if has("Connection refused") => Cause::Refused,
            255 if has("timed out") => Cause::ConnectTimeout,
            255 if has("No route to host") || has("Network is unreachable") => Cause::Unreachable,
            255 if has("Could not resolve hostname") => Cause::Unresolved,
            255 if has("Host key verification failed") => Cause::HostKey,
            255 if has("Permission denied") => Cause::Denied,
            _ if last.is_empty() => Cause::Other(format!("exit status {}", o.code)),
            _ => Cause::Other(last.to_string()),
        }
    }

    /// Its name in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Cause::KexReset => "kex_reset",
            Cause::Refused => "refused",
            Cause::ConnectTimeout => "connect_timeout",
            Cause::Unreachable => "unreachable",
            Cause::Unresolved => "unresolved",
            Cause::Denied => "denied",
            Cause::HostKey => "host_key",
            Cause::NotInstalled => "not_installed",
            Cause::CommandTimeout => "timeout",
            Cause::PushFailed => "push_failed",
            Cause::Local(_) => "local",
            Cause::Other(_) => "other",
        }
    }

    /// Whether trying again a moment later may well succeed (nothing ran there yet).
    pub fn transient(&self) -> bool {
        *self == Cause::KexReset
    }

    /// What happened, in words that fit many hosts.
    pub fn what(&self) -> String {
        match self {
            Cause::KexReset => "connection reset during key exchange".into(),
            Cause::Refused => "connection refused".into(),
            Cause::ConnectTimeout => "no answer within the connect timeout".into(),
            Cause::Unreachable => "no route to the host".into(),
            Cause::Unresolved => "host name not resolved".into(),
            Cause::Denied => "permission denied (no key it accepts)".into(),
            Cause::HostKey => "host key unknown or changed".into(),
            Cause::NotInstalled => "blkscope is not installed there (or not on its PATH)".into(),
            Cause::CommandTimeout => "stopped: it had not finished within --timeout".into(),
            Cause::PushFailed => "the copy of blkscope did not arrive whole".into(),
            Cause::Local(s) | Cause::Other(s) => s.clone(),
        }
    }

    /// What to do about it, where there is something to say.
    pub fn hint(&self) -> Option<&'static str> {
        Some(match self {
            Cause::KexReset => "sshd's MaxStartups? lower --fanout",
            Cause::Refused => "is sshd running there, on that port?",
            Cause::ConnectTimeout => "down or firewalled? --connect-timeout waits longer",
            Cause::Unresolved => "a typo, or missing from DNS and ~/.ssh/config",
            Cause::Denied => "add your key there (ssh-copy-id) or set the user in ~/.ssh/config",
            Cause::HostKey => "ssh to it once to check and accept its key",
            Cause::NotInstalled => "add --push to copy this one over for the run",
            Cause::CommandTimeout => "a longer --timeout, or none",
            Cause::PushFailed => "is its $TMPDIR (or /tmp) full?",
            _ => return None,
        })
    }

    /// The cause for one host: what, the way out, and ssh's own line where it says more.
    pub fn says(&self, o: &HostOutcome) -> String {
        let mut s = self.what();
        if let Some(h) = self.hint() {
            s.push_str(&format!(": {h}"));
        }
        let last = o.last_error_line();
        if matches!(
            self,
            Cause::KexReset
                | Cause::Refused
                | Cause::ConnectTimeout
                | Cause::Unreachable
                | Cause::Unresolved
                | Cause::Denied
                | Cause::HostKey
        ) && !last.is_empty()
        {
            s.push_str(&format!(" ({last})"));
        }
        s
    }
}

/// The failed hosts grouped by cause, the commonest first, each cause with its hosts in order.
pub fn group(outcomes: &[&HostOutcome]) -> Vec<(Cause, Vec<String>)> {
    let mut groups: Vec<(Cause, Vec<String>)> = Vec::new();
    for o in outcomes.iter().filter(|o| o.error().is_some()) {
        let c = Cause::of(o);
        match groups.iter_mut().find(|(g, _)| *g == c) {
            Some((_, hosts)) => hosts.push(o.host.clone()),
            None => groups.push((c, vec![o.host.clone()])),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    groups
}

/// One line for a group: "51 hosts: connection reset during key exchange: sshd's
/// MaxStartups? lower --fanout: h1, h2, h3, h4, h5 and 46 more". A group of one says it as
/// that host's own error does.
pub fn group_line(cause: &Cause, hosts: &[String], one: Option<&HostOutcome>) -> String {
    if let (1, Some(o)) = (hosts.len(), one) {
        return format!("host {}: {}", o.host, cause.says(o));
    }
    const SHOWN: usize = 5;
    let mut names = hosts
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if hosts.len() > SHOWN {
        names.push_str(&format!(" and {} more", hosts.len() - SHOWN));
    }
    let hint = cause.hint().map(|h| format!(": {h}")).unwrap_or_default();
    format!("{} hosts: {}{hint}: {names}", hosts.len(), cause.what())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(host: &str, code: i32, stderr: &str) -> HostOutcome {
        HostOutcome {
            host: host.into(),
            code,
            stderr: stderr.into(),
            ..Default::default()
        }
    }

    #[test]
    fn ssh_words_sorted_into_causes() {
        for (code, err, want) in [
            (
                255,
                "kex_exchange_identification: read: Connection reset by peer\r\nConnection reset by 127.0.0.1 port 2222",
                Cause::KexReset,
            ),
            (
                255,
                "kex_exchange_identification: Connection closed by remote host",
                Cause::KexReset,
            ),
            (
                255,
                "ssh: connect to host 127.0.0.2 port 9: Connection refused",
                Cause::Refused,
            ),
            (
                255,
                "Connection timed out during banner exchange",
                Cause::ConnectTimeout,
            ),
            (
                255,
                "ssh: Could not resolve hostname nope: Name or service not known",
                Cause::Unresolved,
            ),
            (
                255,
                "root@h1: Permission denied (publickey).",
                Cause::Denied,
            ),
            (255, "Host key verification failed.", Cause::HostKey),
            (127, "sh: 1: blkscope: not found", Cause::NotInstalled),
            (TIMED_OUT, "", Cause::CommandTimeout),
            (
                1,
                "blkscope: no such device",
                Cause::Other("blkscope: no such device".into()),
            ),
        ] {
            let c = Cause::of(&failed("h", code, err));
            println!("{code} {err:?}: {c:?}");
            assert_eq!(c, want);
        }
        assert!(Cause::KexReset.transient());
        assert!(!Cause::Refused.transient());
    }

    #[test]
    fn failures_said_once_per_cause_with_their_hosts() {
        let reset = "kex_exchange_identification: read: Connection reset by peer";
        let mut all: Vec<HostOutcome> = (1..=51)
            .map(|i| failed(&format!("h{i}"), 255, reset))
            .collect();
        all.push(failed(
            "x",
            255,
            "ssh: connect to host x port 22: Connection refused",
        ));
        all.push(HostOutcome {
            host: "ok".into(),
            ..Default::default()
        });
        let refs: Vec<&HostOutcome> = all.iter().collect();
        let groups = group(&refs);
        assert_eq!(groups.len(), 2, "{groups:?}");
        let line = group_line(&groups[0].0, &groups[0].1, None);
        println!("{line}");
        assert_eq!(
            line,
            "51 hosts: connection reset during key exchange: sshd's MaxStartups? lower \
             --fanout: h1, h2, h3, h4, h5 and 46 more"
        );
        let one = group_line(&groups[1].0, &groups[1].1, Some(&all[51]));
        println!("{one}");
        assert!(
            one.starts_with("host x: connection refused: is sshd running"),
            "{one}"
        );
    }
}

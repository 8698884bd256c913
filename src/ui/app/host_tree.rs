//! The hosts' part of the device tree with a fleet in it: the hosts that failed first, then
//! those still connecting, then the rest in the order named; a host's node a line that sums up
//! its devices, opened and closed with Enter (a handful of hosts start open, a fleet closed);
//! and `/`, which shows only the hosts whose name holds the text typed.

use super::hosts::HostView;
use super::*;

/// Up to this many hosts start open.
pub const OPEN_UP_TO: usize = 8;

/// How bad a host's state is: down, connecting, up.
fn rank(h: &HostView) -> u8 {
    match (&h.tree, &h.error) {
        (_, Some(_)) => 0,
        (None, None) => 1,
        (Some(_), None) => 2,
    }
}

/// "5 device(s): 2 clear, 1 to confirm, 2 blocked".
fn summary(t: &DeviceTree) -> String {
    let (mut clear, mut confirm, mut blocked) = (0, 0, 0);
    for d in &t.devices {
        match d.write_safety {
            WriteSafety::Clear => clear += 1,
            WriteSafety::Confirm => confirm += 1,
            WriteSafety::Blocked => blocked += 1,
        }
    }
    format!(
        "{} device(s): {clear} clear, {confirm} to confirm, {blocked} blocked",
        t.devices.len()
    )
}

impl App {
    /// Whether `h` is shown under the filter.
    fn shown(&self, h: &HostView) -> bool {
        let f = self.host_filter.to_lowercase();
        f.is_empty() || h.label.to_lowercase().contains(&f)
    }

    /// One node per host shown, worst first, the open ones' devices beneath; the selection
    /// stays on the same entry.
    pub(super) fn rebuild_targets(&mut self) {
        let keep = self
            .targets
            .get(self.selected_target)
            .map(|t| (t.host.clone(), t.device.clone()));
        let mut order: Vec<&HostView> = self.hosts.iter().filter(|h| self.shown(h)).collect();
        order.sort_by_key(|h| rank(h));
        let mut targets = Vec::new();
        for h in order {
            let (badges, reasons, model) = match (&h.tree, &h.error) {
                (_, Some(e)) => (vec!["DOWN"], vec![e.clone()], None),
                (Some(t), None) => (vec!["HOST"], vec![], Some(summary(t))),
                (None, None) => (vec!["..."], vec![], Some("connecting".into())),
            };
            let closed = !h.open && h.tree.as_ref().is_some_and(|t| !t.devices.is_empty());
            targets.push(TargetEntry {
                device: None,
                host: Some(h.label.clone()),
                label: format!("{}{}", if closed { "+ " } else { "" }, h.label),
                depth: 0,
                size: 0,
                safety: WriteSafety::Blocked,
                badges,
                reasons,
                lbs: 512,
                model,
            });
            if h.open {
                for d in h.tree.iter().flat_map(|t| &t.devices) {
                    targets.push(TargetEntry::of_device(d, Some(h.label.clone()), 1));
                }
            }
        }
        self.targets = targets;
        self.selected_target = keep
            .and_then(|(host, device)| {
                let same = |t: &TargetEntry| t.host == host && t.device == device;
                let its_host = |t: &TargetEntry| t.host == host && t.device.is_none();
                self.targets
                    .iter()
                    .position(same)
                    .or_else(|| self.targets.iter().position(its_host))
            })
            .unwrap_or(0);
        self.update_watch();
        self.show_host_stats();
    }

    /// Enter on a host's node: its devices shown or hidden.
    pub(super) fn toggle_host(&mut self) -> bool {
        let Some(label) = self
            .targets
            .get(self.selected_target)
            .filter(|t| t.is_host())
            .and_then(|t| t.host.clone())
        else {
            return false;
        };
        if let Some(h) = self.hosts.iter_mut().find(|h| h.label == label) {
            h.open = !h.open;
        }
        self.rebuild_targets();
        true
    }

    /// `/`: typing the filter (hosts mode only).
    pub(super) fn start_filter(&mut self) {
        if self.remote() {
            self.overlay = Overlay::Filter;
        } else {
            self.status = Some("/ filters the hosts of --host; there are none here".into());
        }
    }

    /// A key typed into the filter: the tree follows at once.
    pub(super) fn edit_filter(&mut self, key: &crossterm::event::KeyEvent) {
        let mut typed = std::mem::take(&mut self.host_filter);
        super::keys::edit_line(&mut typed, key);
        self.host_filter = typed;
        self.rebuild_targets();
    }

    /// Enter keeps the filter, Esc clears it.
    pub(super) fn end_filter(&mut self, keep: bool) {
        self.overlay = Overlay::None;
        if !keep {
            self.host_filter.clear();
        }
        self.rebuild_targets();
        let shown = self.targets.iter().filter(|t| t.is_host()).count();
        self.status = (!self.host_filter.is_empty()).then(|| {
            format!(
                "showing {shown} of {} hosts: those whose name holds '{}' (/ then Esc shows all)",
                self.hosts.len(),
                self.host_filter
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(n: usize) -> App {
        let labels: Vec<String> = (1..=n).map(|i| format!("h{i:03}")).collect();
        let mut app = App::for_hosts(&labels, PathBuf::from("/tmp"));
        // A host's devices as its `list --json` gives them: here, a fixture tree's.
        let root = crate::sysroot::SysRoot::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/md-raid1"
        ));
        let opts = crate::device::DiscoverOptions::default();
        let tree = crate::device::discover(&root, &opts).unwrap();
        for l in &labels[1..] {
            app.on_host_tree(l, Ok(tree.clone()));
        }
        app.on_host_tree(&labels[0], Err("connection refused".into()));
        app
    }

    #[test]
    fn a_fleet_starts_closed_worst_first_and_opens_with_enter() {
        let mut app = fleet(40);
        let labels: Vec<&str> = app.targets.iter().map(|t| t.label.as_str()).collect();
        println!("{:?}", &labels[..4]);
        assert_eq!(app.targets.len(), 40, "a line a host");
        assert_eq!(app.targets[0].label, "h001", "the failed host first");
        assert_eq!(app.targets[0].badges, ["DOWN"]);
        assert_eq!(app.targets[1].label, "+ h002");
        assert_eq!(
            app.targets[1].model.as_deref(),
            Some("3 device(s): 0 clear, 0 to confirm, 3 blocked")
        );
        app.selected_target = 1;
        assert!(app.toggle_host());
        assert_eq!(app.targets.len(), 43);
        assert_eq!(app.targets[1].label, "h002");
        assert_eq!(app.targets[2].device.as_deref(), Some("sdc"));
        assert_eq!(app.selected_target, 1, "the selection stays on the host");
        // A handful of hosts start open.
        assert_eq!(fleet(3).targets.len(), 3 + 2 * 3);
    }

    #[test]
    fn the_filter_shows_the_hosts_whose_name_holds_it() {
        let mut app = fleet(40);
        app.start_filter();
        assert!(matches!(app.overlay, Overlay::Filter));
        for c in ['h', '0', '3'] {
            let k = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c));
            app.edit_filter(&k);
        }
        let shown: Vec<&str> = app.targets.iter().map(|t| t.label.as_str()).collect();
        println!("{shown:?}");
        assert_eq!(shown.len(), 10, "h030-h039: {shown:?}");
        app.end_filter(true);
        assert_eq!(app.targets.len(), 10);
        assert!(
            app.status
                .as_deref()
                .unwrap()
                .contains("showing 10 of 40 hosts")
        );
        app.start_filter();
        app.end_filter(false);
        assert_eq!(app.targets.len(), 40);
    }
}

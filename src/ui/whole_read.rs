//! The whole read (`b`) on a thread of its own: `check --full`'s reading, its progress sent
//! to the app a few times a second, stopped by the app's flag.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{EngineMsg, Loop};
use crate::device::deepen::Depth;

impl Loop<'_> {
    pub(super) fn read_whole(&mut self, device: String) {
        let (root, tx) = (self.opts.root.clone(), self.tx.clone());
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        let spawned = std::thread::Builder::new()
            .name("blkscope-whole".into())
            .spawn(move || {
                let mut last = Instant::now();
                let mut progress = |done: u64, size: u64| {
                    if last.elapsed() >= Duration::from_millis(200) {
                        last = Instant::now();
                        let _ = tx.send(EngineMsg::WholeProgress(done, size));
                    }
                    !stop.load(Ordering::Relaxed)
                };
                let mut depth = Depth {
                    full: true,
                    progress: &mut progress,
                };
                let r = crate::device::safety::check_deep(&root, &device, &mut depth)
                    .map(|(report, tree)| {
                        let d = tree.and_then(|t| t.get(&device).cloned());
                        (report, d)
                    })
                    .map_err(|e| e.to_string());
                let _ = tx.send(EngineMsg::WholeRead(Box::new(r)));
            });
        match spawned {
            Ok(_) => self.whole_cancel = Some(cancel),
            Err(e) => {
                self.app.whole_read = None;
                self.app.status = Some(format!("cannot start the whole read: {e}"));
            }
        }
    }

    pub(super) fn stop_whole_read(&mut self) {
        if let Some(c) = &self.whole_cancel {
            c.store(true, Ordering::Relaxed);
        }
    }
}

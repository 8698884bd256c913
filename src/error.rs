//! Library errors. Each message names the problem and, where the user can fix it, the fix; the
//! binary prints it as one line.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("cannot parse {}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },

    #[error("{} not found: blkscope reads block devices from sysfs; mount it (mount -t sysfs sysfs /sys) or pass --root", path.display())]
    NoSysfs { path: PathBuf },

    #[error("{}: no such file or directory; name a block device (e.g. /dev/sdb), a directory or a file", path.display())]
    TargetNotFound { path: PathBuf },

    #[error("{} is {what}; name a block device (e.g. /dev/sdb), a directory or a regular file", path.display())]
    NotABlockDevice { path: PathBuf, what: &'static str },

    #[error("{}: permission denied; run blkscope as a user who may read it, or as root (sudo)", path.display())]
    PermissionDenied { path: PathBuf },

    #[error("cannot open {}: permission denied; block devices need root: run it with sudo", path.display())]
    NeedRoot { path: PathBuf },

    #[error("{} is not a block device blkscope can see: {detail}", path.display())]
    UnknownDevice { path: PathBuf, detail: String },

    /// A mistake in what the user asked for, already worded with the fix.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub fn io(path: &Path, source: io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Exit status for the binary: 2 for a target that is not usable as named, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::TargetNotFound { .. }
            | Error::NotABlockDevice { .. }
            | Error::UnknownDevice { .. }
            | Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

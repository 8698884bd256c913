//! `blkscope list`: every block device, tree-ordered like lsblk.

use std::io::Write;

use crate::cli::{print, print_json};
use crate::device::{self, DiscoverOptions};
use crate::output::{table, utf8_locale};
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    json: bool,
    no_signatures: bool,
    ascii: bool,
    all: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let opts = DiscoverOptions {
        skip_signatures: no_signatures,
        ..Default::default()
    };
    let tree = device::discover(root, &opts)?.listed(all);
    if json {
        print_json(out, &tree)?;
    } else {
        print(out, &table::device_table(&tree, ascii || !utf8_locale()))?;
    }
    Ok(0)
}

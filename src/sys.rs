//! The one module where blkscope uses `unsafe`: thin wrappers over system calls that the
//! standard library does not offer. Each block says why it is sound.
#![allow(unsafe_code)]

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

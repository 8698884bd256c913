//! BPF instructions, assembled by hand: the few the counting program needs, each as the
//! kernel's `struct bpf_insn` in one little-endian u64 (opcode, registers, offset, immediate).
//! Jumps count instructions after the jump's own; a map's descriptor takes two slots.

/// A register: R0 the result, R1-R5 a helper's arguments (R1 the program's context), R6-R9
/// kept across calls, R10 the stack's top.
pub type Reg = u8;

pub const R0: Reg = 0;
pub const R1: Reg = 1;
pub const R2: Reg = 2;
pub const R3: Reg = 3;
pub const R4: Reg = 4;
pub const R6: Reg = 6;
pub const R7: Reg = 7;
pub const R8: Reg = 8;
pub const R10: Reg = 10;

/// The helpers the program calls, by the kernel's numbers.
pub const MAP_LOOKUP: i32 = 1;
pub const MAP_UPDATE: i32 = 2;
pub const GET_CURRENT_PID_TGID: i32 = 14;
pub const PROBE_READ_KERNEL: i32 = 113;

/// One instruction.
pub fn ins(op: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> u64 {
    u64::from(op)
        | u64::from((src << 4) | (dst & 0xf)) << 8
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

/// dst = src (64 bits).
pub fn mov(dst: Reg, src: Reg) -> u64 {
    ins(0xbf, dst, src, 0, 0)
}

/// dst = imm.
pub fn mov_imm(dst: Reg, imm: i32) -> u64 {
    ins(0xb7, dst, 0, 0, imm)
}

/// dst += imm.
pub fn add_imm(dst: Reg, imm: i32) -> u64 {
    ins(0x07, dst, 0, 0, imm)
}

/// dst >>= imm.
pub fn rsh_imm(dst: Reg, imm: i32) -> u64 {
    ins(0x77, dst, 0, 0, imm)
}

/// dst &= imm.
pub fn and_imm(dst: Reg, imm: i32) -> u64 {
    ins(0x57, dst, 0, 0, imm)
}

/// dst = *(u32 *)(src + off).
pub fn load32(dst: Reg, src: Reg, off: i16) -> u64 {
    ins(0x61, dst, src, off, 0)
}

/// dst = *(u64 *)(src + off).
pub fn load64(dst: Reg, src: Reg, off: i16) -> u64 {
    ins(0x79, dst, src, off, 0)
}

/// *(u32 *)(dst + off) = src.
pub fn store32(dst: Reg, off: i16, src: Reg) -> u64 {
    ins(0x63, dst, src, off, 0)
}

/// *(u32 *)(dst + off) = imm.
pub fn store32_imm(dst: Reg, off: i16, imm: i32) -> u64 {
    ins(0x62, dst, 0, off, imm)
}

/// *(u64 *)(dst + off) = imm.
pub fn store64_imm(dst: Reg, off: i16, imm: i32) -> u64 {
    ins(0x7a, dst, 0, off, imm)
}

/// *(u64 *)(dst + off) += src, atomically.
pub fn atomic_add64(dst: Reg, off: i16, src: Reg) -> u64 {
    ins(0xdb, dst, src, off, 0)
}

/// Calls helper `n`.
pub fn call(n: i32) -> u64 {
    ins(0x85, 0, 0, 0, n)
}

/// Returns R0.
pub fn exit() -> u64 {
    ins(0x95, 0, 0, 0, 0)
}

/// Jumps `off` instructions on.
pub fn ja(off: i16) -> u64 {
    ins(0x05, 0, 0, off, 0)
}

/// Jumps `off` instructions on if dst == imm.
pub fn jeq_imm(dst: Reg, imm: i32, off: i16) -> u64 {
    ins(0x15, dst, 0, off, imm)
}

/// Jumps `off` instructions on if dst's low 32 bits == imm (a 64-bit jump would compare with
/// imm sign-extended: a device number of 2^31 and more would never match).
pub fn jeq32_imm(dst: Reg, imm: u32, off: i16) -> u64 {
    ins(0x16, dst, 0, off, imm as i32)
}

/// Jumps `off` instructions on if dst != imm.
pub fn jne_imm(dst: Reg, imm: i32, off: i16) -> u64 {
    ins(0x55, dst, 0, off, imm)
}

/// dst = the map whose descriptor is `fd` (two slots).
pub fn load_map(dst: Reg, fd: i32) -> [u64; 2] {
    [ins(0x18, dst, 1, 0, fd), 0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encodings are the kernel's: `r0 = 0; exit` as clang emits it, a map load as the
    /// kernel's samples spell BPF_LD_MAP_FD, and a negative offset's two's complement.
    #[test]
    fn instructions_are_the_kernels_struct_bpf_insn() {
        assert_eq!(mov_imm(R0, 0).to_le_bytes(), [0xb7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(exit().to_le_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            load_map(R1, 7)[0].to_le_bytes(),
            [0x18, 0x11, 0, 0, 7, 0, 0, 0]
        );
        assert_eq!(
            store32(R10, -16, R7).to_le_bytes(),
            [0x63, 0x7a, 0xf0, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(
            jeq32_imm(R7, 0x8000_0001, 2).to_le_bytes(),
            [0x16, 0x07, 2, 0, 1, 0, 0, 0x80]
        );
        assert_eq!(
            add_imm(R2, -16).to_le_bytes(),
            [0x07, 0x02, 0, 0, 0xf0, 0xff, 0xff, 0xff]
        );
    }
}

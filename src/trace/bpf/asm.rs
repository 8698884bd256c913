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
pub const R5: Reg = 5;
pub const R6: Reg = 6;
pub const R7: Reg = 7;
pub const R8: Reg = 8;
pub const R9: Reg = 9;
pub const R10: Reg = 10;

/// The helpers the program calls, by the kernel's numbers.
pub const MAP_LOOKUP: i32 = 1;
pub const MAP_UPDATE: i32 = 2;
pub const KTIME_GET_NS: i32 = 5;
pub const GET_CURRENT_PID_TGID: i32 = 14;
pub const GET_CURRENT_COMM: i32 = 16;
pub const PROBE_READ_KERNEL: i32 = 113;
pub const RINGBUF_OUTPUT: i32 = 130;

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

/// dst <<= imm.
pub fn lsh_imm(dst: Reg, imm: i32) -> u64 {
    ins(0x67, dst, 0, 0, imm)
}

/// dst |= src.
pub fn or(dst: Reg, src: Reg) -> u64 {
    ins(0x4f, dst, src, 0, 0)
}

/// dst -= src (64 bits).
pub fn sub(dst: Reg, src: Reg) -> u64 {
    ins(0x1f, dst, src, 0, 0)
}

/// dst's low 32 bits ^= imm, its high 32 bits cleared.
pub fn xor32_imm(dst: Reg, imm: u32) -> u64 {
    ins(0xa4, dst, 0, 0, imm as i32)
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

/// *(u64 *)(dst + off) = src.
pub fn store64(dst: Reg, off: i16, src: Reg) -> u64 {
    ins(0x7b, dst, src, off, 0)
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

/// Calls kernel function `id` (its FUNC's id in the kernel's BTF: BPF_PSEUDO_KFUNC_CALL).
pub fn call_kfunc(id: u32) -> u64 {
    ins(0x85, 0, 2, 0, id as i32)
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

/// dst = imm, all 64 bits of it (two slots).
pub fn mov64_imm(dst: Reg, imm: u64) -> [u64; 2] {
    [
        ins(0x18, dst, 0, 0, imm as u32 as i32),
        ins(0, 0, 0, 0, (imm >> 32) as u32 as i32),
    ]
}

/// Jumps `off` instructions on if dst < src (unsigned, 64 bits).
pub fn jlt(dst: Reg, src: Reg, off: i16) -> u64 {
    ins(0xad, dst, src, off, 0)
}

/// Jumps `off` instructions on if dst >= src (unsigned, 64 bits).
pub fn jge(dst: Reg, src: Reg, off: i16) -> u64 {
    ins(0x3d, dst, src, off, 0)
}

/// Jumps `off` instructions on if dst's low 32 bits != imm.
pub fn jne32_imm(dst: Reg, imm: u32, off: i16) -> u64 {
    ins(0x56, dst, 0, off, imm as i32)
}

/// Jumps `off` instructions on if dst & imm is not 0.
pub fn jset_imm(dst: Reg, imm: i32, off: i16) -> u64 {
    ins(0x45, dst, 0, off, imm)
}

/// dst = the map whose descriptor is `fd` (two slots).
pub fn load_map(dst: Reg, fd: i32) -> [u64; 2] {
    [ins(0x18, dst, 1, 0, fd), 0]
}

/// A place in a program that jumps go to, bound where [`Asm::bind`] puts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// A program being written, with jumps to labels resolved when it is finished (a jump counts
/// the instructions between it and its target, which hand-counted offsets get wrong as a
/// program grows).
#[derive(Debug, Default)]
pub struct Asm {
    code: Vec<u64>,
    /// Each label's place, once bound.
    at: Vec<Option<usize>>,
    /// The jumps to patch: (the jump's index, its label).
    jumps: Vec<(usize, Label)>,
}

impl Asm {
    pub fn new() -> Self {
        Self::default()
    }

    /// A label not yet bound.
    pub fn label(&mut self) -> Label {
        self.at.push(None);
        Label(self.at.len() - 1)
    }

    /// `l` is the next instruction's place.
    pub fn bind(&mut self, l: Label) {
        self.at[l.0] = Some(self.code.len());
    }

    pub fn push(&mut self, i: u64) {
        self.code.push(i);
    }

    pub fn extend(&mut self, i: impl IntoIterator<Item = u64>) {
        self.code.extend(i);
    }

    /// A jump (`jeq_imm(R0, 0, 0)`, say: its offset is replaced) to `to`.
    pub fn jump(&mut self, jump: u64, to: Label) {
        self.jumps.push((self.code.len(), to));
        self.code.push(jump);
    }

    /// The instructions, each jump's offset its label's place; None where a label was never
    /// bound or is out of a jump's reach.
    pub fn finish(mut self) -> Option<Vec<u64>> {
        for (i, l) in self.jumps {
            let off = i16::try_from(self.at[l.0]? as i64 - i as i64 - 1).ok()?;
            self.code[i] = (self.code[i] & !0xffff_0000) | u64::from(off as u16) << 16;
        }
        Some(self.code)
    }
}

/// dst = the address of byte `off` of the value of array map `fd`'s first entry (two slots:
/// BPF_PSEUDO_MAP_VALUE), read and written without a helper's call.
pub fn load_map_value(dst: Reg, fd: i32, off: i32) -> [u64; 2] {
    [ins(0x18, dst, 2, 0, fd), ins(0, 0, 0, 0, off)]
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
        // BPF_LD_IMM64: the low word in the first slot, the high in the second's immediate.
        let wide = mov64_imm(R3, 0x1_2345_6789);
        assert_eq!(
            wide[0].to_le_bytes(),
            [0x18, 0x03, 0, 0, 0x89, 0x67, 0x45, 0x23]
        );
        assert_eq!(wide[1].to_le_bytes(), [0, 0, 0, 0, 1, 0, 0, 0]);
    }

    /// A jump forward and one back land where their labels were bound, counted from the
    /// instruction after the jump.
    #[test]
    fn jumps_to_labels_count_the_instructions_between() {
        let mut a = Asm::new();
        let (top, end) = (a.label(), a.label());
        a.bind(top);
        a.push(mov_imm(R0, 0));
        a.jump(jeq_imm(R0, 0, 0), end);
        a.push(mov_imm(R0, 1));
        a.jump(ja(0), top);
        a.bind(end);
        a.push(exit());
        let code = a.finish().unwrap();
        let off = |i: u64| (i >> 16) as u16 as i16;
        println!("offsets: {} {}", off(code[1]), off(code[3]));
        assert_eq!((off(code[1]), off(code[3])), (2, -4));
        // A label never bound: no program.
        let mut a = Asm::new();
        let nowhere = a.label();
        a.jump(ja(0), nowhere);
        assert!(a.finish().is_none());
    }
}

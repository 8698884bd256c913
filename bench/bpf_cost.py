#!/usr/bin/env python3
"""What counting the block layer's I/O in the kernel (BPF) would cost, against what blkscope's
tracefs trace costs (bench/trace_instance.py): an experiment for docs/architecture.md ("Counting
in the kernel: measured before it is built"), not a part of blkscope.

Each MODE attaches one small BPF program to `block:block_bio_queue` (bytecode assembled here,
loaded with the bpf() syscall: no compiler, no libbpf) for SECONDS, then prints what the kernel
counted of its runs (`run_cnt`, `run_time_ns` in /proc/self/fdinfo, when
kernel.bpf_stats_enabled is 1) and, for the counting modes, its map: bytes and bios per (device,
process, direction).

  tp-empty   a tracepoint program (the event's record as `format` lays it out) that returns
  tp-count   the same, counting into a hash map keyed by (dev, tgid, rwbs[0..4])
  raw-empty  a raw tracepoint program (the kernel's own `struct bio *`, no record built)
  raw-flag   a raw one that reads an on/off flag from an array map and returns: a window's
             "off", as a trace kept in windows would be between them
  raw-count  a raw one counting by (dev, tgid, op); the offsets in `struct bio` and
             `struct block_device` read from the kernel's BTF (/sys/kernel/btf/vmlinux)

  setup ROUNDS   each step of a counting program's life timed by the process's CPU
                 (getrusage) and the wall clock: map, load, attach, read the map, close.

Usage (root): python3 bench/bpf_cost.py MODE SECONDS | setup ROUNDS
bench/bpf_cost.sh runs the modes beside fio on a zram device of its own and gives each one's
CPU an I/O in the submitting thread.
"""
import ctypes
import os
import struct
import sys
import time

from steps import Steps

LIBC = ctypes.CDLL(None, use_errno=True)
NR_BPF, NR_PERF_EVENT_OPEN = 321, 298  # x86_64
EVENTS = "/sys/kernel/tracing/events/block/block_bio_queue"

# bpf() commands, program and map types, helpers
MAP_CREATE, MAP_LOOKUP, MAP_UPDATE, MAP_NEXT_KEY, PROG_LOAD, RAW_TP_OPEN = 0, 1, 2, 4, 5, 17
MAP_HASH, MAP_ARRAY = 1, 2
PROG_TRACEPOINT, PROG_RAW_TRACEPOINT = 5, 17
LOOKUP, UPDATE, PID_TGID, PROBE_READ_KERNEL = 1, 2, 14, 113
# perf_event_open: a tracepoint event, and the ioctls that give it a program and turn it on
PERF_TYPE_TRACEPOINT, IOC_SET_BPF, IOC_ENABLE = 2, 0x40042408, 0x2400


def sys_bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    fd = LIBC.syscall(NR_BPF, cmd, buf, 128)
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return fd


def ins(op, dst=0, src=0, off=0, imm=0):
    """One BPF instruction: opcode, registers, offset, immediate."""
    return struct.pack("<BBhi", op, (src << 4) | dst, off, imm)


def ld_map(dst, fd):
    """The two-slot load of a map's fd (BPF_PSEUDO_MAP_FD) into `dst`."""
    return ins(0x18, dst, 1, 0, fd) + ins(0, 0, 0, 0, 0)


MOV, MOVI, ADDI, RSHI, LSHI, ANDI = 0xBF, 0xB7, 0x07, 0x77, 0x67, 0x57
LDW, LDDW, STW, STDW_IMM, STW_IMM, XADD_DW = 0x61, 0x79, 0x63, 0x7A, 0x62, 0xDB
CALL, EXIT, JEQ, JNE = 0x85, 0x95, 0x15, 0x55


def create_map(kind, key, value, entries):
    return sys_bpf(MAP_CREATE, struct.pack("<IIIII", kind, key, value, entries, 0))


def load(kind, code):
    n = len(code) // 8
    text, lic = ctypes.create_string_buffer(code), ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(1 << 16)
    attr = struct.pack(
        "<IIQQIIQ", kind, n, ctypes.addressof(text), ctypes.addressof(lic), 1, 1 << 16,
        ctypes.addressof(log))
    try:
        return sys_bpf(PROG_LOAD, attr)
    except OSError:
        sys.stderr.write(log.value.decode())
        raise


def count_into(mapfd, key_at, bytes_reg):
    """Adds `bytes_reg` and one bio to the map's value at the key on the stack at `key_at`,
    making the entry first where there is none."""
    lookup = ld_map(1, mapfd) + ins(MOV, 2, 10) + ins(ADDI, 2, imm=key_at) + ins(CALL, imm=LOOKUP)
    insert = (ins(STDW_IMM, 10, off=-32) + ins(STDW_IMM, 10, off=-24) + ld_map(1, mapfd)
              + ins(MOV, 2, 10) + ins(ADDI, 2, imm=key_at) + ins(MOV, 3, 10) + ins(ADDI, 3, imm=-32)
              + ins(MOVI, 4, imm=1) + ins(CALL, imm=UPDATE) + lookup)
    add = (ins(XADD_DW, 0, bytes_reg, 0) + ins(MOVI, 1, imm=1) + ins(XADD_DW, 0, 1, 8))
    return (lookup + ins(JNE, 0, off=len(insert) // 8 + 1) + insert
            + ins(JEQ, 0, off=len(add) // 8) + add + ins(MOVI, 0) + ins(EXIT))


def format_offsets():
    """The fields of block_bio_queue's record, by name: their offsets."""
    offsets = {}
    for line in open(f"{EVENTS}/format"):
        if "field:" in line:
            decl, off = (p.strip() for p in line.strip().split(";")[:2])
            offsets[decl.split()[-1].split("[")[0]] = int(off.split(":")[1])
    return offsets


def tp_count(mapfd):
    f = format_offsets()
    return (ins(MOV, 6, 1) + ins(LDW, 7, 6, f["dev"]) + ins(STW, 10, 7, -16)
            + ins(CALL, imm=PID_TGID) + ins(RSHI, 0, imm=32) + ins(STW, 10, 0, -12)
            + ins(LDW, 1, 6, f["rwbs"]) + ins(STW, 10, 1, -8)
            + ins(LDW, 8, 6, f["nr_sector"]) + ins(LSHI, 8, imm=9) + count_into(mapfd, -16, 8))


def raw_count(mapfd, off):
    """bio's first 48 bytes to the stack (-80), its bdev's bd_dev (-88), then the count."""
    return (ins(LDDW, 6, 1, 0)
            + ins(MOV, 1, 10) + ins(ADDI, 1, imm=-80) + ins(MOVI, 2, imm=48) + ins(MOV, 3, 6)
            + ins(CALL, imm=PROBE_READ_KERNEL)
            + ins(LDDW, 3, 10, -80 + off["bi_bdev"]) + ins(ADDI, 3, imm=off["bd_dev"])
            + ins(MOV, 1, 10) + ins(ADDI, 1, imm=-88) + ins(MOVI, 2, imm=4)
            + ins(CALL, imm=PROBE_READ_KERNEL)
            + ins(LDW, 7, 10, -88) + ins(STW, 10, 7, -16)
            + ins(CALL, imm=PID_TGID) + ins(RSHI, 0, imm=32) + ins(STW, 10, 0, -12)
            + ins(LDW, 1, 10, -80 + off["bi_opf"]) + ins(ANDI, 1, imm=0xFF) + ins(STW, 10, 1, -8)
            + ins(LDW, 8, 10, -80 + off["bi_size"]) + count_into(mapfd, -16, 8))


def raw_flag(flagfd):
    return (ins(STW_IMM, 10, off=-4, imm=0) + ld_map(1, flagfd) + ins(MOV, 2, 10)
            + ins(ADDI, 2, imm=-4) + ins(CALL, imm=LOOKUP) + ins(JEQ, 0, off=2)
            + ins(LDDW, 1, 0, 0) + ins(JNE, 1, off=0) + ins(MOVI, 0) + ins(EXIT))


# A minimal reader of the kernel's BTF: struct member offsets by name.
BTF_EXTRA = {1: 4, 3: 12, 14: 4, 17: 4}  # kind -> bytes after the type record
BTF_PER_MEMBER = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}


def btf_offsets():
    """Byte offsets of bio.bi_bdev, bio.bi_opf, bio.bi_iter.bi_size, block_device.bd_dev."""
    data = open("/sys/kernel/btf/vmlinux", "rb").read()
    hdr_len, type_off, type_len, str_off = struct.unpack_from("<IIII", data, 4)
    types, strings = hdr_len + type_off, hdr_len + str_off

    def name(off):
        end = data.index(b"\0", strings + off)
        return data[strings + off:end].decode()

    structs, by_id, pos, tid = {}, {}, types, 1
    while pos < types + type_len:
        name_off, info, size = struct.unpack_from("<III", data, pos)
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        body = pos + 12
        by_id[tid] = (kind, size, body, vlen, info >> 31)
        if kind == 4 and name_off:
            structs.setdefault(name(name_off), tid)
        pos = body + BTF_EXTRA.get(kind, 0) + BTF_PER_MEMBER.get(kind, 0) * vlen
        tid += 1

    def member(tid, want):
        kind, _, body, vlen, kflag = by_id[tid]
        for i in range(vlen):
            n, t, off = struct.unpack_from("<III", data, body + 12 * i)
            if name(n) == want:
                while by_id[t][0] in (8, 9, 10, 11):  # typedef, volatile, const, restrict
                    t = by_id[t][1]
                return t, (off & 0xFFFFFF if kflag else off) // 8
        raise KeyError(want)

    bio, dev = structs["bio"], structs["block_device"]
    iter_t, iter_at = member(bio, "bi_iter")
    return {
        "bi_bdev": member(bio, "bi_bdev")[1],
        "bi_opf": member(bio, "bi_opf")[1],
        "bi_size": iter_at + member(iter_t, "bi_size")[1],
        "bd_dev": member(dev, "bd_dev")[1],
    }


class PerfAttr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("rest", ctypes.c_uint8 * 104)]


def attach_tp(prog):
    """A tracepoint program goes on through a perf event (one CPU's: the program runs on all)."""
    a = PerfAttr(type=PERF_TYPE_TRACEPOINT, size=ctypes.sizeof(PerfAttr),
                 config=int(open(f"{EVENTS}/id").read()), sample_period=1)
    fd = LIBC.syscall(NR_PERF_EVENT_OPEN, ctypes.byref(a), -1, 0, -1, 8)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "perf_event_open")
    for req, arg in ((IOC_SET_BPF, prog), (IOC_ENABLE, 0)):
        if LIBC.ioctl(fd, ctypes.c_ulong(req), arg) < 0:
            raise OSError(ctypes.get_errno(), "ioctl")
    return fd


def attach_raw(prog):
    tp = ctypes.create_string_buffer(b"block_bio_queue")
    return sys_bpf(RAW_TP_OPEN, struct.pack("<QI", ctypes.addressof(tp), prog))


def counted(mapfd):
    """The map's entries: (major, minor, tgid, direction) -> (bytes, bios)."""
    out, key, nxt, val = {}, None, ctypes.create_string_buffer(12), ctypes.create_string_buffer(16)
    while True:
        at = 0 if key is None else ctypes.addressof(key)
        try:
            sys_bpf(MAP_NEXT_KEY, struct.pack("<IIQQ", mapfd, 0, at, ctypes.addressof(nxt)))
        except OSError:
            return out
        sys_bpf(MAP_LOOKUP, struct.pack("<IIQQ", mapfd, 0, ctypes.addressof(nxt),
                                        ctypes.addressof(val)))
        dev, tgid, rw = struct.unpack("<III", nxt.raw)
        direction = rw.to_bytes(4, "little").rstrip(b"\0").decode(errors="replace") or str(rw)
        out[(dev >> 20, dev & 0xFFFFF, tgid, direction if rw > 0xFF else str(rw))] = \
            struct.unpack("<QQ", val.raw)
        key = ctypes.create_string_buffer(nxt.raw, 12)


def start(mode):
    """Loads and attaches MODE's program: (fds to close, the program's fd, the map's or None)."""
    if mode in ("tp-empty", "raw-empty"):
        kind = PROG_TRACEPOINT if mode == "tp-empty" else PROG_RAW_TRACEPOINT
        prog = load(kind, ins(MOVI, 0) + ins(EXIT))
        link = attach_tp(prog) if kind == PROG_TRACEPOINT else attach_raw(prog)
        return [link, prog], prog, None
    if mode == "raw-flag":
        flag = create_map(MAP_ARRAY, 4, 8, 1)
        prog = load(PROG_RAW_TRACEPOINT, raw_flag(flag))
        return [attach_raw(prog), prog, flag], prog, None
    m = create_map(MAP_HASH, 12, 16, 4096)
    if mode == "tp-count":
        prog = load(PROG_TRACEPOINT, tp_count(m))
        return [attach_tp(prog), prog, m], prog, m
    if mode == "raw-count":
        prog = load(PROG_RAW_TRACEPOINT, raw_count(m, btf_offsets()))
        return [attach_raw(prog), prog, m], prog, m
    raise SystemExit(f"unknown mode {mode}: tp-empty, tp-count, raw-empty, raw-flag, raw-count")


def runs(prog):
    stats = dict(line.split(":\t") for line in open(f"/proc/self/fdinfo/{prog}")
                 if ":\t" in line)
    n = int(stats.get("run_cnt", "0"))
    return n, (int(stats["run_time_ns"]) / n if n else None)


def setup(rounds):
    steps = Steps()
    step = steps.step
    offsets = step("BTF offsets (Python)", btf_offsets)
    for _ in range(rounds):
        m = step("map", lambda: create_map(MAP_HASH, 12, 16, 4096))
        prog = step("load (verifier)", lambda: load(PROG_RAW_TRACEPOINT, raw_count(m, offsets)))
        link = step("attach", lambda: attach_raw(prog))
        step("read the map", lambda: counted(m))
        step("close (detach)", lambda: [os.close(fd) for fd in (link, prog, m)])
    total = steps.table(rounds, f"medians of {rounds}", lambda n: not n.startswith("BTF"))
    print(f"CPU a counting program, BTF aside: {total:.2f} ms")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    if sys.argv[1] == "setup":
        return setup(int(sys.argv[2]))
    fds, prog, m = start(sys.argv[1])
    try:
        time.sleep(float(sys.argv[2]))
        n, ns = runs(prog)
        print(f"{sys.argv[1]}: {n} runs" + (f", {ns:.0f} ns a run (bpf_stats)" if ns else ""))
        for k, v in sorted((counted(m) if m is not None else {}).items()):
            print(f"  {k[0]}:{k[1]} tgid {k[2]} {k[3]}: {v[0]} bytes, {v[1]} bios")
    finally:
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()

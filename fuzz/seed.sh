#!/usr/bin/env bash
# Seeds the fuzz targets' corpora (fuzz/corpus/TARGET/) from real inputs: the start of an image
# made by each mkfs blkscope knows, partition tables by sfdisk, this machine's /proc files,
# the trace lines in src/trace/event.rs, the SMART fixtures, the suites and lessons in assets/,
# and a saved run. Tools that are missing are skipped with a line saying so. Everything is made
# in a temporary directory on /dev/shm and removed afterwards.
set -uo pipefail
cd "$(dirname "$0")"
c=corpus
mkdir -p "$c"/{device_bytes,device_sparse,proc_files,smartctl_json,toml_files,saved_run}
tmp=$(mktemp -d /dev/shm/blkscope-seed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export PATH="$PATH:/usr/sbin:/sbin"

# The first 80 KiB of an image SIZE made by a command (the probe reads 68 KiB at the start).
head_of() {
  local name=$1 size=$2; shift 2
  local img="$tmp/$name.img"
  rm -f "$img"; truncate -s "$size" "$img"
  if "$@" "$img" >/dev/null 2>&1; then
    head -c $((80 << 10)) "$img" > "$c/device_bytes/$name"
  else
    echo "seed: skipped $name ($1 failed or is missing)"
  fi
  rm -f "$img"
}
head_of ext2 8M mkfs.ext2 -q -F
head_of ext3 8M mkfs.ext3 -q -F
head_of ext4 8M mkfs.ext4 -q -F
head_of xfs 300M mkfs.xfs -q -f
head_of btrfs 128M mkfs.btrfs -q -f
head_of vfat 8M mkfs.vfat
head_of exfat 8M mkfs.exfat
head_of ntfs 8M mkntfs -Q -q -F
head_of f2fs 64M mkfs.f2fs -q -f
head_of swap 8M mkswap
head_of nilfs2 160M mkfs.nilfs2 -q -f
head_of jfs 16M mkfs.jfs -q
head_of reiserfs 64M mkfs.reiserfs -q -f
head_of udf 8M mkfs.udf
head_of erofs 8M sh -c 'mkdir -p "$0.d" && mkfs.erofs "$0" "$0.d"'
head_of squashfs 8M sh -c 'mkdir -p "$0.d" && rm -f "$0" && mksquashfs "$0.d" "$0" -quiet'
head_of dos 8M sh -c 'printf "label: dos\nstart=2048, size=4096\nsize=2048, type=5\n" | sfdisk -q "$0"'
head_of gpt 8M sh -c 'printf "label: gpt\nstart=2048, size=4096\n" | sfdisk -q "$0"'
head_of luks 32M sh -c 'echo -n key | cryptsetup luksFormat -q --key-file - "$0"'
head_of bcache 8M make-bcache -B
# A GPT's tail (its backup header) with the start zeroed: the hidden probe's case.
img="$tmp/gpt-tail.img"; truncate -s 8M "$img"
if printf 'label: gpt\nstart=2048\n' | sfdisk -q "$img" 2>/dev/null; then
  dd if=/dev/zero of="$img" bs=64K count=1 conv=notrunc status=none
  cp "$img" "$c/device_bytes/gpt-tail"
fi
# device_sparse: a size (little endian), a sector choice, then (place, 512 bytes) pairs;
# one with an ext superblock's bytes at a place.
printf '\x00\x00\x00\x40\x00\x00\x00\x00\x00' > "$c/device_sparse/1G-empty"
if [ -s "$c/device_bytes/ext4" ]; then
  { printf '\x00\x00\x00\x40\x00\x00\x00\x00\x00\x03'; dd if="$c/device_bytes/ext4" bs=512 skip=2 count=1 status=none; } \
    > "$c/device_sparse/1G-ext4-sb"
fi
# proc_files: the first byte picks the file.
{ printf '\x00'; cat /proc/diskstats; } > "$c/proc_files/diskstats"
{ printf '\x01'; cat /proc/self/mountinfo; } > "$c/proc_files/mountinfo"
{ printf '\x02'; cat /proc/swaps; } > "$c/proc_files/swaps"
{ printf '\x03'; cat /proc/self/io 2>/dev/null; } > "$c/proc_files/io"
{ printf '\x04'; grep -o '".*block_[a-z_]*: .*"' ../src/trace/event.rs | tr -d '"'; } > "$c/proc_files/trace"
cp ../tests/fixtures/smart/*.json "$c/smartctl_json/" 2>/dev/null
for f in ../assets/profiles/*.toml; do { printf '\x00'; cat "$f"; } > "$c/toml_files/suite-$(basename "$f")"; done
for f in ../assets/lessons/*.toml; do { printf '\x01'; cat "$f"; } > "$c/toml_files/lesson-$(basename "$f")"; done
# A saved run: a 1 MiB write on a scratch file in /dev/shm, saved in a private runs directory.
bin=../target/debug/blkscope
[ -x "$bin" ] || bin=$(command -v blkscope || true)
if [ -n "$bin" ]; then
  XDG_DATA_HOME="$tmp/data" HOME="$tmp" "$bin" run "$tmp" --size 1M >/dev/null 2>&1
  find "$tmp/data" -name '*.json' -exec cp {} "$c/saved_run/" \; 2>/dev/null
fi
for t in "$c"/*; do echo "seed: $(ls "$t" | wc -l) inputs in $t"; done

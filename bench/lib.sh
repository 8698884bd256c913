# Shared start of the bench scripts; each sources it right after `set -euo pipefail`:
#
#   . "$(dirname "$0")/lib.sh"
#
# It moves to the repository's top, and removes on exit (normal, failed, Ctrl-C or SIGTERM)
# exactly what the script made through it, in reverse order of kind: the script's own hooks
# first, then loop devices, zram devices, mounts and temporary directories.
#
#   bench_build                  build the release binary; BIN is its path
#   bench_tmpdir VAR             a new temporary directory, in VAR
#   bench_zram VAR SIZE          a zram device of our own (hot_add), its name (zramN) in VAR;
#                                VAR is empty when the kernel has no zram-control
#   bench_loop VAR FILE [ARG...] attach FILE (losetup --find --show ARG... FILE), the device
#                                path in VAR
#   bench_tmpfs VAR SIZE         a tmpfs of SIZE on a new temporary directory, in VAR
#   bench_on_exit COMMAND        run COMMAND (a string, eval'd) first when the script ends
#   bench_need_fio               exit with the reason unless fio is installed
#   bench_need_zram              exit with the reason unless the kernel has zram-control
#   bench_fill DEV               write every block of DEV once (fio, 1M direct), so that reads
#                                hit data and not never-written blocks
#   bench_halt_poll NS           with NS set, a KVM guest's idle polling (the haltpoll cpuidle
#                                driver's guest_halt_poll_ns) set to NS for the script and put
#                                back on exit; exits with the reason where the guest has none
#   bench_t_io_uring VAR [ARG...]
#                                with FIO_SRC (a checkout of https://github.com/axboe/fio), fio's
#                                peak-IOPS tool t/io_uring built from a copy of it in a
#                                temporary directory (./configure ARG...), its path in VAR; VAR
#                                is empty without FIO_SRC
#
# VAR is a name, not $(...): the helpers record what they made in this shell, which a
# command substitution's subshell could not.

cd "$(dirname "${BASH_SOURCE[0]}")/.."

_bench_hooks=()
_bench_loops=()
_bench_zrams=()
_bench_mounts=()
_bench_dirs=()

bench_cleanup() {
  local x
  for x in "${_bench_hooks[@]}"; do eval "$x" || true; done
  for x in "${_bench_loops[@]}"; do losetup -d "$x" 2>/dev/null || true; done
  for x in "${_bench_zrams[@]}"; do
    # The device may still be closing (a run was interrupted): retry for a few seconds.
    # (The redirections are grouped so that their own errors go to /dev/null too.)
    for _ in $(seq 1 25); do
      [ -e "/sys/block/$x" ] || break
      { echo 1 > "/sys/block/$x/reset" &&
          echo "${x#zram}" > /sys/class/zram-control/hot_remove; } 2>/dev/null && break
      sleep 0.2
    done
  done
  for x in "${_bench_mounts[@]}"; do umount "$x" 2>/dev/null || umount -l "$x" 2>/dev/null || true; done
  for x in "${_bench_dirs[@]}"; do rm -rf "$x"; done
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_build() {
  cargo build --release --quiet
  BIN=$PWD/target/release/blkscope
}

# Builds the commit BASE in a worktree under DIR (removed on exit), and sets VAR to its blkscope.
#   bench_build_base VAR DIR
bench_build_base() {
  git worktree add -q --detach "$2/base" "$BASE"
  bench_on_exit "git worktree remove --force '$2/base'"
  (cd "$2/base" && CARGO_TARGET_DIR="$2/target" cargo build --release --quiet)
  printf -v "$1" %s "$2/target/release/blkscope"
}

# The helpers' locals start with _b_ so that a caller's VAR of the same name is not shadowed
# (printf -v would set the helper's own local).
bench_tmpdir() {
  local _b_d
  _b_d=$(mktemp -d)
  _bench_dirs+=("$_b_d")
  printf -v "$1" %s "$_b_d"
}

bench_zram() {
  local _b_z=""
  if [ -e /sys/class/zram-control/hot_add ]; then
    _b_z=zram$(cat /sys/class/zram-control/hot_add)
    _bench_zrams+=("$_b_z")
    echo "$2" > "/sys/block/$_b_z/disksize"
  fi
  printf -v "$1" %s "$_b_z"
}

bench_loop() {
  local _b_var=$1 _b_file=$2 _b_l
  shift 2
  _b_l=$(losetup --find --show "$@" "$_b_file")
  _bench_loops+=("$_b_l")
  printf -v "$_b_var" %s "$_b_l"
}

bench_tmpfs() {
  local _b_m
  bench_tmpdir _b_m
  mount -t tmpfs -o "size=$2" tmpfs "$_b_m"
  _bench_mounts+=("$_b_m")
  printf -v "$1" %s "$_b_m"
}

bench_need_fio() {
  command -v fio >/dev/null || { echo "fio is needed: apt-get install fio" >&2; exit 1; }
}

bench_need_zram() {
  [ -e /sys/class/zram-control/hot_add ] || { echo "needs zram: modprobe zram" >&2; exit 1; }
}

bench_on_exit() {
  _bench_hooks+=("$1")
}

bench_halt_poll() {
  local _b_p=/sys/module/haltpoll/parameters/guest_halt_poll_ns _b_was
  [ -n "${1:-}" ] || return 0
  [ -w "$_b_p" ] || { echo "HALT_POLL_NS needs a KVM guest with the haltpoll cpuidle driver ($_b_p)" >&2; exit 1; }
  _b_was=$(cat "$_b_p")
  bench_on_exit "echo $_b_was > $_b_p"
  echo "$1" > "$_b_p"
  echo "guest_halt_poll_ns $1 for this run (was $_b_was)" >&2
}

bench_fill() {
  fio --name=fill --filename="$1" --rw=write --bs=1M --direct=1 --ioengine=io_uring --iodepth=8 \
      --size=1G --output=/dev/null
}

bench_t_io_uring() {
  # Not _b_d: bench_tmpdir's own local of that name would take the value.
  local _b_var=$1 _b_src=${FIO_SRC:-} _b_fio
  shift
  if [ -z "$_b_src" ]; then
    printf -v "$_b_var" %s ""
    return
  fi
  bench_tmpdir _b_fio
  (cd "$_b_src" && tar --exclude=.git -cf - .) | tar -xf - -C "$_b_fio"
  # A copy built before (with other ./configure arguments) must not be reused as it is.
  (cd "$_b_fio" && make clean >/dev/null 2>&1 || true)
  (cd "$_b_fio" && ./configure "$@" >/dev/null && make -j"$(nproc)" t/io_uring >/dev/null)
  echo "t/io_uring built from $_b_src ($(cd "$_b_src" && git describe --always 2>/dev/null || echo 'not a git checkout'))" >&2
  printf -v "$_b_var" %s "$_b_fio/t/io_uring"
}

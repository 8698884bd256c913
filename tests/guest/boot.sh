#!/usr/bin/env bash
# Boots a throwaway QEMU guest with this machine's kernel and its root file system (read-only
# over 9p, a tmpfs over it), runs SHARE/run.sh in it as root with SHARE mounted read-write at
# /share, and powers off. What run.sh prints goes to SHARE/console.log, its exit status to its
# last line ("run.sh exit N"). The devices to emulate follow SHARE on the command line.
#
#   tests/guest/boot.sh SHARE [QEMU_ARGS...]
#
# KVM when /dev/kvm works, TCG otherwise; GUEST_ACCEL=tcg|kvm forces one. A kernel that cannot
# start under KVM (as under nested virtualisation that refuses an MSR) hangs without a word after
# the BIOS, so a probe boots it first with an early console: KVM only when it says "Linux version"
# within KVM_PROBE seconds (default 20; a second or two when it works, 3.7 s even under TCG here).
# A KVM guest whose script has still not begun after KVM_START seconds (default 60) is given up
# for TCG too. GUEST_TIMEOUT (s; default 300 under KVM, 900 under TCG, which a loaded host slows
# 4x: a guest of 81 s here ran past 300 s in CI), GUEST_MEM (MiB, 1536), GUEST_CPUS (2 under KVM,
# 1 under TCG).
# Needs: qemu-system-x86, linux-image-amd64 (the kernel and its modules), busybox-static.
set -euo pipefail
share=$(readlink -f "$1"); shift
kv=$(ls /lib/modules | sort -V | tail -1)
kernel=/boot/vmlinuz-$kv
[ -r "$kernel" ] || { echo "no kernel image $kernel (apt install linux-image-amd64)" >&2; exit 3; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ir=$work/ir; mkdir -p "$ir"/{bin,proc,sys,dev,lower,rw,newroot,mods}
cp "$(command -v busybox)" "$ir/bin/busybox"
# What the initramfs needs to reach the root over 9p (built in on some kernels: then skipped).
mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p overlay"
for m in $mods; do
  f=$(modinfo -k "$kv" -n "$m" 2>/dev/null || true)
  case "$f" in
    *.ko) cp "$f" "$ir/mods/$m.ko" ;;
    *.ko.xz) xz -dc "$f" >"$ir/mods/$m.ko" ;;
    *.ko.zst) zstd -qdc "$f" >"$ir/mods/$m.ko" ;;
  esac
done
cat >"$ir/init" <<INIT
#!/bin/busybox sh
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin; /bin/busybox --install -s
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $mods; do [ -f /mods/\$m.ko ] && insmod /mods/\$m.ko 2>/dev/null; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /lower
mount -t tmpfs -o size=1g tmp /rw; mkdir -p /rw/up /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/up,workdir=/rw/work /newroot
mkdir -p /newroot/share; mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /newroot/share
for d in proc sys dev; do mount --move /\$d /newroot/\$d; done
exec switch_root /newroot /bin/sh -c 'mount -t tmpfs tmp /tmp; mount -t tmpfs run /run; mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null; mkdir -p /dev/pts; mount -t devpts pts /dev/pts; hostname guest; sh /share/run.sh >/share/console.log 2>&1; echo "run.sh exit \$?" >>/share/console.log; sync; echo o >/proc/sysrq-trigger; sleep 5'
INIT
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
boot() {
  local accel=$1 cpu=$2 limit=300 cpus=${GUEST_CPUS:-2}; shift 2
  # Under TCG one vCPU: with two, the guest kernel twice locked up patching its code (an IPI
  # to the other vCPU never answered; docs/architecture.md, the guest section).
  [ "$accel" = tcg ] && limit=900 && cpus=${GUEST_CPUS:-1}
  timeout "${GUEST_TIMEOUT:-$limit}" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" \
    -m "${GUEST_MEM:-1536}" -smp "$cpus" -nographic -no-reboot -nic none \
    -kernel "$kernel" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 panic=-1 loglevel=5 softlockup_panic=1 sysrq_always_enabled=1" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on \
    -virtfs local,path="$share",mount_tag=share,security_model=none \
    "$@" </dev/null >"$share/qemu.log" 2>&1
}
# Whether this kernel starts under KVM: "Linux version" on the early console in time.
kvm_starts() {
  local log=$work/probe.log halves=0
  qemu-system-x86_64 -accel kvm -cpu host -m 256 -nographic -no-reboot -nic none \
    -kernel "$kernel" -append "earlyprintk=ttyS0 console=ttyS0 panic=-1" </dev/null >"$log" 2>&1 &
  local pid=$!
  while [ "$halves" -lt $((${KVM_PROBE:-20} * 2)) ] && kill -0 "$pid" 2>/dev/null; do
    grep -qa "Linux version" "$log" && break
    sleep 0.5; halves=$((halves + 1))
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  grep -qa "Linux version" "$log"
}
accel=${GUEST_ACCEL:-}
if [ -z "$accel" ]; then
  accel=tcg
  if [ -w /dev/kvm ]; then
    if kvm_starts; then accel=kvm; else echo "kvm failed (no kernel in ${KVM_PROBE:-20} s); TCG" >&2; fi
  fi
fi
# KVM, given up when run.sh (which creates console.log) has not begun after KVM_START seconds.
boot_kvm() {
  (boot kvm host "$@") 2>/dev/null &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ ! -e "$share/console.log" ] && [ "$waited" -ge "${KVM_START:-60}" ]; then
      # qemu exits 0 on SIGTERM: the give-up is this function's to say.
      pkill -TERM -P "$pid" 2>/dev/null || true
      wait "$pid" || true
      echo "no start in ${KVM_START:-60} s" >>"$share/qemu.log"
      return 1
    fi
    sleep 1; waited=$((waited + 1))
  done
  wait "$pid"
}
rm -f "$share/console.log"
if [ "$accel" = kvm ]; then
  if boot_kvm "$@" || [ -s "$share/console.log" ]; then
    echo "accel kvm" >>"$share/qemu.log"; exit 0
  fi
  echo "kvm failed ($(tail -1 "$share/qemu.log")); TCG" >&2
fi
boot tcg max "$@"
echo "accel tcg" >>"$share/qemu.log"

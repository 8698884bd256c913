#!/usr/bin/env bash
# A loopback sshd answering for many host aliases, for bench/fleet.sh and for trying --host by
# hand: sshd on 127.0.0.1 at a free port with keys made in DIR, and DIR/ssh_config where every
# `h*` name leads to it. sshd's MaxStartups is its default (10:30:100) unless MAXSTARTUPS is set.
#   bench/fleet_sshd.sh DIR      starts it (its pid in DIR/sshd.pid); kill it when done
set -euo pipefail
dir=${1:?usage: bench/fleet_sshd.sh DIR}
mkdir -p "$dir/tmp" "$dir/data"
dir=$(cd "$dir" && pwd)
for k in host_key client_key; do
  [ -f "$dir/$k" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/$k"
done
cp "$dir/client_key.pub" "$dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
MaxStartups ${MAXSTARTUPS:-10:30:100}
SetEnv XDG_DATA_HOME=$dir/data TMPDIR=$dir/tmp
CFG
cat > "$dir/ssh_config" <<CFG
Host h*
  HostName 127.0.0.1
Host *
  User root
  Port $port
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  LogLevel ERROR
CFG
mkdir -p /run/sshd
/usr/sbin/sshd -f "$dir/sshd_config"
for _ in $(seq 50); do
  [ -s "$dir/sshd.pid" ] && ssh -F "$dir/ssh_config" h1 true 2>/dev/null && break
  sleep 0.1
done
echo "sshd $(cat "$dir/sshd.pid") on 127.0.0.1:$port; ssh -F $dir/ssh_config hN"

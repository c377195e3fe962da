#!/usr/bin/env bash
# A throwaway cluster of SSH hosts on this one machine, for the SSH
# launcher's tests: N hosts h1..hN, each a network, hostname and mount
# namespace running its own sshd (Debian's openssh-server) on its own
# address, joined by a bridge. The host side is 198.18.0.129/25 on bridge
# trssh0; host i is 198.18.0.(129+i). It coexists with the local Slurm
# cluster (tests/slurm/local_cluster.sh: 198.18.0.0/24 on trslurm0): the
# /25 is the more specific route. Keys (the hosts' and the one client key
# they authorize) are made per cluster under $TUNERUN_SSH_DIR; each host
# has a /dev/shm of its own and the cluster's hosts file, as separate
# machines do. The file system is shared, as on the Slurm cluster: ranks
# run this checkout's binaries.
#
# Nothing outside $TUNERUN_SSH_DIR is written except the bridge and veth
# links ("down" deletes them) and /run/sshd (sshd's empty privilege
# separation folder); /etc is never touched.
#
#   local_cluster.sh up             bring it up (tears down what is left first)
#   local_cluster.sh down           kill everything in its namespaces, delete links
#   local_cluster.sh exec N CMD...  CMD inside host hN's namespaces
#   local_cluster.sh crash N        host hN is lost: its sshd, sessions and ranks are killed
#   local_cluster.sh revive N       host hN comes back: its sshd starts again
#   local_cluster.sh cut N          host hN's link goes down: it lives on, unreachable
#   local_cluster.sh heal N         its link comes back up
#   local_cluster.sh procs N        "PID ARGS" of every process on hN but its sshd and holder
#   local_cluster.sh hostfile       print the cluster's hostfile path
#   local_cluster.sh ssh_config     print the ssh_config path that reaches the hosts
#   local_cluster.sh can_run        exit 0 when this machine allows it (root, namespaces)
#
# Environment: TUNERUN_SSH_DIR (default $TMPDIR/tunerun_ssh),
# TUNERUN_SSH_HOSTS (3), TUNERUN_SSH_CPUS (CPUs per host in the hostfile, 2),
# TUNERUN_SSH_GPUS (GPUs per host in the hostfile, 0: stand-ins, nothing
# behind them; the launcher lends them by index).
set -euo pipefail

ST=${TUNERUN_SSH_DIR:-${TMPDIR:-/tmp}/tunerun_ssh}
HOSTS=${TUNERUN_SSH_HOSTS:-3}
CPUS=${TUNERUN_SSH_CPUS:-2}
GPUS=${TUNERUN_SSH_GPUS:-0}
NET=198.18.0
BR=trssh0
CTL_IP=$NET.129

log() { printf '[ssh_cluster %s] %s\n' "$(date +%T.%3N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
host_ip() { echo "$NET.$((129 + $1))"; }

wait_for() {  # wait_for SECONDS WHAT CMD...
  local end=$(($(date +%s) + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { log "timed out waiting for $what"; return 1; }
    sleep 0.1
  done
}

write_config() {
  mkdir -p "$ST"/{etc,log,ns,keys}
  chmod 700 "$ST/keys"
  {
    echo "127.0.0.1 localhost"
    echo "$CTL_IP controller"
    for i in $(seq 1 "$HOSTS"); do echo "$(host_ip "$i") h$i"; done
  } >"$ST/etc/hosts"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$ST/etc/resolv.conf"
  [ -s "$ST/keys/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C tunerun-ssh-host -f "$ST/keys/host_ed25519"
  [ -s "$ST/keys/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C tunerun-ssh-client -f "$ST/keys/id_ed25519"
  cp "$ST/keys/id_ed25519.pub" "$ST/keys/authorized_keys"
  : >"$ST/keys/known_hosts"
  : >"$ST/etc/hostfile"
  {
    echo "Host h*"
    echo "  User root"
    echo "  IdentityFile $ST/keys/id_ed25519"
    echo "  IdentitiesOnly yes"
    echo "  UserKnownHostsFile $ST/keys/known_hosts"
    echo "  StrictHostKeyChecking yes"
    echo "  CheckHostIP no"
    echo "  LogLevel ERROR"
  } >"$ST/etc/ssh_config"
  echo "# the local SSH cluster's hosts (tests/ssh/local_cluster.sh)" >>"$ST/etc/hostfile"
  for i in $(seq 1 "$HOSTS"); do
    printf 'Host h%s\n  HostName %s\n' "$i" "$(host_ip "$i")" >>"$ST/etc/ssh_config"
    echo "h$i,$(host_ip "$i") $(cat "$ST/keys/host_ed25519.pub")" >>"$ST/keys/known_hosts"
    echo "h$i slots=$CPUS gpus=$GPUS" >>"$ST/etc/hostfile"
    cat >"$ST/etc/sshd_config.h$i" <<CONF
ListenAddress $(host_ip "$i")
Port 22
HostKey $ST/keys/host_ed25519
AuthorizedKeysFile $ST/keys/authorized_keys
PidFile $ST/ns/h$i.sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxSessions 64
ClientAliveInterval 2
ClientAliveCountMax 3
MaxStartups 64:30:128
LogLevel ERROR
CONF
  done
}

# A `sleep infinity` holding new namespaces for NAME; prints its pid.
hold_namespaces() {
  local name=$1; shift
  setsid unshare "$@" sh -c 'echo $$ >"$0"; exec sleep infinity' "$ST/ns/$name.pid" \
    </dev/null >/dev/null 2>&1 &
  wait_for 10 "namespaces of $name" test -s "$ST/ns/$name.pid" || die "cannot make namespaces"
  local pid; pid=$(cat "$ST/ns/$name.pid")
  readlink "/proc/$pid/ns/net" >"$ST/ns/$name.net"
  echo "$pid"
}

# Pids of every process in the network namespaces of NAME..., in one pass over /proc.
namespace_pids() {
  local name tests=()
  for name in "$@"; do
    [ -s "$ST/ns/$name.net" ] || continue
    tests+=(${tests[0]+-o} -name net -lname "$(sed 's/\[/\\[/; s/\]/\\]/' "$ST/ns/$name.net")")
  done
  [ ${#tests[@]} -gt 0 ] || return 0
  find /proc/[0-9]*/ns/ -maxdepth 1 \( "${tests[@]}" \) 2>/dev/null | cut -d/ -f3 | sort -u
  return 0
}

kill_namespaces() {  # kill_namespaces PID_TO_SPARE NAME...  (no pid: "")
  local spare=$1 pids
  shift
  for _ in $(seq 1 100); do
    pids=$(namespace_pids "$@" | grep -vx "$spare" || true)
    [ -n "$pids" ] || return 0
    kill -KILL $pids 2>/dev/null || true
    sleep 0.05
  done
  log "could not empty the namespaces of $*: $pids"
}

start_sshd() {  # start_sshd N
  local holder; holder=$(cat "$ST/ns/h$1.pid")
  nsenter -t "$holder" -n -u -m /usr/sbin/sshd -f "$ST/etc/sshd_config.h$1" -E "$ST/log/sshd.h$1.log"
}

sshd_up() {  # sshd_up N: its sshd answers
  ssh -F "$ST/etc/ssh_config" -o BatchMode=yes -o ConnectTimeout=2 "h$1" true
}

cmd_can_run() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
  for b in /usr/sbin/sshd ssh ssh-keygen unshare nsenter ip setsid setpriv; do
    command -v "$b" >/dev/null || { echo "$b is not installed (scripts/install_deps.sh --tests: openssh-server)"; return 1; }
  done
  unshare --net --uts --mount true 2>/dev/null || { echo "cannot make namespaces here"; return 1; }
  ip link add trsshprobe type bridge 2>/dev/null || { echo "cannot make a bridge here"; return 1; }
  ip link del trsshprobe
}

cmd_up() {
  local why; why=$(cmd_can_run) || die "$why"
  if ip -4 route show | grep -v "dev $BR" | grep -q "^$NET\.128/25"; then
    die "$NET.128/25 is already routed on this machine"
  fi
  cmd_down >/dev/null 2>&1 || true
  trap 'rc=$?; log "up failed; log tails:"; tail -n 5 "$ST"/log/*.log >&2 || true; cmd_down >&2 || true; exit $rc' EXIT
  rm -rf "$ST/ns" "$ST/log"
  write_config
  mkdir -p /run/sshd
  ip link add "$BR" type bridge
  ip addr add "$CTL_IP/25" dev "$BR"
  ip link set "$BR" up
  local i holder
  for i in $(seq 1 "$HOSTS"); do
    holder=$(hold_namespaces "h$i" --net --uts --mount --propagation private)
    ip link add "$BR-h$i" type veth peer name eth0 netns "$holder"
    ip link set "$BR-h$i" master "$BR" up
    nsenter -t "$holder" -n -u -m sh -c "set -e; hostname h$i
      mount --bind '$ST/etc/hosts' /etc/hosts
      mount --bind '$ST/etc/resolv.conf' /etc/resolv.conf
      mount -t tmpfs -o mode=1777,size=256m tmpfs /dev/shm
      ip link set lo up; ip addr add $(host_ip "$i")/25 dev eth0; ip link set eth0 up"
    start_sshd "$i"
  done
  for i in $(seq 1 "$HOSTS"); do wait_for 20 "sshd of h$i" sshd_up "$i"; done
  trap - EXIT
  log "up: $HOSTS hosts, hostfile $ST/etc/hostfile, ssh_config $ST/etc/ssh_config"
}

cmd_down() {
  local f names=()
  for f in "$ST"/ns/h*.net; do [ -e "$f" ] && names+=("$(basename "${f%.*}")"); done
  [ ${#names[@]} -eq 0 ] || kill_namespaces "" "${names[@]}"
  for f in /sys/class/net/"$BR"-h*; do [ -e "$f" ] && ip link del "$(basename "$f")" 2>/dev/null; done
  [ -e "/sys/class/net/$BR" ] && ip link del "$BR" 2>/dev/null
  rm -rf "$ST/ns"
  log "down"
}

cmd_exec() {
  local n=$1; shift
  [ -s "$ST/ns/h$n.pid" ] || die "no host h$n"
  exec nsenter -t "$(cat "$ST/ns/h$n.pid")" -n -u -m "$@"
}

cmd_crash() {  # the namespaces stay (the holder lives): the host just stops answering
  local n=$1
  [ -s "$ST/ns/h$n.pid" ] || die "no host h$n"
  kill_namespaces "$(cat "$ST/ns/h$n.pid")" "h$n"
  log "crashed h$n"
}

cmd_procs() {
  local n=$1 holder p args
  holder=$(cat "$ST/ns/h$n.pid")
  for p in $(namespace_pids "h$n"); do
    [ "$p" = "$holder" ] && continue
    args=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || continue
    case "$args" in /usr/sbin/sshd\ -f*|"sshd: "*|"") continue ;; esac
    echo "$p $args"
  done
}

cmd_revive() {
  local n=$1
  [ -s "$ST/ns/h$n.pid" ] || die "no host h$n"
  start_sshd "$n"
  wait_for 20 "sshd of h$n" sshd_up "$n"
  log "revived h$n"
}

cmd_link() {  # cmd_link N up|down
  [ -e "/sys/class/net/$BR-h$1" ] || die "no host h$1"
  ip link set "$BR-h$1" "$2"
  log "link of h$1 $2"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  exec) shift; cmd_exec "$@" ;;
  crash) shift; cmd_crash "${1#h}" ;;
  revive) shift; cmd_revive "${1#h}" ;;
  cut) shift; cmd_link "${1#h}" down ;;
  heal) shift; cmd_link "${1#h}" up ;;
  procs) shift; cmd_procs "${1#h}" ;;
  hostfile) echo "$ST/etc/hostfile" ;;
  ssh_config) echo "$ST/etc/ssh_config" ;;
  can_run) cmd_can_run ;;
  *) sed -n '2,36p' "$0"; exit 2 ;;
esac

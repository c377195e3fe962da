#!/usr/bin/env bash
# A throwaway Slurm cluster on this one machine, for the tests: munged and
# slurmctld on the host side (slurmctld in its own hostname + mount
# namespace, named "ctl" as SlurmctldHost says), and N compute nodes n1..nN,
# each a slurmd in its own network, hostname and mount namespace, joined by
# a bridge on 198.18.0.0/24 (the controller side is 198.18.0.1, node i is
# 198.18.0.(10+i)); each node has a /dev/shm of its own, as separate
# machines do (shared memory never joins ranks of two nodes). Debian's
# slurmd/slurmctld/slurm-client/munge; no systemd, no cgroups
# (proctrack/linuxproc, task/none).
#
# Nothing outside $TUNERUN_SLURM_DIR is written except the bridge and veth
# links ("down" deletes them); /etc is never touched (each namespace
# bind-mounts its own hosts and resolv.conf, DNS pinned to loopback).
#
#   local_cluster.sh up           bring it up (tears down what is left first)
#   local_cluster.sh down         kill everything in its namespaces, delete links
#   local_cluster.sh run CMD...   CMD on the host side with SLURM_CONF and the hosts file
#   local_cluster.sh exec N CMD...  CMD inside node N's namespaces
#   local_cluster.sh crash N      node N dies: its slurmd, slurmstepds and tasks are killed
#   local_cluster.sh revive N     node N comes back: its slurmd starts again
#   local_cluster.sh can_run      exit 0 when this machine allows it (root, namespaces)
#
# Environment: TUNERUN_SLURM_DIR (default $TMPDIR/tunerun_slurm),
# TUNERUN_SLURM_NODES (2), TUNERUN_SLURM_CPUS (CPUs per node, 2),
# TUNERUN_SLURM_GPUS (GPUs per node, 0): stand-in GPUs, device nodes
# $TUNERUN_SLURM_DIR/nodes/nI/dev/nvidiaK (character devices with the NVIDIA
# driver's numbers, no driver behind them) in gres.conf. Slurm 22.05 lends
# them by index in CUDA_VISIBLE_DEVICES and never opens them, but a plain
# file there is "not a valid character or block device" to slurmd, whose
# tasks then get no CUDA_VISIBLE_DEVICES at all. TUNERUN_SLURMD_TIMEOUT (5):
# slurm.conf's SlurmdTimeout, the seconds after which Slurm declares a node
# that stopped answering down (a crash case waits that long to see it).
set -euo pipefail

ST=${TUNERUN_SLURM_DIR:-${TMPDIR:-/tmp}/tunerun_slurm}
NODES=${TUNERUN_SLURM_NODES:-2}
CPUS=${TUNERUN_SLURM_CPUS:-2}
GPUS=${TUNERUN_SLURM_GPUS:-0}
SLURMD_TIMEOUT=${TUNERUN_SLURMD_TIMEOUT:-5}
NET=198.18.0
BR=trslurm0
CTL_IP=$NET.1
CONF=$ST/etc/slurm.conf
export SLURM_CONF=$CONF  # without it the clients look the controller up in DNS

log() { printf '[local_cluster %s] %s\n' "$(date +%T.%3N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
node_ip() { echo "$NET.$((10 + $1))"; }

wait_for() {  # wait_for SECONDS WHAT CMD...
  local end=$(($(date +%s) + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { log "timed out waiting for $what"; return 1; }
    sleep 0.1
  done
}

write_config() {
  mkdir -p "$ST"/{etc,log,run,ns,ctld,munge}
  chmod 700 "$ST/munge"
  : >"$ST/etc/plugstack.conf"
  {
    echo "127.0.0.1 localhost"
    echo "$CTL_IP ctl $(hostname)"
    for i in $(seq 1 "$NODES"); do echo "$(node_ip "$i") n$i"; done
  } >"$ST/etc/hosts"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$ST/etc/resolv.conf"
  cat >"$CONF" <<CONF
ClusterName=tunerun
SlurmctldHost=ctl($CTL_IP)
SlurmctldPort=26817
SlurmdPort=26818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$ST/run/munge.sock
StateSaveLocation=$ST/ctld
SlurmdSpoolDir=$ST/nodes/%n/spool
SlurmctldPidFile=$ST/run/slurmctld.pid
SlurmdPidFile=$ST/nodes/%n/slurmd.pid
SlurmctldLogFile=$ST/log/slurmctld.log
SlurmdLogFile=$ST/log/slurmd.%n.log
PlugStackConfig=$ST/etc/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=$SLURMD_TIMEOUT
MessageTimeout=5
KillWait=2
InactiveLimit=0
MinJobAge=10
CONF
  local gres=""
  : >"$ST/etc/gres.conf"
  if [ "$GPUS" -gt 0 ]; then
    gres=" Gres=gpu:$GPUS"
    echo "GresTypes=gpu" >>"$CONF"
    echo "AutoDetect=off" >>"$ST/etc/gres.conf"
    for i in $(seq 1 "$NODES"); do
      mkdir -p "$ST/nodes/n$i/dev"
      for k in $(seq 0 $((GPUS - 1))); do mknod "$ST/nodes/n$i/dev/nvidia$k" c 195 "$k"; done
      echo "NodeName=n$i Name=gpu File=$ST/nodes/n$i/dev/nvidia[0-$((GPUS - 1))]" >>"$ST/etc/gres.conf"
    done
  fi
  for i in $(seq 1 "$NODES"); do
    echo "NodeName=n$i NodeHostname=n$i NodeAddr=$(node_ip "$i") CPUs=$CPUS RealMemory=1000$gres State=UNKNOWN" >>"$CONF"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$CONF"
}

# A `sleep infinity` holding new namespaces for NAME; prints its pid.
hold_namespaces() {
  local name=$1; shift
  setsid unshare "$@" sh -c 'echo $$ >"$0"; exec sleep infinity' "$ST/ns/$name.pid" \
    </dev/null >/dev/null 2>&1 &
  wait_for 10 "namespaces of $name" test -s "$ST/ns/$name.pid" || die "cannot make namespaces"
  local pid; pid=$(cat "$ST/ns/$name.pid")
  readlink "/proc/$pid/ns/net" >"$ST/ns/$name.net"
  readlink "/proc/$pid/ns/uts" >"$ST/ns/$name.uts"
  echo "$pid"
}

# Pids of every process in the namespaces of NAME... (nodes: network; ctl:
# hostname), in one pass over /proc.
namespace_pids() {
  local name kind tests=()
  for name in "$@"; do
    kind=net
    [ "$name" = ctl ] && kind=uts
    [ -s "$ST/ns/$name.$kind" ] || continue
    # net:[1] -> net:\[1\]
    tests+=(${tests[0]+-o} -name "$kind" -lname "$(sed 's/\[/\\[/; s/\]/\\]/' "$ST/ns/$name.$kind")")
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

controller_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
nodes_idle() { [ "$(sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle$')" -eq "$NODES" ]; }

cmd_can_run() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
  for b in munged slurmctld slurmd srun sinfo unshare nsenter ip setsid; do
    command -v "$b" >/dev/null || { echo "$b is not installed (scripts/install_deps.sh)"; return 1; }
  done
  unshare --net --uts --mount true 2>/dev/null || { echo "cannot make namespaces here"; return 1; }
  ip link add trslurmprobe type bridge 2>/dev/null || { echo "cannot make a bridge here"; return 1; }
  ip link del trslurmprobe
}

cmd_up() {
  local why; why=$(cmd_can_run) || die "$why"
  # Another user of 198.18.0.128/25 (beside this cluster's addresses, all
  # below .128) is no conflict; a route over .0 is.
  if ip -4 route show | grep -v "dev $BR" | grep -q "^$NET\.0/"; then
    die "$NET.0/24 is already routed on this machine"
  fi
  cmd_down >/dev/null 2>&1 || true
  trap 'rc=$?; log "up failed; log tails:"; tail -n 5 "$ST"/log/*.log >&2 || true; cmd_down >&2 || true; exit $rc' EXIT
  rm -rf "$ST/ctld" "$ST/nodes" "$ST/ns" "$ST/run"
  write_config
  [ -s "$ST/munge/munge.key" ] || dd if=/dev/urandom of="$ST/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$ST/munge/munge.key"
  munged --key-file="$ST/munge/munge.key" --socket="$ST/run/munge.sock" \
    --pid-file="$ST/run/munged.pid" --log-file="$ST/log/munged.log" \
    --seed-file="$ST/munge/munged.seed" --num-threads=2
  wait_for 10 munged test -S "$ST/run/munge.sock"

  ip link add "$BR" type bridge
  ip addr add "$CTL_IP/24" dev "$BR"
  ip link set "$BR" up

  local holder
  holder=$(hold_namespaces ctl --uts --mount --propagation private)
  nsenter -t "$holder" -u -m sh -c "hostname ctl && mount --bind '$ST/etc/hosts' /etc/hosts &&
    mount --bind '$ST/etc/resolv.conf' /etc/resolv.conf && exec slurmctld -c -f '$CONF'"
  wait_for 20 slurmctld controller_up

  local i n
  for i in $(seq 1 "$NODES"); do
    n=n$i
    mkdir -p "$ST/nodes/$n/spool"
    holder=$(hold_namespaces "$n" --net --uts --mount --propagation private)
    ip link add "$BR-$n" type veth peer name eth0 netns "$holder"
    ip link set "$BR-$n" master "$BR" up
    nsenter -t "$holder" -n -u -m sh -c "set -e; hostname $n
      mount --bind '$ST/etc/hosts' /etc/hosts
      mount --bind '$ST/etc/resolv.conf' /etc/resolv.conf
      mount -t tmpfs -o mode=1777,size=256m tmpfs /dev/shm
      ip link set lo up; ip addr add $(node_ip "$i")/24 dev eth0; ip link set eth0 up
      exec slurmd -f '$CONF' -N $n"
  done
  wait_for 30 "$NODES idle nodes" nodes_idle
  trap - EXIT
  log "up: $(sinfo -h -o '%D nodes %t %N')"
}

cmd_down() {
  local f names=()
  for f in "$ST"/ns/n*.net "$ST"/ns/ctl.uts; do [ -e "$f" ] && names+=("$(basename "${f%.*}")"); done
  [ ${#names[@]} -eq 0 ] || kill_namespaces "" "${names[@]}"
  # munged keeps nothing worth a clean exit (its socket and pid file go
  # below), and its own shutdown on SIGTERM takes a second. Dead, it may
  # linger as a zombie until this machine's init reaps it: it holds nothing.
  if [ -s "$ST/run/munged.pid" ]; then
    local p; p=$(cat "$ST/run/munged.pid")
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--key-file=$ST/munge"; then
      kill -KILL "$p" 2>/dev/null || true
      local state
      for _ in $(seq 1 100); do
        state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null || true)
        [ -n "$state" ] && [ "$state" != Z ] || break
        sleep 0.05
      done
    fi
  fi
  for f in /sys/class/net/"$BR"-n*; do [ -e "$f" ] && ip link del "$(basename "$f")" 2>/dev/null; done
  [ -e "/sys/class/net/$BR" ] && ip link del "$BR" 2>/dev/null
  rm -rf "$ST/ns" "$ST/run"
  log "down"
}

cmd_run() {  # the host side, but with the cluster's hosts file (names n1.. resolve)
  exec unshare --mount --propagation private sh -c \
    'mount --bind "$0" /etc/hosts && mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' \
    "$ST/etc/hosts" "$ST/etc/resolv.conf" "$@"
}

cmd_exec() {
  local n=$1; shift
  [ -s "$ST/ns/$n.pid" ] || die "no node $n"
  exec nsenter -t "$(cat "$ST/ns/$n.pid")" -n -u -m env SLURM_CONF="$CONF" "$@"
}

cmd_crash() {  # the namespaces stay (the holder lives): the node just stops answering
  local n=$1
  [ -s "$ST/ns/$n.pid" ] || die "no node $n"
  kill_namespaces "$(cat "$ST/ns/$n.pid")" "$n"
  log "crashed $n"
}

cmd_revive() {
  local n=$1
  [ -s "$ST/ns/$n.pid" ] || die "no node $n"
  nsenter -t "$(cat "$ST/ns/$n.pid")" -n -u -m slurmd -f "$CONF" -N "$n"
  log "revived $n"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  run) shift; cmd_run "$@" ;;
  exec) shift; cmd_exec "$@" ;;
  crash) shift; cmd_crash "$@" ;;
  revive) shift; cmd_revive "$@" ;;
  can_run) cmd_can_run ;;
  *) sed -n '2,34p' "$0"; exit 2 ;;
esac

#!/usr/bin/env bash
# Local test substrate: real Slurm (slurmctld + slurmd + munge) and a real sshd on
# 127.0.0.1:2222 (user slurmops), Debian packages, all on loopback, for the tests that run
# sinfo over SSH.
#
# Usage: scripts/substrate.sh start|stop|status|purge|build [--dry-run]
# (`build` only builds the cached Debian sid root for Slurm 26.05, see below)
#
# The substrate's own files (ssh keys, sshd config, pid and log) live in one folder:
# $NPA_SUBSTRATE_DIR, else $LAB (its older name), else /tmp/npa-substrate.
#
# What `start` changes on this machine (root needed): installs the Debian packages slurmctld,
# slurmd, slurm-client, munge and openssh-server when missing (Debian enables their
# services); creates /etc/munge/munge.key if there is none; writes /etc/slurm/slurm.conf and
# /etc/slurm/gres.conf (marked as ours); uses /run/munge, /run/slurm, /run/sshd,
# /var/lib/slurm and /var/log/slurm; adds the user slurmops with an authorized key. It is
# idempotent: daemons already running are left alone, keys are generated once.
# `stop` stops the daemons. `purge` stops them and removes what `start` created (the user,
# the munge key and the config files only if `start` created them, the substrate folder);
# the packages stay (`apt-get purge slurmctld slurmd slurm-client munge` removes them).
# `--dry-run` prints what `stop` or `purge` would do and changes nothing.
#
# Beside it, a separate GPU lab for the post-deploy GPU gate ($NPA_GPU_LAB_DIR, else
# <substrate folder>-gpu): its own slurmctld (port 16817, SlurmUser=slurmops so node updates
# work over SSH), two slurmd for the fake GPU nodes gpu-0 and gpu-1 (ports 17001-17002, eight
# `File=` GPUs each: symlinks to /dev/null), fake nvidia-smi / health-checker / CUDA samples on
# the tasks' PATH (TaskProlog), and its login node: an sshd on 127.0.0.1:2223 whose sessions
# get SLURM_CONF for this cluster. It leaves the shared cluster above untouched.
#
# And a modern Slurm lab: Slurm 26.05 from a Debian sid root ($NPA_SID_ROOT, else
# /var/cache/npa-substrate/sid-root; built once with mmdebstrap, about 200 MB, rebuilt when
# missing or incomplete; mmdebstrap is installed from Debian when missing). Inside it, bound
# to the host's /proc, /dev and /sys: its own munged, a slurmctld on port 16917 and two
# slurmd (gpu-0, gpu-1 of nodeset gpu, ports 16918-16919) started the way Soperator's
# worker entrypoint starts them (--instance-id, --extra), partitions main (default) and
# hidden (Hidden=YES) as the recipe makes them, the same fake GPUs as the GPU lab, and its
# login node: an sshd from the same root on 127.0.0.1:2224 (user slurmops, the same client
# key). Its files live in <root>/npa-lab. `purge` removes that folder and keeps the root
# (after a stop, rm -rf --one-file-system the root to drop it).
set -euo pipefail
LAB=${NPA_SUBSTRATE_DIR:-${LAB:-/tmp/npa-substrate}}
GPU=${NPA_GPU_LAB_DIR:-$LAB-gpu}
NODE=$(hostname -s)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GPU_NODES=(gpu-0 gpu-1)
SID_ROOT=${NPA_SID_ROOT:-/var/cache/npa-substrate/sid-root}
SID=$SID_ROOT/npa-lab # /npa-lab inside the root
SID_PORT=2224
SID_NODES=(gpu-0 gpu-1)
# what the sid root must hold (mmdebstrap --include) and the binaries that prove it did
SID_PACKAGES=slurmctld,slurmd,slurm-client,munge,openssh-server,python3-minimal
SID_BINARIES=(usr/sbin/slurmctld usr/sbin/slurmd usr/bin/sinfo usr/sbin/munged usr/sbin/sshd usr/bin/python3)
cmd=${1:-start}
DRY=""
[[ ${2:-} == --dry-run || ${1:-} == --dry-run ]] && DRY=1
[[ $cmd == --dry-run ]] && cmd=${2:-start}
MARK="# written by npa-sop-tui scripts/substrate.sh"
CREATED=$LAB/created # what `start` created (so `purge` removes only that)

# run CMD... or, with --dry-run, say it
act() {
  if [[ -n $DRY ]]; then
    printf 'would run: %s\n' "$*"
  else
    printf '%s\n' "$*"
    "$@"
  fi
}

created() { [[ -f $CREATED ]] && grep -qx "$1" "$CREATED"; }
remember() { created "$1" || echo "$1" >>"$CREATED"; }

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
  alive "$1" || return 0
  local pid
  pid=$(cat "$1")
  if [[ -n $DRY ]]; then
    echo "would stop: pid $pid ($1)"
    return 0
  fi
  echo "stopping pid $pid ($1)"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

sid_mounts() { for d in proc sys dev; do echo "$SID_ROOT/$d"; done; }

# the sid lab belongs to the substrate folder that started it (one per machine: its ports)
sid_ours() { [[ -f $SID/owner ]] && [[ $(cat "$SID/owner") == "$LAB" ]]; }

stop_sid() {
  sid_ours || return 0
  stop_pidfile "$SID/sshd.pid"
  for n in "${SID_NODES[@]}"; do stop_pidfile "$SID/slurmd-$n.pid"; done
  stop_pidfile "$SID/slurmctld.pid"
  stop_pidfile "$SID_ROOT/run/munge/munged.pid"
  local m
  for m in $(sid_mounts); do
    if mountpoint -q "$m"; then act umount -l "$m"; fi
  done
}

stop_all() {
  stop_sid
  stop_pidfile "$LAB/sshd-gpu.pid"
  for n in "${GPU_NODES[@]}"; do stop_pidfile "$GPU/slurmd-$n.pid"; done
  stop_pidfile "$GPU/slurmctld.pid"
  stop_pidfile "$LAB/sshd.pid"
  stop_pidfile /run/slurm/slurmd.pid
  stop_pidfile /run/slurm/slurmctld.pid
  stop_pidfile /run/munge/munged.pid # munge last: slurm needs it to shut down cleanly
}

ours() { [[ -f $1 ]] && head -n1 "$1" | grep -qxF "$MARK"; }

purge() {
  stop_all
  local conf_ours=""
  ours /etc/slurm/slurm.conf && conf_ours=1
  for conf in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if ours "$conf"; then act rm -f "$conf"; fi
  done
  if [[ -n $conf_ours ]]; then # the state and logs of the cluster that config described
    act find /var/lib/slurm/slurmctld /var/lib/slurm/slurmd -mindepth 1 -delete
    act rm -f /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log
  fi
  if created munge-key; then act rm -f /etc/munge/munge.key; fi
  if created user-slurmops && id slurmops >/dev/null 2>&1; then act userdel -r slurmops; fi
  if [[ -d $LAB ]]; then act rm -rf "$LAB"; fi
  if [[ -f $GPU/slurm.conf ]] && ours "$GPU/slurm.conf"; then act rm -rf "$GPU"; fi
  if sid_ours; then act rm -rf "$SID"; fi
  echo "packages are left installed; apt-get purge slurmctld slurmd slurm-client munge removes them" \
    "(and the cached Debian sid root stays: after a stop, rm -rf --one-file-system $SID_ROOT drops it)"
}

sid_complete() {
  local b
  for b in "${SID_BINARIES[@]}"; do [[ -x $SID_ROOT/$b ]] || return 1; done
}

# the Debian sid root with Slurm 26.05: built once, then cached (`build` does only this)
build_sid_root() {
  sid_complete && return 0
  command -v mmdebstrap >/dev/null || apt-get install -y -q --no-install-recommends mmdebstrap
  echo "building the Debian sid root $SID_ROOT (Slurm 26.05; once, then cached)"
  rm -rf --one-file-system "$SID_ROOT.tmp"
  mkdir -p "$(dirname "$SID_ROOT")"
  # sid's Release file may be older than its Valid-Until: accept it (a moving target)
  mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$SID_PACKAGES" sid "$SID_ROOT.tmp" http://deb.debian.org/debian
  local m
  for m in $(sid_mounts); do # never delete through a bind mount of the host's /dev
    if mountpoint -q "$m"; then umount -l "$m"; fi
  done
  rm -rf --one-file-system "$SID_ROOT"
  mv "$SID_ROOT.tmp" "$SID_ROOT"
}

case $cmd in
  stop)
    stop_all
    exit 0
    ;;
  purge)
    purge
    exit 0
    ;;
  status)
    rc=0
    for p in /run/munge/munged.pid /run/slurm/slurmctld.pid /run/slurm/slurmd.pid "$LAB/sshd.pid" \
      "$GPU/slurmctld.pid" "$GPU/slurmd-gpu-0.pid" "$GPU/slurmd-gpu-1.pid" "$LAB/sshd-gpu.pid" \
      "$SID_ROOT/run/munge/munged.pid" "$SID/slurmctld.pid" "$SID/slurmd-gpu-0.pid" \
      "$SID/slurmd-gpu-1.pid" "$SID/sshd.pid"; do
      if alive "$p"; then echo "up   $p"; else echo "down $p"; rc=1; fi
    done
    exit $rc
    ;;
  build)
    build_sid_root
    exit 0
    ;;
  start) ;;
  *)
    echo "usage: $0 start|stop|status|purge|build [--dry-run]" >&2
    exit 2
    ;;
esac

export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null \
  || ! command -v sinfo >/dev/null || [[ ! -x /usr/sbin/sshd ]]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge openssh-server
fi
mkdir -p "$LAB"
chmod 700 "$LAB" # the client's private key lives here

# --- munge -------------------------------------------------------------------------------
if [[ ! -s /etc/munge/munge.key ]]; then
  remember munge-key
  mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 600 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 0755 /run/munge
if ! alive /run/munge/munged.pid; then
  runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done

# --- slurm -------------------------------------------------------------------------------
install -d -o slurm -g slurm /run/slurm /var/log/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd
if ! alive /run/slurm/slurmctld.pid; then
  remember slurm-state
  cat >/etc/slurm/slurm.conf <<EOF
$MARK
ClusterName=labcluster
SlurmctldHost=localhost
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=10
GresTypes=gpu
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=2000 State=UNKNOWN
# fake GPU nodes: nothing listens on port 6899, so they never answer -> unknown*/down*
NodeName=gpu-[001-003] NodeAddr=127.0.0.1 Port=6899 CPUs=128 RealMemory=1000000 Gres=gpu:h100:8 Feature=gpu_h100_sxm,network_ssd State=UNKNOWN
PartitionName=main Nodes=${NODE},gpu-[001-003] Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=${NODE} MaxTime=00:30:00 DefaultTime=00:10:00 State=UP
EOF
  printf '%s\n%s\n' "$MARK" "NodeName=gpu-[001-003] Name=gpu Type=h100 Count=8" >/etc/slurm/gres.conf
  /usr/sbin/slurmctld -c
fi
if ! alive /run/slurm/slurmd.pid; then
  /usr/sbin/slurmd
fi
for _ in $(seq 60); do
  sinfo -h -n "$NODE" -o %T 2>/dev/null | grep -Eqx 'idle|mixed|allocated|drained|draining' && break
  sleep 0.5
done

# --- sshd on 127.0.0.1:2222 --------------------------------------------------------------
if ! id slurmops >/dev/null 2>&1; then
  remember user-slurmops
  useradd -m -s /bin/bash slurmops
fi
usermod -p '*' slurmops # useradd leaves the account locked ('!'); sshd without PAM refuses it
[[ -f $LAB/host_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$LAB/host_ed25519"
[[ -f $LAB/client_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$LAB/client_ed25519"
install -d -o slurmops -g slurmops -m 700 /home/slurmops/.ssh
install -o slurmops -g slurmops -m 600 "$LAB/client_ed25519.pub" /home/slurmops/.ssh/authorized_keys
echo "[127.0.0.1]:2222 $(cut -d' ' -f1,2 "$LAB/host_ed25519.pub")" >"$LAB/known_hosts"
cat >"$LAB/sshd_config" <<EOF
Port 2222
ListenAddress 127.0.0.1
HostKey $LAB/host_ed25519
PidFile $LAB/sshd.pid
AuthenticationMethods publickey
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers slurmops
UsePAM no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
EOF
install -d -m 0755 /run/sshd # privilege-separation dir; sshd refuses to start without it
if ! alive "$LAB/sshd.pid"; then
  /usr/sbin/sshd -t -f "$LAB/sshd_config"
  /usr/sbin/sshd -f "$LAB/sshd_config" -E "$LAB/sshd.log"
  for _ in $(seq 50); do [[ -s $LAB/sshd.pid ]] && break; sleep 0.1; done
fi
# slurm.conf of a lab with the real slurmd nodes gpu-0 and gpu-1 (eight fake GPUs each):
# lab_conf CLUSTER CTLD_PORT LAB_DIR NODE_PORTS (LAB_DIR as the daemons see it)
lab_conf() {
  cat <<LABCONF
$MARK
ClusterName=$1
SlurmctldHost=localhost
SlurmctldPort=$2
SlurmUser=slurmops
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$3/state
SlurmdSpoolDir=$3/spool/%n
SlurmctldPidFile=$3/slurmctld.pid
SlurmdPidFile=$3/slurmd-%n.pid
SlurmctldLogFile=$3/log/slurmctld.log
SlurmdLogFile=$3/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
TaskProlog=$3/task_prolog.sh
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=10
MinJobAge=2
KillWait=2
GresTypes=gpu
NodeName=gpu-[0-1] NodeHostname=$NODE NodeAddr=127.0.0.1 Port=[$4] CPUs=2 RealMemory=1000 Gres=gpu:h100:8 State=UNKNOWN
LABCONF
}

# --- GPU lab: its own Slurm cluster with fake GPU nodes, and its login sshd on :2223 ------
# Outside $LAB (0700): the GPU tasks run as slurmops and read their fake tools from here.
install -d -m 0755 "$GPU" "$GPU/bin" "$GPU/dev" "$GPU/spool"
install -d -m 1777 "$GPU/behaviour" # tests write per-node behaviour here (any user)
install -d -o slurmops -g slurmops -m 0755 "$GPU/state" "$GPU/log"
for i in $(seq 0 7); do ln -sfn /dev/null "$GPU/dev/gpu$i"; done
install -m 0755 "$ROOT/npa_sop_tui/sandbox/fake_gpu_tools.py" "$GPU/bin/fake_gpu_tools.py"
for tool in nvidia-smi health-checker deviceQuery vectorAdd simpleMultiGPU p2pBandwidthLatencyTest; do
  printf '#!/bin/sh\nexec /usr/bin/python3 %s/fake_gpu_tools.py %s "$@"\n' "$GPU/bin" "$tool" >"$GPU/bin/$tool"
  chmod 0755 "$GPU/bin/$tool"
done
# Slurm reads "export NAME=value" lines printed by a TaskProlog into the task's environment.
printf '#!/bin/sh\necho "export PATH=%s/bin:/usr/local/bin:/usr/bin:/bin"\necho "export NPA_FAKE_GPU_DIR=%s/behaviour"\n' \
  "$GPU" "$GPU" >"$GPU/task_prolog.sh"
chmod 0755 "$GPU/task_prolog.sh"
if ! alive "$GPU/slurmctld.pid"; then
  {
    lab_conf gpulab 16817 "$GPU" 17001-17002
    echo "PartitionName=main Nodes=gpu-[0-1] Default=YES MaxTime=INFINITE State=UP"
  } >"$GPU/slurm.conf"
  printf 'AutoDetect=off\nNodeName=gpu-[0-1] Name=gpu Type=h100 File=%s/dev/gpu[0-7]\n' "$GPU" >"$GPU/gres.conf"
  /usr/sbin/slurmctld -f "$GPU/slurm.conf"
fi
for n in "${GPU_NODES[@]}"; do
  install -d -m 0755 "$GPU/spool/$n"
  alive "$GPU/slurmd-$n.pid" || /usr/sbin/slurmd -f "$GPU/slurm.conf" -N "$n"
done
for _ in $(seq 60); do
  up=$(SLURM_CONF=$GPU/slurm.conf sinfo -h -N -o %T 2>/dev/null | grep -Ecx 'idle|mixed|allocated' || true)
  [[ $up -ge ${#GPU_NODES[@]} ]] && break
  sleep 0.5
done
sed -e "s/^Port 2222$/Port 2223/" -e "s#^PidFile .*#PidFile $LAB/sshd-gpu.pid#" "$LAB/sshd_config" >"$LAB/sshd_gpu_config"
echo "SetEnv SLURM_CONF=$GPU/slurm.conf" >>"$LAB/sshd_gpu_config"
echo "[127.0.0.1]:2223 $(cut -d' ' -f1,2 "$LAB/host_ed25519.pub")" >>"$LAB/known_hosts"
if ! alive "$LAB/sshd-gpu.pid"; then
  /usr/sbin/sshd -t -f "$LAB/sshd_gpu_config"
  /usr/sbin/sshd -f "$LAB/sshd_gpu_config" -E "$LAB/sshd-gpu.log"
  for _ in $(seq 50); do [[ -s $LAB/sshd-gpu.pid ]] && break; sleep 0.1; done
fi
# --- Slurm 26.05 lab: a Debian sid root, its own cluster and login sshd on :2224 -----------
in_sid() { chroot "$SID_ROOT" "$@"; }
build_sid_root
for d in proc sys dev; do
  mountpoint -q "$SID_ROOT/$d" || mount --bind "/$d" "$SID_ROOT/$d"
done
printf '127.0.0.1 localhost %s\n' "$NODE" >"$SID_ROOT/etc/hosts"
in_sid install -d -o munge -g munge -m 0755 /run/munge
alive "$SID_ROOT/run/munge/munged.pid" || in_sid runuser -u munge -- /usr/sbin/munged
for _ in $(seq 50); do in_sid munge -n >/dev/null 2>&1 && break; sleep 0.1; done
in_sid id slurmops >/dev/null 2>&1 || in_sid useradd -m -s /bin/bash slurmops
in_sid usermod -p '*' slurmops
install -d -m 0755 "$SID" "$SID/bin" "$SID/dev" "$SID/spool"
echo "$LAB" >"$SID/owner"
install -d -m 1777 "$SID/behaviour"
in_sid install -d -o slurmops -g slurmops -m 0755 /npa-lab/state /npa-lab/log
for i in $(seq 0 7); do ln -sfn /dev/null "$SID/dev/gpu$i"; done
install -m 0755 "$ROOT/npa_sop_tui/sandbox/fake_gpu_tools.py" "$SID/bin/fake_gpu_tools.py"
for tool in nvidia-smi health-checker deviceQuery vectorAdd simpleMultiGPU p2pBandwidthLatencyTest; do
  printf '#!/bin/sh\nexec /usr/bin/python3 /npa-lab/bin/fake_gpu_tools.py %s "$@"\n' "$tool" >"$SID/bin/$tool"
  chmod 0755 "$SID/bin/$tool"
done
printf '#!/bin/sh\necho "export PATH=/npa-lab/bin:/usr/local/bin:/usr/bin:/bin"\necho "export NPA_FAKE_GPU_DIR=/npa-lab/behaviour"\n' \
  >"$SID/task_prolog.sh"
chmod 0755 "$SID/task_prolog.sh"
if ! alive "$SID/slurmctld.pid"; then
  # Slurm 26.05's slurmd refuses to start without a cgroup filesystem unless told not to use one
  printf '%s\nCgroupPlugin=disabled\n' "$MARK" >"$SID_ROOT/etc/slurm/cgroup.conf"
  {
    lab_conf sidlab 16917 /npa-lab 16918-16919
    echo "# as the recipe makes them: main (the default) and hidden (for active checks)"
    echo "PartitionName=main Nodes=gpu-[0-1] Default=YES MaxTime=INFINITE State=UP"
    echo "PartitionName=hidden Nodes=gpu-[0-1] Hidden=YES MaxTime=INFINITE State=UP"
  } >"$SID_ROOT/etc/slurm/slurm.conf"
  printf 'AutoDetect=off\nNodeName=gpu-[0-1] Name=gpu Type=h100 File=/npa-lab/dev/gpu[0-7]\n' >"$SID_ROOT/etc/slurm/gres.conf"
  in_sid /usr/sbin/slurmctld
fi
for n in "${SID_NODES[@]}"; do
  install -d -m 0755 "$SID/spool/$n"
  # as Soperator's worker entrypoint starts slurmd: its instance ID and the recipe's Extra
  alive "$SID/slurmd-$n.pid" || in_sid /usr/sbin/slurmd -N "$n" --instance-id "i-lab-$n" \
    --extra "{\"nodeset\": \"${n%-*}\", \"pod\": \"$n\"}"
done
for _ in $(seq 60); do
  up=$(in_sid sinfo -h -N -o %T 2>/dev/null | grep -Ecx 'idle|mixed|allocated' || true)
  [[ $up -ge ${#SID_NODES[@]} ]] && break
  sleep 0.5
done
install -m 0600 "$LAB/host_ed25519" "$SID/host_ed25519"
in_sid install -d -o slurmops -g slurmops -m 700 /home/slurmops/.ssh
install -m 600 "$LAB/client_ed25519.pub" "$SID_ROOT/home/slurmops/.ssh/authorized_keys"
in_sid chown slurmops:slurmops /home/slurmops/.ssh/authorized_keys
sed -e "s/^Port 2222$/Port $SID_PORT/" -e "s#^HostKey .*#HostKey /npa-lab/host_ed25519#" \
  -e "s#^PidFile .*#PidFile /npa-lab/sshd.pid#" "$LAB/sshd_config" >"$SID/sshd_config"
grep -q "^\[127.0.0.1\]:$SID_PORT " "$LAB/known_hosts" \
  || echo "[127.0.0.1]:$SID_PORT $(cut -d' ' -f1,2 "$LAB/host_ed25519.pub")" >>"$LAB/known_hosts"
if ! alive "$SID/sshd.pid"; then
  in_sid install -d -m 0755 /run/sshd
  in_sid /usr/sbin/sshd -t -f /npa-lab/sshd_config
  in_sid /usr/sbin/sshd -f /npa-lab/sshd_config -E /npa-lab/sshd.log
  for _ in $(seq 50); do [[ -s $SID/sshd.pid ]] && break; sleep 0.1; done
fi
echo "substrate up: slurm on $NODE, sshd 127.0.0.1:2222 user slurmops, lab $LAB"
echo "GPU lab up: gpu-0, gpu-1 (SLURM_CONF=$GPU/slurm.conf), sshd 127.0.0.1:2223 user slurmops"
echo "Slurm $(in_sid sinfo -V | cut -d' ' -f2) lab up: gpu-0, gpu-1 in $SID_ROOT, sshd 127.0.0.1:$SID_PORT user slurmops"

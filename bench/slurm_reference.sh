#!/usr/bin/env bash
# The reference issue 18 measures berth against: a tuned Slurm 22.05 (Debian's slurm-wlm) on
# the same machine, in the same sitting, doing the same work as bench/job_throughput.py: N
# one-CPU jobs running `true`, submitted one at a time, on one node with this machine's CPUs.
# Prints the makespan (first sbatch to the last job done), jobs/s, and the CPU the Slurm
# daemons (slurmctld + slurmd + slurmstepd) spent per job, with the load average around it.
#
# Tuning, as in the issue: builtin scheduler, batch_sched_delay=0, a trivial Epilog (/bin/true:
# its completion message makes slurmctld schedule at once; without one a freed CPU waits for
# the once-a-second background pass, 2 jobs/s here), no accounting,
# proctrack/linuxproc, select/cons_tres by CPU. Needs root (the daemons) and the packages
# slurm-wlm and munge; writes /etc/slurm/slurm.conf, so run it on a scratch machine.
# Usage: bench/slurm_reference.sh [N=1000]
set -euo pipefail
N=${1:-1000}
command -v slurmctld >/dev/null || { echo "slurm-wlm is not installed (apt-get install slurm-wlm)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat >/etc/slurm/slurm.conf <<EOF2
ClusterName=bench
SlurmctldHost=$HOST
SlurmUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
Epilog=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
MaxJobCount=100000
MinJobAge=2
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=bench Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF2
pkill -x slurmctld || true
pkill -x slurmd || true
sleep 1
pgrep -x munged >/dev/null || { chown munge:munge /run/munge; su -s /bin/sh munge -c /usr/sbin/munged; }
slurmctld -c  # a clean start: no jobs kept from an earlier run
slurmd
for _ in $(seq 50); do sinfo -h -o %t 2>/dev/null | grep -qx idle && break; sleep 0.2; done
sinfo -h -o %t | grep -qx idle || { echo "the node did not come up"; exit 1; }

daemon_cpu() {  # clock ticks of slurmctld and slurmd (from their pid files) and their reaped children
  local t=0
  for p in $(cat /run/slurmctld.pid /run/slurmd.pid); do
    t=$((t + $(awk '{print $14 + $15 + $16 + $17}' /proc/$p/stat)))
  done
  echo $t
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cpu0=$(daemon_cpu)
start=$(date +%s.%N)
for i in $(seq "$N"); do sbatch -Q -c1 -o /dev/null --wrap true; done
submitted=$(date +%s.%N)
while [ -n "$(squeue -h -o %i)" ]; do sleep 0.05; done
end=$(date +%s.%N)
cpu1=$(daemon_cpu)
load1=$(cut -d' ' -f1-3 /proc/loadavg)
hz=$(getconf CLK_TCK)
python3 - "$N" "$start" "$submitted" "$end" "$cpu0" "$cpu1" "$hz" "$load0" "$load1" <<'EOF2'
import sys
n, start, submitted, end, cpu0, cpu1, hz = int(sys.argv[1]), *map(float, sys.argv[2:8])
make = end - start
print(f"slurm  N={n:<6} makespan {make:7.1f} s  {n / make:6.1f} jobs/s  submit {submitted - start:6.1f} s  "
      f"daemons' CPU {(cpu1 - cpu0) / hz / n * 1000:6.1f} ms/job  load {sys.argv[8]} -> {sys.argv[9]}")
EOF2

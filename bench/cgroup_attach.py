#!/usr/bin/env python3
"""Cgroup attach cost: what moving one process into a container's cgroups costs on this host.

Every container berth starts is put into its run's cgroups (agent/cgroups.h): one write of
its pid to cgroup.procs per controller hierarchy on cgroup v1 (cpu, cpuacct, memory, pids),
one on v2. Such a write takes cgroup_threadgroup_rwsem for writing, which waits for an RCU
grace period unless the semaphore was taken moments before: the first write of a start that
follows an idle gap pays it, the writes right after it do not. The container cannot run
before its writes are done, so this bounds how fast one slot of a node can turn over a short
Job (bench/job_throughput.py --stages: "pod bound -> pod running").

Each round is one container start: fork a sleeping process, then for each hierarchy berth
uses (found as agent/cgroups.h does: the mounts of /proc/self/mounts, the process's own
cgroup in each) mkdir a child cgroup and write the pid to its cgroup.procs. --gap-ms idles
between rounds, as the agent does between starts. Prints the median and p90 per hierarchy
and of the sum (what one start waits). Needs root; exits 77 otherwise.

Figures (2-core VM, kernel 6.18, cgroup v1 with cpu and cpuacct mounted apart; 20 rounds;
load average 3.4 with a build running), attach of one start, median / p90:
  --gap-ms 0     0.62 / 10.6 ms   (back to back: the grace period is rarely waited for)
  --gap-ms 50   11.95 / 19.4 ms   (the first hierarchy, cpu, 11.6 ms; the other three < 0.2 ms)
  --gap-ms 200  10.16 / 11.3 ms
So a container start in the agent's rhythm waited one grace period, ~10-12 ms, of the 54 ms
median "bound -> running" of bench/job_throughput.py (the shim's spawn-until-ready is most
of the rest); mkdir is < 0.12 ms.

The grace period is the global rwsem's, which a move of the whole thread group takes; a
thread moving itself alone (v1 `tasks`, "0") does not take it (Linux >= 6.0,
cgroup_procs_write_start), and a child just forked is single-threaded, so that moves the whole
process: berth's containers join that way on v1 (agent/shim/shim.h OpenCgroupProcs). --via
picks the way. Kernel 6.18, 20 rounds 200 ms apart (load 0.4-1.2), one start, median / p90:
  --via procs        10.10 / 13.01 ms
  --via self-tasks    0.56 /  0.81 ms
and bench/job_throughput.py, 200 x `sleep 1`, "pod bound -> pod running" median 23.5 -> 14.2
ms, makespan 1.042x -> 1.034x the ideal.

Usage: bench/cgroup_attach.py [--rounds 20] [--gap-ms 0] [--via procs|self-tasks]
"""

import argparse, os, statistics, sys, time

CONTROLLERS = ["cpu", "cpuacct", "memory", "pids"]


def hierarchies():
    """(name, directory of this process's cgroup) for each hierarchy berth writes."""
    own = {}
    for line in open("/proc/self/cgroup"):
        _, ctrls, path = line.rstrip("\n").split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            own[c] = path
    out = []
    for line in open("/proc/self/mounts"):
        dev, mnt, fstype, opts = line.split()[:4]
        if fstype == "cgroup2" and not out:
            v2 = (mnt, own.get(""))
        if fstype != "cgroup":
            continue
        for c in CONTROLLERS:
            if c in opts.split(",") and c in own:
                out.append((c, mnt + own[c]))
    if not out and "v2" in locals():
        out = [("unified", v2[0] + v2[1])]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--gap-ms", type=float, default=0,
                    help="idle time between starts (the agent starts a container every ~50 ms)")
    ap.add_argument("--via", choices=["procs", "self-tasks"], default="self-tasks",
                    help="procs: the parent writes the child's pid to cgroup.procs (the whole thread group);"
                    " self-tasks: the child writes 0 to tasks itself (what berth does on v1)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root to make cgroups", file=sys.stderr)
        sys.exit(77)
    hs = hierarchies()
    mk = {n: [] for n, _ in hs}
    at = {n: [] for n, _ in hs}
    for i in range(args.rounds):  # one round: one container start, every hierarchy
        time.sleep(args.gap_ms / 1000)
        dirs = []
        for name, base in hs:
            d = os.path.join(base, f"berth-attach-bench-{os.getpid()}-{i}")
            t = time.perf_counter()
            os.mkdir(d)
            mk[name].append(1000 * (time.perf_counter() - t))
            dirs.append(d)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            if args.via == "self-tasks":  # as berth's supervisor's child: itself, through tasks
                times = []
                for d in dirs:
                    t = time.perf_counter()
                    with open(os.path.join(d, "tasks"), "w") as f:
                        f.write("0")
                    times.append(1000 * (time.perf_counter() - t))
                os.write(w, " ".join(map(str, times)).encode())
            os.close(w)
            time.sleep(5)
            os._exit(0)
        os.close(w)
        if args.via == "self-tasks":
            times = [float(x) for x in os.read(r, 4096).split()]
        else:
            times = []
            for d in dirs:
                t = time.perf_counter()
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
                times.append(1000 * (time.perf_counter() - t))
        os.close(r)
        for (name, _), ms in zip(hs, times):
            at[name].append(ms)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        for d in dirs:
            os.rmdir(d)
    p90 = lambda xs: sorted(xs)[int(0.9 * len(xs))]
    print(f"{args.rounds} starts, {args.gap_ms:g} ms apart, via {args.via}")
    for name, _ in hs:
        print(f"{name:8} mkdir median {statistics.median(mk[name]):6.2f} ms   attach median "
              f"{statistics.median(at[name]):6.2f} ms  p90 {p90(at[name]):6.2f} ms")
    sums = [sum(at[n][i] for n, _ in hs) for i in range(args.rounds)]
    print(f"one start (every hierarchy): attach median {statistics.median(sums):6.2f} ms"
          f"  p90 {p90(sums):6.2f} ms  ({len(hs)} hierarchies)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Supervisor start: what starting one container's supervisor costs, exec'd or forked by the launcher.

The node agent starts one supervisor (`berth shim <run dir>`, agent/shim/shim.h) per container
run, and waits for its readiness byte. Two ways (agent/shim/launcher.h):
  exec      posix_spawn `berth shim <run dir>` (shim_client.h SpawnShim): the whole binary and
            its shared libraries are loaded and relocated again for every run;
  launcher  one `berth shim --launcher <padding>` started once; each run is one SOCK_SEQPACKET
            message (the run directory + SCM_RIGHTS {shim.log, the readiness pipe}), and the
            launcher forks the supervisor (LaunchShim).
Each round writes a launch record whose container waits for a file, starts its supervisor, waits
for readiness, and notes the real time to readiness, the supervisor's minor page faults at
readiness (/proc/<pid>/stat minflt; the container's are its own) and the CPU time of the start
until readiness (the supervisor's schedstat, plus the exec'd first process's rusage, or the
launcher's schedstat delta; the launcher's short-lived child between it and the supervisor is
not counted). Prints median and p90 of each per mode. Needs no root, nor cgroups: what the
agent adds around a start (cgroups, records) is not in these figures.

Figures (2-core VM, ~30 us per page fault, load 0.9, 50 rounds each, medians (p90)):
  exec      ready after 27.6 ms (34.3), CPU of the start 21.9 ms (26.8)
  launcher  ready after 16.7 ms (21.4), CPU of the start  8.2 ms (12.2)
The supervisor itself takes ~120 page faults either way (after a fork, the pages it writes
are copied and the binary's text is mapped in again); what the launcher saves is the exec:
loading and relocating the binary and its 18 libraries. In bench/job_throughput.py (kueue,
N=300, --stages, same sitting, load 0.8-2.5) "pod bound -> pod running" went from a median
of 88-94 ms (p90 105-112) to 67-76 ms (p90 82-92), and jobs/s from 14.9-15.7 to 17.5-19.0.

The launcher and supervisors run with LD_BIND_NOW, as the agent starts them (kBindNowEnv):
Debian's libstdc++, re2, fmt and yaml-cpp are not linked -z now, so without it each forked
supervisor bound those libraries' symbols again on first call. 30 rounds, paired runs (load
0.9-2.5): launcher mode with LD_BIND_NOW / --lazy-binding: page faults at readiness 85-86 /
112-114, CPU of the start 4.5-4.6 / 5.4 ms, ready after 8.4-8.8 / 9.9-10.7 ms.

berth runs its supervisors from the small static program it embeds (agent/shim/supervisor_image.h;
the same program is build/agent/shim/berth-supervisor): pass it as --berth to measure what berth
runs, and build/cmd/berth/berth to measure the fallback (supervisors as forks or execs of the whole
binary). 30 rounds, same sitting (load 0.6), medians, berth-supervisor (static-pie) / the berth
binary (with LD_BIND_NOW):
  exec      ready after  9.0 / 22.4 ms, 51 / 83 page faults, CPU of the start 5.2 / 18.3 ms
  launcher  ready after  7.0 /  8.7 ms, 52 / 84 page faults, CPU of the start 3.4 /  4.7 ms
The per-start figures are only part of the gain: the supervisor's and its sandbox init's whole
lives cost less too (bench/job_throughput.py, kueue, N = 600-1,000, paired runs: 48-60 against
57-69 ms of host CPU per Job).

Usage: bench/shim_start.py [--berth build/agent/shim/berth-supervisor] [--rounds 50] [--lazy-binding]
"""

import argparse, json, os, select, shutil, socket, statistics, sys, tempfile, time

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The supervisors' environment as the agent gives it (agent/shim/shim.h kDefaultPath,
# kBindNowEnv); --lazy-binding leaves LD_BIND_NOW out (how they were started before).
ENV = {"PATH": PATH, "LD_BIND_NOW": "1"}


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def runtime_ms(pid):
    """Time on CPU of a live process so far (/proc/<pid>/schedstat, ns)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e6


def write_launch(run_dir, log_path):
    os.makedirs(run_dir, exist_ok=True)
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    # The container waits for <run dir>/go, so that the supervisor is there to be measured.
    rec = {"version": 1, "container": "c", "run": 0, "argv": ["/bin/sh", "-c", "until [ -e go ]; do sleep 0.005; done"],
           "env": ["PATH=/usr/bin:/bin"], "workingDir": run_dir, "logPath": log_path,
           "startedAt": time.time_ns(), "devices": [], "cgroupDirs": []}
    with open(os.path.join(run_dir, "launch.json"), "w") as f:
        json.dump(rec, f)


def open_log(run_dir):
    return os.open(os.path.join(run_dir, "shim.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)


def ready_supervisor(r, run_dir, timeout=10):
    """Waits for the readiness byte; returns the supervisor's (pid, minor faults, CPU ms) then."""
    ready, _, _ = select.select([r], [], [], timeout)
    ok = bool(ready) and os.read(r, 1) == b"R"
    os.close(r)
    if not ok:
        sys.exit(f"no readiness (see {run_dir}/shim.log)")
    with open(os.path.join(run_dir, "shim.pid")) as f:
        pid = int(f.read().split()[0])
    return pid, int(stat_fields(pid)[7]), runtime_ms(pid)


def start_exec(berth, run_dir):
    """posix_spawn-like start (SpawnShim); the first process's CPU from its rusage."""
    log = open_log(run_dir)
    r, w = os.pipe2(os.O_CLOEXEC)
    t0 = time.perf_counter()
    pid = os.posix_spawn(berth, [berth, "shim", run_dir], ENV, setsid=True,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                                       (os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2),
                                       (os.POSIX_SPAWN_DUP2, w, 3)])
    os.close(w)
    os.close(log)
    _, faults, cpu = ready_supervisor(r, run_dir)
    t = (time.perf_counter() - t0) * 1000
    _, _, usage = os.wait4(pid, 0)
    return t, faults, cpu + (usage.ru_utime + usage.ru_stime) * 1000


class Launcher:
    def __init__(self, berth):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = theirs.fileno()
        pid = os.posix_spawn(berth, [berth, "shim", "--launcher", "-" * 4200], ENV, setsid=True,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                           (os.POSIX_SPAWN_DUP2, fd, 3)])
        theirs.close()
        self.pid = int(self.sock.recv(128).decode().split()[2])
        os.waitpid(pid, 0)

    def start(self, run_dir):
        """LaunchShim's request; the launcher's own CPU for it from its schedstat (the
        short-lived process between it and the supervisor is not counted)."""
        log = open_log(run_dir)
        r, w = os.pipe2(os.O_CLOEXEC)
        c0 = runtime_ms(self.pid)
        t0 = time.perf_counter()
        socket.send_fds(self.sock, [run_dir.encode()], [log, w])
        os.close(w)
        os.close(log)
        _, faults, cpu = ready_supervisor(r, run_dir)
        t = (time.perf_counter() - t0) * 1000
        return t, faults, cpu + runtime_ms(self.pid) - c0


def quantiles(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.9))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--berth", default=os.path.join(os.path.dirname(__file__), "..", "build", "agent", "shim", "berth-supervisor"))
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--lazy-binding", action="store_true",
                    help="start the launcher and supervisors without LD_BIND_NOW (symbols bound on first call)")
    args = ap.parse_args()
    if args.lazy_binding:
        del ENV["LD_BIND_NOW"]
    berth = os.path.abspath(args.berth)
    work = tempfile.mkdtemp(prefix="berth-shim-start-")
    try:
        results = {}
        for mode in ("exec", "launcher"):
            launcher = Launcher(berth) if mode == "launcher" else None
            rows = []
            for i in range(args.rounds):
                run_dir = os.path.join(work, mode, "runs", "c", str(i))
                write_launch(run_dir, os.path.join(work, mode, "logs", "c", f"{i}.log"))
                rows.append(launcher.start(run_dir) if launcher else start_exec(berth, run_dir))
                open(os.path.join(run_dir, "go"), "w").close()
                while not os.path.exists(os.path.join(run_dir, "exit.json")):
                    time.sleep(0.002)
                time.sleep(0.02)  # the supervisor exits
            results[mode] = rows
            if launcher:
                launcher.sock.close()
        print(f"load {' '.join(open('/proc/loadavg').read().split()[:3])}, {args.rounds} rounds, medians (p90):")
        for mode, rows in results.items():
            (tm, t9), (fm, f9), (cm, c9) = (quantiles([row[k] for row in rows]) for k in range(3))
            print(f"  {mode:8}  ready after {tm:6.2f} ms ({t9:6.2f})   supervisor's page faults {fm:4.0f} ({f9:4.0f})"
                  f"   CPU of the start {cm:5.2f} ms ({c9:5.2f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Job throughput: N short batch/v1 Jobs through one `berth server`, as issue 18's table.

For each N in --jobs and each mode in --modes, a fresh `berth server` (SQLite store, one
embedded node of --node-capacity), then:
  - kueue mode: a ResourceFlavor, a ClusterQueue whose nominalQuota is the node's capacity
    and a LocalQueue; each Job carries kueue.x-k8s.io/queue-name (created suspended by
    Kueue's webhook, admitted in turn);
  - plain mode: the Jobs are not queued; the scheduler places the pods as CPU frees up;
  - --prefill F: before the run, F finished Jobs (each with its Succeeded pod, bound to
    node-0) are stored, as a server that has been up for a while holds them;
then N Jobs (one pod: requests cpu 1, memory 100Mi; --command) created one at a time on one
keep-alive connection, and a watch on Jobs that notes each Job's Complete condition.
Prints per run: the makespan from the first create to the last Job Complete, jobs/s, the
ideal makespan (N x the command's seconds / the node's CPUs; 0 for `true`), the server's CPU
seconds per job, the host's busy CPU seconds per job (every process on the machine: the
container runtime's launcher, supervisors and sandbox inits, the Jobs' own commands, this
script, and anyone else's work), its RSS at the end, and the load average at start and end (the
machine is shared: compare runs of one sitting, and read CPU per job rather than wall time).

--stages also watches the Workloads and pods and prints, for each step of a Job's life, the
median and p90 time from the step before (created -> Workload created -> QuotaReserved ->
unsuspended -> pod created -> bound -> Running -> Succeeded -> Job Complete -> Workload
Finished), and how long the next admission took after a pod succeeded (its quota is given back
then): where a slot's turnover time goes. With a `sleep S` command the run line also prints the
time each slot turnover adds to the ideal: (makespan - ideal) x CPUs / N.

Plain mode is bounded by the scheduler's backoff, as in Kubernetes: pods that found no room
wait 1 s doubling to 10 s per failed attempt (kube-scheduler's podInitialBackoff /
podMaxBackoff), so N pods submitted at once onto 2 CPUs drain at a few jobs/s whatever the
server's cost. Kueue mode is the one the targets are for.

Figures (2-core VM shared with other engineers' builds; RelWithDebInfo; Kueue mode, `true`):
  before (commit 0988dc2), load 3.3-4.0:   N=100  16.1 jobs/s, 37.2 ms server CPU per job
                                           N=1000  6.2 jobs/s, 82.8 ms/job, RSS 227 MiB
  after the label index, the agent's host lookup and the watch encoding (978d807), load 1.8-2.8:
                                           N=100  14.0 jobs/s, 30.4 ms/job
                                           N=1000 14.6 jobs/s, 44.2 ms/job, RSS 211 MiB
  With 2,000 finished Jobs (and their Succeeded pods) stored first, N=200, same sitting, load 1.4-3.8:
    before (0988dc2)                       4.9 jobs/s, 228.8 ms/job, RSS 212 MiB
    after (main at 98e1cfc: also the agent's and scheduler's scans)
                                          13.9 jobs/s,  47.9 ms/job, RSS 190 MiB
  after the agent's finished-pod accounting and asynchronous Events (abd9359), load 1.7-3.0:
                                           N=100  22.2 jobs/s, 29.3 ms/job, RSS  60 MiB
                                           N=1000 21.6 jobs/s, 30.7 ms/job, RSS 308 MiB
    with 2,000 finished Jobs stored first, N=200: 23.4 jobs/s, 30.4 ms/job, RSS 250 MiB
    --command "sleep 1", N=200: makespan 105.3 s, 1.053x the ideal 100 s
    --stages, N=1000, medians: quota reserved -> unsuspended 2.6 ms, -> pod created 2.5,
      -> bound 3.6, bound -> running 54 (p90 77; the shim's spawn and one cgroup attach's RCU
      grace period, bench/cgroup_attach.py), running -> succeeded 4.3, -> Job complete 2.8,
      -> Workload finished 3.4, Workload finished -> next admission 3.4: a slot turns over in
      ~75 ms, 74 % of it the container start.
    N=2000 (9a52d99, load 0.6-2.6): 25.7 jobs/s, 27.7 ms/job, RSS 525 MiB
    N=10000 (same build, load 0.3-3.4 with a compile running part of the time): 16.9 jobs/s,
      43.6 ms/job, RSS 1813 MiB. Cost per job grows with what is stored: 1.42x from N=1000.
    Memory: the N=2000 store holds 36,050 objects: 29,997 Events (15 per Job, 673 B of JSON
    each) and 2,000 each of Jobs, Pods and Workloads (1.5-1.9 KB each), 29 MiB of JSON in
    all. A server restarted on it has 372 MiB RSS; on a copy without the Events, 221 MiB.
    So each Event costs ~5 KiB resident and each Job/Pod/Workload ~27 KiB, 7-15x their
    JSON (decoded copies in the store's and the controllers' caches).
  after the in-process client hands the store's objects to the informers (watch events and
  ListShared pages: one decoded copy per object revision), load 1.0-2.6:
                                           N=1000 18.8 jobs/s, 28.8 ms/job, RSS 249 MiB
                                           N=2000 16.1 jobs/s, 38.0 ms/job, RSS 428 MiB (was 525)
    A server restarted on that N=2000 store (36,051 objects, 30.6 MB of JSON), RSS 30 s
    after start: 260 MiB, against 364 MiB when only watch events were shared and 372 MiB
    before: ~6 KB resident per stored object, about one decoded copy (nlohmann::json's
    maps cost ~7x the JSON text).
    Server CPU per job by component (perf, N=1000, dwarf call graphs): the API write path
    the controllers' requests take 45 % (SQLite commits 14 %, admission 9 %), Event creates
    17 % (~15 Events per Job, each a full API create), the node agent 15 %, the Job
    controller 14 %, Kueue's job reconciler 10 %, start-time estimates 7 %.
  Container starts off the agent's loop (8317729; the loop had waited ~24 ms per start for the
  supervisor's readiness, which held every other pod's start and exit behind it), N=1000,
  --stages, paired runs before / after (load 1.9-4.5):
    slot held 88.2 / 82.7 and 83.3 / 65.6 ms, jobs/s 20.0 / 20.6 and 20.6 / 25.9;
    pod running -> succeeded p90 37-40 ms before, 10-12.5 ms after (exits no longer wait
    behind a start). The agent's own wait from a pod's event to its sync: 16.7 -> 0.5 ms
    median; the start itself (handed over -> ready seen) is then 41 ms, CPU-bound: in a
    system-wide profile (perf -a) the launcher, supervisors, sandbox inits and their shells
    take ~51 % of the machine's CPU against the server's ~32 %.
  The launcher and supervisors started with LD_BIND_NOW (279f649; Debian's libstdc++, re2, fmt
  and yaml-cpp are not -z now, so every forked supervisor bound their symbols again: ~8 % of
  its CPU in the profile above), N=400, three pairs before / after (load 1.8-3.6): host CPU
  71.9 / 62.3, 66.4 / 64.4, 67.6 / 62.5 ms/job; 24.4 / 27.6, 25.9 / 26.3, 25.5 / 27.4 jobs/s.
  Same build, one sitting (load 3.3-5.0): N=100 27.7 jobs/s, 26.8 ms/job server, 59.8 host;
    N=1000 27.0 jobs/s, 27.8 / 61.8 ms/job, RSS 230 MiB; N=1000 with 10,000 finished Jobs
    stored first 25.9 jobs/s, 30.8 / 64.8 ms/job (1.11x), RSS 508 MiB; N=10000 (--progress 60,
    a little earlier, load 2.5-5.4) 24.4 jobs/s, makespan 409.7 s, 35.8 / 68.9 ms/job, windows
    after the submission 26.9, 31.7, 31.3, 28.3, 29.1 ms/job, RSS 1,324 MiB; 200 x `sleep 1`
    104.9 s, 1.049x the ideal (49 ms per slot turnover).
  Tried and dropped (same sitting, paired): jemalloc or tcmalloc as the allocator (LD_PRELOAD
    into the server: 12-20 % less server CPU and 16 % less RSS at N=600-2000, but linked into
    the binary every forked supervisor takes ~70 more page faults, 174 against 107, and ~2 ms
    more CPU per start, so the host's CPU per Job went up); glibc malloc tunables (tcache
    count, top pad, trim and mmap thresholds: within noise); a group-commit leader that waits
    300 or 1,000 us for more writes before committing (no fewer commits, slower); MADV_COLLAPSE
    of the launcher's text into huge pages (EINVAL on this kernel's file system).
  Supervisors, sandbox inits and the launcher run from the small static supervisor program
    berth embeds (agent/shim/supervisor_image.h) instead of forks of the whole binary; before
    is the LD_BIND_NOW build above. Paired, N=600, three pairs (load 2.3-4.1): host CPU
    57.3 / 52.2, 58.8 / 52.3, 62.3 / 48.2 ms/job; 29.8 / 32.1, 29.1 / 31.5, 27.8 / 35.0 jobs/s.
    N=1000, two pairs (load 0.9-4.7): 62.8 / 59.7, 69.3 / 53.2 ms/job host; 27.1 / 28.5,
    24.4 / 31.3 jobs/s; server CPU within noise (27.4-31.2 either way). Whole-machine profile
    (N=800): server 40 %, supervisors 16 % (23-25 before), sandbox inits 10 %, the Jobs' sh 7 %,
    launcher 6.5 % (8-10), idle 15 %.
    After (-static-pie): N=100 31.4 jobs/s, 27.3 / 53.4 ms/job; N=1000 30.9 jobs/s, 28.5 / 53.8,
    and with 10,000 finished Jobs stored first 32.9 jobs/s, 26.7 / 50.2 (0.94x; one loaded
    sitting earlier, load 5.7-7.2: 1.41x), RSS 536 MiB; N=10000 (--progress 60, load 1.0-6.1)
    27.2 jobs/s, makespan 367.9 s, 34.0 / 60.7 ms/job, windows 30.6, 31.8, 31.7, 28.0, 28.4,
    RSS 1,299 MiB; 200 x `sleep 1` 104.4-104.9 s, 1.044-1.049x (44-49 ms per slot turnover;
    --stages medians: bound -> running 22.9 ms, running -> succeeded 1008.2, control plane
    8.6 while the quota is held, pod succeeded -> next admission 4.9).
    jemalloc preloaded into the server again, now that supervisors are not forks of it, three
    pairs at N=600: server CPU 28.6 / 33.9, 26.0 / 27.8, 29.2 / 28.9 ms/job, RSS 151-153 /
    167-169 MiB: 9 % less RSS, CPU within noise; not adopted.
  Tuned Slurm 22.05 on the same machine (issue 18): 14.2 jobs/s at N=1000.
  A later, faster 2-core machine (2026-12-06), bench/slurm_reference.sh in the same sitting,
    N=1000, two pairs: berth 52.7 / Slurm 43.6 jobs/s (load 0.7-3.4), 39.2 / 39.3 (load
    2.9-3.8); server CPU 17.2 and 22.8 ms/job against Slurm's daemons' 9.0 and 10.0; host CPU
    25.3, 34.2 ms/job. Without a (trivial) Epilog Slurm did 2.0 jobs/s: a freed CPU waited for
    its once-a-second background pass. N=600 quiet (load 0.7-2.4) 51-67 jobs/s, 14-16 ms/job.
    200 x `sleep 1`: 103.6 s, 1.036x (36 ms per slot turnover).
    Growth (load 0.7-5.8): N=100 53.3 jobs/s, 16.8 / 24.7 ms/job; N=10000 (--progress 60)
    49.1 jobs/s, makespan 203.8 s, 19.6 / 27.6 ms/job whole run, windows 16.4, 17.6, 17.1,
    RSS 1,296 MiB; N=1000 with 10,000 finished Jobs stored first 52.3 jobs/s, 16.9 ms/job
    against 17.7 right after on an empty server (0.95x), RSS 599 MiB (prefill took 80 s).
    SQLite synchronous=NORMAL against FULL, two pairs at N=600: server CPU 13.3 / 14.3 and
    16.4 / 16.3 ms/job: the fsync per commit costs no measurable server CPU.
    In-process writes handing their object over decoded (no dump + parse), 8 pairs at N=400:
    medians 17.05 / 16.75 ms/job (within noise; dump + parse of a 2.3 KB pod 40 us against
    15 us for the two copies that replace it).
  Container starts without the global cgroup lock and with the records' fsyncs off the
    critical path (2e1f517, cb4e505, af918b1; docs/architecture.md), 200 x `sleep 1`, --stages
    medians, one sitting (load 0.2-1.4): "pod bound -> pod running" 23.5 (the session's first
    build) -> 14.2 (cgroup v1 `tasks`: bench/cgroup_attach.py --via) -> 10.9 (launch.json synced by
    the supervisor during the sandbox setup) -> 9.9-10.3 ms (pid records unsynced, exit.json synced
    after the watchers are told); makespan 1.042x -> 1.034x -> 1.029x -> 1.033x, 1.033x. Paired at
    N=100 later, the machine slower (server CPU 32-34 ms/job against 27): first build 1.052x,
    1.050x; last 1.036x, 1.038x: ~14 ms less per slot turnover. The rest, medians: exit -> pod
    Succeeded ~4 ms (of it ~1.4 ms the sandbox's namespaces torn down before its init's exit is
    reported), the control plane ~10-13 ms while the quota is held and ~6-7 ms to the next
    admission: seven API writes in a row (pod status, Job status, Workload finished, the next
    Workload admitted, its Job unsuspended, its pod created, bound), 1.5-2 ms each. Dropping
    every Event write (an experiment, two pairs) changed neither the turnover nor the control
    plane's stages: the Events (15 per Job) do not delay the chain.

--stages ends with a slot's turnover split: how long the quota is held (quota reserved ->
Workload finished), of which the container runtime's part (pod bound -> pod succeeded) and the
control plane's (the rest), then the next admission: the control plane's share is what berth's
own speed decides; the runtime's is bounded by the host (bench/cgroup_attach.py).

--writes prints the API writes the server accepted per Job, by verb and resource
(apiserver_request_total); --progress S prints, every S seconds, the Jobs completed in that
window and the server CPU per Job then (a cost that grows with what is stored shows within one
run); --idle S idles S seconds after the run and prints the server's CPU share meanwhile (what
the finished Jobs cost when nothing happens).

  N=4000, --progress 30 (main at 3026fda, load 1.6-3.1; a build ran alongside): the first
    window, which holds the creation of all 4,000 Jobs and their pending Workloads, 46.2 ms/job;
    the next seven 38.6, 35.8, 36.6, 34.4, 37.1, 32.9, 31.4 ms/job: flat while 4,000 finished
    Jobs, their pods, Workloads and 60,000 Events pile up. The whole-run figure (41.0 ms/job)
    is higher than any later window because the submission burst is in it.
  --writes, N=200: 34.05 accepted writes per Job: 14.98 Event creates, 6.01 Job status
    updates, 5.20 Workload status, 2.75 pod status, one each of the Job/pod/Workload creates,
    the Job's unsuspend and the pod's binding (PUT pods).
  --idle 90 after N=2000: server CPU 2.74 % (0.5 % with nothing stored). A profile of the idle
    server put 56 % of it in the Job controller's 30 s resync, which rewrote every finished
    Job's status (a JobCondition given observedGeneration, which the API server prunes: 4,001
    no-op PUTs within 45 s of a restart). With the condition kinds told apart: 1.33 % on the
    same store, about half of it still the 30 s resync reading every Job and its pods again;
    with the job-kind resync at controller-runtime's 10 h as well: 0.69 % (0.46 % with nothing
    stored; the rest is the node agent's 2 s housekeeping over its pods, bounded by the
    terminated-pod GC's 12,500). --writes, N=300, after the fix: 32.2 writes per Job, Job status
    updates 3.76 (was 6.01).
  --command "sleep 1", N=200, with the shim launcher (main at 656f102, load 2.2 -> 0.4): makespan
    106.5 s, 1.065x the ideal (1.060x at load 4.5 -> 1.0): each slot turnover adds ~65 ms.
    Medians: quota reserved -> unsuspended 2.1 ms, -> pod created 1.6, -> bound 2.6, bound ->
    running 38.5, running -> succeeded 1010.5 (10 ms past the sleep), -> Job complete 2.0,
    -> Workload finished 2.1, pod succeeded -> next admission 6.3 (p90 8.8): ~50 ms of a
    turnover is the container runtime, ~10 ms the control plane. "bound -> running" in parts
    (timestamps in the agent and the supervisor, N=40 `sleep 0.5`, medians): the agent's
    cgroups and launch record (fsync) 2.4 ms, the launcher's fork until the supervisor runs
    6.3 ms, reading the launch record 1.5 ms, the sandbox and exec until the exec report
    13.4 ms, the supervisor's records (fsync) until ready 2.6 ms; the status write and
    watches the rest. Most of it is page faults of the 575 MB binary in the forked
    supervisor and its child (~30 us each on this VM), not work.
  N=10000, --progress 60 (10,000 Jobs submitted at once, so up to ~9,000 Workloads pending):
    before (8b2f17f, load 3.0-5.0): 16.2 jobs/s, 42.4 ms/job, windows 55.9 (the submission),
      41.1, 35.5, 33.9, 37.6, 44.3, 37.3, 34.0, 35.1 ms/job. perf in the second window against an
      N=1000 run: +6 ms/job in the Kueue queue: every NoFit head set aside the ~8,000 equal
      Workloads behind it one node at a time, every finish moved them all back, and every
      finish requeued every ClusterQueue.
    after the QueueManager's shape classes and the cohort-scoped requeue (7d33e1d, same
      sitting, load 2.3-4.5): 18.9 jobs/s, 35.6 ms/job, windows 32.8, 26.5, 29.5, 33.9, 29.4,
      33.2, 29.9, 35.9 ms/job; N=100 29.7 jobs/s, 19.9 ms/job; N=1000 25.1 jobs/s, 25.0 ms/job;
      N=2000 22.1 jobs/s, 30.6 ms/job. What still grows (perf, late window against N=1000): the
      node agent's 2 s housekeeping pass over every pod on the node (~50 ms a pass with 7,000
      finished pods, ~2.6 ms/job), start-time estimates over the backlog (+1.5 ms/job), and
      ~10-20 % on everything else at 1.3 GB of RSS.
    after the agent knows an unchanged finished pod by its cached revision's address and the
      pod GC's check reads an index count (1a91c42, load 1.0-3.9): N=10000 20.5 jobs/s,
      34.9 ms/job, makespan 486.9 s (was 529.7), windows 34.7 (the submission), 28.4, 29.5,
      31.4, 32.7, 29.2, 30.1 ms/job; the agent's loop outside syncing pods is ~1.4 % of a late
      window's samples. Same build on an idle machine (load 0.1-0.3): N=100 32.1 / 33.1 /
      29.1 jobs/s, 19.4 / 18.8 / 21.3 ms/job; N=1000 20.5 jobs/s, 32.7 ms/job (the server's
      own load, 2.9 at the end). --jobs 20 --prefill 10000 --idle 60, paired before/after/
      before/after: 3.15 / 1.63 / 2.95 / 2.02 % of a CPU (idle profile before the pod GC change:
      a fifth of it the pod GC copying every pod's timestamp and name every 20 s). With the pod
      GC's index count too (1a91c42), paired with the agent fix alone: 1.50 / 1.27 % against
      1.55 % (load 3.9-4.2): a small gain, within the runs' spread.
    after sub-second runs are learned from their 0 s samples (6ad47ed): N=3000 --writes,
      workloads/status writes per Job 6.50 -> 5.17 (4.73 with --start-estimate-period=0): the
      history had learned 1 s for a ~50 ms run (conditions carry whole seconds and the 0 s
      samples were dropped), estimated the backlog's waits at up to ~40 min and rewrote them as
      they slipped; perf before: 73 % of the estimate pass's samples were its writes, 8 % the
      replay. Paired N=100 / N=1000, before and after, twice (load 0.6-2.7): before 23.9 / 29.2
      and 24.2 / 23.2 ms/job, after 27.7 / 27.9 and 20.8 / 21.1 ms/job (within the spread).
      N=10000 (load 3.2-4.1, busier than the last sitting): 15.7 jobs/s, 34.6 ms/job, windows
      34.9 (the submission), 28.3, 29.3, 33.5, 36.3, 29.6, 31.4, 28.1, 27.3, 28.7 ms/job, RSS
      1,333 MiB.
  Thread hand-offs (2026-12-06, N=600 unless noted; context switches and fdatasyncs of the
    server process from `perf stat -e context-switches,syscalls:sys_enter_fdatasync -p <pid>`,
    which count the same on a busy or an idle machine, unlike CPU time): ~400 context switches
    and ~19 fdatasyncs per Kueue-managed Job; per-thread counts (/proc/<pid>/task/*/status
    with gdb stacks) put them in the Event senders' commit waits, the garbage collector's
    wake per write, informers (reflector -> dispatch thread), work queues and the watch pump.
    - Garbage collector without Events (upstream's ignoredResources) and draining only the
      watches that signalled: 399-404 -> 386-391 switches per Job; CPU within the spread;
      RSS 363 -> 346 MiB at N=2000 (the graph no longer holds a node per Event).
    - Informers deliver a watch event on the reflector's thread when nothing is queued
      before it: 385 -> 357-358 switches per Job; five interleaved pairs, before / after:
      server CPU 17.0 / 15.4, 16.4 / 15.4, 16.4 / 15.9, 15.6 / 14.5, 15.2 / 15.0 ms/job
      (median 16.4 -> 15.4), jobs/s 58.3 / 67.6, 64.0 / 66.8, 62.1 / 63.8, 67.8 / 72.2,
      69.0 / 68.0 (load 2-4, the runs themselves).
    - jemalloc linked into the berth binary (docs/architecture.md, "Memory allocator"), glibc /
      jemalloc: N=6000 --progress 20: 17.4 / 15.1 ms/job, 64.9 / 71.6 jobs/s, RSS 770 / 657 MiB,
      windows after the submission 13.9-14.4 / 12.0-12.1 ms/job (preloaded instead: jemalloc
      15.1, tcmalloc 14.9 ms/job against glibc 16.9); N=1000, four interleaved pairs: 15.1 /
      14.5, 15.3 / 14.2, 15.0 / 14.1, 15.3 / 14.2 ms/job, jobs/s level (68-73); N=100 14.6 /
      12.6 ms/job (load 2.5-6, a review running beside).
    - Tried: the garbage collector's passes at least 20 ms apart (one pass per window instead
      of a wake per write): 359 -> 345 switches per Job, but five interleaved pairs gave the
      same server CPU (medians 14.4 / 14.4 ms/job, jobs/s 72.3 / 70.1): not kept.
    - Tried: Event creates acknowledged before their commit (an experiment that let them ride
      the next writer's commit): 19.2 -> 13.1 fdatasyncs and 399 -> 347 switches per Job,
      server CPU 17.0 / 16.0, 15.3 / 15.1, 15.6 / 15.7 ms/job in three pairs: within the
      spread, and it would need the store to acknowledge a write before it is durable.

Usage: bench/job_throughput.py [--berth build/cmd/berth/berth] [--jobs 100,1000]
                               [--modes kueue,plain] [--command true|"sleep 1"] [--prefill 0]
                               [--stages] [--writes] [--progress S] [--idle S] [--server-args "..."]
"""

import argparse, http.client, json, os, re, shutil, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import Client, machine_busy, proc_stat_cpu, rss_kib, server_port, wait_for  # noqa: E402

NS = "bench"
QUEUE = "lq"


def job(name, command, queue, ttl=None):
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    j = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS, "labels": labels},
         "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [{
             "name": "c", "image": "busybox", "command": ["sh", "-c", command],
             "resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}]}}}}
    if ttl is not None:
        j["spec"]["ttlSecondsAfterFinished"] = ttl
    return j


def must(result, what):
    status, body = result
    if status not in (200, 201):
        raise SystemExit(f"{what}: {status} {body[:300]!r}")
    return json.loads(body)


def setup_kueue(c, cpu, memory):
    must(c.do("POST", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", json.dumps(
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}})), "flavor")
    must(c.do("POST", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", json.dumps({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [{
            "name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu},
                                             {"name": "memory", "nominalQuota": memory}]}]}]}})), "cluster queue")
    must(c.do("POST", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/localqueues", json.dumps({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": QUEUE, "namespace": NS},
        "spec": {"clusterQueue": "cq"}})), "local queue")


def prefill(c, count):
    """`count` finished Jobs, each with a Succeeded pod on node-0 carrying its labels, written through
    the API."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for i in range(count):
        name = f"done-{i}"
        j = job(name, "true", None)
        j["spec"]["suspend"] = True  # no pod is created for it; its pod is written below
        created = must(c.do("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", json.dumps(j)), "prefill job")
        created["status"] = {"startTime": now, "completionTime": now, "succeeded": 1, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
             "lastTransitionTime": now, "lastProbeTime": now},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached",
             "lastTransitionTime": now, "lastProbeTime": now}]}
        created["metadata"].pop("resourceVersion", None)  # unconditional: the Job controller writes too
        must(c.do("PUT", f"/apis/batch/v1/namespaces/{NS}/jobs/{name}/status", json.dumps(created)), "prefill status")
        uid = created["metadata"]["uid"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{name}-p", "namespace": NS,
            "labels": {"batch.kubernetes.io/job-name": name, "job-name": name,
                       "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid}},
            # No ownerReference: the Job is suspended, and its controller would delete a pod it owns.
            "spec": dict(j["spec"]["template"]["spec"], nodeName="node-0")}
        p = must(c.do("POST", f"/api/v1/namespaces/{NS}/pods", json.dumps(pod)), "prefill pod")
        p["status"] = {"phase": "Succeeded", "startTime": now, "containerStatuses": [{
            "name": "c", "image": "busybox", "imageID": "", "ready": False, "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}}]}
        p["metadata"].pop("resourceVersion", None)  # unconditional: the node agent writes too
        must(c.do("PUT", f"/api/v1/namespaces/{NS}/pods/{name}-p/status", json.dumps(p)), "prefill pod status")


def watch_completions(port, names, done_at, finished):
    """Notes the monotonic time each named Job is first seen Complete; sets `finished` when all are."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    conn.request("GET", f"/apis/batch/v1/namespaces/{NS}/jobs?watch=true&allowWatchBookmarks=false")
    resp = conn.getresponse()
    buf = b""
    while len(done_at) < len(names):
        data = resp.read1(65536)
        if not data:
            break
        buf += data
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            obj = json.loads(line)["object"]
            name = obj.get("metadata", {}).get("name")
            if name in names and name not in done_at and any(
                    c.get("type") == "Complete" and c.get("status") == "True"
                    for c in obj.get("status", {}).get("conditions", [])):
                done_at[name] = time.monotonic()
    finished.set()


STAGES = ["job created", "workload created", "quota reserved", "job unsuspended", "pod created", "pod bound",
          "pod running", "pod succeeded", "job complete", "workload finished"]


def watch_stages(port, path, note):
    """Feeds every object of a watch on `path` to `note(obj)` until the connection ends."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    conn.request("GET", path + "?watch=true&allowWatchBookmarks=false")
    resp = conn.getresponse()
    buf = b""
    while True:
        data = resp.read1(65536)
        if not data:
            return
        buf += data
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if line.strip():
                note(json.loads(line)["object"])


def start_stage_watches(port, seen):
    """seen[(job name, stage)] = monotonic time the stage was first observed."""
    lock = threading.Lock()

    def mark(job_name, stage):
        with lock:
            seen.setdefault((job_name, stage), time.monotonic())

    def true_conditions(o):
        return {c.get("type") for c in o.get("status", {}).get("conditions", []) if c.get("status") == "True"}

    def on_job(o):
        name = o["metadata"]["name"]
        mark(name, "job created")
        if o["spec"].get("suspend") is False:
            mark(name, "job unsuspended")
        if "Complete" in true_conditions(o):
            mark(name, "job complete")

    def on_workload(o):
        owners = o["metadata"].get("ownerReferences", [])
        if not owners:
            return
        name, conds = owners[0]["name"], true_conditions(o)
        mark(name, "workload created")
        if "QuotaReserved" in conds:
            mark(name, "quota reserved")
        if "Finished" in conds:
            mark(name, "workload finished")

    def on_pod(o):
        name = o["metadata"].get("labels", {}).get("batch.kubernetes.io/job-name")
        if not name:
            return
        mark(name, "pod created")
        if o["spec"].get("nodeName"):
            mark(name, "pod bound")
        phase = o.get("status", {}).get("phase")
        if phase in ("Running", "Succeeded"):
            mark(name, "pod running")  # a pod may be seen Succeeded without a Running write
        if phase == "Succeeded":
            mark(name, "pod succeeded")

    for path, fn in [(f"/apis/batch/v1/namespaces/{NS}/jobs", on_job),
                     (f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads", on_workload),
                     (f"/api/v1/namespaces/{NS}/pods", on_pod)]:
        threading.Thread(target=watch_stages, args=(port, path, fn), daemon=True).start()


def print_stages(names, seen):
    def quantiles(values):
        values = sorted(values)
        return (f"median {values[len(values) // 2]:7.1f} ms  p90 {values[int(0.9 * len(values))]:7.1f} ms"
                f"  n={len(values)}")

    steady = names[len(names) // 10:]  # past the first tenth: the queue is full
    for before, after in zip(STAGES, STAGES[1:]):
        d = [1000 * (seen[(j, after)] - seen[(j, before)]) for j in steady if (j, before) in seen and (j, after) in seen]
        if d:
            print(f"    {before:18} -> {after:18} {quantiles(d)}")
    # A slot's turnover: the first admission after each pod succeeded. The quota comes back when
    # the Job's pod succeeds (Kueue's reclaimablePods, then the Job's finish), which can be before
    # the Workload's Finished condition is seen. Every Job counts here, not only the steady ones:
    # Jobs created in the same second are admitted in uid order (the heap's tie-break), not in
    # creation order, so leaving some out would pair a free with another slot's admission.
    freed = sorted(seen[(j, "pod succeeded")] for j in names if (j, "pod succeeded") in seen)
    reserved = sorted(t for t in (seen.get((j, "quota reserved")) for j in names) if t and freed and t > freed[0])
    d, k = [], 0
    for f in freed:
        while k < len(reserved) and reserved[k] < f:
            k += 1
        if k < len(reserved):
            d.append(1000 * (reserved[k] - f))
            k += 1
    if d:
        print(f"    {'pod succeeded':18} -> {'next admission':18} {quantiles(d)}")
    # A slot's turnover split between the container runtime (bound -> succeeded: the supervisor,
    # the sandbox, the process itself) and the control plane (the rest of the time the quota is held).
    held, runtime, control = [], [], []
    for j in steady:
        keys = [(j, s) for s in ("quota reserved", "pod bound", "pod succeeded", "workload finished")]
        if all(k in seen for k in keys):
            reserved_at, bound, succeeded, finished_at = (seen[k] for k in keys)
            held.append(1000 * (finished_at - reserved_at))
            runtime.append(1000 * (succeeded - bound))
            control.append(held[-1] - runtime[-1])
    if held:
        print(f"    slot held (quota reserved -> workload finished) {quantiles(held)}")
        print(f"      of it the container runtime (pod bound -> succeeded) {quantiles(runtime)}")
        print(f"      of it the control plane (the rest)                  {quantiles(control)}"
              + (f"; then the next admission, median {sorted(d)[len(d) // 2]:.1f} ms" if d else ""))


def stored_counts(c, mode):
    """How many Jobs, pods, Workloads and Events the server holds now ("?" when a LIST fails)."""
    paths = {"jobs": f"/apis/batch/v1/namespaces/{NS}/jobs", "pods": f"/api/v1/namespaces/{NS}/pods",
             "events": f"/api/v1/namespaces/{NS}/events"}
    if mode == "kueue":
        paths["workloads"] = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads"
    out = []
    for what, path in paths.items():
        status, body = c.do("GET", path + "?limit=1")
        count = "?"
        if status == 200:
            meta = json.loads(body).get("metadata", {})
            count = len(json.loads(body).get("items", [])) + meta.get("remainingItemCount", 0)
        out.append(f"{what} {count}")
    return ", ".join(out)


def report_progress(every, pid, done_at, finished, n, timeout, c, mode):
    """Every `every` seconds until all Jobs are Complete: the Jobs completed in that window, the
    server's CPU per completed Job, its RSS and what it stores, so a cost that grows with what is
    stored (or with what was ever run, when --ttl deletes finished Jobs) shows within one run."""
    counter = Client(c.port)
    deadline = time.monotonic() + timeout
    done, cpu = len(done_at), proc_stat_cpu(pid)
    while not finished.wait(every) and time.monotonic() < deadline:
        now_done, now_cpu = len(done_at), proc_stat_cpu(pid)
        jobs = now_done - done
        per_job = f"{1000 * (now_cpu - cpu) / jobs:7.1f} ms/job" if jobs else "      - ms/job"
        print(f"    progress {now_done:6}/{n}  window {jobs:5} jobs  server CPU {per_job}  RSS "
              f"{rss_kib(pid) / 1024:6.0f} MiB  load {open('/proc/loadavg').read().split()[0]}  stored: "
              f"{stored_counts(counter, mode)}", flush=True)
        done, cpu = now_done, now_cpu


WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def write_counts(c):
    """{(verb, resource, subresource): count} of the server's accepted writes (apiserver_request_total)."""
    status, body = c.do("GET", "/metrics")
    if status != 200:  # the keep-alive connection idled out during a long run: Client reconnects
        status, body = c.do("GET", "/metrics")
    if status != 200:
        raise SystemExit(f"GET /metrics: {status}")
    counts = {}
    for line in body.decode().splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line[:line.rindex("}")]))
        if labels.get("verb") not in WRITE_VERBS or not labels.get("code", "").startswith("2"):
            continue
        key = (labels["verb"], labels.get("resource", ""), labels.get("subresource", ""))
        counts[key] = counts.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return counts


def print_writes(before, after, n):
    """Accepted writes per Job during the run, by verb and resource: what each Job costs the store."""
    diff = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0) > 0}
    print(f"    writes per job {sum(diff.values()) / n:5.2f}")
    for (verb, resource, sub), v in sorted(diff.items(), key=lambda kv: -kv[1]):
        print(f"      {verb:6} {resource + ('/' + sub if sub else ''):28} {v / n:5.2f}")


def run(args, mode, n):
    work = tempfile.mkdtemp(prefix="berth-jobs-")
    kubeconfig = os.path.join(work, "data", "kubeconfig")
    log = open(os.path.join(work, "server.log"), "ab")
    server = subprocess.Popen([args.berth, "server", "--port", "0", "--data-dir", os.path.join(work, "data"),
                               "--nodes", "1", "--node-capacity", args.node_capacity,
                               "--shutdown-grace-period", "0", "--insecure-http", "--eviction-hard", "nodefs.available<1Gi"] + args.server_args.split(), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: os.path.exists(kubeconfig) and server_port(kubeconfig), 30, "the kubeconfig")
        port = server_port(kubeconfig)
        c = Client(port)
        wait_for(lambda: c.do("GET", "/api/v1/nodes/node-0")[0] == 200, 30, "node-0")
        must(c.do("POST", "/api/v1/namespaces", json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})), "namespace")
        caps = dict(kv.split("=") for kv in args.node_capacity.split(","))
        if mode == "kueue":
            setup_kueue(c, caps["cpu"], caps["memory"])
        t = time.monotonic()
        prefill(c, args.prefill)
        prefill_s = time.monotonic() - t
        time.sleep(2)  # let the controllers settle on what was prefilled

        names = [f"j-{i}" for i in range(n)]
        done_at, finished = {}, threading.Event()
        watcher = threading.Thread(target=watch_completions, args=(port, set(names), done_at, finished), daemon=True)
        watcher.start()
        seen = {}
        if args.stages:
            start_stage_watches(port, seen)
        time.sleep(0.5)
        load_start = open("/proc/loadavg").read().split()[:3]
        cpu0 = proc_stat_cpu(server.pid)
        busy0 = machine_busy()[0]
        writes0 = write_counts(c) if args.writes else None
        start = time.monotonic()
        progress = None
        if args.progress:
            progress = threading.Thread(target=report_progress,
                                        args=(args.progress, server.pid, done_at, finished, n, args.timeout, c, mode))
            progress.start()
        for i, name in enumerate(names):
            while args.in_flight and i - len(done_at) >= args.in_flight:
                time.sleep(0.002)
            must(c.do("POST", f"/apis/batch/v1/namespaces/{NS}/jobs",
                      json.dumps(job(name, args.command, QUEUE if mode == "kueue" else None, args.ttl))), "create")
        submitted = time.monotonic() - start
        if progress:
            progress.join()
        if not finished.wait(args.timeout):
            raise SystemExit(f"{mode} N={n}: only {len(done_at)} of {n} Jobs Complete after {args.timeout} s")
        makespan = max(done_at.values()) - start
        cpu = proc_stat_cpu(server.pid) - cpu0
        host = (machine_busy()[0] - busy0) / os.sysconf("SC_CLK_TCK")
        rss = rss_kib(server.pid)
        load_end = open("/proc/loadavg").read().split()[:3]
        seconds = float(args.command.split()[1]) if args.command.startswith("sleep ") else 0.0
        ideal = n * seconds / int(caps["cpu"])
        print(f"{mode:6} N={n:<6} prefill={args.prefill:<6} makespan {makespan:8.1f} s  {n / makespan:7.1f} jobs/s"
              f"  ideal {ideal:6.1f} s ({makespan / ideal if ideal else 0:.3f}x"
              + (f", {1000 * (makespan - ideal) * int(caps['cpu']) / n:.0f} ms per slot turnover" if ideal else "")
              + f")  submit {submitted:6.1f} s"
              f"  server CPU {1000 * cpu / n:7.1f} ms/job  host CPU {1000 * host / n:7.1f} ms/job  RSS {rss / 1024:6.0f} MiB"
              f"  load {' '.join(load_start)} -> {' '.join(load_end)}"
              + (f"  (prefill took {prefill_s:.0f} s)" if args.prefill else ""), flush=True)
        if args.stages:
            print_stages(names, seen)
        if args.writes:
            print_writes(writes0, write_counts(c), n)
        if args.idle:
            time.sleep(2)  # the last Workloads finish, the last Events are written
            cpu_idle = proc_stat_cpu(server.pid)
            time.sleep(args.idle)
            print(f"    idle {args.idle:.0f} s after the run, {n + args.prefill} finished Jobs stored: server CPU "
                  f"{100 * (proc_stat_cpu(server.pid) - cpu_idle) / args.idle:.2f} %  RSS "
                  f"{rss_kib(server.pid) / 1024:.0f} MiB", flush=True)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--berth", default=os.path.join(os.path.dirname(__file__), "..", "build", "cmd", "berth", "berth"))
    ap.add_argument("--jobs", default="100,1000", help="comma-separated N")
    ap.add_argument("--modes", default="kueue,plain")
    ap.add_argument("--command", default="true", help='the container\'s shell command: "true" or "sleep S"')
    ap.add_argument("--prefill", type=int, default=0, help="finished Jobs (and pods) stored before the run")
    ap.add_argument("--node-capacity", default="cpu=2,memory=23Gi")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--server-args", default="", help='more `berth server` flags, e.g. "--sandbox=off"')
    ap.add_argument("--stages", action="store_true", help="print where each Job's time goes (see above)")
    ap.add_argument("--progress", type=float, default=0,
                    help="every S seconds, print the Jobs completed and the server CPU per Job in that window")
    ap.add_argument("--idle", type=float, default=0,
                    help="after the run, idle S seconds and print the server's CPU share meanwhile")
    ap.add_argument("--ttl", type=int, default=None,
                    help="ttlSecondsAfterFinished of each Job: finished Jobs (and their pods and Workloads, "
                         "by garbage collection) are deleted, so what is stored stays bounded")
    ap.add_argument("--in-flight", type=int, default=0,
                    help="create a Job only while fewer than this many are not yet Complete (0: all at once)")
    ap.add_argument("--writes", action="store_true", help="print the accepted API writes per Job, by resource")
    ap.add_argument("--keep", action="store_true", help="keep each run's work directory")
    args = ap.parse_args()
    for n in [int(x) for x in args.jobs.split(",")]:
        for mode in args.modes.split(","):
            run(args, mode, n)


if __name__ == "__main__":
    main()

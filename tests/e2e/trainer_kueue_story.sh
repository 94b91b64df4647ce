#!/usr/bin/env bash
# The examples/trainer-kueue/ story end to end with real distributed PyTorch, asserted.
# Run by scripts/demo (the README's main job) and by CTest (e2e_trainer_kueue_story).
#
#   tests/e2e/trainer_kueue_story.sh BERTH_BINARY [REPO_ROOT]
#
# Starts `berth server` (SQLite store, every controller, two embedded 1-CPU nodes), applies
# examples/trainer-kueue/, and plays: the low-priority TrainJob explore (2 nodes, torchrun,
# gloo DDP) trains; the high-priority TrainJob lora-sft arrives and needs the whole quota;
# Kueue preempts explore as a whole; lora-sft runs once explore's pods are gone and
# completes; explore is re-admitted and resumes from its checkpoint to completion.
# Asserted at the end, from a recorded pod watch, the followed pod logs and the Events:
#   - every pod of the first explore attempt got SIGTERM, stopped at the same step and
#     rank 0 saved a checkpoint at that step;
#   - no pod of lora-sft or of explore's second attempt was created while a pod of the
#     first attempt still existed;
#   - lora-sft's pods had all succeeded before explore's second attempt started;
#   - explore resumed from step N > 0 and its first step after resuming is N + 1;
#   - both TrainJobs are Complete;
#   - explore's Workload events contain QuotaReserved, Admitted, Preempted, Requeued,
#     QuotaReserved, Admitted, Finished in that order.
# Exit 0 when all hold; 1 with the reason otherwise; 77 (skip) when kubectl or
# /usr/bin/python3 with torch is missing. Leaves no process behind (the server stops its pods).
set -euo pipefail
berth=$(realpath "$1")
root=$(realpath "${2:-$(dirname "$0")/../..}")
cd "$root"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
if ! command -v kubectl >/dev/null; then echo "SKIP: kubectl not found"; exit 77; fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import torch (Debian's python3-torch; scripts/install-deps installs it)"
  exit 77
fi

demo=/tmp/berth-demo            # the example runtime runs /tmp/berth-demo/train.py
mkdir -p "$demo"
# The example's checkpoints live at a fixed path (/tmp/berth-demo/checkpoints/team-a/...):
# one story at a time on this machine (a concurrent scripts/demo or CTest run waits).
exec 9>"$demo/story.lock"
if ! flock -n 9; then
  echo "another berth demo is running on this machine; waiting for it to finish..."
  flock -w 1200 9 || { echo "error: gave up waiting for $demo/story.lock" >&2; exit 1; }
fi
# The server's data and this run's records live outside $demo: pods see $demo (a hostPath
# volume of the runtime), and a pod must never see berth's data directory.
runs=/tmp/berth-demo-runs
mkdir -p "$runs"
find "$demo" "$runs" -maxdepth 1 -name 'run.*' -exec rm -rf {} +   # earlier runs (the last one is kept)
run=$(mktemp -d "$runs/run.XXXXXX")   # this run's server data and records
data=$run/server
rm -rf "$demo/checkpoints/team-a"
mkdir -p "$run/record"
install -m 0755 examples/train/train.py "$demo/train.py"
install -d -m 1777 "$demo/checkpoints"   # the pods (the team's uid) write their checkpoints here

server_pid=""
watch_pid=""
cleanup() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null || true
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
fail() {
  printf '\n\033[31mFAILED: %s\033[0m\n' "$*" >&2
  echo "--- last lines of the server log ($run/server.log) ---" >&2
  tail -n 30 "$run/server.log" >&2 || true
  exit 1
}
# wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND...: polls COMMAND every second.
wait_for() {
  local what=$1 timeout=$2
  shift 2
  local start=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then fail "berth server exited (see its log)"; fi
    if ((SECONDS - start > timeout)); then fail "timed out after ${timeout}s waiting for: $what"; fi
    sleep 1
  done
  echo "ok: $what ($((SECONDS - start))s)"
}

say "start berth server (two embedded nodes of 1 CPU, 2Gi; SQLite store in $data)"
"$berth" server --port "${BERTH_DEMO_PORT:-0}" --data-dir "$data" \
  --nodes 2 --node-capacity cpu=1,memory=2Gi --shutdown-grace-period 30 --allowed-host-paths "$demo" \
  --eviction-hard 'nodefs.available<1Gi' \
  >"$run/server.log" 2>&1 9>&- &
server_pid=$!
export KUBECONFIG=$data/kubeconfig
wait_for "the server's kubeconfig" 30 test -s "$KUBECONFIG"
wait_for "nodes node-0 and node-1 Ready" 60 kubectl wait --for=condition=Ready node/node-0 node/node-1 --timeout=1s
kubectl get nodes

say "seed 1 A-1..A-3: queues, priorities, the torch runtime (kubectl apply -f examples/trainer-kueue/)"
kubectl apply -f examples/trainer-kueue/
wait_for "ClusterQueue cluster-queue Active" 30 kubectl wait --for=condition=Active clusterqueue/cluster-queue --timeout=1s
kubectl get clusterqueue cluster-queue -o wide
# Every pod change from here on, for the assertions at the end.
kubectl get pods -n team-a -w --output-watch-events -o json >"$run/record/pods.watch" 2>/dev/null &
watch_pid=$!

jobset_pods() { kubectl get pods -n team-a -l "jobset.sigs.k8s.io/jobset-name=$1" "${@:2}"; }
running_pods() { [ "$(jobset_pods "$1" --field-selector=status.phase=Running -o name | wc -l)" -eq "$2" ]; }
logs_of() { kubectl logs -n team-a -l "jobset.sigs.k8s.io/jobset-name=$1" --prefix --tail=-1 2>/dev/null; }
logs_match() { logs_of "$1" | grep -q -- "$2"; }
workload_of() { kubectl get workloads -n team-a -o name | grep "trainjob-$1-"; }
workload_condition() { kubectl wait -n team-a --for="condition=$2" "$(workload_of "$1")" --timeout=1s; }

say "A-4 with priority low: TrainJob explore (2 nodes x 1 CPU = the whole quota)"
kubectl apply -f examples/trainer-kueue/jobs/low-priority.yaml
wait_for "explore admitted" 60 workload_condition explore Admitted
wait_for "explore's 2 pods Running" 90 running_pods explore 2
jobset_pods explore -o wide
# Follow the first attempt's logs as a user would: a deleted pod's directory (its log files)
# is removed by its node, as the kubelet removes it.
for p in $(jobset_pods explore -o name); do
  kubectl logs -n team-a -f "$p" >"$run/record/${p#pod/}.log" 2>&1 &
done
wait_for "explore trained and checkpointed (step 10)" 180 logs_match explore "checkpoint saved at step 10"
kubectl get workloads -n team-a
logs_of explore | grep -E "\] (start|step 1[0-2] )" || true

say "A-4: TrainJob lora-sft with priority high arrives (needs the whole quota too)"
kubectl apply -f examples/trainer-kueue/jobs/high-priority.yaml
wait_for "explore preempted as a whole (Workload Evicted)" 60 workload_condition explore Evicted
kubectl get workloads -n team-a
wait_for "lora-sft admitted once explore's pods are gone" 120 workload_condition lora-sft Admitted
jobset_pods lora-sft -o wide || true
wait_for "lora-sft Complete" 300 kubectl wait -n team-a --for=condition=Complete trainjob/lora-sft --timeout=1s
kubectl get trainjobs -n team-a

say "explore is re-admitted and resumes from its checkpoint"
wait_for "explore resumed from its checkpoint" 180 logs_match explore "resumed from step"
logs_of explore | grep -E "resumed from step" || true
wait_for "explore Complete" 400 kubectl wait -n team-a --for=condition=Complete trainjob/explore --timeout=1s
logs_of explore | grep -E "training complete" || true

say "kubectl get workloads -A; kubectl get clusterqueue -o wide"
kubectl get workloads -A
kubectl get clusterqueue -o wide
say "the preempted Workload's events (kubectl describe workload)"
wl=$(workload_of explore)
kubectl describe "$wl" -n team-a | sed -n '/^Events:/,$p'
kubectl get events -n team-a --field-selector "involvedObject.name=${wl#*/}" -o json >"$run/record/events.json"
sleep 1
kill "$watch_pid" 2>/dev/null || true
watch_pid=""

say "checking the story"
/usr/bin/python3 - "$run/record" "$data/nodes" <<'PY' || fail "the story's assertions (above)"
import glob, json, os, re, sys
record, nodes = sys.argv[1], sys.argv[2]
problems = []
def check(cond, msg):
    print(("ok: " if cond else "NOT OK: ") + msg)
    if not cond: problems.append(msg)

# The pod watch, in the server's order.
text = open(os.path.join(record, "pods.watch")).read()
dec, pos, events = json.JSONDecoder(), 0, []
while True:
    while pos < len(text) and text[pos].isspace(): pos += 1
    if pos >= len(text): break
    ev, pos = dec.raw_decode(text, pos)
    events.append(ev)
def job_of(pod): return pod["metadata"].get("labels", {}).get("jobset.sigs.k8s.io/jobset-name", "")
alive, created, first_attempt, violations = {}, [], None, []
lora_succeeded, lora_pods, second_attempt_start_ok = set(), set(), None
for ev in events:
    pod, typ = ev["object"], ev["type"]
    uid, name, job = pod["metadata"]["uid"], pod["metadata"]["name"], job_of(pod)
    if typ == "ADDED" and uid not in alive:
        if first_attempt is None and job == "explore":
            pass
        created.append((job, uid, name))
        explore_created = [c for c in created if c[0] == "explore"]
        if first_attempt is None and len(explore_created) == 2:
            first_attempt = {c[1]: c[2] for c in explore_created}
        if first_attempt is not None and uid not in first_attempt:
            still = [first_attempt[u] for u in first_attempt if u in alive]
            if still: violations.append(f"{name} created while {still} still existed")
            if job == "explore" and second_attempt_start_ok is None:
                second_attempt_start_ok = lora_pods and lora_succeeded >= lora_pods
        if job == "lora-sft": lora_pods.add(uid)
    if typ == "DELETED":
        alive.pop(uid, None)
    else:
        alive[uid] = pod
        if job == "lora-sft" and pod.get("status", {}).get("phase") == "Succeeded": lora_succeeded.add(uid)
check(first_attempt is not None and len(first_attempt) == 2, "explore's first attempt had 2 pods: %s" % sorted((first_attempt or {}).values()))
check(not violations, "no pod was created while a pod of explore's first attempt still existed" + ("" if not violations else ": " + "; ".join(violations)))
# A queued TrainJob is created suspended: its pods exist only once admitted, so each
# attempt is exactly numNodes pods (a pod created before admission shows up here).
check(len(lora_pods) == 2, "lora-sft ran exactly 2 pods (one attempt): %d" % len(lora_pods))
check(second_attempt_start_ok is True, "every lora-sft pod had succeeded before explore's second attempt started")

# Logs: the first attempt's pods (deleted since, with their directories) as `kubectl logs -f`
# followed them to the end; the pods that still exist from their agents' log files.
def log_of(pod_name):
    path = os.path.join(record, pod_name + ".log")
    if os.path.exists(path):
        return open(path, errors="replace").read()
    files = glob.glob(os.path.join(nodes, "*", "pods", f"team-a_{pod_name}_*", "logs", "*", "*.log"))
    return "".join(open(f, errors="replace").read() for f in sorted(files))
stops = {}
for uid, name in sorted((first_attempt or {}).items(), key=lambda x: x[1]):
    log = log_of(name)
    m = re.search(r"SIGTERM received: stopping at step (\d+)", log)
    check(m is not None, f"{name} received SIGTERM and stopped")
    if m: stops[name] = int(m.group(1))
    if m and re.search(r"rank 0 world_size", log):
        check(f"checkpoint saved at step {m.group(1)} " in log, f"{name} (rank 0) saved a checkpoint at step {m.group(1)}")
check(len(set(stops.values())) == 1, f"both ranks stopped at the same step: {stops}")

# The second attempt resumed where the first stopped.
second = [c for c in created if c[0] == "explore" and c[1] not in (first_attempt or {})]
check(len(second) == 2, "explore's second attempt had 2 pods: %s" % [c[2] for c in second])
for _, _, name in second:
    log = log_of(name)
    m = re.search(r"resumed from step (\d+)", log)
    check(m is not None and int(m.group(1)) > 0, f"{name} resumed from step {m.group(1) if m else '?'} (> 0)")
    if m:
        first_step = re.search(r"^step (\d+) ", log, re.M)
        check(first_step is not None and int(first_step.group(1)) == int(m.group(1)) + 1,
              f"{name}'s first step after resuming is {first_step.group(1) if first_step else '?'} = {int(m.group(1)) + 1}")
        if stops: check(int(m.group(1)) == list(stops.values())[0], "it resumed from the step the first attempt checkpointed on SIGTERM")

# The Workload's events in order.
evs = json.load(open(os.path.join(record, "events.json")))["items"]
evs.sort(key=lambda e: (e.get("firstTimestamp") or e["metadata"]["creationTimestamp"], int(e["metadata"]["resourceVersion"])))
reasons = [e["reason"] for e in evs]
want = ["QuotaReserved", "Admitted", "Preempted", "Requeued", "QuotaReserved", "Finished"]
it = iter(reasons)
check(all(r in it for r in want), f"explore's Workload events {reasons} contain {want} in order")
sys.exit(1 if problems else 0)
PY
kubectl wait -n team-a --for=condition=Complete trainjob/explore trainjob/lora-sft --timeout=5s >/dev/null ||
  fail "both TrainJobs should be Complete"
echo "ok: both TrainJobs are Complete"

say "story passed: explore was preempted as a whole and checkpointed, lora-sft ran, explore resumed and completed"

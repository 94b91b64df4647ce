#!/usr/bin/env bash
# End-to-end: examples/priority-pitfalls/ (Kueue と PriorityClass の落とし穴) with real
# torch processes, through the real kubectl, on
# `berth server --nodes 2 --node-capacity cpu=8,memory=32Gi,nvidia.com/gpu=8`
# (examples/priority-pitfalls/README.md). Issue 7, "Done when", second bullet.
#
# Part 1, the recommended configuration (examples/priority-pitfalls/*.yaml + jobs/):
#   experiment-training (kueue-medium) trains; production-training (kueue-high, all 16 GPUs)
#   arrives; Kueue preempts the experiment Workload as a whole (Evicted reason Preempted,
#   Preempted reason InClusterQueue, Kueue's message; both pods get SIGTERM, stop at the same
#   step and exit 143); production's pods are created only after both experiment pods are
#   gone and it succeeds; experiment is re-admitted, resumes from that step and succeeds. No
#   pod is ever preempted by the scheduler: no Event reason Preempted on a Pod, and no pod,
#   in a watch of every pod change, ever carries DisruptionTarget PreemptionByScheduler.
# Part 2, the trap (examples/priority-pitfalls/pitfall/: PreemptLowerPriority classes, jobs
#   Kueue does not manage): low-priority-train fills the 16 GPUs; high-priority-train (priority
#   1000, 8 GPUs) makes the scheduler preempt exactly two single low-priority-train pods
#   (DisruptionTarget PreemptionByScheduler, Event "Preempted by pod <high pod uid> on node
#   <node>"), while the other two keep their pods, nodes and GPUs: train.py stops every rank
#   at the step after the signal, the survivors exit 143, are restarted in place (OnFailure)
#   and wait at the rendezvous, training nothing, for replacements that stay Pending
#   (Insufficient nvidia.com/gpu) until the high job has finished; then the gang is whole
#   again and resumes from the checkpoint. Everything is deleted and no pod is left.
#
# The manifests are applied as copies that differ from the example only in (sed, checked):
#   /tmp/berth-demo/...             -> $WORK/demo/... (examples/train/train.py installed there;
#                                      a hostPath the server allows: --allowed-host-paths; never shared with scripts/demo or
#                                      another run of this test)
#   --step-seconds 0.5              -> $PITFALLS_STEP_SECONDS (default 0.25), to keep it short.
#
# Usage: priority_pitfalls_e2e.sh <berth binary> <repository root>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl, or /usr/bin/python3 cannot import torch).
set -uo pipefail

BERTH=${1:?berth binary}
ROOT=${2:?repository root}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
PYTHON=/usr/bin/python3
STEP_SECONDS=${PITFALLS_STEP_SECONDS:-0.25}
EXAMPLE=$ROOT/examples/priority-pitfalls
NS=training

[ -x "$KUBECTL" ] || { echo "SKIP: $KUBECTL not found"; exit 77; }
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "SKIP: $PYTHON cannot import torch (install python3-torch)"; exit 77; }

WORK=$(mktemp -d /tmp/berth-pitfalls-e2e.XXXXXX)
chmod 0755 "$WORK"   # sandboxed pods (an unprivileged uid) reach $WORK/demo, their hostPath
export HOME=$WORK/home
export KUBECONFIG=$WORK/data/kubeconfig
mkdir -p "$HOME" "$WORK/manifests/setup" "$WORK/logs"
SERVER_PID=
BG_PIDS=()
FAILURES=0

log() { printf '%s %s\n' "$(date +%T)" "$*"; }
fail() {
  echo "FAIL: $*"
  FAILURES=$((FAILURES + 1))
}
# Processes of this run: anything whose command line names this run's train.py.
own_trainers() { pgrep -f "$DEMO/train.py" || true; }

cleanup() {
  local pid
  for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  local stray
  stray=$(own_trainers)
  if [ -n "$stray" ]; then
    echo "FAIL: train.py processes left after the server stopped: $stray"
    FAILURES=$((FAILURES + 1))
    for pid in $stray; do kill -KILL "$pid" 2>/dev/null; done
  fi
  if [ "$FAILURES" -eq 0 ]; then
    rm -rf "$WORK"
    echo "PASS"
  else
    echo "$FAILURES check(s) failed; kept $WORK for inspection (server.log, logs/, *.watch)"
    [ -f "$WORK/server.log" ] && tail -40 "$WORK/server.log" | sed 's/^/    /'
    exit 1
  fi
}
trap cleanup EXIT

# wait_for DESCRIPTION TIMEOUT_SECONDS CMD...: polls CMD every 0.5 s; a timeout is fatal
# (what follows depends on it). CMD is re-run each time: pass a function, not "$(...)".
wait_for() {
  local what=$1 timeout=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start > timeout)); then
      fail "timed out after ${timeout}s waiting for: $what"
      "$KUBECTL" get pods,pytorchjobs,workloads -n "$NS" -o wide 2>&1 | sed 's/^/    /'
      exit 1
    fi
    sleep 0.5
  done
  log "ok: $what ($((SECONDS - start))s)"
}
# check NAME ACTUAL EXPECTED-REGEX: ACTUAL (newlines included) must match the extended
# regex as a whole.
check() {
  if ! [[ $2 =~ ^($3)$ ]]; then fail "[$1] got '$2', want /^($3)\$/"; fi
}

kc() { "$KUBECTL" -n "$NS" "$@"; }

# The example's manifests, localized (see the header); fails if an example no longer has
# the paths this test rewrites.
localize() {
  local src=$1 dst=$2
  sed -e "s#/tmp/berth-demo#$DEMO#g" \
      -e "s#\"--step-seconds\", \"0.5\"#\"--step-seconds\", \"$STEP_SECONDS\"#g" "$src" >"$dst"
  if grep -q /tmp/berth-demo "$dst"; then fail "$src: a /tmp/berth-demo path is left after localizing"; exit 1; fi
  if grep -q '"/usr/bin/python3"' "$src" && ! grep -q "\"--step-seconds\", \"$STEP_SECONDS\"" "$dst"; then
    fail "$src: no --step-seconds 0.5 to rewrite"
    exit 1
  fi
}
DEMO=$WORK/demo   # the examples' /tmp/berth-demo: a hostPath the node allows, outside the server's data
install -D -m 0755 "$ROOT/examples/train/train.py" "$DEMO/train.py"
install -d -m 1777 "$DEMO/checkpoints"   # the pods (the team's uid) write their checkpoints here
M=$WORK/manifests  # setup/: the example's top-level files; jobs-*.yaml, pitfall-*.yaml
for f in "$EXAMPLE"/0*.yaml; do localize "$f" "$M/setup/$(basename "$f")"; done
for f in "$EXAMPLE"/jobs/*.yaml "$EXAMPLE"/pitfall/*.yaml; do
  localize "$f" "$M/$(basename "$(dirname "$f")")-$(basename "$f")"
done

# A summary of a `kubectl get -w -o json --output-watch-events` stream, one line per event:
#   TYPE NAME UID PHASE NODE DELETING(0|1) DISRUPTION(reason of DisruptionTarget=True|-)
#   RESTARTS PODSCHEDULED-REASON(when False|-)
# or, with the argument "conditions": TYPE NAME TRUE-CONDITIONS(sorted, comma-separated|-)
cat >"$WORK/watch_summary.py" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
dec, i = json.JSONDecoder(), 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    try:
        ev, i = dec.raw_decode(text, i)
    except ValueError:  # the stream is live: a partial last object
        break
    o = ev.get("object", {})
    meta, spec, st = o.get("metadata", {}), o.get("spec", {}), o.get("status", {})
    conds = {c.get("type"): c for c in st.get("conditions", [])}
    if sys.argv[2:] == ["conditions"]:
        print(ev.get("type"), meta.get("name"),
              ",".join(sorted(t for t, c in conds.items() if c.get("status") == "True")) or "-")
        continue
    dt = conds.get("DisruptionTarget", {})
    ps = conds.get("PodScheduled", {})
    restarts = sum(c.get("restartCount", 0) for c in st.get("containerStatuses", []))
    print(ev.get("type"), meta.get("name"), meta.get("uid"), st.get("phase") or "-",
          spec.get("nodeName") or "-", 1 if meta.get("deletionTimestamp") else 0,
          dt.get("reason") or "-" if dt.get("status") == "True" else "-", restarts,
          (ps.get("reason") or "-") if ps.get("status") == "False" else "-")
EOF
pods_summary() { "$PYTHON" "$WORK/watch_summary.py" "$WORK/pods.watch"; }

# Pods of a PyTorchJob.
job_pods() { kc get pods -l "training.kubeflow.org/job-name=$1" "${@:2}"; }
pods_in_phase() { [ "$(job_pods "$1" --field-selector "status.phase=$2" -o name | wc -l)" -eq "$3" ]; }
no_pods_left() { [ -z "$(kc get pods -o name 2>/dev/null)" ]; }
workload_of() { kc get workloads -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.ownerReferences[0].name}{"\n"}{end}' | awk -v j="$1" '$2 == j {print $1}'; }
condition() {  # condition KIND/NAME TYPE FIELD: a condition's field
  kc get "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].$3}"
}
# follow_logs POD FILE: `kubectl logs -f` of the pod's current container into FILE, so the
# log outlives the pod (deleted on preemption).
follow_logs() {
  "$KUBECTL" logs -f -n "$NS" "$1" >"$2" 2>&1 &
  BG_PIDS+=($!)
}
file_has() { grep -Eq -- "$2" "$1"; }
logs_have() { kc logs "$1" 2>/dev/null | grep -Eq -- "$2"; }
has_workload() { [ -n "$(workload_of "$1")" ]; }

# ---------------------------------------------------------------------------------------
log "start berth server (2 nodes: cpu=8, memory=32Gi, nvidia.com/gpu=8)"
"$BERTH" server --port 0 --data-dir "$WORK/data" --nodes 2 --shutdown-grace-period 30 --allowed-host-paths "$DEMO" \
  --eviction-hard 'nodefs.available<1Gi' \
  --node-capacity cpu=8,memory=32Gi,nvidia.com/gpu=8 >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
wait_for "the server's kubeconfig" 30 test -s "$KUBECONFIG"
wait_for "nodes node-0 and node-1 Ready" 60 "$KUBECTL" wait --for=condition=Ready node/node-0 node/node-1 --timeout=1s
check node-gpus "$("$KUBECTL" get nodes -o 'jsonpath={.items[*].status.allocatable.nvidia\.com/gpu}')" '8 8'

# =======================================================================================
log "part 1: the recommended configuration"
"$KUBECTL" apply -f "$M/setup/00-namespace.yaml" >/dev/null || { fail "apply namespace"; exit 1; }
"$KUBECTL" get pods -n "$NS" -w -o json --output-watch-events >"$WORK/pods.watch" 2>"$WORK/pods.watch.err" &
BG_PIDS+=($!)
"$KUBECTL" get workloads -n "$NS" -w -o json --output-watch-events >"$WORK/workloads.watch" 2>"$WORK/workloads.watch.err" &
BG_PIDS+=($!)
OUT=$("$KUBECTL" apply -f "$M/setup/" 2>&1) || { fail "apply $M/setup/: $OUT"; exit 1; }
wait_for "ClusterQueue gpu-cluster-queue Active" 30 "$KUBECTL" wait --for=condition=Active clusterqueue/gpu-cluster-queue --timeout=1s
check pc-policy "$("$KUBECTL" get priorityclass pytorchjob-zero-priority -o 'jsonpath={.value},{.preemptionPolicy}')" '0,Never'
check cq-preemption "$("$KUBECTL" get clusterqueue gpu-cluster-queue -o 'jsonpath={.spec.preemption.withinClusterQueue}')" 'LowerPriority'

kc apply -f "$M/jobs-experiment-training.yaml" >/dev/null || { fail "apply experiment-training"; exit 1; }
wait_for "experiment-training's Workload" 30 has_workload experiment-training
EXP_WL=$(workload_of experiment-training)
wait_for "$EXP_WL Admitted" 60 kc wait --for=condition=Admitted "workload/$EXP_WL" --timeout=1s
check exp-priority "$(kc get workload "$EXP_WL" -o 'jsonpath={.spec.priorityClassRef.kind}/{.spec.priorityClassRef.name},{.spec.priority}')" 'WorkloadPriorityClass/kueue-medium,50'
wait_for "experiment-training's 2 pods Running" 90 pods_in_phase experiment-training Running 2
EXP_UIDS=$(job_pods experiment-training -o 'jsonpath={range .items[*]}{.metadata.uid} {end}')
# Every training pod names the shared class. (The seed also checks .spec.preemptionPolicy:
# berth has no Priority admission plugin to copy priority/preemptionPolicy into the pod at
# creation; its scheduler resolves the class itself.)
check exp-pod-priority "$(job_pods experiment-training -o 'jsonpath={range .items[*]}{.spec.priorityClassName} {end}')" \
  'pytorchjob-zero-priority pytorchjob-zero-priority '
follow_logs experiment-training-master-0 "$WORK/logs/exp-master-1.log"
follow_logs experiment-training-worker-0 "$WORK/logs/exp-worker-1.log"
wait_for "experiment-training trained and checkpointed (step 10)" 120 file_has "$WORK/logs/exp-master-1.log" '^checkpoint saved at step 10 '

log "production-training (kueue-high, 16 GPUs) arrives"
kc apply -f "$M/jobs-production-training.yaml" >/dev/null || { fail "apply production-training"; exit 1; }
wait_for "production-training's Workload" 30 has_workload production-training
PROD_WL=$(workload_of production-training)
wait_for "$EXP_WL Evicted" 60 kc wait --for=condition=Evicted "workload/$EXP_WL" --timeout=1s
PROD_WL_UID=$(kc get workload "$PROD_WL" -o 'jsonpath={.metadata.uid}')
PROD_JOB_UID=$(kc get pytorchjob production-training -o 'jsonpath={.metadata.uid}')
PREEMPT_MSG="Preempted to accommodate a workload (UID: $PROD_WL_UID, JobUID: $PROD_JOB_UID) due to prioritization in the ClusterQueue; preemptor path: /gpu-cluster-queue; preemptee path: /gpu-cluster-queue"
check evicted-reason "$(condition "workload/$EXP_WL" Evicted reason)" 'Preempted'
check preempted-reason "$(condition "workload/$EXP_WL" Preempted reason)" 'InClusterQueue'
check preempted-message "$(condition "workload/$EXP_WL" Preempted message)" "$(sed 's/[][().^$*+?{}|\\]/\\&/g' <<<"$PREEMPT_MSG")"
wait_for "production-training admitted" 120 kc wait --for=condition=Admitted "workload/$PROD_WL" --timeout=1s
wait_for "production-training Succeeded" 240 kc wait --for=condition=Succeeded pytorchjob/production-training --timeout=1s
wait_for "experiment-training re-admitted" 120 kc wait --for=condition=Admitted "workload/$EXP_WL" --timeout=1s
wait_for "experiment-training's new pods Running" 90 pods_in_phase experiment-training Running 2
follow_logs experiment-training-master-0 "$WORK/logs/exp-master-2.log"
wait_for "experiment-training Succeeded" 300 kc wait --for=condition=Succeeded pytorchjob/experiment-training --timeout=1s
# The follower (a separate kubectl) may still be writing the log's end when the job's condition lands.
wait_for "experiment-training's log followed to its end" 30 file_has "$WORK/logs/exp-master-2.log" '^training complete at step'

# Both ranks of the preempted experiment stopped at the same step and saved it.
STOP=$(sed -n 's/^SIGTERM received: stopping at step \([0-9]*\)$/\1/p' "$WORK/logs/exp-master-1.log")
check exp-stop-step "$STOP" '[1-9][0-9]*'
check exp-worker-stop "$(grep -E '^(SIGTERM received|exiting with code)' "$WORK/logs/exp-worker-1.log")" \
  "SIGTERM received: stopping at step $STOP
exiting with code 143 \\(checkpoint at step $STOP\\)"
check exp-master-saved "$(grep -cE "^checkpoint saved at step $STOP \\(|^exiting with code 143 \\(checkpoint at step $STOP\\)$" "$WORK/logs/exp-master-1.log")" 2
# The re-admitted experiment continued from there, to the end.
check exp-resumed "$(grep -E '^(resumed from|no checkpoint)' "$WORK/logs/exp-master-2.log")" \
  "resumed from step $STOP \\(checkpoint $DEMO/checkpoints/$NS/experiment-training/checkpoint.pt\\)"
check exp-complete "$(grep -c '^training complete at step 120 ' "$WORK/logs/exp-master-2.log")" 1
check exp-finished "$(condition "workload/$EXP_WL" Finished reason)" 'Succeeded'
# The Workload's life, as its conditions changed (True ones, consecutive repeats dropped):
# admitted, its pods Ready (waitForPodsReady is on by default, as in Kueue v0.19), evicted by
# preemption while holding its quota, quota released and requeued, admitted again, Ready,
# finished.
"$PYTHON" "$WORK/watch_summary.py" "$WORK/workloads.watch" conditions | awk -v w="$EXP_WL" '$2 == w {print $3}' |
  uniq >"$WORK/exp-workload.states"
check exp-workload-life "$(tr '\n' ' ' <"$WORK/exp-workload.states")" \
  '(- )?(QuotaReserved )?Admitted,QuotaReserved Admitted,PodsReady,QuotaReserved (Admitted,Evicted,(PodsReady,)?Preempted,QuotaReserved )+(Evicted,Preempted,Requeued )+Admitted,QuotaReserved Admitted,PodsReady,QuotaReserved (Admitted,Finished,(PodsReady,)?QuotaReserved )+'

pods_summary >"$WORK/part1.pods"
# Whole-job eviction: both first-generation pods were deleted (never placed elsewhere), and
# production's first pod was created only after the last of them was gone.
for uid in $EXP_UIDS; do
  check "exp-pod-deleted-$uid" "$(awk -v u="$uid" '$3 == u && $1 == "DELETED"' "$WORK/part1.pods" | wc -l)" 1
done
LAST_EXP_GONE=$(awk -v uids="$EXP_UIDS" 'BEGIN {n = split(uids, a, " "); for (i = 1; i <= n; i++) u[a[i]] = 1}
  $1 == "DELETED" && ($3 in u) {last = NR} END {print last + 0}' "$WORK/part1.pods")
FIRST_PROD=$(awk '$2 ~ /^production-training-/ {print NR; exit}' "$WORK/part1.pods")
if [ "$LAST_EXP_GONE" -eq 0 ] || [ -z "$FIRST_PROD" ] || [ "$FIRST_PROD" -lt "$LAST_EXP_GONE" ]; then
  fail "[gang-order] production's first pod (watch event ${FIRST_PROD:-none}) before the last experiment pod was gone (event $LAST_EXP_GONE)"
fi
# No pod was ever preempted by the scheduler.
check no-disruption "$(awk '$7 != "-"' "$WORK/part1.pods")" ''
check no-pod-preempted "$(kc get events --field-selector reason=Preempted -o 'jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name} {end}')" \
  "Workload/$EXP_WL "
check wl-preempted-event "$(kc get events --field-selector "reason=Preempted,involvedObject.name=$EXP_WL" -o 'jsonpath={.items[*].message}')" \
  "$(sed 's/[][().^$*+?{}|\\]/\\&/g' <<<"$PREEMPT_MSG")"
check job-stopped-event "$(kc get events --field-selector reason=Stopped,involvedObject.kind=PyTorchJob,involvedObject.name=experiment-training -o 'jsonpath={.items[*].message}')" \
  "$(sed 's/[][().^$*+?{}|\\]/\\&/g' <<<"$PREEMPT_MSG")"

kc delete pytorchjob experiment-training production-training >/dev/null
wait_for "part 1's pods deleted" 90 no_pods_left

# =======================================================================================
log "part 2: the trap (PreemptLowerPriority pod priorities, jobs outside Kueue)"
PART2_FROM=$(pods_summary | wc -l)
"$KUBECTL" apply -f "$M/pitfall-priority-classes.yaml" >/dev/null || { fail "apply pitfall classes"; exit 1; }
kc apply -f "$M/pitfall-low-priority-train.yaml" >/dev/null || { fail "apply low-priority-train"; exit 1; }
wait_for "low-priority-train's 4 pods Running (16 GPUs)" 90 pods_in_phase low-priority-train Running 4
check low-no-workload "$(workload_of low-priority-train)" ''
check low-pod-priority "$(job_pods low-priority-train -o 'jsonpath={range .items[*]}{.spec.priorityClassName} {end}')" \
  '(low-priority ){4}'
check pitfall-classes "$("$KUBECTL" get priorityclass high-priority low-priority -o 'jsonpath={range .items[*]}{.metadata.name},{.value},{.preemptionPolicy} {end}')" \
  'high-priority,1000,PreemptLowerPriority low-priority,0,PreemptLowerPriority '
# name uid node, of the 4 pods before the high job arrives
job_pods low-priority-train -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.uid} {.spec.nodeName}{"\n"}{end}' | sort >"$WORK/low-before"
follow_logs low-priority-train-master-0 "$WORK/logs/low-master-1.log"
wait_for "low-priority-train trained and checkpointed (step 10)" 120 file_has "$WORK/logs/low-master-1.log" '^checkpoint saved at step 10 '

log "high-priority-train (priority 1000, 8 GPUs) arrives"
kc apply -f "$M/pitfall-high-priority-train.yaml" >/dev/null || { fail "apply high-priority-train"; exit 1; }
preempted_events() { kc get events --field-selector reason=Preempted,involvedObject.kind=Pod -o 'jsonpath={range .items[*]}{.involvedObject.name} {.involvedObject.uid} {.type} {.source.component} {.message}{"\n"}{end}' | sort; }
two_pods_preempted() { [ "$(preempted_events | wc -l)" -eq 2 ]; }
wait_for "2 Preempted events on pods" 60 two_pods_preempted
high_started() { [ "$(job_pods high-priority-train -o 'jsonpath={range .items[*]}{.status.phase}{"\n"}{end}' | grep -cE '^(Running|Succeeded)$')" -eq 2 ]; }
wait_for "high-priority-train's 2 pods placed and started" 120 high_started
HIGH=$(job_pods high-priority-train -o 'jsonpath={range .items[*]}{.metadata.uid} {.spec.nodeName}{"\n"}{end}')
preempted_events >"$WORK/preempted-events"
# Each event: on a low-priority-train pod as it was before (name, uid, node), by one of the
# two high-priority-train pods on that node, each high pod preempting one victim.
VICTIMS=
while read -r name uid type component message; do
  check "victim-$name-event" "$type $component" 'Normal default-scheduler'
  if [[ $message =~ ^Preempted\ by\ pod\ ([0-9a-f-]+)\ on\ node\ ([a-z0-9-]+)$ ]]; then
    preemptor=${BASH_REMATCH[1]} node=${BASH_REMATCH[2]}
    check "victim-$name" "$(awk -v n="$name" '$1 == n' "$WORK/low-before")" "$name $uid $node"
    check "victim-$name-preemptor" "$(awk -v u="$preemptor" '$1 == u {print $2}' <<<"$HIGH")" "$node"
    echo "$preemptor" >>"$WORK/preemptors"
  else
    fail "[victim-$name-message] '$message' is not 'Preempted by pod <uid> on node <node>'"
  fi
  VICTIMS="$VICTIMS $name"
done <"$WORK/preempted-events"
check preemptors-distinct "$(sort -u "$WORK/preemptors" | wc -l)" 2
check victims-are-low "$(awk '{print $1}' "$WORK/preempted-events" | grep -vc '^low-priority-train-')" 0
SURVIVORS=$(awk '{print $1}' "$WORK/low-before" | grep -vxF -f <(tr ' ' '\n' <<<"$VICTIMS" | sed '/^$/d'))
check survivor-count "$(wc -w <<<"$SURVIVORS")" 2

# Every rank stops at the step after the victims' signal (train.py's all-reduced stop flag):
# the master's first container logged it, whether it was a victim or not.
wait_for "low-priority-train's master stopped" 60 file_has "$WORK/logs/low-master-1.log" '^SIGTERM received: stopping at step '
STOP=$(sed -n 's/^SIGTERM received: stopping at step \([0-9]*\)$/\1/p' "$WORK/logs/low-master-1.log" | head -1)
check low-stop-step "$STOP" '[1-9][0-9]*'

log "the high job runs and ends; then the gang is whole again"
wait_for "high-priority-train Succeeded" 180 kc wait --for=condition=Succeeded pytorchjob/high-priority-train --timeout=1s
HIGH_DONE=$(kc get pod high-priority-train-master-0 -o 'jsonpath={.status.containerStatuses[0].state.terminated.finishedAt}')
wait_for "low-priority-train's 4 pods Running again" 120 pods_in_phase low-priority-train Running 4
resumed_from() { kc logs low-priority-train-master-0 2>/dev/null | grep -E '^(resumed from|no checkpoint)'; }
wait_for "low-priority-train resumed" 120 logs_have low-priority-train-master-0 '^(resumed from|no checkpoint)' 
check low-resumed "$(resumed_from)" "resumed from step $STOP \\(checkpoint $DEMO/checkpoints/$NS/low-priority-train/checkpoint\\.pt\\)"

# What happened meanwhile, from the watch of every pod change (race-free: no timing).
pods_summary | tail -n "+$((PART2_FROM + 1))" >"$WORK/part2.pods"
first_line() { awk "$1 {print NR; exit}" "$WORK/part2.pods"; }
HIGH_ADDED=$(first_line '$2 ~ /^high-priority-train-/')
# The victims: DisruptionTarget PreemptionByScheduler, then deleted; their replacements (same
# name, new uid) were Unschedulable — no room, and priority 0 cannot preempt — and were
# placed on a node only after the high-priority-train pod there had finished.
for v in $VICTIMS; do
  old_uid=$(awk -v n="$v" '$1 == n {print $2}' "$WORK/low-before")
  check "$v-disruption" "$(awk -v u="$old_uid" '$3 == u && $7 != "-" {print $7}' "$WORK/part2.pods" | sort -u)" 'PreemptionByScheduler'
  check "$v-deleted" "$(awk -v u="$old_uid" '$3 == u && $1 == "DELETED"' "$WORK/part2.pods" | wc -l)" 1
  new_uid=$(kc get pod "$v" -o 'jsonpath={.metadata.uid}')
  check "$v-replaced" "$([ "$new_uid" != "$old_uid" ] && echo yes)" yes
  check "$v-replacement-unschedulable" "$(awk -v u="$new_uid" '$3 == u && $9 == "Unschedulable" {print "yes"; exit}' "$WORK/part2.pods")" yes
  placed=$(first_line "\$3 == \"$new_uid\" && \$5 != \"-\"")
  placed_on=$(awk -v l="${placed:-0}" 'NR == l {print $5}' "$WORK/part2.pods")
  high_done=$(first_line "\$2 ~ /^high-priority-train-/ && \$5 == \"$placed_on\" && \$4 == \"Succeeded\"")
  if [ -z "$placed" ] || [ -z "$high_done" ] || [ "$placed" -le "$high_done" ]; then
    fail "[$v-replacement-waited] replacement placed on ${placed_on:-no node} at watch event ${placed:-never}, the high pod there succeeded at ${high_done:-never}"
  fi
  check "$v-failed-scheduling" "$(kc get events --field-selector "reason=FailedScheduling,involvedObject.name=$v" \
    -o "jsonpath={range .items[?(@.involvedObject.uid==\"$new_uid\")]}{.type} {.message}{\"\\n\"}{end}" | head -1)" \
    'Warning 0/2 nodes are available: 2 Insufficient nvidia\.com/gpu\..*'
done
check disruption-message "$(grep -c '"message":"default-scheduler: preempting to accommodate a higher priority pod","reason":"PreemptionByScheduler","status":"True","type":"DisruptionTarget"' "$WORK/pods.watch")" '[1-9][0-9]*'
# The survivors: the same pods on the same nodes throughout (never deleted, never disrupted,
# always Running: their GPUs held), restarted in place once after the preemption (their ranks
# stopped with the victims'), and training nothing until the high job had finished. When torchrun
# notices its lost peers races with the high pods' start, so the restart is ordered after the
# preemption (the high pods' creation), not before their first Running.
for s in $SURVIVORS; do
  uid=$(awk -v n="$s" '$1 == n {print $2}' "$WORK/low-before")
  node=$(awk -v n="$s" '$1 == n {print $3}' "$WORK/low-before")
  check "$s-kept" "$(awk -v u="$uid" -v n="$node" -v from="$HIGH_ADDED" 'NR > from && $3 == u && ($6 == 1 || $1 == "DELETED" || $7 != "-" || $4 != "Running" || $5 != n)' "$WORK/part2.pods")" ''
  check "$s-same-pod" "$(kc get pod "$s" -o 'jsonpath={.metadata.uid} {.spec.nodeName} {.status.phase}')" "$uid $node Running"
  restarted=$(first_line "\$3 == \"$uid\" && \$8 >= 1")
  if [ -z "$restarted" ] || [ -z "$HIGH_ADDED" ] || [ "$restarted" -le "$HIGH_ADDED" ]; then
    fail "[$s-restarted-after-preemption] restarted at watch event ${restarted:-never}, the high job arrived at ${HIGH_ADDED:-never}"
  fi
  check "$s-restarts" "$(kc get pod "$s" -o 'jsonpath={.status.containerStatuses[0].restartCount}')" 1
  check "$s-previous" "$(kc logs "$s" --previous 2>&1 | grep -E '^(SIGTERM received|exiting with code)')" \
    "SIGTERM received: stopping at step $STOP
exiting with code 143 \\(checkpoint at step $STOP\\)"
  wait_for "$s training again" 60 logs_have "$s" '^step ' 
  first_step=$(kc logs "$s" --timestamps 2>&1 | awk '$2 == "step" {print substr($1, 1, 19); exit}')
  if [ -z "$first_step" ] || [[ "$first_step" < "${HIGH_DONE:0:19}" ]]; then
    fail "[$s-idle] its restarted container logged a step at '${first_step:-never}', before the high job finished at $HIGH_DONE"
  fi
done

log "clean up"
kc delete -f "$M/pitfall-high-priority-train.yaml" -f "$M/pitfall-low-priority-train.yaml" >/dev/null
"$KUBECTL" delete -f "$M/pitfall-priority-classes.yaml" >/dev/null
wait_for "no pod left" 90 no_pods_left
no_own_trainers() { [ -z "$(own_trainers)" ]; }
wait_for "no train.py of this run left" 30 no_own_trainers

#!/usr/bin/env bash
# `berth explain` (and its HTTP form through `kubectl get --raw`) on a running server,
# for the seeds' stuck states (issue #8: not admitted, admitted but unplaceable, the queue
# name written as an annotation):
#  (1) three 4-cpu jobs against a 5-cpu quota: the 2nd is not admitted, insufficient quota,
#      its position in the queue, and the admitted workload that must finish;
#  (2) node allocatable cpu 5, nominalQuota 7, a 6-cpu job: admitted, pod Pending with
#      "0/1 nodes are available: 1 Insufficient cpu." and the quota above node capacity;
#  (3) a ClusterQueue naming a missing ResourceFlavor: inactive, FlavorNotFound;
#  (4) queue-name written as an annotation: not managed by Kueue;
#  (5) a running job: its timeline.
# Usage: explain_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init explain
# explains_with NS KIND/NAME TEXT: `berth explain` mentions TEXT (fixed string).
explains_with() { "$BERTH" explain "$2" -n "$1" --kubeconfig "$KUBECONFIG" | grep -qF -- "$3"; }
# expect NS KIND/NAME TEXT...: every TEXT is in the explanation (waits for the first).
expect() {
  local ns=$1 target=$2; shift 2
  wait_until 30 explains_with "$ns" "$target" "$1" || true
  local out
  out=$("$BERTH" explain "$target" -n "$ns" --kubeconfig "$KUBECONFIG" 2>&1)
  for text in "$@"; do
    grep -qF -- "$text" <<<"$out" || { fail "explain $ns $target lacks: $text"; echo "$out"; return; }
  done
  echo "ok: explain $ns $target"
}

e2e_start_node_server cpu=5,memory=16Gi

# Queues: team-a -> quota 5 cpu, team-b -> quota 7 cpu (above the node's 5), team-c -> a
# ClusterQueue whose flavor name has a typo. team-d has a LocalQueue but its job writes the
# queue name as an annotation.
{
  e2e_yaml_namespace team-a team-b team-c team-d
  e2e_yaml_flavor default-flavor
  e2e_yaml_cluster_queue cq-five default-flavor cpu=5
  e2e_yaml_cluster_queue cq-seven default-flavor cpu=7
  e2e_yaml_cluster_queue cq-typo default-flavour cpu=5
  e2e_yaml_local_queue team-a user-queue cq-five
  e2e_yaml_local_queue team-b user-queue cq-seven
  e2e_yaml_local_queue team-c user-queue cq-typo
  e2e_yaml_local_queue team-d user-queue cq-five
} | "$KUBECTL" apply -f - >/dev/null

# job NS NAME CPU [annotation]: a batch Job for user-queue (label, or annotation with a 4th arg).
job() { e2e_yaml_job "$1" "$2" "$3" ${4:+queue_in=annotations} | "$KUBECTL" apply -f - >/dev/null; }

# ---- (1) + (5): three 4-cpu jobs against a 5-cpu quota ------------------------------
job team-a train-1 4
running() { "$KUBECTL" get pods -n team-a -l job-name=train-1 -o jsonpath='{.items[0].status.phase}' | grep -qx Running; }
wait_until 30 running || fail "(1) train-1's pod is not Running"
job team-a train-2 4
sleep 1  # distinct creation timestamps (second resolution) fix the queue order
job team-a train-3 4
expect team-a job/train-2 "Job team-a/train-2: NotAdmitted" \
  "LocalQueue team-a/user-queue -> ClusterQueue cq-five" \
  "Position 1 of 2 pending workloads in ClusterQueue cq-five" \
  "Needs 4 cpu in flavor default-flavor: nominalQuota 5, 4 in use by 1 admitted workload, 1 free, 0 borrowable from the cohort (3 short)" \
  "1 admitted workload would have to finish before it fits: team-a/job-train-1-"
expect team-a job/train-3 "Position 2 of 2 pending workloads" "ahead of it: team-a/job-train-2-"
# (5) the running one: layer and timeline (Kueue's and the scheduler's events).
expect team-a job/train-1 "Job team-a/train-1: Running" "1 pod placed on node-0" "Timeline:" \
  "QuotaReserved=True" "Normal Scheduled: Successfully assigned team-a/train-1-"

# The HTTP form, through kubectl.
RAW=$("$KUBECTL" get --raw /berth/v1/explain/namespaces/team-a/jobs/train-2)
python3 - "$RAW" <<'PY' || fail "(1) kubectl get --raw: $RAW"
import json, sys
r = json.loads(sys.argv[1])
assert r["kind"] == "Job" and r["layer"] == "NotAdmitted", r
assert any("would have to finish" in f["statement"] for f in r["findings"]), r["findings"]
assert all("evidence" in f for f in r["findings"])
PY
"$KUBECTL" get --raw "/berth/v1/explain/namespaces/team-a/jobs/train-1?output=text" | grep -q "^Job team-a/train-1: Running" ||
  fail "(5) kubectl get --raw ?output=text"
ERR=$("$KUBECTL" get --raw /berth/v1/explain/namespaces/team-a/jobs/nope 2>&1)
grep -qF 'Error from server (NotFound): jobs.batch "nope" not found' <<<"$ERR" || fail "(http) missing job: $ERR"
ERR=$("$BERTH" explain job/nope -n team-a --kubeconfig "$KUBECONFIG" 2>&1) && fail "explain of a missing job exits 0"
grep -qF 'Error from server (NotFound): jobs.batch "nope" not found' <<<"$ERR" || fail "(cli) missing job: $ERR"
echo "ok: HTTP form and errors"

# ---- (2) admitted but unschedulable: nominalQuota 7 above the node's 5 cpu ---------------
job team-b big 6
expect team-b job/big "Job team-b/big: AdmittedPodsPending" \
  "0/1 nodes are available: 1 Insufficient cpu." \
  "node node-0: Insufficient cpu" \
  "ClusterQueue cq-seven nominalQuota for cpu in flavor default-flavor is 7, above the 5 allocatable of the 1 node the flavor selects (node-0)" \
  "fix: set nominalQuota to at most 5"
POD=$("$KUBECTL" get pods -n team-b -l job-name=big -o name | head -1)
expect team-b "$POD" "AdmittedPodsPending" "1 Insufficient cpu."

# ---- (3) ClusterQueue referencing a missing flavor -------------------------------------
job team-c typo 1
expect team-c job/typo "Job team-c/typo: NotAdmitted" \
  "ClusterQueue cq-typo (from LocalQueue team-c/user-queue) is inactive: FlavorNotFound (ResourceFlavor default-flavour does not exist)" \
  "fix: create ResourceFlavor default-flavour"

# ---- (4) queue-name as an annotation ---------------------------------------------------
job team-d annotated 500m annotation
expect team-d job/annotated "Job team-d/annotated: NotManaged" \
  "names its queue in the annotation kueue.x-k8s.io/queue-name=user-queue, which Kueue does not read" \
  "fix: move it to metadata.labels: kueue.x-k8s.io/queue-name: user-queue"

OUT=$("$BERTH" explain job/train-2 -n team-a -o json --kubeconfig "$KUBECONFIG")
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["layer"]=="NotAdmitted"' "$OUT" || fail "-o json: $OUT"

e2e_stop_server
[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES failure(s)"; exit 1; }

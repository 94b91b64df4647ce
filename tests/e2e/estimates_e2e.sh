#!/usr/bin/env bash
# Estimated start times of pending Workloads (controllers/kueue/start_time_estimates.h),
# as a user reads them through the real kubectl and `berth explain`, on a 1-cpu
# ClusterQueue where every Job asks the whole cpu:
#  1. "quick" (sleep 1) runs and finishes: its run time is learned for its LocalQueue and
#     shape;
#  2. "bounded" (activeDeadlineSeconds 300) runs; "next" waits for it: EstimatedStart=True,
#     reason ActiveDeadline, "Expected to start by <bounded's admission + 300 s>";
#  3. "last" waits for "next", whose run time comes from quick's: reason RunTimeHistory,
#     after next's Workload;
#  4. the visibility API's pending workloads carry the same estimates (estimatedStart);
#  5. `berth explain job/next` says when it starts;
#  6. once "bounded" is deleted, "next" is admitted and its EstimatedStart condition is gone.
# Usage: estimates_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_require_kubectl
e2e_init estimates

e2e_start_node_server cpu=4,memory=8Gi --start-estimate-period 1
e2e_yaml_queues cpu=1 memory=1Gi | "$KUBECTL" apply -f - >/dev/null || fail "apply queues"

wl_of() {  # wl_of JOB: the name of the Job's Workload
  "$KUBECTL" get workloads -n team-a -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{end}"
}
cond() {  # cond JOB FIELD: a field of the EstimatedStart condition of the Job's Workload
  "$KUBECTL" get workload -n team-a "$(wl_of "$1")" -o jsonpath="{.status.conditions[?(@.type==\"EstimatedStart\")].$2}"
}
finished() { [ "$("$KUBECTL" get workload -n team-a "$(wl_of "$1")" -o jsonpath='{.status.conditions[?(@.type=="Finished")].status}')" = True ]; }
admitted() { [ "$("$KUBECTL" get workload -n team-a "$(wl_of "$1")" -o jsonpath='{.status.conditions[?(@.type=="Admitted")].status}')" = True ]; }

# ---- 1. a run time to learn -----------------------------------------------------------
e2e_yaml_job team-a quick 1 memory=100Mi command='sleep 1' | "$KUBECTL" apply -f - >/dev/null || fail "apply quick"
wait_until 60 finished quick || fail "quick did not finish"

# ---- 2. a bound ----------------------------------------------------------------------------
e2e_yaml_job team-a bounded 1 memory=100Mi deadline=300 | "$KUBECTL" apply -f - >/dev/null || fail "apply bounded"
wait_until 30 admitted bounded || fail "bounded is not admitted"
e2e_yaml_job team-a next 1 memory=100Mi | "$KUBECTL" apply -f - >/dev/null || fail "apply next"
# last's Workload is created at least a second after next's: the queue orders by
# creationTimestamp (whole seconds), then by uid.
has_workload() { [ -n "$(wl_of "$1")" ]; }
wait_until 30 has_workload next || fail "next has no Workload"
sleep 1.1
e2e_yaml_job team-a last 1 memory=100Mi | "$KUBECTL" apply -f - >/dev/null || fail "apply last"
has_reason() { [ "$(cond "$1" reason)" = "$2" ]; }
wait_until 30 has_reason next ActiveDeadline || fail "next: EstimatedStart reason '$(cond next reason)', want ActiveDeadline"
BOUNDED_WL=$(wl_of bounded)
ADMITTED_AT=$("$KUBECTL" get workload -n team-a "$BOUNDED_WL" -o jsonpath='{.status.conditions[?(@.type=="Admitted")].lastTransitionTime}')
WANT_START=$(date -u -d "@$(( $(date -d "$ADMITTED_AT" +%s) + 300 ))" +%Y-%m-%dT%H:%M:%SZ)
MSG=$(cond next message)
grep -qF "Expected to start by $WANT_START" <<<"$MSG" || fail "next: message '$MSG' lacks 'Expected to start by $WANT_START'"
grep -qF "after team-a/$BOUNDED_WL ends" <<<"$MSG" || fail "next: message '$MSG' does not name bounded's Workload"
[ "$(cond next status)" = True ] || fail "next: EstimatedStart status is not True"

# ---- 3. a chain through a learned run time ---------------------------------------------------
wait_until 30 has_reason last RunTimeHistory || fail "last: EstimatedStart reason '$(cond last reason)', want RunTimeHistory"
grep -qF "after team-a/$(wl_of next) ends" <<<"$(cond last message)" || fail "last: message '$(cond last message)' does not name next's Workload"

# ---- 4. the visibility API ------------------------------------------------------------------
PENDING=$("$KUBECTL" get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue/pendingworkloads)
python3 - "$PENDING" "$WANT_START" <<'PY' || fail "visibility API estimates"
import json, sys
items = json.loads(sys.argv[1])["items"]
assert [i["metadata"]["ownerReferences"][0]["name"] for i in items] == ["next", "last"], items
e = items[0]["estimatedStart"]
assert e["source"] == "ActiveDeadline" and e["upperBound"] is True and e["time"] == sys.argv[2], e
assert 0 < e["waitSeconds"] <= 300, e
assert items[1]["estimatedStart"]["source"] == "RunTimeHistory", items[1]
PY

# ---- 5. berth explain -------------------------------------------------------------------------
EXPLAIN=$("$BERTH" explain job/next -n team-a --kubeconfig "$KUBECONFIG" 2>&1)
grep -qF "When it starts (berth's estimate" <<<"$EXPLAIN" || { fail "explain job/next says nothing of its start"; echo "$EXPLAIN"; }
grep -qF "Expected to start by $WANT_START" <<<"$EXPLAIN" || fail "explain job/next lacks the expected start"

# ---- 6. admitted: the estimate goes -------------------------------------------------------
"$KUBECTL" delete job -n team-a bounded --wait=false >/dev/null || fail "delete bounded"
wait_until 60 admitted next || fail "next is not admitted after bounded is gone"
no_estimate() { [ -z "$(cond next reason)" ]; }
wait_until 10 no_estimate || fail "next keeps its EstimatedStart condition once admitted"

e2e_stop_server
if [ "$FAILURES" -eq 0 ]; then echo "PASS: estimates e2e"; exit 0; fi
echo "$FAILURES check(s) failed"; exit 1

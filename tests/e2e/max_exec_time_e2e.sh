#!/usr/bin/env bash
# Kueue's maximum execution time (the kueue.x-k8s.io/max-exec-time-seconds label) through
# the real kubectl:
#  (a) a Job labelled "abc" or "0" is refused (422) with the label's field path named
#      (Kueue's validateCreateForMaxExecTime);
#  (b) a Job labelled 3 running `sleep 600`: its Workload has spec.maximumExecutionTimeSeconds
#      3; about 3 s after admission it gets the Warning Event MaximumExecutionTimeExceeded
#      "The maximum execution time (3s) exceeded", spec.active false, Evicted reason
#      Deactivated "The workload is deactivated due to exceeding the maximum execution
#      time"; the Job is suspended, its pod goes, and once the quota is released
#      status.accumulatedPastExecutionTimeSeconds holds the admission's seconds;
#  (c) the label of a running Job cannot be added (field is immutable).
# Usage: max_exec_time_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init max-exec-time
LABEL=kueue.x-k8s.io/max-exec-time-seconds
FIELD="metadata.labels[$LABEL]"
wl_of() { "$KUBECTL" get workloads -n team-a -l "kueue.x-k8s.io/job-uid=$("$KUBECTL" get job -n team-a "$1" -o jsonpath='{.metadata.uid}')" -o jsonpath='{.items[0].metadata.name}'; }
cond() {  # cond WORKLOAD TYPE FIELD
  "$KUBECTL" get workload -n team-a "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"
}
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }
# capped_job NAME CPU VALUE: e2e_yaml_job with the max-exec-time-seconds label VALUE.
capped_job() {
  e2e_yaml_job team-a "$1" "$2" |
    sed "s|{kueue.x-k8s.io/queue-name: user-queue}|{kueue.x-k8s.io/queue-name: user-queue, $LABEL: \"$3\"}|"
}

e2e_start_node_server cpu=4,memory=8Gi
e2e_yaml_queues cpu=4 | "$KUBECTL" apply -f - >/dev/null

# ---- (a) bad values are refused with the field named ------------------------------------
out=$(capped_job bad 1 abc | "$KUBECTL" apply -f - 2>&1) && fail "a Job labelled abc was accepted"
grep -qF "$FIELD: Invalid value: \"abc\": strconv.Atoi: parsing \"abc\": invalid syntax" <<<"$out" ||
  fail "abc: $out"
out=$(capped_job bad 1 0 | "$KUBECTL" apply -f - 2>&1) && fail "a Job labelled 0 was accepted"
grep -qF "$FIELD: Invalid value: 0: should be greater than 0" <<<"$out" || fail "0: $out"
"$KUBECTL" get job -n team-a bad >/dev/null 2>&1 && fail "the refused Job exists"

# ---- (b) a Job over its maximum is deactivated --------------------------------------------
capped_job capped 1 3 | "$KUBECTL" apply -f - >/dev/null || fail "capped not created"
wait_until 20 wl_of capped || fail "no Workload for capped"
WL=$(wl_of capped)
[ "$("$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.spec.maximumExecutionTimeSeconds}')" = 3 ] ||
  fail "spec.maximumExecutionTimeSeconds: $("$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.spec}')"
wait_until 20 cond_is "$WL" Admitted status True || fail "capped not admitted"
admitted_at=$(date -d "$(cond "$WL" Admitted lastTransitionTime)" +%s)
wait_until 20 "$KUBECTL" wait -n team-a pod -l job-name=capped --for=jsonpath='{.status.phase}'=Running --timeout=1s ||
  fail "capped's pod does not run"
wait_until 20 cond_is "$WL" Evicted reason Deactivated || fail "not evicted: $("$KUBECTL" get workload -n team-a "$WL" -o yaml)"
evicted_at=$(date -d "$(cond "$WL" Evicted lastTransitionTime)" +%s)
# From the conditions' own times (whole seconds), not from when this script saw them: a
# loaded machine delays what kubectl sees, not what the controller did.
elapsed=$((evicted_at - admitted_at))
[ "$elapsed" -ge 2 ] && [ "$elapsed" -le 12 ] || fail "evicted ${elapsed} s after the admission, not ~3 s"
[ "$("$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.spec.active}')" = false ] || fail "spec.active is not false"
[ "$(cond "$WL" Evicted message)" = "The workload is deactivated due to exceeding the maximum execution time" ] ||
  fail "Evicted message: $(cond "$WL" Evicted message)"
event=$("$KUBECTL" get events -n team-a --field-selector "involvedObject.name=$WL,reason=MaximumExecutionTimeExceeded" \
  -o jsonpath='{.items[0].type}|{.items[0].message}')
[ "$event" = "Warning|The maximum execution time (3s) exceeded" ] || fail "MaximumExecutionTimeExceeded event: '$event'"
wait_until 20 "$KUBECTL" wait -n team-a job/capped --for=jsonpath='{.spec.suspend}'=true --timeout=1s ||
  fail "capped not suspended"
wait_until 30 sh -c "[ -z \"\$('$KUBECTL' get pods -n team-a -l job-name=capped -o name)\" ]" ||
  fail "capped's pod is still there"
wait_until 20 cond_is "$WL" QuotaReserved status False || fail "quota not released"
past=$("$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.status.accumulatedPastExecutionTimeSeconds}')
[ -n "$past" ] && [ "$past" -ge 2 ] || fail "accumulatedPastExecutionTimeSeconds: '$past'"
"$KUBECTL" describe workload -n team-a "$WL" | grep -q "MaximumExecutionTimeExceeded" ||
  fail "kubectl describe shows no MaximumExecutionTimeExceeded"

# ---- (c) a running Job's label is immutable -------------------------------------------
e2e_yaml_job team-a free 1 | "$KUBECTL" apply -f - >/dev/null
wait_until 20 "$KUBECTL" wait -n team-a job/free --for=jsonpath='{.spec.suspend}'=false --timeout=1s ||
  fail "free not started"
out=$("$KUBECTL" label job -n team-a free "$LABEL=5" 2>&1) && fail "the label was added to a running Job"
grep -qF "$FIELD: Invalid value: \"5\": field is immutable" <<<"$out" || fail "label on a running Job: $out"
e2e_stop_server

[ "$FAILURES" -eq 0 ] && echo "PASS" || echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]

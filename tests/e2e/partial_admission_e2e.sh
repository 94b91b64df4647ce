#!/usr/bin/env bash
# Kueue's partial admission through the real kubectl (Kueue's site/content/en/docs/tasks/
# run/jobs.md "Partial admission", site/static/examples/jobs/sample-job-partial-admission.yaml):
# a Job of parallelism 4, completions 4 and kueue.x-k8s.io/job-min-parallelism "2" on a
# ClusterQueue with room for 2 one-cpu pods is admitted with podSetAssignments[0].count 2,
# runs with spec.parallelism 2 (completions stay 4) and completes; a Job without the
# annotation that does not fit stays suspended with its parallelism; a bad annotation is
# refused (422 naming it, Kueue's job_webhook.go); an Indexed Job with
# kueue.x-k8s.io/job-completions-equal-parallelism runs with completions 2 as well.
# Usage: partial_admission_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init partial-admission
e2e_start_node_server cpu=8,memory=16Gi

job_yaml() {  # job_yaml NAME [MIN_PARALLELISM [EXTRA_ANNOTATIONS [EXTRA_SPEC]]]
  local ann=""
  # Quoted in a variable: quotes inside ${x:+word} in a here-document are not kept.
  [ -z "${2:-}" ] || ann="kueue.x-k8s.io/job-min-parallelism: \"$2\""
  [ -z "${3:-}" ] || ann="$ann, $3"
  local extra=${4:-}
  cat <<EOF
---
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue}
  annotations: {$ann}
spec:
  parallelism: 4
  completions: 4$extra
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, 'sleep 1'], resources: {requests: {cpu: "1"}}}
EOF
}
{ e2e_yaml_queues cpu=2; job_yaml partial 2; } | "$KUBECTL" apply -f - >/dev/null || fail "apply"

wl_of() { "$KUBECTL" get workloads -n team-a -o jsonpath="{.items[?(@.metadata.ownerReferences[0].name==\"$1\")]$2}"; }
admitted() { [ "$(wl_of partial '.status.conditions[?(@.type=="Admitted")].status')" = True ]; }
wait_until 30 admitted || fail "the partial Job's Workload is not Admitted"
[ "$(wl_of partial '.spec.podSets[0].minCount')" = 2 ] || fail "Workload minCount: '$(wl_of partial '.spec.podSets[0].minCount')'"
[ "$(wl_of partial '.status.admission.podSetAssignments[0].count')" = 2 ] ||
  fail "admitted count: '$(wl_of partial '.status.admission.podSetAssignments[0].count')', want 2"
[ "$(wl_of partial '.status.admission.podSetAssignments[0].resourceUsage.cpu')" = 2 ] || fail "admitted cpu usage"
OUT=$("$KUBECTL" get job partial -n team-a -o jsonpath='{.spec.parallelism} {.spec.completions}')
[ "$OUT" = "2 4" ] || fail "the running Job's parallelism/completions: '$OUT', want '2 4'"
complete() { "$KUBECTL" get job partial -n team-a -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' | grep -qx True; }
wait_until 90 complete || fail "the partially admitted Job did not complete"
[ "$("$KUBECTL" get job partial -n team-a -o jsonpath='{.status.succeeded}')" = 4 ] || fail "succeeded != 4"
finished() { [ "$(wl_of partial '.status.conditions[?(@.type=="Finished")].status')" = True ]; }
wait_until 30 finished || fail "the Workload is not Finished"
[ "$FAILURES" -eq 0 ] && echo "ok: admitted with 2 of 4 pods, ran with parallelism 2 and completed"

# Without the annotation the same Job waits whole.
job_yaml whole | "$KUBECTL" apply -f - >/dev/null || fail "apply whole"
pending() { wl_of whole '.status.conditions[?(@.type=="QuotaReserved")].message' | grep -q 'insufficient quota for cpu'; }
wait_until 30 pending || fail "the whole Job's Workload: '$(wl_of whole '.status.conditions')'"
OUT=$("$KUBECTL" get job whole -n team-a -o jsonpath='{.spec.suspend} {.spec.parallelism}')
[ "$OUT" = "true 4" ] || fail "the whole Job: '$OUT', want 'true 4'"
[ "$(wl_of whole '.spec.podSets[0].minCount')" = "" ] || fail "a Job without the annotation has a minCount"

# A bad annotation is refused with the field named, and nothing is stored.
OUT=$(job_yaml bad 4 | "$KUBECTL" apply -f - 2>&1)
grep -q 'metadata.annotations\[kueue.x-k8s.io/job-min-parallelism\]: Invalid value: 4: should be between 0 and 3' <<<"$OUT" ||
  fail "min-parallelism 4 of 4: $OUT"
"$KUBECTL" get job bad -n team-a >/dev/null 2>&1 && fail "the refused Job was stored"
OUT=$(job_yaml bad2 2 'kueue.x-k8s.io/job-completions-equal-parallelism: "true"' | "$KUBECTL" apply -f - 2>&1)
grep -q 'should not be enabled for NonIndexed jobs' <<<"$OUT" || fail "completions-equal-parallelism on a NonIndexed Job: $OUT"

# Indexed with job-completions-equal-parallelism: runs 2 of 4 with completions 2 (the quota
# of the finished partial Job is back; 'whole' still waits for 4).
"$KUBECTL" delete job whole -n team-a --wait=false >/dev/null
job_yaml synced 2 'kueue.x-k8s.io/job-completions-equal-parallelism: "true"' $'\n  completionMode: Indexed' |
  "$KUBECTL" apply -f - >/dev/null || fail "apply synced"
synced_complete() { "$KUBECTL" get job synced -n team-a -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' | grep -qx True; }
wait_until 90 synced_complete || fail "the synced Job did not complete: $("$KUBECTL" get job synced -n team-a -o jsonpath='{.spec} {.status}')"
OUT=$("$KUBECTL" get job synced -n team-a -o jsonpath='{.spec.parallelism} {.spec.completions} {.status.succeeded} {.status.completedIndexes}')
[ "$OUT" = "2 2 2 0,1" ] || fail "the synced Job: '$OUT', want '2 2 2 0,1'"

e2e_stop_server
[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES check(s) failed; server log: $WORK/server.log"; exit 1; }

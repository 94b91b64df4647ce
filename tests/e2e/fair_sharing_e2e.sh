#!/usr/bin/env bash
# Kueue's Fair Sharing through `berth server --config` and the real kubectl (issue 21's
# story): ClusterQueues team-a (fairSharing.weight 1) and team-b (weight 2), no nominal quota
# of their own, share the 6 cpu of Cohort "shared" (reclaimWithinCohort Any).
#  (a) a v1beta2 fairSharing section without preemptionStrategies stops the server;
#  (b) team-a's six 1-cpu Jobs fill the cohort (status.fairSharing.weightedShare 1000);
#  (c) team-b's six Jobs then preempt team-a's (Preempted reason InCohortFairSharing) until
#      the shares are 1:2 — team-a 2 Jobs, team-b 4, both weightedShare 334 (⌈2/6·1000⌉ and
#      ⌈4/6·1000/2⌉) — and stay so: one more for team-b would pass neither strategy;
#  (d) kueue_cluster_queue_weighted_share and kueue_cohort_weighted_share in /metrics.
# Usage: fair_sharing_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init fair-sharing

# ---- (a) v1beta2 requires the strategies ----------------------------------------------
cat >"$WORK/bad.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing: {}
EOF
e2e_expect_bad_config "$WORK/bad.yaml" "fairSharing.preemptionStrategies: Required value: must be specified"

# ---- (b) team-a fills the cohort -------------------------------------------------------
cat >"$WORK/kueue.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
integrations:
  frameworks: [batch/job]
EOF
e2e_start_node_server cpu=8,memory=16Gi --config "$WORK/kueue.yaml"
grep -q 'fairSharing on \[LessThanOrEqualToFinalShare, LessThanInitialShare\]' "$WORK/server.log" ||
  fail "the server does not log fairSharing on"
team() {  # team NAME WEIGHT
  cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  cohortName: shared
  namespaceSelector: {}
  fairSharing: {weight: "$2"}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: "0"}]}]
EOF
  e2e_yaml_namespace "$1"
  e2e_yaml_local_queue "$1" user-queue "$1"
}
{
  e2e_yaml_flavor default-flavor
  cat <<'EOF'
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: shared}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: "6"}]}]
EOF
  team team-a 1
  team team-b 2
} | "$KUBECTL" apply -f - >/dev/null || fail "applying the queues"

admitted() {  # admitted NAMESPACE: how many of its Workloads are Admitted
  "$KUBECTL" get workloads -n "$1" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Admitted")].status}{"\n"}{end}' |
    grep -c '^True$'
}
admitted_is() { [ "$(admitted "$1")" = "$2" ]; }
share() { "$KUBECTL" get "$1" "$2" -o jsonpath='{.status.fairSharing.weightedShare}'; }
share_is() { [ "$(share "$1" "$2")" = "$3" ]; }

for i in 1 2 3 4 5 6; do e2e_yaml_job team-a "a-$i" 1; done | "$KUBECTL" apply -f - >/dev/null
wait_until 60 admitted_is team-a 6 || fail "team-a admitted $(admitted team-a) of 6"
wait_until 10 share_is clusterqueue team-a 1000 || fail "team-a weightedShare $(share clusterqueue team-a), want 1000"

# ---- (c) team-b preempts down to the 1:2 shares -----------------------------------------
for i in 1 2 3 4 5 6; do e2e_yaml_job team-b "b-$i" 1; done | "$KUBECTL" apply -f - >/dev/null
converged() { admitted_is team-a 2 && admitted_is team-b 4; }
wait_until 120 converged || fail "admitted team-a $(admitted team-a) (want 2), team-b $(admitted team-b) (want 4)"
sleep 5  # no further preemption
converged || fail "after 5 s: admitted team-a $(admitted team-a) (want 2), team-b $(admitted team-b) (want 4)"
wait_until 10 share_is clusterqueue team-a 334 || fail "team-a weightedShare $(share clusterqueue team-a), want 334"
wait_until 10 share_is clusterqueue team-b 334 || fail "team-b weightedShare $(share clusterqueue team-b), want 334"
wait_until 10 share_is cohort shared 0 || fail "Cohort shared weightedShare '$(share cohort shared)', want 0 (a root)"
reasons=$("$KUBECTL" get workloads -n team-a -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Preempted")].reason}{"\n"}{end}' |
  grep -v '^$' | sort | uniq -c | tr -s ' ')
[ "$reasons" = " 4 InCohortFairSharing" ] || fail "Preempted reasons of team-a: '$reasons'"
[ -z "$("$KUBECTL" get workloads -n team-b -o jsonpath='{.items[*].status.conditions[?(@.type=="Preempted")].reason}')" ] ||
  fail "a team-b Workload was preempted"

# ---- (d) the gauges ----------------------------------------------------------------------
metrics=$("$KUBECTL" get --raw /metrics)
grep -q '^kueue_cluster_queue_weighted_share{.*cluster_queue="team-b".*} 333.33' <<<"$metrics" ||
  fail "kueue_cluster_queue_weighted_share of team-b: $(grep '^kueue_cluster_queue_weighted_share' <<<"$metrics")"
grep -q '^kueue_cohort_weighted_share{.*cohort="shared".*} 0$' <<<"$metrics" ||
  fail "kueue_cohort_weighted_share of shared: $(grep '^kueue_cohort_weighted_share' <<<"$metrics")"
e2e_stop_server

[ "$FAILURES" -eq 0 ] && echo "PASS" || echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]

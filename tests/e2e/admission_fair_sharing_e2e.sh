#!/usr/bin/env bash
# Kueue's Admission Fair Sharing through `berth server --config` and the real kubectl (issue
# 21 item 2): one 2-cpu ClusterQueue with admissionScope UsageBasedAdmissionFairSharing,
# shared by the LocalQueues of namespaces team-a and team-b.
#  (a) a negative usageHalfLifeTime stops the server with the field named;
#  (b) team-a floods the queue with four 1-cpu Jobs (two run, two wait); team-b submits two
#      later. When team-a's running two finish, team-b's two are admitted ahead of team-a's
#      older two: every admission of team-a added its entry penalty to its LocalQueue's usage;
#  (c) each LocalQueue shows status.fairSharing.admissionFairSharingStatus (consumedResources,
#      lastUpdate);
#  (d) kueue_local_queue_admission_fair_sharing_usage in /metrics;
#  (e) the same story on a ClusterQueue without admissionScope admits in FIFO order (its
#      LocalQueues are sampled all the same, as Kueue samples every LocalQueue).
# Usage: admission_fair_sharing_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init admission-fair-sharing

# ---- (a) a bad section stops the server ---------------------------------------------------
cat >"$WORK/bad.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing: {usageHalfLifeTime: -1s}
EOF
e2e_expect_bad_config "$WORK/bad.yaml" \
  'admissionFairSharing.usageHalfLifeTime: Invalid value: "-1s": must be greater than or equal to 0'

cat >"$WORK/kueue.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 1h
  usageSamplingInterval: 2s
integrations:
  frameworks: [batch/job]
EOF
e2e_start_node_server cpu=8,memory=16Gi --config "$WORK/kueue.yaml"
grep -q 'admissionFairSharing on (usageHalfLifeTime 3600s, usageSamplingInterval 2s)' "$WORK/server.log" ||
  fail "the server does not log admissionFairSharing on"

queues() {  # queues CLUSTERQUEUE USAGE_BASED(yes|no)
  local scope=""
  [ "$2" = yes ] && scope=$'\n  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}'
  cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  namespaceSelector: {}$scope
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: "2"}]}]
EOF
}
ns_of() { echo "$1-$2"; }  # ns_of CQ TEAM
phase() { "$KUBECTL" get workloads -n "$1" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}={.status.conditions[?(@.type=="Admitted")].status}/{.status.conditions[?(@.type=="Finished")].status}{"\n"}{end}'; }
admitted_set() {  # admitted_set CQ: the running (admitted, not finished) jobs of both teams, sorted
  { phase "$(ns_of "$1" a)"; phase "$(ns_of "$1" b)"; } | grep '=True/$' | cut -d= -f1 | sort | tr '\n' ' '
}
show_workloads() {  # show_workloads CQ: every Workload of its namespaces, for a failure's report
  "$KUBECTL" get workloads -A -o custom-columns='NAMESPACE:.metadata.namespace,JOB:.metadata.ownerReferences[0].name,RV:.metadata.resourceVersion,QUOTARESERVED:.status.conditions[?(@.type=="QuotaReserved")].status,ADMITTED:.status.conditions[?(@.type=="Admitted")].status,FINISHED:.status.conditions[?(@.type=="Finished")].status,CLUSTERQUEUE:.status.admission.clusterQueue' |
    grep -E "^(NAMESPACE|$1-)"
}
story() {  # story CQ USAGE_BASED WANT_AFTER
  local cq=$1 ns_a ns_b
  ns_a=$(ns_of "$cq" a) ns_b=$(ns_of "$cq" b)
  {
    e2e_yaml_flavor default-flavor
    queues "$cq" "$2"
    e2e_yaml_namespace "$ns_a" "$ns_b"
    e2e_yaml_local_queue "$ns_a" user-queue "$cq"
    e2e_yaml_local_queue "$ns_b" user-queue "$cq"
  } | "$KUBECTL" apply -f - >/dev/null || fail "$cq: applying the queues"
  # team-a's first two finish when told to (a file in their working directory).
  for i in 1 2; do e2e_yaml_job "$ns_a" "a-$i" 1 "command=while [ ! -f go ]; do sleep 0.2; done"; done |
    "$KUBECTL" apply -f - >/dev/null || fail "$cq: team-a's first Jobs"
  running_two() { [ "$(admitted_set "$cq")" = "a-1 a-2 " ]; }
  wait_until 60 running_two || fail "$cq: running '$(admitted_set "$cq")', want 'a-1 a-2 '"
  sleep 1.1  # creation timestamps have 1 s resolution: team-a's next two are older than team-b's
  for i in 3 4; do e2e_yaml_job "$ns_a" "a-$i" 1; done | "$KUBECTL" apply -f - >/dev/null
  sleep 1.1
  for i in 1 2; do e2e_yaml_job "$ns_b" "b-$i" 1; done | "$KUBECTL" apply -f - >/dev/null
  sleep 2
  running_two || fail "$cq: before any end, running '$(admitted_set "$cq")', want 'a-1 a-2 '"
  for pod in $("$KUBECTL" get pods -n "$ns_a" -l 'job-name in (a-1,a-2)' -o jsonpath='{.items[*].metadata.uid}'); do
    touch "$(find "$WORK/data" -path "*_${pod}/work" | head -1)/go"
  done
  want_after() { [ "$(admitted_set "$cq")" = "$3" ]; }
  wait_until 60 want_after "$@" || { fail "$cq: after team-a's two ended, running '$(admitted_set "$cq")', want '$3'"; show_workloads "$cq"; }
  sleep 3  # and it stays so
  want_after "$@" || fail "$cq: 3 s later, running '$(admitted_set "$cq")', want '$3'"
}

# ---- (b) team-b goes ahead of team-a's older Jobs ---------------------------------------
story afs yes "b-1 b-2 "

# ---- (c) the LocalQueues' status ------------------------------------------------------------
consumed() { "$KUBECTL" get lq -n "$1" user-queue -o jsonpath='{.status.fairSharing.admissionFairSharingStatus.consumedResources.cpu}'; }
# In nano-units: consumedResources keeps amounts below 1m as "382000n".
nano() { local q=$1; case $q in *n) echo "${q%n}" ;; *u) echo $((${q%u} * 1000)) ;; *m) echo $((${q%m} * 1000000)) ;; '') echo 0 ;; *) echo $((q * 1000000000)) ;; esac; }
# With usageSamplingInterval 2s and usageHalfLifeTime 1h the amounts are small (an entry
# penalty is α(2s) = 0.04 % of a cpu; 2 running cpus add 0.77m per sample): which team has
# more depends on how long each ran, so only that both consumed something is asserted here
# (the controller tests assert the amounts on a fake clock).
both_consumed() { [ "$(nano "$(consumed afs-a)")" -gt 0 ] && [ "$(nano "$(consumed afs-b)")" -gt 0 ]; }
wait_until 20 both_consumed || fail "consumedResources cpu: team-a '$(consumed afs-a)', team-b '$(consumed afs-b)' (want both > 0)"
last=$("$KUBECTL" get lq -n afs-a user-queue -o jsonpath='{.status.fairSharing.admissionFairSharingStatus.lastUpdate}')
[[ $last =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] || fail "lastUpdate '$last'"
"$KUBECTL" get lq -n afs-a user-queue -o yaml | grep -q 'consumedResources:' || fail "kubectl get lq -o yaml lacks consumedResources"

# ---- (d) the gauge ----------------------------------------------------------------------------
metrics=$("$KUBECTL" get --raw /metrics)
grep -Eq '^kueue_local_queue_admission_fair_sharing_usage\{.*cluster_queue="afs".*name="user-queue".*namespace="afs-a".*\} [0-9.e-]+$' <<<"$metrics" ||
  fail "kueue_local_queue_admission_fair_sharing_usage of afs-a: $(grep '^kueue_local_queue_admission_fair_sharing_usage' <<<"$metrics")"

# ---- (e) without admissionScope: FIFO ----------------------------------------------------------
story fifo no "a-3 a-4 "
e2e_stop_server

[ "$FAILURES" -eq 0 ] && echo "PASS" || echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]

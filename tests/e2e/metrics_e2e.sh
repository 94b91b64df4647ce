#!/usr/bin/env bash
# /metrics of a running `berth server` (issue #8 part 3), scraped with the real kubectl
# (`kubectl get --raw /metrics`):
#  1. the scrape is valid Prometheus text: `promtool check metrics` (Debian's prometheus
#     package) accepts it, lint included, and python3-prometheus-client's parser reads it;
#  2. a scripted scenario — three low-priority Jobs admitted (1 cpu each of a 3-cpu
#     ClusterQueue), then a high-priority one that preempts exactly one of them — leaves
#     the values Kueue, kube-scheduler and kube-apiserver would report: admitted counts per
#     priority class, one eviction with reason Preempted, one InClusterQueue preemption,
#     one inadmissible pending workload, quota usage and nominal quota, four pods bound,
#     no pod-level preemption, and the four Job creations counted by the API server.
# Usage: metrics_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip (no kubectl,
# promtool or prometheus_client).
set -uo pipefail
BERTH=${1:?berth binary}
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}
PYTHON=${PYTHON:-/usr/bin/python3}  # Debian's, where python3-prometheus-client is installed
source "$(dirname "$0")/lib.sh"
e2e_require_kubectl
[ -x "$PROMTOOL" ] || { echo "SKIP: $PROMTOOL not found (Debian package prometheus)"; exit 77; }
"$PYTHON" -c 'import prometheus_client' 2>/dev/null || { echo "SKIP: python3-prometheus-client missing"; exit 77; }
e2e_init metrics
scrape() { "$KUBECTL" get --raw /metrics >"$WORK/metrics.txt"; }
# metric NAME [LABEL=VALUE...]: the value of the one sample NAME whose labels include the
# given ones, parsed by prometheus_client; "absent" when none, "ambiguous" when several.
metric() {
  "$PYTHON" - "$WORK/metrics.txt" "$@" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
path, name, *wanted = sys.argv[1:]
want = dict(w.split("=", 1) for w in wanted)
found = [s.value for f in text_string_to_metric_families(open(path).read()) for s in f.samples
         if s.name == name and all(s.labels.get(k) == v for k, v in want.items())]
print("absent" if not found else "ambiguous" if len(found) > 1 else "%.15g" % found[0])
PY
}
# expect EXPECTED NAME [LABEL=VALUE...]
expect() {
  local want=$1; shift
  local got
  got=$(metric "$@")
  [ "$got" = "$want" ] || fail "$* = $got, want $want"
}

e2e_start_node_server cpu=8,memory=16Gi

# ---- 1. the text format ---------------------------------------------------------------
scrape || fail "kubectl get --raw /metrics"
"$PROMTOOL" check metrics <"$WORK/metrics.txt" || fail "promtool check metrics rejects the scrape"
[ "$(metric apiserver_request_total verb=GET subresource=/api component= code=200)" != absent ] ||
  fail "kubectl's discovery GET /api is not counted"

# ---- 2. admit 3, evict 1 ---------------------------------------------------------------
job() {  # job NAME PRIORITY_CLASS
  e2e_yaml_job team-a "$1" 1 priority="$2" memory=100Mi grace=5 command='exec sleep 600'
}
{
  e2e_yaml_queues preemption=LowerPriority cpu=3 memory=3Gi
  e2e_yaml_workload_priority_class low 100
  e2e_yaml_workload_priority_class high 1000
} | "$KUBECTL" apply -f - >/dev/null || fail "apply queues"
{ job low-1 low; job low-2 low; job low-3 low; } | "$KUBECTL" apply -f - >/dev/null || fail "apply low jobs"
admitted_count() {  # admitted_count N: exactly N Workloads have Admitted=True
  [ "$("$KUBECTL" get workloads -n team-a -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Admitted")].status}{"\n"}{end}' | grep -cx True)" = "$1" ]
}
running_pods() {  # running_pods N: exactly N pods Running
  [ "$("$KUBECTL" get pods -n team-a --field-selector=status.phase=Running -o name | wc -l)" = "$1" ]
}
wait_until 60 admitted_count 3 || fail "the three low Workloads are not all Admitted"
wait_until 60 running_pods 3 || fail "the three low pods are not Running"

job high high | "$KUBECTL" apply -f - >/dev/null || fail "apply high job"
high_admitted() {
  "$KUBECTL" get workloads -n team-a -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Admitted")].status}{"\n"}{end}' |
    grep -q '^job-high-.*=True$'
}
wait_until 90 high_admitted || fail "the high Workload is not Admitted after preempting a low one"
wait_until 60 running_pods 3 || fail "not exactly three pods Running after the preemption"
# The evicted low Workload is requeued and found inadmissible (its quota is taken).
requeued_inadmissible() { scrape && [ "$(metric kueue_pending_workloads cluster_queue=cluster-queue status=inadmissible)" = 1 ]; }
wait_until 30 requeued_inadmissible || fail "the preempted Workload is not pending inadmissible"
# ClusterQueue gauges follow its status, which a workload change reconciles
# after Kueue's UpdatesBatchPeriod (1 s).
cq_gauges_settled() { scrape && [ "$(metric kueue_reserving_active_workloads cluster_queue=cluster-queue)" = 3 ] &&
  [ "$(metric kueue_admitted_active_workloads cluster_queue=cluster-queue)" = 3 ]; }
wait_until 30 cq_gauges_settled || fail "the ClusterQueue gauges do not show the three admitted Workloads"
lq_gauges_settled() { scrape && [ "$(metric kueue_local_queue_reserving_active_workloads name=user-queue namespace=team-a)" = 3 ] &&
  [ "$(metric kueue_local_queue_pending_workloads name=user-queue namespace=team-a status=inadmissible)" = 1 ]; }
wait_until 30 lq_gauges_settled || fail "the LocalQueue gauges do not show three admitted Workloads and one inadmissible"

scrape || fail "kubectl get --raw /metrics"
"$PROMTOOL" check metrics <"$WORK/metrics.txt" || fail "promtool check metrics rejects the scrape after the scenario"
CQ=cluster_queue=cluster-queue
expect 3 kueue_admitted_workloads_total $CQ priority_class=low replica_role=standalone
expect 1 kueue_admitted_workloads_total $CQ priority_class=high
expect 3 kueue_quota_reserved_workloads_total $CQ priority_class=low
expect 1 kueue_evicted_workloads_total $CQ reason=Preempted underlying_cause= priority_class=low
expect absent kueue_evicted_workloads_total $CQ priority_class=high
expect 1 kueue_preempted_workloads_total preempting_cluster_queue=cluster-queue reason=InClusterQueue
expect 1 kueue_pending_workloads $CQ status=inadmissible
expect 0 kueue_pending_workloads $CQ status=active
expect 3 kueue_reserving_active_workloads $CQ
expect 3 kueue_admitted_active_workloads $CQ
expect 1 kueue_cluster_queue_status $CQ status=active
expect 0 kueue_cluster_queue_status $CQ status=pending
expect 3 kueue_cluster_queue_nominal_quota $CQ flavor=default-flavor resource=cpu cohort=
expect 3 kueue_cluster_queue_resource_usage $CQ flavor=default-flavor resource=cpu
expect 3 kueue_cluster_queue_resource_reservation $CQ flavor=default-flavor resource=cpu
expect 3221225472 kueue_cluster_queue_nominal_quota $CQ flavor=default-flavor resource=memory
expect 3 kueue_quota_reserved_wait_time_seconds_count $CQ priority_class=low
# The same through the LocalQueue (Kueue's LocalQueueMetrics, on in berth).
LQ="name=user-queue namespace=team-a"
expect 3 kueue_local_queue_admitted_workloads_total $LQ priority_class=low replica_role=standalone
expect 1 kueue_local_queue_admitted_workloads_total $LQ priority_class=high
expect 1 kueue_local_queue_evicted_workloads_total $LQ reason=Preempted underlying_cause= priority_class=low
expect 3 kueue_local_queue_quota_reserved_wait_time_seconds_count $LQ priority_class=low
expect 1 kueue_local_queue_pending_workloads $LQ status=inadmissible
expect 0 kueue_local_queue_pending_workloads $LQ status=active
expect 3 kueue_local_queue_reserving_active_workloads $LQ
expect 3 kueue_local_queue_admitted_active_workloads $LQ
expect 1 kueue_local_queue_status $LQ active=True
expect 3 kueue_local_queue_resource_usage $LQ flavor=default-flavor resource=cpu
expect 4 scheduler_schedule_attempts_total result=scheduled profile=default-scheduler
expect 4 scheduler_pod_scheduling_attempts_count
expect 0 scheduler_preemption_attempts_total
expect 0 scheduler_pending_pods queue=unschedulable
expect 4 apiserver_request_total verb=POST group=batch version=v1 resource=jobs scope=resource code=201 component=apiserver dry_run=
expect 4 apiserver_request_duration_seconds_count verb=POST group=batch resource=jobs
[ "$(metric apiserver_request_total verb=GET subresource=/metrics code=200)" != absent ] || fail "the scrapes are not counted"

# ---- 3. the cohort tree ------------------------------------------------------------------
# The ClusterQueue joins Cohort "team" under "org" (implicit: named only as a
# parent); each Cohort reports its subtree's quota, reservations and admitted
# workloads (Kueue's cohort metrics, on by default).
"$KUBECTL" apply -f - >/dev/null <<'YAML' || fail "apply the Cohort"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: team}
spec: {parentName: org}
YAML
"$KUBECTL" patch clusterqueue cluster-queue --type merge -p '{"spec":{"cohortName":"team"}}' >/dev/null ||
  fail "patch the ClusterQueue's cohortName"
cohort_gauges_settled() { scrape && [ "$(metric kueue_cohort_subtree_resource_reservations cohort=org flavor=default-flavor resource=cpu)" = 3 ]; }
wait_until 30 cohort_gauges_settled || fail "the root Cohort does not report the subtree's reservations"
expect 1 kueue_cohort_info cohort=team parent_cohort=org root_cohort=org
expect 1 kueue_cohort_info cohort=org parent_cohort= root_cohort=org
expect 1 kueue_cluster_queue_info $CQ parent_cohort=team root_cohort=org
expect 3 kueue_cohort_subtree_quota cohort=team flavor=default-flavor resource=cpu
expect 3221225472 kueue_cohort_subtree_quota cohort=org flavor=default-flavor resource=memory
expect 3 kueue_cohort_subtree_resource_reservations cohort=team flavor=default-flavor resource=cpu
expect 3 kueue_cohort_subtree_admitted_active_workloads cohort=team
expect 3 kueue_cohort_subtree_admitted_active_workloads cohort=org
# The ClusterQueue leaves the tree: both Cohorts' subtrees are empty again.
"$KUBECTL" patch clusterqueue cluster-queue --type merge -p '{"spec":{"cohortName":null}}' >/dev/null ||
  fail "unset the ClusterQueue's cohortName"
cohort_emptied() { scrape && [ "$(metric kueue_cohort_subtree_admitted_active_workloads cohort=team)" = 0 ]; }
wait_until 30 cohort_emptied || fail "Cohort team still counts the ClusterQueue's workloads after it left"
expect absent kueue_cohort_subtree_resource_reservations cohort=org
expect absent kueue_cohort_subtree_quota cohort=team
expect 1 kueue_cohort_info cohort=org parent_cohort= root_cohort=org
expect 1 kueue_cohort_info cohort=team parent_cohort=org root_cohort=org

e2e_stop_server
if [ "$FAILURES" -eq 0 ]; then echo "PASS: metrics e2e"; exit 0; fi
echo "$FAILURES check(s) failed"; exit 1

#!/usr/bin/env bash
# The seeds' two-layer failures through the real kubectl (issue #6):
#  (a) admitted by quota but not placeable: node allocatable cpu 5, ClusterQueue
#      nominalQuota 7, a 6-cpu job -> the Workload is Admitted and the pod stays Pending
#      with "0/1 nodes are available: 1 Insufficient cpu." (the quota-above-allocatable
#      trap of examples/trainer-kueue/README.md);
#  (b) pod-level preemption: 8 low-priority worker pods fill a node, then one
#      high-priority pod arrives. With a PreemptLowerPriority class exactly one worker is
#      preempted (the seed's trap: the gang is broken); with preemptionPolicy Never
#      nothing is preempted and the pod waits (examples/priority-pitfalls/'s fix);
#  (c) PriorityClass admission as kube-apiserver's Priority plugin: the system classes
#      exist, an unknown class and a client priority that disagrees are 403 Forbidden, a
#      globalDefault class is applied to a pod naming none (the globalDefault trap), a second
#      globalDefault, a user value above 1e9 and a changed value are refused.
# Usage: two_layer_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init two-layer
start_server() {  # start_server NODE_CAPACITY: a fresh store, one node of that capacity
  rm -rf "$WORK/data"
  e2e_start_node_server "$1"
}
stop_server() { e2e_stop_server; }

# ---- (a) admitted but unschedulable -------------------------------------------------
start_server cpu=5,memory=16Gi
{ e2e_yaml_queues cpu=7 memory=16Gi; e2e_yaml_job team-a big 6 grace= command='sleep 1'; } |
  "$KUBECTL" apply -f - >/dev/null
admitted() { "$KUBECTL" get workloads -n team-a -o jsonpath='{.items[0].status.conditions[?(@.type=="Admitted")].status}' | grep -qx True; }
wait_until 30 admitted || fail "(a) the 6-cpu job's Workload is not Admitted"
pod_unschedulable() { "$KUBECTL" describe pod -n team-a -l job-name=big | grep -q "0/1 nodes are available: 1 Insufficient cpu."; }
wait_until 30 pod_unschedulable || fail "(a) kubectl describe pod does not show the FailedScheduling message"
OUT=$("$KUBECTL" describe pod -n team-a -l job-name=big)
grep -Eq '^Status: +Pending' <<<"$OUT" || fail "(a) the pod is not Pending: $(grep ^Status <<<"$OUT")"
grep -Eq 'Warning +FailedScheduling .* 0/1 nodes are available: 1 Insufficient cpu\.' <<<"$OUT" ||
  { fail "(a) no FailedScheduling event with kube-scheduler's text"; echo "$OUT" | tail -8; }
OUT=$("$KUBECTL" get pods -n team-a -l job-name=big)
grep -Eq 'big-.* +0/1 +Pending' <<<"$OUT" || fail "(a) kubectl get pods: $OUT"
echo "ok (a): Workload Admitted, pod Pending: 0/1 nodes are available: 1 Insufficient cpu."
stop_server

# ---- (b) pod-level preemption of one gang member, or none with Never ----------------
# gang_then_high POLICY: 8 workers of 1 cpu fill the 8-cpu node, then one high pod of 1 cpu.
gang_then_high() {
  local policy=$1
  start_server cpu=8,memory=16Gi
  "$KUBECTL" apply -f - >/dev/null <<EOF2
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training-low}
value: 100
preemptionPolicy: PreemptLowerPriority
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: inference-high}
value: 1000
preemptionPolicy: $policy
EOF2
  for i in $(seq 0 7); do
    cat <<EOF2
apiVersion: v1
kind: Pod
metadata: {name: worker-$i, namespace: default, labels: {gang: train}}
spec:
  priorityClassName: training-low
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: busybox, command: [/bin/sh, -c, 'sleep 600'], resources: {requests: {cpu: "1"}}}
---
EOF2
  done | "$KUBECTL" apply -f - >/dev/null
  all_running() { [ "$("$KUBECTL" get pods -l gang=train --field-selector=status.phase=Running -o name | wc -l)" -eq 8 ]; }
  wait_until 60 all_running || fail "(b $policy) the 8 workers are not all Running"
  "$KUBECTL" apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: inference, namespace: default}
spec:
  priorityClassName: inference-high
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: busybox, command: [/bin/sh, -c, 'sleep 600'], resources: {requests: {cpu: "1"}}}
EOF2
}
preempted_workers() {
  "$KUBECTL" get events -n default --field-selector reason=Preempted -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | grep -c '^worker-'
}

gang_then_high PreemptLowerPriority
inference_running() { "$KUBECTL" get pod inference -o jsonpath='{.status.phase}' | grep -qx Running; }
wait_until 60 inference_running || fail "(b PreemptLowerPriority) the high-priority pod did not run"
n=$(preempted_workers)
[ "$n" -eq 1 ] || fail "(b PreemptLowerPriority) $n workers preempted, want exactly 1"
left=$("$KUBECTL" get pods -l gang=train --field-selector=status.phase=Running -o name | wc -l)
[ "$left" -eq 7 ] || fail "(b PreemptLowerPriority) $left workers still running, want 7 (a broken gang)"
echo "ok (b): with PreemptLowerPriority exactly one worker was preempted; 7 keep running (the seed's trap)"
stop_server

gang_then_high Never
waits() { "$KUBECTL" get events -n default --field-selector involvedObject.name=inference,reason=FailedScheduling -o name | grep -q .; }
wait_until 30 waits || fail "(b Never) no FailedScheduling event for the high-priority pod"
sleep 3   # give a (wrong) preemption the time to happen
n=$(preempted_workers)
[ "$n" -eq 0 ] || fail "(b Never) $n workers preempted, want 0"
phase=$("$KUBECTL" get pod inference -o jsonpath='{.status.phase}')
[ "$phase" = Pending ] || fail "(b Never) the high-priority pod is $phase, want Pending"
left=$("$KUBECTL" get pods -l gang=train --field-selector=status.phase=Running -o name | wc -l)
[ "$left" -eq 8 ] || fail "(b Never) $left workers running, want 8"
echo "ok (b): with preemptionPolicy Never nothing was preempted; the pod waits Pending"
stop_server

# ---- (c) PriorityClass admission --------------------------------------------------------
B_FAILURES=$FAILURES
start_server cpu=2,memory=4Gi
OUT=$("$KUBECTL" get priorityclass system-cluster-critical system-node-critical -o jsonpath='{.items[*].value}')
[ "$OUT" = "2000000000 2000001000" ] || fail "(c) system classes: '$OUT'"
pod_yaml() {  # pod_yaml NAME EXTRA_SPEC_LINE
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n  %s\n  containers:\n  - {name: main, image: busybox, command: [/bin/sh, -c, "sleep 600"], resources: {requests: {cpu: 100m}}}\n' "$1" "$2"
}
expect_error() {  # expect_error TEXT KUBECTL_ARGS... (stdin passed on)
  local want=$1; shift
  local out; out=$("$KUBECTL" "$@" 2>&1) && { fail "(c) succeeded, want: $want"; return; }
  grep -qF "$want" <<<"$out" || fail "(c) error '$out', want '$want'"
}
expect_error 'Error from server (Forbidden): error when creating "STDIN": pods "x" is forbidden: no PriorityClass with name foo was found' \
  apply -f - < <(pod_yaml x 'priorityClassName: foo')
"$KUBECTL" apply -f - >/dev/null <<'EOF2'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: default-priority}
value: 100
globalDefault: true
EOF2
pod_yaml monitoring 'restartPolicy: Never' | "$KUBECTL" apply -f - >/dev/null || fail "(c) pod without a class refused"
OUT=$("$KUBECTL" get pod monitoring -o jsonpath='{.spec.priorityClassName} {.spec.priority} {.spec.preemptionPolicy}')
[ "$OUT" = "default-priority 100 PreemptLowerPriority" ] || fail "(c) trap 3: the default class gave '$OUT'"
expect_error 'pods "pinned" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name' \
  apply -f - < <(pod_yaml pinned 'priority: 5')
expect_error 'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass default-priority is already marked as default. Only one default can exist' \
  apply -f - < <(printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: second}\nvalue: 5\nglobalDefault: true\n')
expect_error 'value: Forbidden: maximum allowed value of a user defined priority is 1000000000' \
  apply -f - < <(printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: too-high}\nvalue: 2000000000\n')
expect_error 'value: Forbidden: may not be changed in an update.' patch priorityclass default-priority --type=merge -p '{"value": 5}'
[ "$FAILURES" -eq "$B_FAILURES" ] && echo "ok (c): Priority admission and PriorityClass rules through kubectl"
stop_server

[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES check(s) failed; server log: $WORK/server.log"; exit 1; }

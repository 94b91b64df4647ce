#!/usr/bin/env bash
# End-to-end: start `berth server` on a free port with a fresh HOME (kubectl
# caches discovery under ~/.kube/cache) and drive it only through the real
# kubectl, asserting what kubectl prints.
#
# Usage: kubectl_e2e.sh <berth binary> <testdata dir>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail

BERTH=${1:?berth binary}
DATA=${2:?testdata dir}
source "$(dirname "$0")/lib.sh"
e2e_init e2e
start_server() { e2e_start_server; }
stop_server() { e2e_stop_server; }

# run NAME EXPECTED_EXIT CMD...: runs CMD, keeps stdout+stderr in $OUT.
run() {
  local name=$1 want=$2; shift 2
  OUT=$("$@" 2>&1); local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL [$name]: exit $rc, want $want: $*"; echo "$OUT" | sed 's/^/    /'
    FAILURES=$((FAILURES + 1))
  fi
}
# expect NAME REGEX: $OUT must have a line matching the extended regex.
expect() {
  if ! grep -Eq -- "$2" <<<"$OUT"; then
    echo "FAIL [$1]: no line matches /$2/ in:"; echo "$OUT" | sed 's/^/    /'
    FAILURES=$((FAILURES + 1))
  fi
}
expect_not() {
  if grep -Eq -- "$2" <<<"$OUT"; then
    echo "FAIL [$1]: unexpected /$2/ in:"; echo "$OUT" | sed 's/^/    /'
    FAILURES=$((FAILURES + 1))
  fi
}

start_server

# The dispatcher must pick the 1.32 client from /version.
run version 0 "$KUBECTL" version
expect version '^Server Version: v1\.32\.0$'

# Discovery: short names and scopes.
run api-resources 0 "$KUBECTL" api-resources
expect api-resources '^clusterqueues +cq +kueue\.x-k8s\.io/v1beta2 +false +ClusterQueue$'
expect api-resources '^localqueues +lq,queue,queues +kueue\.x-k8s\.io/v1beta2 +true +LocalQueue$|^localqueues +queue,queues,lq +kueue\.x-k8s\.io/v1beta2 +true +LocalQueue$'
expect api-resources '^resourceflavors +.*rf.* +kueue\.x-k8s\.io/v1beta2 +false +ResourceFlavor$'
expect api-resources '^pods +po +v1 +true +Pod$'
expect api-resources '^namespaces +ns +v1 +false +Namespace$'

# apply -f of the seed's Kueue manifests: create, unchanged, change.
run apply-create 0 "$KUBECTL" apply -f "$DATA/seed-kueue.yaml"
expect apply-create '^namespace/team-a created$'
expect apply-create '^resourceflavor\.kueue\.x-k8s\.io/default-flavor created$'
expect apply-create '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue created$'
expect apply-create '^localqueue\.kueue\.x-k8s\.io/lq-team-a created$'
expect apply-create '^workloadpriorityclass\.kueue\.x-k8s\.io/high created$'
expect apply-create '^workloadpriorityclass\.kueue\.x-k8s\.io/low created$'

run apply-unchanged 0 "$KUBECTL" apply -f "$DATA/seed-kueue.yaml"
expect apply-unchanged '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue unchanged$'

sed 's/nominalQuota: "5"/nominalQuota: "6"/' "$DATA/seed-kueue.yaml" >"$WORK/changed.yaml"
run apply-change 0 "$KUBECTL" apply -f "$WORK/changed.yaml"
expect apply-change '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue configured$'
expect apply-change '^localqueue\.kueue\.x-k8s\.io/lq-team-a unchanged$'
run apply-change-value 0 "$KUBECTL" get cq cluster-queue \
  -o 'jsonpath={.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}'
expect apply-change-value '^6$'

# get: printer columns, -o wide, -o yaml, -A, -l.
run get-cq 0 "$KUBECTL" get cq
expect get-cq '^NAME +COHORT +PENDING WORKLOADS$'
expect get-cq '^cluster-queue +'
run get-cq-wide 0 "$KUBECTL" get clusterqueue cluster-queue -o wide
expect get-cq-wide '^NAME +COHORT +STRATEGY +PENDING WORKLOADS +ADMITTED WORKLOADS$'
expect get-cq-wide '^cluster-queue +BestEffortFIFO'
run get-lq 0 "$KUBECTL" get lq -n team-a
expect get-lq '^NAME +CLUSTERQUEUE +PENDING WORKLOADS +ADMITTED WORKLOADS$'
expect get-lq '^lq-team-a +cluster-queue'
run get-lq-all 0 "$KUBECTL" get localqueues -A
expect get-lq-all '^NAMESPACE +NAME +CLUSTERQUEUE'
expect get-lq-all '^team-a +lq-team-a +cluster-queue'
run get-rf 0 "$KUBECTL" get rf
expect get-rf '^NAME +AGE$'
expect get-rf '^default-flavor +[0-9]+s$'
run get-yaml 0 "$KUBECTL" get cq cluster-queue -o yaml
expect get-yaml '^apiVersion: kueue\.x-k8s\.io/v1beta2$'
expect get-yaml '^kind: ClusterQueue$'
expect get-yaml '^  resourceVersion: "[0-9]+"$'
run get-ns 0 "$KUBECTL" get ns
expect get-ns '^default +Active +'
expect get-ns '^team-a +Active +'

run label 0 "$KUBECTL" label lq lq-team-a -n team-a tier=gold
expect label '^localqueue\.kueue\.x-k8s\.io/lq-team-a labeled$'
run select 0 "$KUBECTL" get lq -A -l tier=gold
expect select '^team-a +lq-team-a'
run select-none 0 "$KUBECTL" get lq -A -l 'tier in (silver)'
expect select-none '^No resources found$'
run field-select 0 "$KUBECTL" get lq -A --field-selector metadata.name=lq-team-a
expect field-select '^team-a +lq-team-a'

# The other manifests of both seeds: Trainer runtime + TrainJob, and the
# priority-class pitfalls' recommended setup (PriorityClass, WorkloadPriorityClass,
# ClusterQueue/LocalQueue in v1beta1, PyTorchJob, Pod).
run apply-trainer 0 "$KUBECTL" apply -f "$DATA/seed-trainer.yaml"
expect apply-trainer '^clustertrainingruntime\.trainer\.kubeflow\.org/torch-distributed created$'
expect apply-trainer '^trainjob\.trainer\.kubeflow\.org/lora-sft created$'
run apply-pitfalls 0 "$KUBECTL" apply -f "$DATA/seed-pitfalls.yaml"
expect apply-pitfalls '^namespace/training created$'
expect apply-pitfalls '^priorityclass\.scheduling\.k8s\.io/pytorchjob-zero-priority created$'
expect apply-pitfalls '^workloadpriorityclass\.kueue\.x-k8s\.io/kueue-high created$'
expect apply-pitfalls '^clusterqueue\.kueue\.x-k8s\.io/gpu-cluster-queue created$'
expect apply-pitfalls '^localqueue\.kueue\.x-k8s\.io/training-queue created$'
expect apply-pitfalls '^pytorchjob\.kubeflow\.org/production-training created$'
expect apply-pitfalls '^pod/high-priority-inference created$'
expect apply-pitfalls '^clusterqueue\.kueue\.x-k8s\.io/stable-gpu-queue created$'
# Deprecated CRD versions warn as kube-apiserver does (apiextensions' default text).
expect apply-pitfalls '^Warning: kueue\.x-k8s\.io/v1beta1 ClusterQueue is deprecated; use kueue\.x-k8s\.io/v1beta2 ClusterQueue$'
run apply-pitfalls-again 0 "$KUBECTL" apply -f "$DATA/seed-pitfalls.yaml"
expect apply-pitfalls-again '^pod/high-priority-inference unchanged$'
# The PyTorchJob's container ports are defaulted (the Training Operator's defaulting adds
# pytorchjob-port 23456): kubectl's merge patch replaces the whole containers list, so a
# re-apply is "configured" on a cluster too once the defaults are stored.
expect apply-pitfalls-again '^pytorchjob\.kubeflow\.org/production-training (unchanged|configured)$'

# Re-apply a built-in kind with a change: kubectl sends a strategic merge patch.
sed -e 's/^  name: high-priority-inference$/  name: high-priority-inference\n  labels:\n    team: inference/' \
  "$DATA/seed-pitfalls.yaml" >"$WORK/pitfalls-labelled.yaml"
run apply-pod-change 0 "$KUBECTL" apply -f "$WORK/pitfalls-labelled.yaml"
expect apply-pod-change '^pod/high-priority-inference configured$'
run pod-labels 0 "$KUBECTL" get pod high-priority-inference -n training --show-labels
expect pod-labels 'team=inference'
run get-pod 0 "$KUBECTL" get pods -n training
expect get-pod '^NAME +READY +STATUS +RESTARTS +AGE$'
expect get-pod '^high-priority-inference +0/1 +Pending +0 +[0-9]+s$'
run get-pod-wide 0 "$KUBECTL" get pods -n training -o wide
expect get-pod-wide '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES$'
run get-pc 0 "$KUBECTL" get pc
expect get-pc '^pytorchjob-zero-priority +0 +false +'
run get-pytorchjob 0 "$KUBECTL" get pytorchjobs -n training -o name
expect get-pytorchjob '^pytorchjob\.kubeflow\.org/production-training$'
run get-trainjob 0 "$KUBECTL" get trainjob -n team-a
expect get-trainjob '^lora-sft +'
# A v1beta1 ClusterQueue is stored as v1beta2 and read back in either version.
run get-cq-v1beta1 0 "$KUBECTL" get clusterqueues.v1beta1.kueue.x-k8s.io gpu-cluster-queue -o 'jsonpath={.apiVersion}'
expect get-cq-v1beta1 '^kueue\.x-k8s\.io/v1beta1$'

# Server-side apply: one PATCH (application/apply-patch+yaml), creates when absent.
run apply-server-side 0 "$KUBECTL" apply --server-side -f "$WORK/changed.yaml"
expect apply-server-side '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue serverside-applied$'
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: ssa-flavor\n  labels:\n    made-by: ssa\n' \
  >"$WORK/ssa-new.yaml"
run apply-server-side-create 0 "$KUBECTL" apply --server-side -f "$WORK/ssa-new.yaml"
expect apply-server-side-create '^resourceflavor\.kueue\.x-k8s\.io/ssa-flavor serverside-applied$'
run ssa-get 0 "$KUBECTL" get rf -l made-by=ssa -o name
expect ssa-get '^resourceflavor\.kueue\.x-k8s\.io/ssa-flavor$'

# describe: the generic describer for custom resources, the Pod describer.
run describe-cq 0 "$KUBECTL" describe cq cluster-queue
expect describe-cq '^Name: +cluster-queue$'
expect describe-cq '^Kind: +ClusterQueue$'
expect describe-cq '^Events: +<none>$'
run describe-pod 0 "$KUBECTL" describe pod high-priority-inference -n training
expect describe-pod '^Name: +high-priority-inference$'
expect describe-pod '^Namespace: +training$'
expect describe-pod '^Priority Class Name: +high-priority$'
# Events about the pod (as the scheduler records them) show in describe and get events:
# describe finds them with involvedObject.* field selectors.
POD_UID=$("$KUBECTL" get pod high-priority-inference -n training -o 'jsonpath={.metadata.uid}')
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf 'apiVersion: v1\nkind: Event\nmetadata:\n  name: high-priority-inference.1\n  namespace: training\ninvolvedObject:\n  apiVersion: v1\n  kind: Pod\n  name: high-priority-inference\n  namespace: training\n  uid: %s\nreason: FailedScheduling\nmessage: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."\ntype: Warning\nsource:\n  component: default-scheduler\nreportingComponent: default-scheduler\ncount: 3\nfirstTimestamp: "%s"\nlastTimestamp: "%s"\n' \
  "$POD_UID" "$NOW" "$NOW" >"$WORK/event.yaml"
run event-create 0 "$KUBECTL" apply -f "$WORK/event.yaml"
run describe-pod-events 0 "$KUBECTL" describe pod high-priority-inference -n training
expect describe-pod-events '^  Warning +FailedScheduling +[0-9]+s \(x3 over [0-9]+s\) +default-scheduler +0/1 nodes are available: 1 Insufficient nvidia\.com/gpu\.$'
run get-events 0 "$KUBECTL" get events -n training
expect get-events '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$'
expect get-events '^[0-9]+s +Warning +FailedScheduling +pod/high-priority-inference +0/1 nodes are available'
run describe-ns 0 "$KUBECTL" describe ns training
expect describe-ns '^Status: +Active$'

# patch: merge (any kind), strategic (built-in kinds only), JSON patch.
run patch-merge 0 "$KUBECTL" patch cq cluster-queue --type=merge -p '{"spec":{"queueingStrategy":"StrictFIFO"}}'
expect patch-merge '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue patched$'
run patch-merge-get 0 "$KUBECTL" get cq cluster-queue -o wide
expect patch-merge-get '^cluster-queue +StrictFIFO'
run patch-strategic 0 "$KUBECTL" patch pod high-priority-inference -n training \
  -p '{"metadata":{"finalizers":["example.com/a"]},"spec":{"containers":[{"name":"inference","image":"busybox"}]}}'
expect patch-strategic '^pod/high-priority-inference patched$'
run patch-strategic-get 0 "$KUBECTL" get pod high-priority-inference -n training \
  -o 'jsonpath={.spec.containers[0].name}/{.spec.containers[0].image}/{.spec.containers[0].command[0]}/{.metadata.finalizers}'
expect patch-strategic-get '^inference/busybox/python/\["example.com/a"\]$'
run patch-strategic-cr 1 "$KUBECTL" patch cq cluster-queue --type=strategic -p '{"spec":{"cohort":"x"}}'
# kubectl prints the server's 415 as: error: application/strategic-merge-patch+json
# is not supported by <gvk>: the body of the request was in an unknown format ...
expect patch-strategic-cr 'is not supported by kueue\.x-k8s\.io/v1beta2, Kind=ClusterQueue: the body of the request was in an unknown format'
run patch-finalizer-off 0 "$KUBECTL" patch pod high-priority-inference -n training --type=json \
  -p '[{"op":"remove","path":"/metadata/finalizers"}]'
run patch-json 0 "$KUBECTL" patch lq lq-team-a -n team-a --type=json \
  -p '[{"op":"add","path":"/metadata/annotations","value":{"note":"hi"}}]'
expect patch-json '^localqueue\.kueue\.x-k8s\.io/lq-team-a patched$'
run patch-json-bad 1 "$KUBECTL" patch lq lq-team-a -n team-a --type=json \
  -p '[{"op":"remove","path":"/spec/nope"}]'

# The status subresource, and wait on a condition set through it.
run patch-status 0 "$KUBECTL" patch cq cluster-queue --subresource=status --type=merge \
  -p '{"status":{"conditions":[{"type":"Active","status":"True","reason":"Ready","message":"Can admit new workloads","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}'
expect patch-status '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue patched$'
run wait-condition 0 "$KUBECTL" wait --for=condition=Active cq/cluster-queue --timeout=20s
expect wait-condition '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue condition met$'

# -w: the list, then each change as it happens.
"$KUBECTL" get lq -A -w --output-watch-events >"$WORK/watch.out" 2>&1 &
WATCH_PID=$!
sleep 2
"$KUBECTL" label lq lq-team-a -n team-a watched=yes >/dev/null 2>&1
sleep 2
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
OUT=$(cat "$WORK/watch.out")
expect watch '^EVENT +NAMESPACE +NAME +CLUSTERQUEUE'
expect watch '^ADDED +team-a +lq-team-a +cluster-queue'
expect watch '^MODIFIED +team-a +lq-team-a +cluster-queue'

# Errors as a cluster prints them.
run missing 1 "$KUBECTL" get cq nope
expect missing '^Error from server \(NotFound\): clusterqueues\.kueue\.x-k8s\.io "nope" not found$'

run invalid 1 "$KUBECTL" apply -f "$DATA/invalid-cluster-queue.yaml"
expect invalid 'The ClusterQueue "invalid-cq" is invalid'
expect invalid 'spec\.resourceGroups\[0\]\.flavors\[0\]\.resources\[0\]\.nominalQuota'

cat >"$WORK/unknown-field.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-bogus
  namespace: team-a
spec:
  clusterQueue: cluster-queue
  bogus: 1
EOF
run strict 1 "$KUBECTL" create -f "$WORK/unknown-field.yaml"
expect strict 'unknown field "spec\.bogus"'

run stale-get 0 "$KUBECTL" get lq lq-team-a -n team-a -o json
echo "$OUT" >"$WORK/stale.json"
run bump 0 "$KUBECTL" label lq lq-team-a -n team-a bump=1
run conflict 1 "$KUBECTL" replace -f "$WORK/stale.json"
expect conflict '^Error from server \(Conflict\): .*the object has been modified; please apply your changes to the latest version and try again$'

grep -v '^  namespace:' "$WORK/unknown-field.yaml" >"$WORK/no-namespace.yaml"
run missing-ns 1 "$KUBECTL" create -f "$WORK/no-namespace.yaml" -n nowhere --validate=false
expect missing-ns 'namespaces "nowhere" not found'

# A misspelled kind: kubectl validates it against /openapi/v2 (empty), then
# fails to map it, as against a cluster.
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Clusterqueue\nmetadata:\n  name: typo\nspec: {}\n' >"$WORK/typo.yaml"
run misspelled-kind 1 "$KUBECTL" apply -f "$WORK/typo.yaml"
expect misspelled-kind '^error: resource mapping not found for name: "typo" namespace: "" from ".*typo\.yaml": no matches for kind "Clusterqueue" in version "kueue\.x-k8s\.io/v1beta2"$'
expect misspelled-kind '^ensure CRDs are installed first$'
run explain 0 "$KUBECTL" explain clusterqueue.spec
expect explain '^KIND: +ClusterQueue$'
expect explain '^FIELD: +spec <Object>$'

# kubectl's typed commands send Kubernetes protobuf bodies.
run create-ns 0 "$KUBECTL" create namespace team-b
expect create-ns '^namespace/team-b created$'
run create-cm 0 "$KUBECTL" create configmap cfg -n team-b --from-literal=a=b --from-literal=c=d
expect create-cm '^configmap/cfg created$'
run create-cm-get 0 "$KUBECTL" get configmap cfg -n team-b -o 'jsonpath={.data.a}{.data.c}'
expect create-cm-get '^bd$'
run create-pc 0 "$KUBECTL" create priorityclass batch-high --value=1000 --preemption-policy=Never --description=seed2
expect create-pc '^priorityclass\.scheduling\.k8s\.io/batch-high created$'
run create-pc-get 0 "$KUBECTL" get pc batch-high -o 'jsonpath={.value}/{.preemptionPolicy}/{.description}'
expect create-pc-get '^1000/Never/seed2$'
run create-job 0 "$KUBECTL" create job hello -n team-b --image=busybox -- echo hi
expect create-job '^job\.batch/hello created$'
run create-job-get 0 "$KUBECTL" get job hello -n team-b -o 'jsonpath={.spec.template.spec.containers[0].command}'
expect create-job-get '^\["echo","hi"\]$'
run create-svc 0 "$KUBECTL" create service clusterip svc1 -n team-b --tcp=80:8080
expect create-svc '^service/svc1 created$'
run create-svc-get 0 "$KUBECTL" get service svc1 -n team-b -o 'jsonpath={.spec.ports[0].targetPort}'
expect create-svc-get '^8080$'
# Service table (printService): no cluster IP is allocated; a headless one prints None.
run create-svc-headless 0 "$KUBECTL" create service clusterip svc2 -n team-b --clusterip=None --tcp=53:53
run get-svc 0 "$KUBECTL" get services -n team-b -o wide
expect get-svc '^NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE +SELECTOR$'
expect get-svc '^svc1 +ClusterIP +<none> +<none> +80/TCP +[0-9]+s +app=svc1$'
expect get-svc '^svc2 +ClusterIP +None +<none> +53/TCP +[0-9]+s +app=svc2$'
run run-pod 0 "$KUBECTL" run p1 -n team-b --image=busybox --restart=Never --env=A=1 --labels=app=p1
expect run-pod '^pod/p1 created$'
run run-pod-get 0 "$KUBECTL" get pod p1 -n team-b -o 'jsonpath={.spec.containers[0].env[0].value}/{.metadata.labels.app}'
expect run-pod-get '^1/p1$'
run label-ns 0 "$KUBECTL" label namespace team-b tier=gold
expect label-ns '^namespace/team-b labeled$'
# cordon patches the node; drain deletes its pods with protobuf DeleteOptions.
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: e2e-node\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: on-node\n  namespace: team-b\nspec:\n  nodeName: e2e-node\n  containers:\n  - name: c\n    image: busybox\n' \
  >"$WORK/node.yaml"
run node-create 0 "$KUBECTL" apply -f "$WORK/node.yaml"
run cordon 0 "$KUBECTL" cordon e2e-node
expect cordon '^node/e2e-node cordoned$'
run drain 0 "$KUBECTL" drain e2e-node --force --grace-period=0 --timeout=30s
expect drain '^node/e2e-node drained$'
run drained-pod-gone 1 "$KUBECTL" get pod on-node -n team-b
expect drained-pod-gone 'NotFound'
run delete-typed-ns 0 "$KUBECTL" delete namespace team-b --wait --timeout=30s
expect delete-typed-ns '^namespace "team-b" deleted$'

# delete
run delete 0 "$KUBECTL" delete workloadpriorityclass low
expect delete '^workloadpriorityclass\.kueue\.x-k8s\.io "low" deleted$'
run delete-gone 1 "$KUBECTL" get wpc low
expect delete-gone 'NotFound'

# Cascading deletion through ownerReferences (the garbage collector).
TJ_UID=$("$KUBECTL" get trainjob lora-sft -n team-a -o 'jsonpath={.metadata.uid}')
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lora-sft-config\n  namespace: team-a\n  ownerReferences:\n  - apiVersion: trainer.kubeflow.org/v1alpha1\n    kind: TrainJob\n    name: lora-sft\n    uid: %s\ndata:\n  k: v\n' \
  "$TJ_UID" >"$WORK/owned.yaml"
run owned-create 0 "$KUBECTL" apply -f "$WORK/owned.yaml"
run delete-cascade 0 "$KUBECTL" delete trainjob lora-sft -n team-a --cascade=foreground --wait --timeout=30s
expect delete-cascade '^trainjob\.trainer\.kubeflow\.org "lora-sft" deleted$'
run owned-gone 1 "$KUBECTL" get configmap lora-sft-config -n team-a
expect owned-gone 'NotFound'

# Deleting a namespace deletes what is in it.
run delete-ns 0 "$KUBECTL" delete namespace training --wait --timeout=30s
expect delete-ns '^namespace "training" deleted$'
run ns-gone 1 "$KUBECTL" get namespace training
expect ns-gone 'NotFound'
run ns-content-gone 0 "$KUBECTL" get localqueues -A
expect_not ns-content-gone 'training-queue'

# Every attack below runs while a canary pod of another namespace runs; it must
# keep running, unrestarted, under the same server process.
run canary-ns 0 "$KUBECTL" create namespace canary
run canary 0 "$KUBECTL" run canary -n canary --image=busybox --restart=Never --command -- sleep 3600
canary_running() { [ "$("$KUBECTL" get pod canary -n canary -o 'jsonpath={.status.phase}')" = Running ]; }
wait_until 30 canary_running || fail "canary pod not Running"
CANARY_STARTED=$("$KUBECTL" get pod canary -n canary -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}')
SERVER_PID_BEFORE=$SERVER_PID

# An oversized body is refused with 413 and the server keeps serving (it used
# to abort: a GCC 12 coroutine temporary destroyed twice).
python3 -c "import json; print(json.dumps({'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'too-big'},'data':{'k':'x'*3300000}}))" >"$WORK/too-big.json"
run too-big 1 "$KUBECTL" create -f "$WORK/too-big.json"
expect too-big 'RequestEntityTooLarge|Request entity too large'
run after-too-big 0 "$KUBECTL" get cq cluster-queue -o name
expect after-too-big '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue$'

# Input limits (docs/security.md), as the real kubectl prints the refusals; after each the
# server still serves. A body nested 200,000 deep (it killed the server):
python3 -c "print('{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"deep\"},\"data\":{\"a\":' + '['*200000 + ']'*200000 + '}}')" >"$WORK/deep.json"
run deep-json 1 "$KUBECTL" create --raw '/api/v1/namespaces/default/configmaps?dryRun=All' -f "$WORK/deep.json"
expect deep-json 'exceeded max depth'
# A 1 MB condition reason on a status update (std::regex recursion killed the server).
python3 -c "import json; print(json.dumps({'status':{'conditions':[{'type':'Active','status':'True','reason':'a'*1000000,'message':'m','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}))" >"$WORK/long-reason.json"
run long-reason 1 "$KUBECTL" patch lq lq-team-a -n team-a --subresource=status --type=merge --patch-file "$WORK/long-reason.json"
expect long-reason 'status\.conditions\[0\]\.reason: Too long: may not be more than 1024 bytes'
# A container name that is a path (the node agent wrote outside the pod directory).
cat >"$WORK/escape-pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: escape
  namespace: team-a
spec:
  containers:
  - name: ../../../../tmp/x
    image: busybox
YAML
run escape-pod 1 "$KUBECTL" apply -f "$WORK/escape-pod.yaml"
expect escape-pod 'spec\.containers\[0\]\.name: Invalid value: "\.\./\.\./\.\./\.\./tmp/x": a lowercase RFC 1123 label must consist of lower case alphanumeric characters'
# ConfigMap data over 1 MiB; an object over etcd's 1.5 MiB.
python3 -c "print('x'*1100000, end='')" >"$WORK/big-value"
run cm-too-big 1 "$KUBECTL" create configmap too-much -n team-a --from-file=v="$WORK/big-value"
expect cm-too-big 'ConfigMap "too-much" is invalid: : Too long: may not be more than 1048576 bytes'
python3 -c "import json; print(json.dumps({'apiVersion':'v1','kind':'Pod','metadata':{'name':'huge','namespace':'team-a'},'spec':{'containers':[{'name':'c','image':'busybox'}],'volumes':[{'name':'v','csi':{'driver':'d','blob':'x'*1700000}}]}}))" >"$WORK/huge-pod.json"
run huge-pod 1 "$KUBECTL" create -f "$WORK/huge-pod.json"
expect huge-pod '^Error from server: error when creating ".*huge-pod\.json": etcdserver: request is too large$'
# 200,000 aliases of one 64 KiB anchor in 3 MB of YAML (13 GB once expanded: the server's
# RSS reached 10 GB).
python3 -c "
print('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a ' + 'x'*65536 + '\n  b: [' + ','.join(['*a']*200000) + ']')" >"$WORK/alias-bomb.yaml"
run alias-bomb 1 "$KUBECTL" create --raw '/api/v1/namespaces/default/configmaps?dryRun=All' -f "$WORK/alias-bomb.yaml"
expect alias-bomb 'excessive aliasing'
# generateName without a name (Kueue's own sample-job.yaml is written so).
cat >"$WORK/generate-name.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  generateName: sample-
  namespace: team-a
YAML
run generate-name 0 "$KUBECTL" create -f "$WORK/generate-name.yaml"
expect generate-name '^configmap/sample-[a-z0-9]{5} created$'
# System namespaces stay.
for ns in default kube-system kube-public kube-node-lease; do
  run "delete-$ns" 1 "$KUBECTL" delete namespace "$ns"
  expect "delete-$ns" "^Error from server \(Forbidden\): namespaces \"$ns\" is forbidden: this namespace may not be deleted$"
done
run after-limits 0 "$KUBECTL" get ns kube-node-lease -o name
expect after-limits '^namespace/kube-node-lease$'
# The canary ran through every attack: same start, no restart, same server.
run canary-after 0 "$KUBECTL" get pod canary -n canary \
  -o 'jsonpath={.status.phase} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].state.running.startedAt}'
expect canary-after "^Running 0 $CANARY_STARTED\$"
[ "$SERVER_PID" = "$SERVER_PID_BEFORE" ] && kill -0 "$SERVER_PID" || fail "the server process changed or died during the attacks"
run canary-delete 0 "$KUBECTL" delete namespace canary --wait=false

# logs of pods that ran: the embedded node agent (node-0) runs each container's
# command as a real process and keeps its output.
cat >"$WORK/logs-pods.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: logs-once
  namespace: team-a
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "echo hello from berth; echo line two; echo line three"]
---
apiVersion: v1
kind: Pod
metadata:
  name: logs-two
  namespace: team-a
spec:
  restartPolicy: Never
  containers:
  - name: first
    image: busybox
    command: ["sh", "-c", "echo from the first container"]
  - name: second
    image: busybox
    command: ["sh", "-c", "echo from the second container"]
YAML
run logs-create 0 "$KUBECTL" apply -f "$WORK/logs-pods.yaml"
run logs-done 0 "$KUBECTL" wait -n team-a pod/logs-once pod/logs-two \
  --for=jsonpath='{.status.phase}'=Succeeded --timeout=60s
run logs 0 "$KUBECTL" logs logs-once -n team-a
expect logs '^hello from berth$'
expect logs '^line three$'
run logs-tail 0 "$KUBECTL" logs logs-once -n team-a --tail=1
expect logs-tail '^line three$'
expect_not logs-tail 'hello from berth|line two'
run logs-second 0 "$KUBECTL" logs logs-two -n team-a -c second
expect logs-second '^from the second container$'
expect_not logs-second 'first'
run logs-first 0 "$KUBECTL" logs logs-two -n team-a -c first
expect logs-first '^from the first container$'
run logs-no-container 1 "$KUBECTL" logs logs-two -n team-a -c nope
expect logs-no-container '^error: container nope is not valid for pod logs-two$'
# -f on a short-lived pod: every line, and kubectl exits when the container ends.
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: logs-follow\n  namespace: team-a\nspec:\n  restartPolicy: Never\n  containers:\n  - name: main\n    image: busybox\n    command: ["sh", "-c", "sleep 2; for i in 1 2 3; do echo tick $i; sleep 1; done"]\n' \
  >"$WORK/logs-follow.yaml"
run logs-follow-create 0 "$KUBECTL" apply -f "$WORK/logs-follow.yaml"
run logs-follow-running 0 "$KUBECTL" wait -n team-a pod/logs-follow --for=jsonpath='{.status.phase}'=Running --timeout=60s
run logs-follow 0 timeout 60 "$KUBECTL" logs -f logs-follow -n team-a
expect logs-follow '^tick 1$'
expect logs-follow '^tick 3$'
run logs-follow-phase 0 "$KUBECTL" get pod logs-follow -n team-a -o 'jsonpath={.status.phase}'
expect logs-follow-phase '^Succeeded$'

# A Job's pods never restart Always: without restartPolicy the Job is refused as
# kube-apiserver refuses it (ValidateJobSpec).
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: no-restart-policy\n  namespace: team-a\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: busybox\n' \
  >"$WORK/no-restart-policy.yaml"
run job-restart-policy 1 "$KUBECTL" apply -f "$WORK/no-restart-policy.yaml"
expect job-restart-policy '"no-restart-policy" is invalid: spec\.template\.spec\.restartPolicy: Required value: valid values: "OnFailure", "Never"$'
# JobSet's webhook checks (api/jobset_webhook.h, upstream pkg/webhooks/jobset_webhook.go):
# a JobSet naming a missing target, an impossible coordinator or names that cannot be DNS
# names is refused with 422 naming the field, and nothing is stored.
# jobset NAME SPEC_LINES: a JobSet in team-a with replicatedJobs leader (1 Job of 2 indexed
# pods) and workers, SPEC_LINES added to its spec.
jobset() {
  printf 'apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: %s, namespace: team-a}\nspec:\n%b\n  replicatedJobs:\n  - name: leader\n    template:\n      spec:\n        completions: 2\n        parallelism: 2\n        template:\n          spec:\n            containers: [{name: main, image: busybox}]\n  - name: workers\n    template:\n      spec:\n        template:\n          spec:\n            containers: [{name: main, image: busybox}]\n' \
    "$1" "$2" >"$WORK/$1.yaml"
}
# refused NAME REGEX: creating $WORK/NAME.yaml fails with REGEX and stores no JobSet NAME.
refused() {
  run "jobset-$1" 1 "$KUBECTL" create -f "$WORK/$1.yaml"
  expect "jobset-$1" "The JobSet \"$1\" is invalid: $2\$"
  run "jobset-$1-absent" 1 "$KUBECTL" get jobset "$1" -n team-a
  expect "jobset-$1-absent" "^Error from server \\(NotFound\\): jobsets\\.jobset\\.x-k8s\\.io \"$1\" not found\$"
}
jobset bad-success '  successPolicy: {operator: All, targetReplicatedJobs: [leader, nobody]}'
refused bad-success 'spec\.successPolicy\.targetReplicatedJobs\[1\]: Invalid value: "nobody": invalid replicatedJob name '\''nobody'\'' does not appear in \.spec\.ReplicatedJobs'
jobset bad-rule '  failurePolicy: {rules: [{action: FailJobSet, targetReplicatedJobs: [ghost]}]}'
refused bad-rule 'spec\.failurePolicy\.rules\[0\]\.targetReplicatedJobs\[0\]: Invalid value: "ghost": invalid replicatedJob name '\''ghost'\'' in failure policy does not appear in \.spec\.ReplicatedJobs'
jobset bad-coordinator '  coordinator: {replicatedJob: leader, podIndex: 2}'
refused bad-coordinator 'spec\.coordinator\.podIndex: Invalid value: 2: coordinator pod index 2 is invalid for replicatedJob leader job index 0'
jobset bad-subdomain '  network: {subdomain: a.b}'
refused bad-subdomain 'spec\.network\.subdomain: Invalid value: "a\.b": a DNS-1035 label must consist of lower case alphanumeric characters or '\''-'\'', start with an alphabetic character, and end with an alphanumeric character .*'
long=js-$(printf 'x%.0s' $(seq 1 47))  # 50 characters: leader's Job "<long>-leader-0" has 59, its pods' names 67
jobset "$long" '  network: {subdomain: svc}'
refused "$long" "spec\\.replicatedJobs\\[0\\]\\.name: Invalid value: \"$long-leader-0\": JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
jobset coordinated '  coordinator: {replicatedJob: leader, podIndex: 1}\n  suspend: true'
run jobset-coordinated 0 "$KUBECTL" create -f "$WORK/coordinated.yaml"
expect jobset-coordinated '^jobset\.jobset\.x-k8s\.io/coordinated created$'
# Updates: the policies and replicatedJobs are immutable, except the pod template fields
# Kueue sets while the JobSet is suspended.
run jobset-policy-immutable 1 "$KUBECTL" patch jobset coordinated -n team-a --type=merge \
  -p '{"spec":{"successPolicy":{"operator":"Any"}}}'
expect jobset-policy-immutable 'The JobSet "coordinated" is invalid: spec\.successPolicy: Invalid value: "object": Value is immutable$'
run jobset-replicas-immutable 1 "$KUBECTL" patch jobset coordinated -n team-a --type=json \
  -p '[{"op":"replace","path":"/spec/replicatedJobs/1/replicas","value":3}]'
expect jobset-replicas-immutable 'The JobSet "coordinated" is invalid: spec\.replicatedJobs: Invalid value: field is immutable$'
run jobset-node-selector 0 "$KUBECTL" patch jobset coordinated -n team-a --type=json \
  -p '[{"op":"add","path":"/spec/replicatedJobs/1/template/spec/template/spec/nodeSelector","value":{"pool":"a"}}]'
expect jobset-node-selector '^jobset\.jobset\.x-k8s\.io/coordinated patched$'
run jobset-after-patches 0 "$KUBECTL" get jobset coordinated -n team-a \
  -o 'jsonpath={.spec.successPolicy.operator} {.spec.replicatedJobs[1].replicas} {.spec.replicatedJobs[1].template.spec.template.spec.nodeSelector.pool}'
expect jobset-after-patches '^All 1 a$'
"$KUBECTL" delete jobset coordinated -n team-a --wait=false >/dev/null 2>&1
# kubectl debug: a missing pod is kubectl's NotFound; berth serves no ephemeral containers,
# and kubectl reads the 404's details to say so (a Status without details crashed it).
run debug-missing 1 "$KUBECTL" debug missing-pod -n team-a --image=busybox
expect debug-missing '^Error from server \(NotFound\): pods "missing-pod" not found$'
run debug-unserved 1 "$KUBECTL" debug logs-once -n team-a --image=busybox
expect debug-unserved '^error: ephemeral containers are disabled for this cluster'
expect_not debug-unserved 'panic'
# Accept: application/yaml through kubectl proxy is answered in YAML; text/plain is 406.
"$KUBECTL" proxy --port=0 >"$WORK/proxy.out" 2>&1 &
PROXY_PID=$!
for _ in $(seq 50); do grep -q 'Starting to serve' "$WORK/proxy.out" && break; sleep 0.1; done
PROXY=$(sed -n 's/^Starting to serve on //p' "$WORK/proxy.out")
run accept-yaml 0 curl -sS -D - -H 'Accept: application/yaml' "http://$PROXY/api/v1/namespaces/team-a/pods/logs-once"
expect accept-yaml '^Content-Type: application/yaml'
expect accept-yaml '^kind: Pod$'
expect accept-yaml '^  name: logs-once$'
run accept-text 0 curl -sS -o /dev/null -w '%{http_code}' -H 'Accept: text/plain' \
  "http://$PROXY/api/v1/namespaces/team-a/pods"
expect accept-text '^406$'
kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true

# delete --wait of a queued batch Job cascades to its Workload (Kueue) and Pods.
cat >"$WORK/queued-job.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: queued-job
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: lq-team-a
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: busybox
        command: ["sleep", "300"]
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
YAML
run queued-job-create 0 "$KUBECTL" apply -f "$WORK/queued-job.yaml"
JOB_UID=$("$KUBECTL" get job queued-job -n team-a -o 'jsonpath={.metadata.uid}')
# The Workload and the Pods are the Job's dependents (ownerReferences to its uid).
owned_by_job() {
  "$KUBECTL" get "$1" -n team-a -o json |
    python3 -c "import json,sys; print('\n'.join(i['metadata']['name'] for i in json.load(sys.stdin)['items'] if any(o.get('uid') == '$JOB_UID' for o in i['metadata'].get('ownerReferences', []))))"
}
for _ in $(seq 1 120); do
  [ "$(owned_by_job pods | grep -c .)" -eq 2 ] && break
  sleep 0.5
done
OUT=$(owned_by_job workloads)
expect queued-job-workload '.'
OUT=$(owned_by_job pods)
expect queued-job-pods '^queued-job-'
run queued-job-running 0 "$KUBECTL" wait -n team-a pod -l batch.kubernetes.io/job-name=queued-job \
  --for=jsonpath='{.status.phase}'=Running --timeout=60s
# Job table (printJob): a running Job is Running (its Suspended condition is False once
# Kueue admits it), COMPLETIONS <succeeded>/<completions>, DURATION since startTime.
run get-job-running 0 "$KUBECTL" get job queued-job -n team-a
expect get-job-running '^NAME +STATUS +COMPLETIONS +DURATION +AGE$'
expect get-job-running '^queued-job +Running +0/2 +[0-9][0-9a-z]* +[0-9][0-9a-z]*$'
run get-job-running-wide 0 "$KUBECTL" get job queued-job -n team-a -o wide
expect get-job-running-wide '^NAME +STATUS +COMPLETIONS +DURATION +AGE +CONTAINERS +IMAGES +SELECTOR$'
expect get-job-running-wide '^queued-job +Running +0/2 +[0-9][0-9a-z]* +[0-9][0-9a-z]* +main +busybox +'
# The generated selector (the Job strategy): controller-uid=<the Job's uid>.
JOB_UID=$("$KUBECTL" get job queued-job -n team-a -o 'jsonpath={.metadata.uid}')
expect get-job-running-wide " batch\.kubernetes\.io/controller-uid=$JOB_UID\$"
# A completed Job: Complete, 1/1, DURATION completionTime - startTime.
run done-job-create 0 "$KUBECTL" create job done-job -n team-a --image=busybox -- echo done
run done-job-complete 0 "$KUBECTL" wait -n team-a job/done-job --for=condition=complete --timeout=60s
run get-jobs 0 "$KUBECTL" get jobs -n team-a
expect get-jobs '^done-job +Complete +1/1 +[0-9][0-9a-z]* +[0-9][0-9a-z]*$'
expect get-jobs '^queued-job +Running +0/2 +'
# Events (issue 17): kubectl describe shows the Job controller's, the scheduler's and the
# kubelet's; events.k8s.io/v1 serves the same objects with its field names and selectors.
run describe-job-events 0 "$KUBECTL" describe job done-job -n team-a
expect describe-job-events '^  Normal +SuccessfulCreate +[0-9a-z<>]+ +job-controller +Created pod: done-job-[a-z0-9]{5}$'
expect describe-job-events '^  Normal +Completed +[0-9a-z<>]+ +job-controller +Job completed$'
DONE_POD=$("$KUBECTL" get pods -n team-a -l batch.kubernetes.io/job-name=done-job -o 'jsonpath={.items[0].metadata.name}')
run describe-done-pod-events 0 "$KUBECTL" describe pod "$DONE_POD" -n team-a
expect describe-done-pod-events "^  Normal +Scheduled +[0-9a-z<>]+ +default-scheduler +Successfully assigned team-a/$DONE_POD to node-0\$"
expect describe-done-pod-events '^  Normal +Pulled +[0-9a-z<>]+ +kubelet +Container image "busybox" already present on machine$'
expect describe-done-pod-events '^  Normal +Created +[0-9a-z<>]+ +kubelet +Created container done-job$'
expect describe-done-pod-events '^  Normal +Started +[0-9a-z<>]+ +kubelet +Started container done-job$'
run get-events-v1 0 "$KUBECTL" get events.v1.events.k8s.io -n team-a --field-selector regarding.name=done-job,reason=Completed
expect get-events-v1 '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$'
expect get-events-v1 '^[0-9a-z<>]+ +Normal +Completed +job/done-job +Job completed$'
run get-events-v1-note 0 "$KUBECTL" get events.v1.events.k8s.io -n team-a --field-selector regarding.name=done-job,reason=Completed \
  -o 'jsonpath={.items[0].note}/{.items[0].regarding.kind}/{.items[0].reportingController}/{.items[0].deprecatedCount}'
expect get-events-v1-note '^Job completed/Job/job-controller/1$'
cat >"$WORK/event-v1.yaml" <<'YAML'
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: by-events-api
  namespace: team-a
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/tester
reportingInstance: tester-1
action: Check
reason: Checked
note: written through events.k8s.io
type: Normal
regarding: {apiVersion: batch/v1, kind: Job, name: done-job, namespace: team-a}
YAML
run create-event-v1 0 "$KUBECTL" create -f "$WORK/event-v1.yaml"
expect create-event-v1 '^event\.events\.k8s\.io/by-events-api created$'
run get-event-core 0 "$KUBECTL" get events -n team-a --field-selector involvedObject.name=done-job,reason=Checked \
  -o 'jsonpath={.items[0].message}/{.items[0].involvedObject.kind}/{.items[0].reportingComponent}'
expect get-event-core '^written through events\.k8s\.io/Job/example\.com/tester$'
run delete-job 0 "$KUBECTL" delete job queued-job -n team-a --cascade=foreground --wait --timeout=60s
expect delete-job '^job\.batch "queued-job" deleted$'
run job-gone 1 "$KUBECTL" get job queued-job -n team-a
expect job-gone 'NotFound'
OUT=$(owned_by_job workloads; owned_by_job pods)
expect_not job-dependents-gone '.'

# Restart: every object survives (every listable kind, compared by name).
snapshot() {
  "$KUBECTL" get "$("$KUBECTL" api-resources --verbs=list -o name | grep -v '^events' | paste -sd, -)" \
    -A -o 'custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name' --no-headers | sort
}
snapshot >"$WORK/before-restart.txt"
stop_server
start_server
snapshot >"$WORK/after-restart.txt"
OUT=$(comm -23 "$WORK/before-restart.txt" "$WORK/after-restart.txt")
expect_not restart-all-kept '.'
# The snapshot is not trivially small (seed objects, pods, nodes, namespaces...).
OUT=$(wc -l <"$WORK/before-restart.txt")
expect restart-snapshot '^ *[0-9]{2,}$'
run restart-cq 0 "$KUBECTL" get cq cluster-queue \
  -o 'jsonpath={.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}'
expect restart-cq '^6$'
run restart-lq 0 "$KUBECTL" get lq -n team-a --show-labels
expect restart-lq '^lq-team-a +cluster-queue .*tier=gold'
run restart-wpc 0 "$KUBECTL" get wpc
expect restart-wpc '^high '
expect_not restart-wpc '^low '

# A node agent with the URL alone (no CA, no credential) is refused and registers no Node;
# with the server's kubeconfig it joins and its Node turns Ready, publishing its streaming
# server's port and CA (the CA of the certificate it serves there); --server and
# --kubeconfig together are refused.
SERVER_URL=$(sed -n 's/^ *server: *//p' "$KUBECONFIG" | head -1)
run agent-by-url 1 timeout 20 "$BERTH" agent --server "$SERVER_URL" --name rogue-node --data-dir "$WORK/rogue-node" \
  --capacity cpu=1,memory=1Gi
expect agent-by-url 'certificate signed by unknown authority'
run rogue-node 1 "$KUBECTL" get node rogue-node
"$BERTH" agent --kubeconfig "$KUBECONFIG" --name url-node --data-dir "$WORK/url-node" --port 0 \
  --eviction-hard "$E2E_EVICTION_HARD" --capacity cpu=1,memory=1Gi >"$WORK/url-agent.log" 2>&1 &
AGENT_PID=$!
# kubectl wait answers NotFound at once for a Node not registered yet: wait for it to exist.
for _ in $(seq 300); do "$KUBECTL" get node url-node >/dev/null 2>&1 && break; sleep 0.1; done
run agent-by-kubeconfig 0 "$KUBECTL" wait node/url-node --for=condition=Ready --timeout=30s
expect agent-by-kubeconfig 'node/url-node condition met'
run agent-kubelet-port 0 "$KUBECTL" get node url-node -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'
expect agent-kubelet-port '^[1-9][0-9]*$'
KUBELET_PORT=$OUT
"$KUBECTL" get node url-node -o 'jsonpath={.metadata.annotations.berth\.dev/kubelet-serving-ca}' \
  >"$WORK/url-node-ca.crt"
OUT=$(cmp "$WORK/url-node-ca.crt" "$WORK/url-node/pki/kubelet-ca.crt" && echo same)
expect agent-serving-ca '^same$'
# The port serves TLS with a certificate for the node's name, signed by that CA; without
# the API server's client certificate: 401.
OUT=$(curl -s --cacert "$WORK/url-node-ca.crt" --resolve "url-node:$KUBELET_PORT:127.0.0.1" \
  "https://url-node:$KUBELET_PORT/api/v1/namespaces/default/pods/p/log" 2>&1)
expect agent-streams-unauthorized '"code":401'
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" || true
run agent-url-and-kubeconfig 108 "$BERTH" agent --server "$SERVER_URL" --kubeconfig "$KUBECONFIG" \
  --name x --data-dir "$WORK/x"
expect agent-url-and-kubeconfig 'excludes'

if [ "$FAILURES" -ne 0 ]; then
  echo "$FAILURES check(s) failed; server log:"; sed 's/^/    /' "$WORK/server.log" | tail -50
  exit 1
fi
echo "PASS"

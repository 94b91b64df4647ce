#!/usr/bin/env bash
# `berth lint --live` against a running `berth server` on which the seeds' traps were
# applied with the real kubectl (issue #8): asserts rule ids, objects and exit codes,
# then that a file overrides the live object of the same identity, that a v1beta1 file
# is noted, that unreadable input exits 1 with kubectl's `error: ...`, and that the seed's
# recommended setup (examples/trainer-kueue) lints clean on the server.
# Usage: lint_e2e.sh <berth binary> <source dir>   Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
SRC=${2:?source dir}
DATA=$(dirname "$0")/testdata
source "$(dirname "$0")/lib.sh"
e2e_init lint

# Two virtual 8-GPU nodes: 16 GPUs of real allocatable.
e2e_start_server --nodes 2 --node-capacity cpu=8,memory=32Gi,nvidia.com/gpu=8

# The traps (testdata/lint-traps.yaml, on seed 2's WorkloadPriorityClasses and GPU flavor).
# Every job is created suspended (spec.runPolicy.suspend: true stays, as in Kueue's webhook),
# so no process runs: lint reads the objects only.
"$KUBECTL" apply -f "$DATA/seed2-kueue-classes.yaml" -f "$DATA/lint-traps.yaml" >"$WORK/apply.log" 2>&1 ||
  { cat "$WORK/apply.log"; fail "kubectl apply of the traps"; }

# rules ( "rule kind namespace/name field" ) of a JSON findings file
rules() {
  python3 -c 'import json,sys
for f in json.load(open(sys.argv[1])):
    o=f["object"]; print(f["rule"], o["kind"], (o.get("namespace","")+"/" if o.get("namespace") else "")+o["name"], f.get("field",""))' "$1"
}
expect() {  # expect FILE LINE: LINE is one of the findings
  local got
  got=$(rules "$1")
  grep -qxF -- "$2" <<<"$got" || { fail "missing finding: $2"; sed 's/^/  got: /' <<<"$got"; }
}

"$BERTH" lint --live -o json >"$WORK/live.json" 2>"$WORK/live.err"
rc=$?
[ "$rc" -eq 1 ] || fail "lint --live on the traps exited $rc, want 1 ($(cat "$WORK/live.err"))"
expect "$WORK/live.json" "pod-preemption-on-training-pods PyTorchJob training/low spec.pytorchReplicaSpecs.Master.template.spec.priorityClassName"
expect "$WORK/live.json" "pod-preemption-on-training-pods PyTorchJob training/high spec.pytorchReplicaSpecs.Master.template.spec.priorityClassName"
expect "$WORK/live.json" "mixed-pod-priority-classes PyTorchJob training/low spec.pytorchReplicaSpecs.Master.template.spec.priorityClassName"
expect "$WORK/live.json" "quota-exceeds-node-allocatable ClusterQueue gpu-cq spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
expect "$WORK/live.json" "missing-resource-flavor ClusterQueue typo-cq spec.resourceGroups[0].flavors[0].name"
expect "$WORK/live.json" "queue-name-label PyTorchJob training/high metadata.annotations[kueue.x-k8s.io/queue-name]"
expect "$WORK/live.json" "within-cluster-queue-never ClusterQueue gpu-cq spec.preemption.withinClusterQueue"
expect "$WORK/live.json" "priority-order-mismatch PyTorchJob training/ckpt spec.pytorchReplicaSpecs.Worker.template.spec.priorityClassName"
expect "$WORK/live.json" "global-default-priority-class PriorityClass default-priority globalDefault"
expect "$WORK/live.json" "grace-period-shorter-than-checkpoint PyTorchJob training/ckpt spec.pytorchReplicaSpecs.Worker.template.spec.terminationGracePeriodSeconds"
python3 - "$WORK/live.json" <<'EOF2' || fail "finding texts"
import json, sys
fs = json.load(open(sys.argv[1]))
def one(rule, name):
    m = [f for f in fs if f["rule"] == rule and f["object"]["name"] == name]
    assert len(m) == 1, (rule, name, m)
    return m[0]
m = one("mixed-pod-priority-classes", "low")
assert "one preempted worker pod leaves the other 3 pods of the gang holding 12 GPUs idle" in m["message"], m
q = one("quota-exceeds-node-allocatable", "gpu-cq")
assert "is above the 16 the flavor's 2 node(s) can allocate (node-0, node-1)" in q["message"], q
r = one("missing-resource-flavor", "typo-cq")
assert 'did you mean "gpu-flavor"?' in r["message"], r
assert all(f["severity"] in ("error", "warning", "info") for f in fs)
assert all("source" not in f["object"] for f in fs), "live objects carry no source"
g = one("global-default-priority-class", "default-priority")
assert "PyTorchJob training/nodefault" in g["message"], g
EOF2

# Text output: the same verdict, a summary line.
"$BERTH" lint --live >"$WORK/live.txt" 2>&1
[ $? -eq 1 ] || fail "text lint exit code"
grep -q '^error: missing-resource-flavor: ClusterQueue typo-cq$' "$WORK/live.txt" || fail "text: missing-resource-flavor line"
grep -Eq '^[0-9]+ errors, [0-9]+ warnings?, 0 infos$' "$WORK/live.txt" || fail "text: summary line"

# A file overrides the live object of the same identity: the flavor name fixed in a
# (v1beta1) file removes the missing-flavor error and adds a v1beta1 note.
e2e_yaml_cluster_queue typo-cq gpu-flavor version=v1beta1 preemption=LowerPriority nvidia.com/gpu=8 |
  tail -n +2 >"$WORK/typo-cq.yaml"  # without the leading "---": apiVersion is line 1
"$BERTH" lint --live -f "$WORK/typo-cq.yaml" -o json >"$WORK/merged.json" 2>&1
grep -q '^missing-resource-flavor' <<<"$(rules "$WORK/merged.json")" && fail "file did not override the live ClusterQueue"
expect "$WORK/merged.json" "kueue-v1beta1 ClusterQueue typo-cq apiVersion"
python3 -c 'import json,sys
f=[x for x in json.load(open(sys.argv[1])) if x["rule"]=="kueue-v1beta1"][0]
assert f["severity"]=="info" and f["object"]["source"].endswith("typo-cq.yaml") and f["object"]["line"]==1, f' \
  "$WORK/merged.json" || fail "v1beta1 finding's severity/source/line"

# Unreadable input: kubectl's client-side error text, exit 1.
"$BERTH" lint -f "$WORK/nope.yaml" >"$WORK/nope.out" 2>"$WORK/nope.err"
[ $? -eq 1 ] || fail "missing file: exit code"
grep -q '^error: ' "$WORK/nope.err" || fail "missing file: no 'error: ' text ($(cat "$WORK/nope.err"))"

# A directory without manifests: kubectl apply's "error: no objects passed to apply", exit 1.
mkdir -p "$WORK/empty-dir"
"$BERTH" lint -f "$WORK/empty-dir" >"$WORK/empty.out" 2>"$WORK/empty.err"
[ $? -eq 1 ] || fail "empty directory: exit code"
grep -qx 'error: no objects passed to lint' "$WORK/empty.err" || fail "empty directory: $(cat "$WORK/empty.err")"

# Files only: the jobs reference a LocalQueue the input does not hold, which cannot be
# judged offline (an info, not an error); exit 0.
"$BERTH" lint -f "$SRC/examples/trainer-kueue/jobs" -o json >"$WORK/jobs.json" 2>"$WORK/jobs.err"
rc=$?
[ "$rc" -eq 0 ] || fail "offline lint of examples/trainer-kueue/jobs exited $rc ($(cat "$WORK/jobs.err"))"
python3 -c 'import json,sys
fs=json.load(open(sys.argv[1]))
assert not [f for f in fs if f["severity"]=="error"], fs
assert [f for f in fs if f["rule"]=="unresolved-reference" and "LocalQueue" in f["message"]], fs' \
  "$WORK/jobs.json" || fail "offline jobs: findings"

# The recommended setup of seed 1 on the server lints clean: remove the traps first.
"$KUBECTL" delete pytorchjobs -n training --all --wait=true >/dev/null 2>&1 || fail "delete jobs"
"$KUBECTL" delete priorityclass default-priority >/dev/null 2>&1 || fail "delete the globalDefault class"
"$KUBECTL" delete clusterqueue gpu-cq typo-cq >/dev/null 2>&1 || fail "delete clusterqueues"
"$KUBECTL" delete localqueue -n training training-queue >/dev/null 2>&1 || fail "delete localqueue"
"$KUBECTL" apply -f "$SRC/examples/trainer-kueue/" >"$WORK/apply2.log" 2>&1 || { cat "$WORK/apply2.log"; fail "apply trainer-kueue"; }
"$BERTH" lint --live >"$WORK/clean.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { fail "recommended setup: lint exited $rc"; cat "$WORK/clean.txt"; }
grep -qx 'No findings.' "$WORK/clean.txt" || { fail "recommended setup is not clean"; cat "$WORK/clean.txt"; }

e2e_stop_server
[ "$FAILURES" -eq 0 ] && echo PASS
exit $((FAILURES > 0))

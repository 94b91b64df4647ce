#!/usr/bin/env bash
# End-to-end: start `berth server` (memory store, free port, fresh HOME) and
# drive it with the berth client commands (berth-cli, or `berth` once the
# commands are wired into it), comparing what they print with what the real
# kubectl prints for the same command against the same server.
#
# Usage: cli_e2e.sh <berth binary> <berth-cli binary> <testdata dir>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail

BERTH=${1:?berth binary}
CLI=${2:?berth-cli binary}
DATA=${3:?testdata dir}
source "$(dirname "$0")/lib.sh"
e2e_init cli-e2e
e2e_start_server --store=memory

fail() { echo "FAIL [$1]: $2"; FAILURES=$((FAILURES + 1)); }

# run NAME EXPECTED_EXIT CMD...: stdout in $OUT, stderr in $ERR.
run() {
  local name=$1 want=$2; shift 2
  OUT=$("$@" 2>"$WORK/stderr"); local rc=$?
  ERR=$(cat "$WORK/stderr")
  if [ "$rc" -ne "$want" ]; then
    fail "$name" "exit $rc, want $want: $*"; echo "$OUT" | sed 's/^/    out: /'; echo "$ERR" | sed 's/^/    err: /'
  fi
}
expect() {  # NAME TEXT REGEX
  grep -Eq -- "$3" <<<"$2" || { fail "$1" "no line matches /$3/ in:"; echo "$2" | sed 's/^/    /'; }
}
# Ages change between two commands: the last column, when it is an age, is
# replaced (it is not padded, so the other columns do not move).
normalise_age() { sed -E 's/(^|   )[0-9]+(s|m|h|d|y)([0-9]+(s|m|h))?$/\1AGE/'; }
# client-go's reflector warns "very short watch" when `kubectl wait` finds the
# condition already met in its informer's list and cancels the watch it had just
# opened: a race inside kubectl, whichever server answers. Not compared.
client_noise() { grep -v 'reflector.go:[0-9]*\] .*very short watch' || true; }

# same NAME ARGS...: `berth-cli ARGS` and `kubectl ARGS` print the same stdout,
# the same stderr and exit the same way.
same() {
  local name=$1; shift
  local bo be br ko ke kr
  bo=$("$CLI" "$@" 2>"$WORK/be" | normalise_age); br=${PIPESTATUS[0]}; be=$(client_noise <"$WORK/be")
  ko=$("$KUBECTL" "$@" 2>"$WORK/ke" | normalise_age); kr=${PIPESTATUS[0]}; ke=$(client_noise <"$WORK/ke")
  if [ "$bo" != "$ko" ]; then
    fail "$name" "stdout differs from kubectl's ($*)"; diff <(echo "$ko") <(echo "$bo") | sed 's/^/    /'
  fi
  if [ "$be" != "$ke" ]; then
    fail "$name" "stderr differs from kubectl's ($*)"; diff <(echo "$ke") <(echo "$be") | sed 's/^/    /'
  fi
  [ "$br" -eq "$kr" ] || fail "$name" "exit $br, kubectl exits $kr ($*)"
  OUT=$bo
}

# apply: created, unchanged, configured; directories and stdin.
run apply-create 0 "$CLI" apply -f "$DATA/seed-kueue.yaml"
expect apply-create "$OUT" '^namespace/team-a created$'
expect apply-create "$OUT" '^resourceflavor\.kueue\.x-k8s\.io/default-flavor created$'
expect apply-create "$OUT" '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue created$'
expect apply-create "$OUT" '^localqueue\.kueue\.x-k8s\.io/lq-team-a created$'
expect apply-create "$OUT" '^workloadpriorityclass\.kueue\.x-k8s\.io/low created$'
run apply-unchanged 0 "$CLI" apply -f "$DATA/seed-kueue.yaml"
expect apply-unchanged "$OUT" '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue unchanged$'
expect apply-unchanged "$OUT" '^namespace/team-a unchanged$'
mkdir -p "$WORK/dir"
sed 's/nominalQuota: "5"/nominalQuota: "6"/' "$DATA/seed-kueue.yaml" >"$WORK/dir/changed.yaml"
echo 'not a manifest' >"$WORK/dir/notes.txt"
run apply-dir 0 "$CLI" apply -f "$WORK/dir"
expect apply-dir "$OUT" '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue configured$'
expect apply-dir "$OUT" '^localqueue\.kueue\.x-k8s\.io/lq-team-a unchanged$'
run apply-value 0 "$KUBECTL" get cq cluster-queue -o 'jsonpath={.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}'
expect apply-value "$OUT" '^6$'
run apply-stdin 0 "$CLI" apply -f - <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: stdin-flavor
  labels:
    from: stdin
YAML
expect apply-stdin "$OUT" '^resourceflavor\.kueue\.x-k8s\.io/stdin-flavor created$'

# get: the same text as kubectl.
same get-cq get cq
same get-cq-wide get clusterqueue cluster-queue -o wide
same get-cq-full-name get clusterqueues.kueue.x-k8s.io
same get-lq get lq -n team-a
same get-lq-all get localqueues -A
same get-lq-labels get lq -A --show-labels
same get-ns get ns
same get-rf-selector get rf -l from=stdin
same get-rf-no-headers get rf --no-headers
same get-wpc-names get wpc high low
same get-workloads-none get workloads
expect get-workloads-none "$(cat "$WORK/be")" '^No resources found in default namespace\.$'
same get-workloads-all get workloads -A
same get-o-name get rf -o name
same get-yaml get cq cluster-queue -o yaml
same get-json get lq lq-team-a -n team-a -o json
same get-list-yaml get wpc -o yaml
same get-missing get cq nope
same get-unknown-kind get foo
same get-slash get cq/cluster-queue

# describe: the generic describer.
same describe-cq describe cq cluster-queue
same describe-lq describe lq lq-team-a -n team-a
same describe-missing describe cq nope

# wait: a condition set through the status subresource; timeouts; deletion.
"$KUBECTL" patch cq cluster-queue --subresource=status --type=merge \
  -p '{"status":{"conditions":[{"type":"Active","status":"True","reason":"Ready","message":"Can admit new workloads","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}' >/dev/null
same wait-met wait --for=condition=Active cq/cluster-queue --timeout=20s
expect wait-met "$OUT" '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue condition met$'
same wait-false wait --for=condition=active=false cq/cluster-queue --timeout=1s
same wait-missing wait --for=condition=Active cq/nope --timeout=1s
( sleep 2; "$KUBECTL" patch cq cluster-queue --subresource=status --type=merge \
    -p '{"status":{"conditions":[{"type":"Late","status":"True","reason":"R","message":"m","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}' >/dev/null ) &
CHANGER_PID=$!
run wait-later 0 "$CLI" wait --for=condition=Late cq/cluster-queue --timeout=30s
expect wait-later "$OUT" '^clusterqueue\.kueue\.x-k8s\.io/cluster-queue condition met$'
wait "$CHANGER_PID"

# get -w: the table, then each change as a row.
"$CLI" get lq -A -w >"$WORK/watch.out" 2>&1 &
WATCH_PID=$!
sleep 1
"$KUBECTL" label lq lq-team-a -n team-a watched=yes >/dev/null
sleep 1
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null
OUT=$(cat "$WORK/watch.out")
expect watch "$OUT" '^NAMESPACE +NAME +CLUSTERQUEUE +PENDING WORKLOADS +ADMITTED WORKLOADS$'
[ "$(grep -Ec '^team-a +lq-team-a +cluster-queue' <<<"$OUT")" -eq 2 ] || fail watch "want the row twice (list + MODIFIED): $OUT"

# Errors print as kubectl prints them.
same apply-invalid apply -f "$DATA/invalid-cluster-queue.yaml"
expect apply-invalid "$(cat "$WORK/be")" '^The ClusterQueue "invalid-cq" is invalid: spec\.resourceGroups\[0\]\.flavors\[0\]\.resources\[0\]\.nominalQuota'
printf 'apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g\n' >"$WORK/unknown-kind.yaml"
run apply-unknown-kind 1 "$CLI" apply -f "$WORK/unknown-kind.yaml"
expect apply-unknown-kind "$ERR" "^error: resource mapping not found for name: \"g\" namespace: \"\" from \"$WORK/unknown-kind.yaml\": no matches for kind \"Gizmo\" in version \"example.com/v1\"$"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: nowhere\n' >"$WORK/no-ns.yaml"
run apply-missing-ns 1 "$CLI" apply -f "$WORK/no-ns.yaml"
expect apply-missing-ns "$ERR" "^Error from server \(NotFound\): error when creating \"$WORK/no-ns.yaml\": namespaces \"nowhere\" not found$"
same logs-missing logs nope
sed "s#server: .*#server: http://127.0.0.1:1#" "$KUBECONFIG" >"$WORK/refused.kubeconfig"
# kubectl logs its discovery retries (klog lines) before the message; compare the message.
run refused 1 "$CLI" get cq --kubeconfig "$WORK/refused.kubeconfig"
WANT=$("$KUBECTL" get cq --kubeconfig "$WORK/refused.kubeconfig" 2>&1 | tail -1)
[ "$ERR" = "$WANT" ] || fail refused "got '$ERR', kubectl prints '$WANT'"

# delete: by name, by file, not found, --ignore-not-found.
run delete-name 0 "$CLI" delete wpc low
expect delete-name "$OUT" '^workloadpriorityclass\.kueue\.x-k8s\.io "low" deleted$'
same delete-again delete wpc low
same delete-ignore delete wpc low --ignore-not-found
# (ResourceFlavors and ClusterQueues get Kueue's resource-in-use finalizer, which
# only a controller removes: delete --wait would wait for it, as kubectl does.)
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: temp\nvalue: 1\n' >"$WORK/wpc.yaml"
run delete-file-create 0 "$CLI" apply -f "$WORK/wpc.yaml"
run delete-file 0 "$CLI" delete -f "$WORK/wpc.yaml"
expect delete-file "$OUT" '^workloadpriorityclass\.kueue\.x-k8s\.io "temp" deleted$'
run delete-file-again 1 "$CLI" delete -f "$WORK/wpc.yaml"
expect delete-file-again "$ERR" "^Error from server \(NotFound\): error when deleting \"$WORK/wpc.yaml\": workloadpriorityclasses\.kueue\.x-k8s\.io \"temp\" not found$"
same wait-deleted wait --for=delete wpc/temp --timeout=5s
( sleep 1; "$KUBECTL" delete lq lq-team-a -n team-a >/dev/null ) &
CHANGER_PID=$!
run wait-delete 0 "$CLI" wait --for=delete lq/lq-team-a -n team-a --timeout=30s
expect wait-delete "$OUT" '^localqueue\.kueue\.x-k8s\.io/lq-team-a condition met$'
wait "$CHANGER_PID"

if [ "$FAILURES" -ne 0 ]; then
  echo "$FAILURES check(s) failed; server log:"; sed 's/^/    /' "$WORK/server.log" | tail -30
  exit 1
fi
echo "PASS"

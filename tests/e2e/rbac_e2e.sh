#!/usr/bin/env bash
# Teams share one berth safely (issue 19), through the real kubectl with three users:
# an admin (system:masters), alice of team-a and bob of team-b, each bound in their own
# namespace only to Kubernetes' `edit` ClusterRole and Kueue's `kueue-batch-user-role` (what
# Kueue's docs bind a batch user to: edit alone creates no JobSet, TrainJob or PyTorchJob), on
# the seed's objects
# (examples/trainer-kueue). Checks, each with the answer kube-apiserver gives:
#  - alice submits the seed's TrainJob through lq-team-a and sees its Workload;
#  - alice cannot list, read or delete team-b's jobs, nor create or edit ClusterQueues,
#    ResourceFlavors or WorkloadPriorityClasses: 403 with upstream's message;
#  - `kubectl auth can-i` and `kubectl auth whoami` answer each case;
#  - no credential: 401 (but /healthz is public); a wrong token: 401; a cross-site
#    text/plain POST: 401 without a credential, 415 with one;
#  - a namespace admin cannot grant what they do not hold (RBAC escalation check) and
#    nobody but the admin may impersonate.
# alice and bob hold client certificates (`berth user add`), admin and carol bearer tokens from
# --token-auth-file, all over the server's TLS (its CA from the admin kubeconfig the server
# writes).
# Usage: rbac_e2e.sh <berth binary> <repository root>   Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
BERTH=${1:?berth binary}
ROOT=${2:?repository root}
source "$(dirname "$0")/lib.sh"
e2e_init rbac

mkdir -p "$WORK/data"
cat >"$WORK/tokens.csv" <<'EOF2'
admin-token,admin,u-admin,system:masters
carol-token,carol,u-carol,team-a-admins
EOF2
e2e_start_server --nodes 0 --token-auth-file "$WORK/tokens.csv"
SERVER=$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")
CA_DATA=$(awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG")
case $SERVER in https://*) ;; *) fail "the server does not serve TLS: $SERVER" ;; esac
base64 -d <<<"$CA_DATA" >"$WORK/ca.crt"
# kubeconfig_for USER TOKEN: a kubeconfig of the server (its CA) with that bearer token.
kubeconfig_for() {
  cat >"$WORK/$1.kubeconfig" <<EOF2
apiVersion: v1
kind: Config
clusters: [{name: berth, cluster: {server: $SERVER, certificate-authority-data: $CA_DATA}}]
users: [{name: $1, user: {token: $2}}]
contexts: [{name: $1, context: {cluster: berth, user: $1}}]
current-context: $1
EOF2
}
# alice and bob get client certificates from `berth user add`; admin and carol use tokens.
for u in admin carol; do kubeconfig_for "$u" "$u-token"; done
"$BERTH" user add alice --group team-a --data-dir "$WORK/data" -o "$WORK/alice.kubeconfig" ||
  fail "berth user add alice"
"$BERTH" user add bob --group team-b --data-dir "$WORK/data" >"$WORK/bob.kubeconfig" || fail "berth user add bob"
[ "$(stat -c %a "$WORK/alice.kubeconfig")" = 600 ] || fail "alice's kubeconfig is not mode 0600"
"$BERTH" user add system:evil --group system:masters --data-dir "$WORK/data" >/dev/null 2>&1 &&
  fail "berth user add accepted a system: user name"
as() { local user=$1; shift; "$KUBECTL" --kubeconfig "$WORK/$user.kubeconfig" "$@"; }
# expect_forbidden MESSAGE CMD...: CMD fails with the 403 Status MESSAGE (kubectl prints it
# after "Error from server (Forbidden): ", or for create commands inside its own error line).
expect_forbidden() {
  local want=$1; shift
  local out
  if out=$("$@" 2>&1); then fail "allowed: $*"; return; fi
  grep -qF -- "$want" <<<"$out" && grep -qiF forbidden <<<"$out" || fail "$*: want Forbidden: $want, got: $out"
}
expect_can_i() {  # expect_can_i USER yes|no ARGS...
  local user=$1 want=$2; shift 2
  local got
  got=$(as "$user" auth can-i "$@" 2>/dev/null)
  [ "$got" = "$want" ] || fail "$user: kubectl auth can-i $*: want $want, got '$got'"
}

# ---- the admin sets up the seed's queues and binds each team to `edit` in its namespace --------
as admin apply -f "$ROOT/examples/trainer-kueue/00-kueue.yaml" -f "$ROOT/examples/trainer-kueue/01-priorities.yaml" \
  -f "$ROOT/examples/trainer-kueue/02-runtime.yaml" >/dev/null || fail "admin could not apply the seed's objects"
# binding NAMESPACE NAME CLUSTERROLE GROUP: a RoleBinding of the group to the ClusterRole.
binding() {
  printf -- '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {namespace: %s, name: %s}\n' "$1" "$2"
  printf 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %s}\n' "$3"
  printf 'subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: %s}]\n' "$4"
}
{
  printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n'
  printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {namespace: team-b, name: lq-team-b}\n'
  printf 'spec: {clusterQueue: cluster-queue}\n'
  for team in team-a team-b; do
    binding "$team" "$team-edit" edit "$team"
    binding "$team" "$team-batch-user" kueue-batch-user-role "$team"
  done
  binding team-a team-a-admins admin team-a-admins
} | as admin apply -f - >/dev/null || fail "admin could not create team-b and the bindings"
as bob create job canary -n team-b --image=busybox -- sleep 600 >/dev/null || fail "bob could not create a Job in team-b"

# ---- alice works in team-a ----------------------------------------------------------------------
as alice create -f "$ROOT/examples/trainer-kueue/jobs/low-priority.yaml" >/dev/null ||
  fail "alice could not create the seed's TrainJob in team-a"
has_workload() { as alice get workloads -n team-a -o name | grep -q .; }
wait_until 20 has_workload || fail "alice does not see the TrainJob's Workload in team-a"
as alice get localqueue lq-team-a -n team-a >/dev/null || fail "alice cannot read lq-team-a"
OUT=$(as alice auth whoami 2>&1)
grep -Eq 'Username +alice' <<<"$OUT" && grep -Eq 'Groups +\[team-a system:authenticated\]' <<<"$OUT" ||
  fail "kubectl auth whoami as alice: $OUT"
echo "ok: alice submits through lq-team-a, sees her Workload, whoami says alice in team-a"

# ---- alice cannot touch team-b or the quota ------------------------------------------------------
expect_forbidden 'jobs.batch is forbidden: User "alice" cannot list resource "jobs" in API group "batch" in the namespace "team-b"' \
  as alice get jobs -n team-b
expect_forbidden 'jobs.batch "canary" is forbidden: User "alice" cannot get resource "jobs" in API group "batch" in the namespace "team-b"' \
  as alice get job canary -n team-b
expect_forbidden 'jobs.batch "canary" is forbidden: User "alice" cannot delete resource "jobs" in API group "batch" in the namespace "team-b"' \
  as alice delete job canary -n team-b
# kubectl patch and edit read the object first.
expect_forbidden 'clusterqueues.kueue.x-k8s.io "cluster-queue" is forbidden: User "alice" cannot get resource "clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope' \
  as alice patch clusterqueue cluster-queue --type=merge -p '{"spec":{"stopPolicy":"Hold"}}'
expect_forbidden 'resourceflavors.kueue.x-k8s.io is forbidden: User "alice" cannot create resource "resourceflavors" in API group "kueue.x-k8s.io" at the cluster scope' \
  as alice create -f - <<<'{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"mine"}}'
expect_forbidden 'workloadpriorityclasses.kueue.x-k8s.io "high" is forbidden: User "alice" cannot delete resource "workloadpriorityclasses" in API group "kueue.x-k8s.io" at the cluster scope' \
  as alice delete workloadpriorityclass high
OUT=$(curl -s --cacert "$WORK/ca.crt" -X PATCH -H 'Authorization: Bearer carol-token' \
  -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"stopPolicy":"Hold"}}' \
  "$SERVER/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue")
grep -qF '"message":"clusterqueues.kueue.x-k8s.io \"cluster-queue\" is forbidden: User \"carol\" cannot patch resource \"clusterqueues\" in API group \"kueue.x-k8s.io\" at the cluster scope"' <<<"$OUT" &&
  grep -qF '"code":403' <<<"$OUT" || fail "a PATCH of the ClusterQueue as carol (admin of team-a): $OUT"
as bob get job canary -n team-b >/dev/null || fail "bob's canary Job is gone"
echo "ok: alice gets 403 with kube-apiserver's message for team-b's jobs and the quota objects"

# ---- Kueue's visibility API: her own LocalQueue's pending workloads, nobody else's ---------------
VIS=/apis/visibility.kueue.x-k8s.io/v1beta2
OUT=$(as alice get --raw "$VIS/namespaces/team-a/localqueues/lq-team-a/pendingworkloads") &&
  grep -q '"kind":"PendingWorkloadsSummary"' <<<"$OUT" || fail "alice's pending workloads of lq-team-a: $OUT"
expect_forbidden 'localqueues.visibility.kueue.x-k8s.io "lq-team-b" is forbidden: User "alice" cannot get resource "localqueues/pendingworkloads" in API group "visibility.kueue.x-k8s.io" in the namespace "team-b"' \
  as alice get --raw "$VIS/namespaces/team-b/localqueues/lq-team-b/pendingworkloads"
expect_forbidden 'clusterqueues.visibility.kueue.x-k8s.io "cluster-queue" is forbidden: User "alice" cannot get resource "clusterqueues/pendingworkloads" in API group "visibility.kueue.x-k8s.io" at the cluster scope' \
  as alice get --raw "$VIS/clusterqueues/cluster-queue/pendingworkloads"
OUT=$(as admin get --raw "$VIS/clusterqueues/cluster-queue/pendingworkloads") &&
  grep -q '"kind":"PendingWorkloadsSummary"' <<<"$OUT" || fail "the admin's pending workloads of cluster-queue: $OUT"
expect_can_i alice yes get localqueues.visibility.kueue.x-k8s.io --subresource pendingworkloads -n team-a
expect_can_i alice no get clusterqueues.visibility.kueue.x-k8s.io --subresource pendingworkloads
echo "ok: the visibility API answers alice for lq-team-a only, the admin for the ClusterQueue"

expect_can_i alice yes create trainjobs.trainer.kubeflow.org -n team-a
expect_can_i alice yes get workloads.kueue.x-k8s.io -n team-a
expect_can_i alice no list jobs.batch -n team-b
expect_can_i alice no delete jobs.batch -n team-b
expect_can_i alice no create clusterqueues.kueue.x-k8s.io
expect_can_i alice no update resourceflavors.kueue.x-k8s.io
expect_can_i alice no create workloadpriorityclasses.kueue.x-k8s.io
expect_can_i admin yes delete clusterqueues.kueue.x-k8s.io
expect_can_i bob yes delete jobs.batch -n team-b
echo "ok: kubectl auth can-i answers each case"

# ---- credentials ----------------------------------------------------------------------------------
code() { curl -s --cacert "$WORK/ca.crt" -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$SERVER/api/v1/namespaces/team-b/pods")" = 401 ] || fail "no credential: not 401"
[ "$(code "$SERVER/healthz")" = 200 ] || fail "/healthz without a credential: not 200"
[ "$(code -H 'Authorization: Bearer wrong' "$SERVER/api/v1/namespaces/team-b/pods")" = 401 ] ||
  fail "a wrong token: not 401"
BODY='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"xsite"}}'
[ "$(code -X POST -H 'Origin: https://evil.example' -H 'Content-Type: text/plain' -d "$BODY" \
  "$SERVER/api/v1/namespaces/team-a/configmaps")" = 401 ] || fail "a cross-site POST without a credential: not 401"
[ "$(code -X POST -H 'Authorization: Bearer carol-token' -H 'Content-Type: text/plain' -d "$BODY" \
  "$SERVER/api/v1/namespaces/team-a/configmaps")" = 415 ] || fail "a text/plain POST with a credential: not 415"
as admin get configmap xsite -n team-a >/dev/null 2>&1 && fail "the cross-site POST created a ConfigMap"
echo "ok: 401 without or with a wrong credential, /healthz public, text/plain bodies 415"

# ---- escalation and impersonation ----------------------------------------------------------------
expect_forbidden 'is attempting to grant RBAC permissions not currently held' \
  as carol create rolebinding carol-root -n team-a --clusterrole=cluster-admin --user=carol
as carol create rolebinding dave-view -n team-a --clusterrole=view --user=dave >/dev/null ||
  fail "carol (admin of team-a) could not bind view in team-a"
expect_forbidden 'rolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team-a"' \
  as alice create rolebinding alice-root -n team-a --clusterrole=cluster-admin --user=alice
expect_forbidden 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope' \
  as alice get pods -n team-b --as bob
expect_forbidden 'jobs.batch is forbidden: User "alice" cannot list resource "jobs" in API group "batch" in the namespace "team-b"' \
  as admin get jobs -n team-b --as alice --as-group team-a
echo "ok: no escalation through bindings; impersonation only for the admin, and it acts as the user"

[ "$FAILURES" -eq 0 ] && echo "PASS" || { echo "FAILURES: $FAILURES"; exit 1; }

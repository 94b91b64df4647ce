#!/usr/bin/env bash
# ServiceAccounts, their tokens in pods, and Secrets (issue 19 item 5), through the real
# kubectl and a pod's own process:
#  - every namespace gets a `default` ServiceAccount; `kubectl get sa|secret` print kubectl's
#    columns; `kubectl create secret generic --from-literal` stores base64 data, and the value
#    appears nowhere in the server's log;
#  - a pod in team-a finds its token, CA and namespace under
#    /var/run/secrets/kubernetes.io/serviceaccount (sandboxed; <pod dir>/var/run/... without
#    the sandbox) and the API server in
#    KUBERNETES_SERVICE_HOST/PORT: with no token its curl gets 401, with its token 403 on
#    team-b's pods with kube-apiserver's message naming system:serviceaccount:team-a:default,
#    and 200 on team-a's pods once the admin binds `view` to that ServiceAccount;
#  - `kubectl create token` (plain and bound to a pod) issues tokens kubectl can use with
#    --token; a pod-bound token stops working when its pod is deleted.
# Usage: serviceaccount_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init serviceaccount

SECRET_VALUE=s3cr3t-0f-team-a
e2e_start_node_server cpu=4,memory=8Gi
SERVER=$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")
base64 -d <<<"$(awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG")" >"$WORK/ca.crt"
e2e_yaml_namespace team-a team-b | "$KUBECTL" apply -f - >/dev/null || fail "namespaces"

# ---- the default ServiceAccount, Secrets ---------------------------------------------------------
wait_until 20 "$KUBECTL" get serviceaccount default -n team-a || fail "team-a has no default ServiceAccount"
OUT=$("$KUBECTL" get serviceaccounts -n team-a 2>&1)
grep -Eq '^NAME +SECRETS +AGE' <<<"$OUT" && grep -Eq '^default +0 ' <<<"$OUT" || fail "kubectl get sa: $OUT"
"$KUBECTL" delete serviceaccount default -n team-b >/dev/null || fail "delete team-b's default ServiceAccount"
wait_until 20 "$KUBECTL" get serviceaccount default -n team-b || fail "team-b's default ServiceAccount not re-created"
"$KUBECTL" create secret generic db -n team-a --from-literal=password="$SECRET_VALUE" >/dev/null ||
  fail "kubectl create secret generic"
OUT=$("$KUBECTL" get secret db -n team-a -o yaml 2>&1)
grep -qF "password: $(printf %s "$SECRET_VALUE" | base64)" <<<"$OUT" && grep -q 'type: Opaque' <<<"$OUT" ||
  fail "kubectl get secret -o yaml: $OUT"
OUT=$("$KUBECTL" get secrets -n team-a 2>&1)
grep -Eq '^NAME +TYPE +DATA +AGE' <<<"$OUT" && grep -Eq '^db +Opaque +1 ' <<<"$OUT" || fail "kubectl get secrets: $OUT"
OUT=$("$KUBECTL" create -n team-a -f - 2>&1 <<<'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"bad"},"data":{"k":"'"$SECRET_VALUE"'"}}')
grep -qF 'data[k]: Invalid value: "<secret contents redacted>": illegal base64 data' <<<"$OUT" &&
  ! grep -qF "$SECRET_VALUE" <<<"$OUT" || fail "a Secret with non-base64 data: $OUT"
echo "ok: default ServiceAccounts (re-created), Secrets with kubectl's columns, no value echoed"

# ---- a pod's process uses its token ---------------------------------------------------------------
cat <<'EOF' | "$KUBECTL" apply -f - >/dev/null || fail "create the pod"
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command:
    - /bin/sh
    - -c
    - |
      D=/var/run/secrets/kubernetes.io/serviceaccount   # the sandbox mounts it there
      [ -d $D ] || D=../var/run/secrets/kubernetes.io/serviceaccount   # no sandbox: in the pod directory
      U=https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
      for i in $(seq 1 100); do [ -s $D/token ] && break; sleep 0.1; done
      echo "namespace=$(cat $D/namespace)"
      echo "none=$(curl -s -o /dev/null -w '%{http_code}' --cacert $D/ca.crt $U/api/v1/namespaces/team-b/pods)"
      echo "other=$(curl -s --cacert $D/ca.crt -H "Authorization: Bearer $(cat $D/token)" $U/api/v1/namespaces/team-b/pods)"
      for i in $(seq 1 300); do
        own=$(curl -s -o /dev/null -w '%{http_code}' --cacert $D/ca.crt -H "Authorization: Bearer $(cat $D/token)" $U/api/v1/namespaces/team-a/pods)
        [ "$own" = 200 ] && break
        sleep 0.1
      done
      echo "own=$own"
EOF
logs() { "$KUBECTL" logs p -n team-a 2>/dev/null; }
has_other() { logs | grep -q '^other='; }
wait_until 30 has_other || fail "the pod did not call the API: $(logs)"
"$KUBECTL" create rolebinding sa-view -n team-a --clusterrole=view --serviceaccount=team-a:default >/dev/null ||
  fail "bind view to team-a:default"
done_() { [ "$("$KUBECTL" get pod p -n team-a -o jsonpath='{.status.phase}')" = Succeeded ]; }
wait_until 60 done_ || fail "the pod did not finish: $(logs)"
OUT=$(logs)
grep -qx 'namespace=team-a' <<<"$OUT" || fail "the namespace file: $OUT"
grep -qx 'none=401' <<<"$OUT" || fail "no token: want 401: $OUT"
grep -qF '"message":"pods is forbidden: User \"system:serviceaccount:team-a:default\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-b\""' <<<"$OUT" &&
  grep -qF '"code":403' <<<"$OUT" || fail "its token on team-b: want 403 naming the ServiceAccount: $OUT"
grep -qx 'own=200' <<<"$OUT" || fail "its token on team-a after the view binding: want 200: $OUT"
echo "ok: a pod's process: 401 without its token, 403 on team-b with it, 200 on team-a once bound to view"

# ---- kubectl create token ------------------------------------------------------------------------
# A kubeconfig-less kubectl with only the token (the admin's client certificate would win).
printf "apiVersion: v1\nkind: Config\n" >"$WORK/empty.kubeconfig"
with_token() { KUBECONFIG="$WORK/empty.kubeconfig" "$KUBECTL" --server "$SERVER" --certificate-authority "$WORK/ca.crt" --token "$@"; }
TOKEN=$("$KUBECTL" create token default -n team-a) || fail "kubectl create token"
with_token "$TOKEN" get pods -n team-a >/dev/null || fail "the token of team-a:default cannot list team-a's pods"
OUT=$(with_token "$TOKEN" get pods -n team-b 2>&1) && fail "the token lists team-b's pods"
grep -qF 'User "system:serviceaccount:team-a:default" cannot list resource "pods"' <<<"$OUT" || fail "team-b with the token: $OUT"
cat <<'EOF' | "$KUBECTL" apply -f - >/dev/null || fail "create pod q"
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: team-a}
spec: {containers: [{name: main, image: busybox, command: [sleep, "600"]}], terminationGracePeriodSeconds: 1}
EOF
BOUND=$("$KUBECTL" create token default -n team-a --bound-object-kind Pod --bound-object-name q) ||
  fail "kubectl create token --bound-object-kind Pod"
OUT=$(with_token "$BOUND" auth whoami -o yaml 2>&1)
grep -qF 'system:serviceaccount:team-a:default' <<<"$OUT" && grep -qF 'authentication.kubernetes.io/pod-name' <<<"$OUT" ||
  fail "whoami with the pod-bound token: $OUT"
"$KUBECTL" delete pod q -n team-a --wait=true --timeout=30s >/dev/null || fail "delete pod q"
sleep_past_leeway() { ! with_token "$BOUND" get pods -n team-a >/dev/null 2>&1; }
wait_until 90 sleep_past_leeway || fail "the token of a deleted pod still works"
OUT=$(with_token "$BOUND" get pods -n team-a 2>&1)
grep -qF 'Unauthorized' <<<"$OUT" || fail "the token of a deleted pod: want Unauthorized: $OUT"
echo "ok: kubectl create token (plain and pod-bound), used with --token; a deleted pod's token is refused"

grep -qF "$SECRET_VALUE" "$WORK/server.log" && fail "the Secret's value is in the server's log"
[ "$FAILURES" -eq 0 ] && echo "PASS" || { echo "FAILURES: $FAILURES"; exit 1; }

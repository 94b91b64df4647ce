#!/usr/bin/env bash
# `kubectl port-forward` (issue 17) through the real kubectl v1.32, which tunnels SPDY/3.1 in a
# WebSocket (subprotocol SPDY/3.1+portforward.k8s.io; client-go tools/portforward/
# tunneling_dialer.go). Checks:
#  - a pod serving HTTP (python3 -m http.server): `kubectl port-forward pod/web L:R` and curl
#    through it gets the page; two connections at once both get it;
#  - a port nothing listens on: kubectl reports the error the server writes on the error
#    stream and ends ("lost connection to pod");
#  - deleting the pod ends a running port-forward;
#  - a user bound to `view` cannot port-forward (403 naming pods/portforward).
# Usage: portforward_e2e.sh <berth binary> [remote]   Exit: 0 pass, 1 fail, 77 skip.
# With `remote` the pods run on a `berth agent` that joined over the network, so every check
# goes through the API server's proxy to the agent's streaming server (apiserver/node_proxy.h).
set -uo pipefail
BERTH=${1:?berth binary}
E2E_NODE=${2:-}
source "$(dirname "$0")/lib.sh"
e2e_init portforward${E2E_NODE:+-$E2E_NODE}
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 not found"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }

# Ports unique to this run: the pod listens on the node's network (berth's pods share it).
# Below the kernel's ephemeral range (32768-60999 by default), where an outgoing connection's
# local port could take one of them at any moment.
POD_PORT=$(( 20000 + $$ % 10000 ))
LOCAL_PORT=$(( 10000 + $$ % 10000 ))
DEAD_PORT=$(( POD_PORT + 1 ))

cat >"$WORK/tokens.csv" <<'EOF2'
vera-token,vera,u-vera,
EOF2
mkdir -p "$WORK/data"
e2e_start_cluster "cpu=4,memory=8Gi" --token-auth-file "$WORK/tokens.csv"
SERVER=$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")
CA_DATA=$(awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG")
cat >"$WORK/vera.kubeconfig" <<EOF2
apiVersion: v1
kind: Config
clusters: [{name: berth, cluster: {server: $SERVER, certificate-authority-data: $CA_DATA}}]
users: [{name: vera, user: {token: vera-token}}]
contexts: [{name: vera, context: {cluster: berth, user: vera, namespace: default}}]
current-context: vera
EOF2

"$KUBECTL" apply -f - >/dev/null <<EOF2 || fail "creating the pod"
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - name: main
    command: [sh, -c, 'mkdir -p site && echo hello-from-web > site/index.html && exec /usr/bin/python3 -m http.server $POD_PORT --bind 127.0.0.1 --directory site']
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vera-view, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: vera, apiGroup: rbac.authorization.k8s.io}]
EOF2
wait_until 30 sh -c "'$KUBECTL' get pod web -o jsonpath='{.status.phase}' | grep -qx Running" || fail "pod web not Running"
on=$("$KUBECTL" get pod web -o jsonpath='{.spec.nodeName}')
[ "$on" = "$NODE" ] || fail "pod web runs on [$on], want $NODE"
wait_until 30 sh -c "'$KUBECTL' exec web -- /usr/bin/python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:$POD_PORT/\")' 2>/dev/null" ||
  fail "the pod's server never answered"

"$KUBECTL" port-forward pod/web "$LOCAL_PORT:$POD_PORT" >"$WORK/pf.out" 2>"$WORK/pf.err" &
pf=$!
wait_until 20 grep -q "Forwarding from 127.0.0.1:$LOCAL_PORT -> $POD_PORT" "$WORK/pf.out" ||
  fail "port-forward did not start: [$(cat "$WORK/pf.out" "$WORK/pf.err")]"
page=$(curl -sS --max-time 10 "http://127.0.0.1:$LOCAL_PORT/index.html")
[ "$page" = hello-from-web ] || fail "curl through port-forward: [$page] [$(cat "$WORK/pf.err")]"
# Two connections at once.
curl -sS --max-time 10 "http://127.0.0.1:$LOCAL_PORT/index.html" >"$WORK/c1" &
c1=$!
curl -sS --max-time 10 "http://127.0.0.1:$LOCAL_PORT/index.html" >"$WORK/c2" &
c2=$!
wait "$c1" || fail "first concurrent curl failed"
wait "$c2" || fail "second concurrent curl failed"
[ "$(cat "$WORK/c1")" = hello-from-web ] && [ "$(cat "$WORK/c2")" = hello-from-web ] ||
  fail "concurrent pages: [$(cat "$WORK/c1")] [$(cat "$WORK/c2")]"
grep -q "Handling connection for $LOCAL_PORT" "$WORK/pf.out" || fail "kubectl did not log the connections"
kill -0 "$pf" 2>/dev/null || fail "port-forward ended after its connections"

# A port nothing listens on: the error stream's message, then kubectl ends.
DEAD_LOCAL=$(( LOCAL_PORT + 1 ))
"$KUBECTL" port-forward pod/web "$DEAD_LOCAL:$DEAD_PORT" >"$WORK/dead.out" 2>"$WORK/dead.err" &
dead=$!
wait_until 20 grep -q "Forwarding from 127.0.0.1:$DEAD_LOCAL" "$WORK/dead.out" || fail "port-forward to $DEAD_PORT did not start"
curl -sS --max-time 5 "http://127.0.0.1:$DEAD_LOCAL/" >/dev/null 2>&1 && fail "curl to a closed port succeeded"
wait_until 20 sh -c "! kill -0 $dead 2>/dev/null" || fail "port-forward to a closed port did not end"
wait "$dead" && fail "port-forward to a closed port exited 0"
grep -q "error forwarding port $DEAD_PORT to pod default/web" "$WORK/dead.err" &&
  grep -q "connect: connection refused" "$WORK/dead.err" || fail "closed port: [$(cat "$WORK/dead.err")]"
grep -q "lost connection to pod" "$WORK/dead.err" || fail "closed port, the end: [$(cat "$WORK/dead.err")]"

# view cannot port-forward.
out=$("$KUBECTL" --kubeconfig "$WORK/vera.kubeconfig" port-forward pod/web "$(( LOCAL_PORT + 2 )):$POD_PORT" 2>&1) &&
  fail "vera could port-forward"
case $out in *'resource "pods/portforward"'*) ;; *) fail "vera's port-forward: [$out]" ;; esac

# Deleting the pod ends the forward still running.
"$KUBECTL" delete pod web --wait=false >/dev/null || fail "delete pod web"
wait_until 60 sh -c "! kill -0 $pf 2>/dev/null" || fail "port-forward outlived its pod"
wait "$pf"
grep -q "lost connection to pod" "$WORK/pf.err" || fail "after the pod's deletion: [$(cat "$WORK/pf.err")]"

e2e_stop_server
if [ "$FAILURES" -gt 0 ]; then echo "$FAILURES failure(s)"; exit 1; fi
echo PASS

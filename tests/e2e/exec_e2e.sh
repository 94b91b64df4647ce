#!/usr/bin/env bash
# `kubectl exec` and `kubectl cp` (issue 17) through the real kubectl v1.32, which speaks the
# WebSocket channel protocol (v5.channel.k8s.io) and falls back to SPDY only when the upgrade
# is refused (client-go tools/remotecommand/fallback.go). Checks, with kube-apiserver's and the
# kubelet's answers:
#  - stdout and stderr arrive apart; the container's env and working directory are the
#    command's; the exit code is kubectl's (NonZeroExitCode on the error stream);
#  - stdin piped through `kubectl exec -i`; a terminal with `-it` (driven by script(1));
#  - `kubectl cp` copies a file out of the pod's directory and a file back in (tar over exec);
#  - a client that goes away kills the command: no process is left;
#  - a user bound to `view` cannot exec (403 naming pods/exec); an unknown container and a
#    command that does not exist get upstream's errors;
#  - `kubectl logs -f` streams the whole log until the container exits;
#  - `kubectl attach` streams a running container's output from the moment it attaches until
#    the container exits, and exits 0 then; `view` cannot attach.
# Usage: exec_e2e.sh <berth binary> [remote]   Exit: 0 pass, 1 fail, 77 skip.
# With `remote` the pods run on a `berth agent` that joined over the network, so every check
# goes through the API server's proxy to the agent's streaming server (apiserver/node_proxy.h).
set -uo pipefail
BERTH=${1:?berth binary}
E2E_NODE=${2:-}
source "$(dirname "$0")/lib.sh"
e2e_init exec${E2E_NODE:+-$E2E_NODE}
command -v script >/dev/null || { echo "SKIP: script(1) not found"; exit 77; }

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

"$KUBECTL" apply -f - >/dev/null <<'EOF2' || fail "creating the pod"
apiVersion: v1
kind: Pod
metadata: {name: shell, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - name: main
    command: [sh, -c, 'echo checkpoint-42 > model.ckpt; exec sleep 3600']
    env: [{name: RUN_ID, value: run-7}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vera-view, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: vera, apiGroup: rbac.authorization.k8s.io}]
EOF2
wait_until 30 sh -c "'$KUBECTL' get pod shell -o jsonpath='{.status.phase}' | grep -qx Running" ||
  fail "pod shell not Running"
on=$("$KUBECTL" get pod shell -o jsonpath='{.spec.nodeName}')
[ "$on" = "$NODE" ] || fail "pod shell runs on [$on], want $NODE"

# Output streams, env, working directory, exit code.
out=$("$KUBECTL" exec shell -- sh -c 'echo "out $RUN_ID"; echo err >&2; cat model.ckpt' 2>"$WORK/err")
[ "$out" = "out run-7
checkpoint-42" ] || fail "exec stdout: [$out]"
[ "$(cat "$WORK/err")" = "err" ] || fail "exec stderr: [$(cat "$WORK/err")]"
"$KUBECTL" exec shell -- sh -c 'exit 3'
rc=$?
[ "$rc" = 3 ] || fail "exit code: $rc, want 3"
"$KUBECTL" exec shell -c main -- true || fail "exec true failed"

# stdin.
out=$(printf 'hi\nthere\n' | "$KUBECTL" exec -i shell -- sh -c 'cat; echo done')
[ "$out" = "hi
there
done" ] || fail "exec -i: [$out]"

# A terminal: script(1) gives kubectl one, so -it allocates one in the container.
out=$(printf 'test -t 0 && echo IS-A-TTY; exit 4\n' | script -qec "$KUBECTL exec -it shell -- sh" /dev/null)
rc=$?
case $out in *IS-A-TTY*) ;; *) fail "exec -it: no terminal: [$out]" ;; esac
[ "$rc" = 4 ] || fail "exec -it exit code: $rc, want 4"

# cp out of the pod's working directory, and back in.
DIR=$("$KUBECTL" exec shell -- pwd)
"$KUBECTL" cp "default/shell:$DIR/model.ckpt" "$WORK/model.ckpt" >/dev/null 2>"$WORK/cp.err" ||
  fail "kubectl cp out: $(cat "$WORK/cp.err")"
[ "$(cat "$WORK/model.ckpt" 2>/dev/null)" = checkpoint-42 ] || fail "copied out: [$(cat "$WORK/model.ckpt")]"
echo "resume-from-here" >"$WORK/resume.txt"
"$KUBECTL" cp "$WORK/resume.txt" "default/shell:$DIR/resume.txt" 2>"$WORK/cp.err" ||
  fail "kubectl cp in: $(cat "$WORK/cp.err")"
out=$("$KUBECTL" exec shell -- cat resume.txt)
[ "$out" = resume-from-here ] || fail "copied in: [$out]"

# A client that goes away: its command is killed.
"$KUBECTL" exec shell -- sleep 4242 >/dev/null 2>&1 &
client=$!
wait_until 10 pgrep -f "[s]leep 4242" || fail "the exec'd sleep never started"
kill -9 "$client"
wait "$client" 2>/dev/null
wait_until 10 sh -c '! pgrep -f "[s]leep 4242"' || fail "the exec'd command outlived its client"

# Errors.
out=$("$KUBECTL" --kubeconfig "$WORK/vera.kubeconfig" exec shell -- true 2>&1) && fail "vera could exec"
case $out in *'cannot create resource "pods/exec"'*|*'cannot get resource "pods/exec"'*) ;;
  *) fail "vera's exec: [$out]" ;; esac
"$KUBECTL" --kubeconfig "$WORK/vera.kubeconfig" get pod shell >/dev/null || fail "vera cannot read pods"
out=$("$KUBECTL" exec shell -c nope -- true 2>&1) && fail "exec into container nope succeeded"
case $out in *"container nope is not valid for pod shell"*) ;; *) fail "unknown container: [$out]" ;; esac
out=$("$KUBECTL" exec shell -- no-such-binary 2>&1) && fail "exec of a missing binary succeeded"
case $out in *'exec: "no-such-binary": executable file not found in $PATH'*) ;;
  *) fail "missing binary: [$out]" ;; esac

# kubectl attach: the container's output from the moment of attaching (nothing written before
# it), both streams, until the container exits; then kubectl exits 0 whatever the container's
# exit code (the kubelet's attach ends with Success).
"$KUBECTL" apply -f - >/dev/null <<'EOF2' || fail "creating the ticker pod"
apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - name: main
    command: [sh, -c, 'i=0; while [ ! -f stop ]; do echo tick-$i; echo warn-$i >&2; i=$((i+1)); sleep 0.2; done; echo bye; exit 5']
EOF2
wait_until 30 sh -c "'$KUBECTL' logs ticker 2>/dev/null | grep -qx tick-3" || fail "ticker never ticked"
"$KUBECTL" attach ticker >"$WORK/attach.out" 2>"$WORK/attach.err" &
attach=$!
"$KUBECTL" logs -f ticker >"$WORK/follow.out" 2>"$WORK/follow.err" &
follow=$!
wait_until 20 grep -q warn- "$WORK/attach.out" || fail "attach: no output: [$(cat "$WORK/attach.out" "$WORK/attach.err")]"
"$KUBECTL" exec ticker -- touch stop || fail "touch stop"
wait_until 20 sh -c "! kill -0 $attach 2>/dev/null" || fail "attach did not end with its container"
wait "$attach"
rc=$?
[ "$rc" = 0 ] || fail "attach exit code: $rc, want 0: [$(cat "$WORK/attach.err")]"
grep -qx bye "$WORK/attach.out" || fail "attach missed the last line: [$(cat "$WORK/attach.out")]"
grep -qx tick-0 "$WORK/attach.out" && fail "attach replayed output written before it: [$(head -3 "$WORK/attach.out")]"
grep -q "If you don't see a command prompt" "$WORK/attach.err" || fail "attach stderr: [$(cat "$WORK/attach.err")]"
# `kubectl logs -f`: everything from the start, until the container exits.
wait_until 20 sh -c "! kill -0 $follow 2>/dev/null" || fail "logs -f did not end with its container"
wait "$follow" || fail "logs -f exit code $?: [$(cat "$WORK/follow.err")]"
grep -qx tick-0 "$WORK/follow.out" && grep -qx bye "$WORK/follow.out" ||
  fail "logs -f: [$(head -3 "$WORK/follow.out") ... $(tail -2 "$WORK/follow.out")]"
out=$("$KUBECTL" attach shell -c nope 2>&1) && fail "attach to container nope succeeded"
case $out in *"container nope not found"*|*"container nope is not valid"*) ;; *) fail "attach -c nope: [$out]" ;; esac
out=$("$KUBECTL" --kubeconfig "$WORK/vera.kubeconfig" attach shell 2>&1) && fail "vera could attach"
case $out in *'resource "pods/attach"'*) ;; *) fail "vera's attach: [$out]" ;; esac
wait_until 20 sh -c "'$KUBECTL' get pod ticker -o jsonpath='{.status.phase}' | grep -qx Failed" ||
  fail "ticker did not end Failed"
out=$("$KUBECTL" attach ticker 2>&1) && fail "attach to a finished pod succeeded"
case $out in *"cannot attach a container in a completed pod; current phase is Failed"*) ;;
  *) fail "attach to a finished pod: [$out]" ;; esac

e2e_stop_server
if [ "$FAILURES" -gt 0 ]; then echo "$FAILURES failure(s)"; exit 1; fi
echo PASS

#!/usr/bin/env bash
# Bytes a container writes that are not UTF-8 reach the API as U+FFFD and never stop the
# control plane. An exec probe's output goes into the kubelet's Unhealthy Event; a pod whose
# liveness probe prints invalid UTF-8 (a lone 0xff, a truncated sequence, an overlong '/')
# once made the Event's JSON encoding throw and ended the server, again after each restart
# since the probe kept failing. Checks, through the real kubectl:
#  - the server (and with `remote` the agent) keeps serving while the probe fails;
#  - the Unhealthy Event's message holds U+FFFD where the bytes were, as kube-apiserver
#    stores what Go's encoding/json writes for such strings;
#  - the pod is restarted by its liveness probe as usual (restartCount grows).
# Usage: container_bytes_e2e.sh <berth binary> [remote]   Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
BERTH=${1:?berth binary}
E2E_NODE=${2:-}
source "$(dirname "$0")/lib.sh"
e2e_init container-bytes${E2E_NODE:+-$E2E_NODE}

mkdir -p "$WORK/data"
e2e_start_cluster "cpu=2,memory=4Gi"
"$KUBECTL" apply -f - >/dev/null <<'EOF2' || fail "creating the pod"
apiVersion: v1
kind: Pod
metadata: {name: hostile, namespace: default}
spec:
  containers:
  - name: main
    command: [sh, -c, 'exec sleep 3600']
    livenessProbe:
      exec: {command: [sh, -c, "printf 'bad \\377 cut \\342\\202 overlong \\300\\257 end'; exit 1"]}
      periodSeconds: 1
      failureThreshold: 2
EOF2
restarted() {
  [ "$("$KUBECTL" get pod hostile -o jsonpath='{.status.containerStatuses[0].restartCount}')" -ge 1 ] 2>/dev/null
}
wait_until 40 restarted || fail "the liveness probe did not restart the container"
kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited: $(tail -3 "$WORK/server.log")"
[ -z "${AGENT_PID:-}" ] || kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent exited: $(tail -3 "$WORK/agent.log")"
messages=$("$KUBECTL" get events --field-selector involvedObject.name=hostile,reason=Unhealthy \
  -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
want=$(printf 'Liveness probe failed: bad \357\277\275 cut \357\277\275 overlong \357\277\275\357\277\275 end')
printf '%s\n' "$messages" | grep -qxF "$want" || fail "Unhealthy messages: [$messages], want [$want]"
# Every byte the API answers is UTF-8.
"$KUBECTL" get events -o json >"$WORK/events.json" || fail "get events"
iconv -f UTF-8 -t UTF-8 "$WORK/events.json" >/dev/null 2>&1 || fail "the events' JSON is not UTF-8"
grep -q 'terminate called' "$WORK/server.log" "$WORK"/agent.log 2>/dev/null && fail "a process threw"

e2e_stop_server
if [ "$FAILURES" -gt 0 ]; then echo "$FAILURES failure(s)"; exit 1; fi
echo PASS

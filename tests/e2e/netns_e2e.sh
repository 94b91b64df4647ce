#!/usr/bin/env bash
# Multi-node on one machine (issue #6, Done-when): three `berth agent`s, each in its own
# network namespace with its own address, join one `berth server --nodes 0` (no embedded
# agent) over a bridge. A 2-pod PyTorchJob (2 cpu per pod; n1 and n2 have 2 cpu, n3 only
# 1) spans two namespaces: the worker reaches the master at MASTER_ADDR:MASTER_PORT, the
# master's node address in another namespace, and both log the exchange. Then the
# master's agent is killed (kill -9): its node becomes NotReady (Ready=Unknown; the
# server runs with --node-monitor-grace-period 15) and its pod is marked for deletion as
# the taint manager does (TaintManagerEviction), never Failed: its process may still run,
# so nothing replaces it while the agent is away. The pods stay not ready, so Kueue's
# waitForPodsReady (recoveryTimeout 3 s, --config) evicts the Workload as a whole — the
# worker on the live node is stopped too — and requeues it. Once the agent restarts on its
# data directory, it stops the master's old run and the pod is gone; the job is re-admitted
# and runs again on two nodes.
# Usage: netns_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip (not root, no
# `ip netns`, no kubectl, or namespaces that cannot reach each other here).
set -uo pipefail
BERTH=$(realpath "${1:?berth binary}")
source "$(dirname "$0")/lib.sh"
e2e_require_kubectl
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "SKIP: ip netns unavailable"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }

# Names unique to this run (interface names have at most 15 characters).
TAG=$(( $$ % 100000 ))
NET=10.213.$(( $$ % 250 ))
BR=bb$TAG
NS=() AGENT_PID=()
netns_cleanup() {
  for pid in "${AGENT_PID[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${AGENT_PID[@]}"; do wait "$pid" 2>/dev/null; done
  for ns in "${NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  ip link del "$BR" 2>/dev/null
}
e2e_init netns
trap 'netns_cleanup; e2e_cleanup' EXIT

# ---- the network: a bridge at $NET.1, namespace i at $NET.1i ---------------------------
ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up ||
  { echo "SKIP: cannot create a bridge"; exit 77; }
for i in 1 2 3; do
  ns=berth-$TAG-n$i
  ip netns add "$ns" || { echo "SKIP: cannot create a network namespace"; exit 77; }
  NS+=("$ns")
  ip link add "vb${TAG}n$i" type veth peer name "vn${TAG}n$i"
  ip link set "vn${TAG}n$i" netns "$ns"
  ip link set "vb${TAG}n$i" master "$BR"
  ip link set "vb${TAG}n$i" up
  ip netns exec "$ns" ip addr add "$NET.1$i/24" dev "vn${TAG}n$i"
  ip netns exec "$ns" ip link set "vn${TAG}n$i" up
  ip netns exec "$ns" ip link set lo up
done
# Namespace 1 must reach namespace 2 through the bridge (a host firewall may forbid it).
probe() { ip netns exec "${NS[1]}" python3 -c 'import socket,sys
s=socket.socket(); s.bind((sys.argv[1],0)); s.listen(1); print(s.getsockname()[1], flush=True); s.accept()' "$NET.12"; }
exec 3< <(probe)
read -r -t 5 port <&3 || { echo "SKIP: no listener in the namespace"; exit 77; }
ip netns exec "${NS[0]}" python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)' "$NET.12" "$port" ||
  { echo "SKIP: network namespaces cannot reach each other through a bridge here"; exit 77; }
exec 3<&-

# ---- the server (no embedded agent) and three agents ------------------------------------
# Kueue's waitForPodsReady: a running Workload whose pods stop being ready for 3 s is
# evicted (PodsReadyTimeout) and requeued after a 1 s backoff.
cat >"$WORK/kueue.yaml" <<'EOF2'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 120s
  recoveryTimeout: 3s
  blockAdmission: false
  requeuingStrategy: {backoffBaseSeconds: 1, backoffMaxSeconds: 5}
integrations:
  frameworks: [kubeflow.org/pytorchjob]
EOF2
e2e_start_server --nodes 0 --address "$NET.1" --node-monitor-grace-period 15 --config "$WORK/kueue.yaml"
# n3 is too small for a pod of the job (2 cpu), so a pod lost with its node cannot be
# replaced elsewhere: the whole job must be requeued.
CAPACITY=(cpu=2,memory=4Gi cpu=2,memory=4Gi cpu=1,memory=4Gi)
# start_agent I: `berth agent` n<I> in namespace I on its data directory (log appended).
start_agent() {
  local i=$1
  ip netns exec "${NS[$((i - 1))]}" "$BERTH" agent --kubeconfig "$WORK/n$i.kubeconfig" --name "n$i" \
    --data-dir "$WORK/agent-n$i" --shutdown-grace-period 5 --eviction-hard "$E2E_EVICTION_HARD" --capacity "${CAPACITY[$((i - 1))]}" --address "$NET.1$i" >>"$WORK/agent-n$i.log" 2>&1 &
  AGENT_PID[$((i - 1))]=$!
}
# Each agent joins over TLS with the credential the server issues for its node
# (system:node:n<I>, `berth node add`), not the admin's.
for i in 1 2 3; do
  "$BERTH" node add "n$i" --data-dir "$WORK/data" -o "$WORK/n$i.kubeconfig" 2>/dev/null || fail "berth node add n$i"
done
for i in 1 2 3; do start_agent "$i"; done
for i in 1 2 3; do e2e_wait_node_ready "n$i" 30; done
OUT=$("$KUBECTL" get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.addresses[?(@.type=="InternalIP")].address} {end}')
[ "$OUT" = "n1=$NET.11 n2=$NET.12 n3=$NET.13 " ] || fail "node addresses: $OUT"
# n1's credential cannot act as another node: a second agent claiming n2 is refused.
OUT=$(timeout 20 ip netns exec "${NS[0]}" "$BERTH" agent --kubeconfig "$WORK/n1.kubeconfig" --name n2 \
  --data-dir "$WORK/impostor" --port 0 --capacity cpu=1,memory=1Gi 2>&1)
grep -qi 'forbidden' <<<"$OUT" ||
  fail "an agent with n1's credential claiming n2: $OUT"

# ---- a 2-node job (n1 and n2: the only nodes with 2 cpu) ----------------------------------
# Rank 0 accepts one connection on MASTER_PORT and answers; rank 1 connects to
# MASTER_ADDR:MASTER_PORT (a pod host name the agent resolves to the master's node).
SCRIPT='import os, socket, time
rank, addr, port = int(os.environ["RANK"]), os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if rank == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", port)); s.listen(1)
    c, peer = s.accept(); said = c.recv(64).decode(); c.sendall(b"welcome")
    print(f"master: {said} from {peer[0]}", flush=True)
else:
    for _ in range(600):
        try:
            c = socket.create_connection((addr, port), timeout=2); break
        except OSError:
            time.sleep(0.2)
    c.sendall(f"rank {rank}".encode())
    print(f"worker: connected to {addr}:{port}, master said {c.recv(64).decode()}", flush=True)
time.sleep(3600)'
# replica TYPE: a PyTorchJob replica of one pod (2 cpu) running SCRIPT.
replica() {
  cat <<EOF2
    $1:
      replicas: 1
      template:
        spec:
          terminationGracePeriodSeconds: 2
          containers:
          - name: pytorch
            image: python:3
            command: [python3, -c, $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$SCRIPT")]
            resources: {requests: {cpu: "2", memory: 1Gi}}
EOF2
}
{
  e2e_yaml_queues ns=team cq=cq lq=lq cpu=6 memory=12Gi
  cat <<EOF2
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: rdzv
  namespace: team
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  pytorchReplicaSpecs:
EOF2
  replica Master
  replica Worker
} | "$KUBECTL" apply -f - >/dev/null || fail "apply"
pod_node() { "$KUBECTL" get pod -n team "$1" -o jsonpath='{.spec.nodeName}'; }
pod_uid() { "$KUBECTL" get pod -n team "$1" -o jsonpath='{.metadata.uid}'; }
both_running() {
  [ "$("$KUBECTL" get pods -n team --field-selector=status.phase=Running -o name | wc -l)" -eq 2 ]
}
# The container log in its agent's data directory (the API server does not proxy the
# logs of remote agents yet).
pod_log() { cat "$WORK/agent-$(pod_node "$1")/pods/team_$1_$(pod_uid "$1")/logs/pytorch/"*.log; }
exchanged() {
  pod_log rdzv-worker-0 | grep -q "master said welcome" && pod_log rdzv-master-0 | grep -q "master: rank 1 from"
}
wait_until 60 both_running || { fail "the job's two pods are not Running"; "$KUBECTL" get pods -n team -o wide; }
MASTER_NODE=$(pod_node rdzv-master-0) WORKER_NODE=$(pod_node rdzv-worker-0)
[ -n "$MASTER_NODE" ] && [ "$MASTER_NODE" != "$WORKER_NODE" ] ||
  fail "the pods do not span two nodes: master on '$MASTER_NODE', worker on '$WORKER_NODE'"
wait_until 60 exchanged || fail "no rendezvous across namespaces"
MASTER_IP=$NET.1${MASTER_NODE#n}
WORKER_IP=$NET.1${WORKER_NODE#n}
pod_log rdzv-worker-0 | grep -q "connected to $MASTER_IP:" ||
  fail "MASTER_ADDR did not resolve to the master's node $MASTER_IP: $(pod_log rdzv-worker-0)"
pod_log rdzv-master-0 | grep -q "from $WORKER_IP" ||
  fail "the master did not see the worker's namespace address $WORKER_IP: $(pod_log rdzv-master-0)"
[ "$FAILURES" -eq 0 ] && echo "ok: rdzv spans $MASTER_NODE ($MASTER_IP) and $WORKER_NODE ($WORKER_IP); the worker reached MASTER_ADDR across namespaces"
OLD_MASTER_UID=$(pod_uid rdzv-master-0) OLD_WORKER_UID=$(pod_uid rdzv-worker-0)

# ---- kill -9 the master's agent ----------------------------------------------------------
victim=${MASTER_NODE#n}
kill -KILL "${AGENT_PID[$((victim - 1))]}"
wait "${AGENT_PID[$((victim - 1))]}" 2>/dev/null
not_ready() { "$KUBECTL" get node "$MASTER_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx Unknown; }
wait_until 40 not_ready || fail "node $MASTER_NODE is not NotReady after its agent was killed"
NODES=$("$KUBECTL" get nodes)
grep -Eq "^$MASTER_NODE +NotReady" <<<"$NODES" || fail "kubectl get nodes: $NODES"
# The node lifecycle controller marks the pod for deletion (DisruptionTarget, an Event
# TaintManagerEviction) and leaves its phase: nobody knows whether its process still runs.
evicted_event() {
  "$KUBECTL" get events -n team --field-selector reason=TaintManagerEviction,involvedObject.name=rdzv-master-0 \
    -o jsonpath='{.items[0].message}' | grep -qx "Marking for deletion Pod team/rdzv-master-0"
}
wait_until 30 evicted_event || fail "no TaintManagerEviction event for the master pod: $("$KUBECTL" get events -n team)"
MASTER=$("$KUBECTL" get pod -n team rdzv-master-0 -o jsonpath='{.metadata.uid} {.metadata.deletionTimestamp} {.status.phase}')
[[ "$MASTER" == "$OLD_MASTER_UID "?*" Running" ]] ||
  fail "the lost master pod is not the same pod, Running and being deleted: $MASTER"
[ "$FAILURES" -eq 0 ] && echo "ok: agent of $MASTER_NODE killed -> node NotReady, its pod marked for deletion (not Failed)"
# The pods stay not ready past recoveryTimeout, and Kueue evicts the Workload: the job is
# suspended, so the worker on the live node is stopped too.
evicted() {
  "$KUBECTL" get workloads -n team -o jsonpath='{.items[0].status.conditions[?(@.type=="Evicted")].reason}' | grep -qx PodsReadyTimeout
}
wait_until 60 evicted || fail "the Workload was not evicted: $("$KUBECTL" get workloads -n team -o jsonpath='{.items[0].status.conditions}')"
worker_gone() { ! "$KUBECTL" get pod -n team rdzv-worker-0 -o jsonpath='{.metadata.uid}' | grep -qx "$OLD_WORKER_UID"; }
wait_until 60 worker_gone || fail "the worker on the live node $WORKER_NODE was not stopped with the evicted Workload"
FAILED_JOB=$("$KUBECTL" get pytorchjob -n team rdzv -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}')
[ "$FAILED_JOB" != True ] || fail "the PyTorchJob failed instead of being requeued"
[ "$FAILURES" -eq 0 ] && echo "ok: the Workload was evicted (PodsReadyTimeout) as a whole: the worker on $WORKER_NODE was stopped too"
# While the agent is away, its pod is still the old one: no second copy of the master runs.
[ "$(pod_uid rdzv-master-0)" = "$OLD_MASTER_UID" ] || fail "the master pod was replaced while its node was unreachable"

# ---- the agent comes back on the same data directory: the job runs again as a whole ------
start_agent "$victim"
e2e_wait_node_ready "n$victim" 40 "after its agent restarted"
rerun() {
  both_running && [ "$(pod_uid rdzv-master-0)" != "$OLD_MASTER_UID" ] && [ "$(pod_uid rdzv-worker-0)" != "$OLD_WORKER_UID" ] &&
    [ "$(pod_node rdzv-master-0)" != "$(pod_node rdzv-worker-0)" ]
}
wait_until 90 rerun || { fail "the requeued job did not run again on two nodes"; "$KUBECTL" get pods,workloads -n team -o wide; }
wait_until 60 exchanged || fail "no rendezvous after the requeue"
[ "$FAILURES" -eq 0 ] && echo "ok: requeued and re-admitted: new pods on $(pod_node rdzv-master-0) and $(pod_node rdzv-worker-0) rendezvoused again"

[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES check(s) failed; logs in $WORK"; exit 1; }

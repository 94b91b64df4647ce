# Shared by the kubectl-driven end-to-end scripts (sourced, not run):
#   e2e_require_kubectl     KUBECTL (default /usr/bin/kubectl) must be executable, else the
#                           script is skipped (exit 77).
#   e2e_init NAME           e2e_require_kubectl, then WORK=/tmp/berth-NAME.XXXXXX with its own
#                           HOME (kubectl caches discovery under ~/.kube/cache) and
#                           KUBECONFIG=$WORK/data/kubeconfig; on exit the server is stopped and
#                           WORK removed unless a check failed (FAILURES > 0), when it is kept
#                           for inspection.
#   e2e_start_server ARGS   `$BERTH server --port 0 --data-dir $WORK/data
#                           --shutdown-grace-period 5 --eviction-hard "$E2E_EVICTION_HARD"
#                           ARGS` in the background (log: $WORK/server.log; a later --shutdown-grace-period
#                           or --eviction-hard in ARGS wins; 0 leaves pods running when the
#                           server stops). The nodes' data directories are on a shared host's
#                           disk, whose fill level these tests do not control: the default
#                           threshold (10 % free) would taint the node when neighbours fill
#                           the disk, so the tests keep an absolute floor instead (E2E_EVICTION_HARD,
#                           1 GiB; every script that starts a node passes it). kind
#                           turns its kubelets' threshold off for the same reason
#                           (evictionHard nodefs.available "0%",
#                           kubernetes-sigs/kind pkg/cluster/internal/kubeadm/config.go). Also
#                           for the agent of e2e_start_cluster. Returns once the
#                           kubeconfig is written, exits 1 with the log when the server does
#                           not start.
#   e2e_start_node_server CAPACITY [ARGS]
#                           e2e_start_server --nodes 1 --node-capacity CAPACITY ARGS, then
#                           node-0 must be Ready within 20 s (a failure otherwise).
#   e2e_start_cluster CAPACITY [ARGS]
#                           E2E_NODE=remote: e2e_start_server --nodes 0 ARGS, then a `berth
#                           agent` joins over the network as node remote-0 (the admin's
#                           kubeconfig, its streaming server on an ephemeral --port; log
#                           $WORK/agent.log, AGENT_PID), Ready within 20 s. Otherwise
#                           e2e_start_node_server. Sets NODE to the node's name.
#   e2e_stop_server         SIGTERM and wait (the remote agent first); a non-zero exit counts
#                           as a failure.
#   e2e_kill_containers     SIGKILL, through its supervisor's socket, to every container still
#                           supervised under $WORK (done on exit too: nothing a test started
#                           outlives it), then waits up to 10 s for the supervisors to exit.
#   fail MESSAGE            prints "FAIL: MESSAGE" and counts a failure.
#   wait_until SECONDS CMD...
#                           true once CMD succeeds (its output discarded), tried every 0.2 s
#                           for SECONDS seconds.
#   e2e_wait_node_ready NODE SECONDS [CONTEXT]
#                           node/NODE Ready within SECONDS, else the failure "node NODE not
#                           Ready CONTEXT".
# Manifest writers (print YAML documents, each starting with `---`, for `kubectl apply -f -`):
#   e2e_yaml_namespace NAME...                 Namespaces.
#   e2e_yaml_flavor NAME                       an empty ResourceFlavor.
#   e2e_yaml_workload_priority_class NAME VALUE
#   e2e_yaml_cluster_queue NAME FLAVOR [version=V] [preemption=POLICY] RESOURCE=QUOTA...
#                           a ClusterQueue (kueue.x-k8s.io/V, default v1beta2) for every
#                           namespace ({} selector), one resource group covering the RESOURCEs
#                           with these nominalQuotas in FLAVOR; with preemption,
#                           withinClusterQueue POLICY.
#   e2e_yaml_local_queue NAMESPACE NAME CLUSTER_QUEUE
#   e2e_yaml_queues [ns=team-a] [cq=cluster-queue] [lq=user-queue] [preemption=POLICY] RESOURCE=QUOTA...
#                           the usual setup: the Namespace, ResourceFlavor default-flavor,
#                           the ClusterQueue on it and the LocalQueue in the namespace.
#   e2e_yaml_job NAMESPACE NAME CPU [OPTION=VALUE...]
#                           a batch/v1 Job for LocalQueue user-queue: one busybox container
#                           "main" running /bin/sh -c COMMAND with a cpu request of CPU,
#                           restartPolicy Never. Options: queue_in=labels|annotations (where
#                           kueue.x-k8s.io/queue-name is written; labels), priority=CLASS (the
#                           kueue.x-k8s.io/priority-class label), memory=QUANTITY (a memory
#                           request too), grace=SECONDS (terminationGracePeriodSeconds, 1; ""
#                           writes none), command=SCRIPT ('sleep 600').
# Expects BERTH (the berth binary). Sets KUBECTL, WORK, SERVER_PID, AGENT_PID, FAILURES.

e2e_require_kubectl() {
  KUBECTL=${KUBECTL:-/usr/bin/kubectl}
  [ -x "$KUBECTL" ] || { echo "SKIP: $KUBECTL not found"; exit 77; }
}

e2e_init() {
  e2e_require_kubectl
  WORK=$(mktemp -d "/tmp/berth-$1.XXXXXX")
  chmod 0755 "$WORK"  # sandboxed pods (an unprivileged uid) may mount directories below it
  export HOME=$WORK/home
  mkdir -p "$HOME"
  export KUBECONFIG=$WORK/data/kubeconfig
  SERVER_PID=
  AGENT_PID=
  FAILURES=0
  trap e2e_cleanup EXIT
}

e2e_cleanup() {
  if [ -n "${AGENT_PID:-}" ]; then kill -TERM "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; fi
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  e2e_kill_containers
  if [ "$FAILURES" -eq 0 ]; then rm -rf "$WORK"; return; fi
  # A CI log is all that is left of a clean clone's run: show the server's last words.
  if [ -f "$WORK/server.log" ]; then
    echo "--- last 25 lines of $WORK/server.log"
    tail -25 "$WORK/server.log"
  fi
  if [ -f "$WORK/agent.log" ]; then
    echo "--- last 25 lines of $WORK/agent.log"
    tail -25 "$WORK/agent.log"
  fi
  echo "kept $WORK for inspection"
}

e2e_kill_containers() {
  [ -n "${WORK:-}" ] && [ -d "$WORK" ] || return 0
  # A socket path may exceed sun_path: connect through the directory's descriptor.
  find "$WORK" -name shim.sock -print0 2>/dev/null | xargs -0 -r python3 -c '
import os, socket, sys
for path in sys.argv[1:]:
    try:
        fd = os.open(os.path.dirname(path), os.O_PATH)
        s = socket.socket(socket.AF_UNIX)
        s.connect("/proc/self/fd/%d/shim.sock" % fd)
        s.sendall(b"signal 9\n")
        s.close()
        os.close(fd)
    except OSError:
        pass
'
  for _ in $(seq 1 100); do pgrep -f "shim $WORK/" >/dev/null || return 0; sleep 0.1; done
}

E2E_EVICTION_HARD='nodefs.available<1Gi'

e2e_start_server() {
  rm -f "$KUBECONFIG"
  "$BERTH" server --port 0 --data-dir "$WORK/data" --shutdown-grace-period 5 --eviction-hard "$E2E_EVICTION_HARD" "$@" \
    >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$KUBECONFIG" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: server did not start"; cat "$WORK/server.log"; exit 1
}

e2e_start_node_server() {
  local capacity=$1; shift
  e2e_start_server --nodes 1 --node-capacity "$capacity" "$@"
  e2e_wait_node_ready node-0 20
}

e2e_start_cluster() {
  local capacity=$1; shift
  if [ "${E2E_NODE:-}" != remote ]; then
    NODE=node-0
    e2e_start_node_server "$capacity" "$@"
    return
  fi
  NODE=remote-0
  e2e_start_server --nodes 0 "$@"
  "$BERTH" agent --kubeconfig "$KUBECONFIG" --name "$NODE" --data-dir "$WORK/$NODE" --port 0 \
    --eviction-hard "$E2E_EVICTION_HARD" --capacity "$capacity" >>"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
  e2e_wait_node_ready "$NODE" 20 "(berth agent)"
}

e2e_stop_server() {
  if [ -n "${AGENT_PID:-}" ]; then
    kill -TERM "$AGENT_PID"
    if ! wait "$AGENT_PID"; then echo "FAIL: agent exited non-zero on SIGTERM"; FAILURES=$((FAILURES + 1)); fi
    AGENT_PID=
  fi
  kill -TERM "$SERVER_PID"
  if ! wait "$SERVER_PID"; then echo "FAIL: server exited non-zero on SIGTERM"; FAILURES=$((FAILURES + 1)); fi
  SERVER_PID=
}

fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }

# e2e_expect_bad_config FILE MESSAGE: `berth server --config FILE` stops with
# "error: FILE: MESSAGE".
e2e_expect_bad_config() {
  local out rc
  out=$("$BERTH" server --port 0 --data-dir "$WORK/bad-data" --config "$1" 2>&1)
  rc=$?
  [ $rc -ne 0 ] || fail "--config $1 must stop the server"
  [ "$out" = "error: $1: $2" ] || fail "bad config message: $out"
}

wait_until() {
  local t=$1; shift
  for _ in $(seq 1 $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

e2e_wait_node_ready() {
  wait_until "$2" "$KUBECTL" wait --for=condition=Ready "node/$1" --timeout=1s || fail "node $1 not Ready${3:+ $3}"
}

e2e_yaml_namespace() {
  local name
  for name in "$@"; do printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$name"; done
}

e2e_yaml_flavor() {
  printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\n' "$1"
}

e2e_yaml_workload_priority_class() {
  printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: %s}\nvalue: %s\n' "$1" "$2"
}

e2e_yaml_cluster_queue() {
  local name=$1 flavor=$2 a version=v1beta2 preemption="" covered="" quotas=""
  shift 2
  for a in "$@"; do
    case $a in
      version=*) version=${a#version=} ;;
      preemption=*) preemption=$'\n'"  preemption: {withinClusterQueue: ${a#preemption=}}" ;;
      *) covered+="${covered:+, }${a%%=*}"; quotas+=$'\n'"      - {name: ${a%%=*}, nominalQuota: ${a#*=}}" ;;
    esac
  done
  cat <<EOF
---
apiVersion: kueue.x-k8s.io/$version
kind: ClusterQueue
metadata: {name: $name}
spec:
  namespaceSelector: {}$preemption
  resourceGroups:
  - coveredResources: [$covered]
    flavors:
    - name: $flavor
      resources:$quotas
EOF
}

e2e_yaml_local_queue() {
  printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n' \
    "$2" "$1" "$3"
}

e2e_yaml_queues() {
  local ns=team-a cq=cluster-queue lq=user-queue a
  local args=()
  for a in "$@"; do
    case $a in
      ns=*) ns=${a#ns=} ;;
      cq=*) cq=${a#cq=} ;;
      lq=*) lq=${a#lq=} ;;
      *) args+=("$a") ;;
    esac
  done
  e2e_yaml_namespace "$ns"
  e2e_yaml_flavor default-flavor
  e2e_yaml_cluster_queue "$cq" default-flavor "${args[@]}"
  e2e_yaml_local_queue "$ns" "$lq" "$cq"
}

e2e_yaml_job() {
  local ns=$1 name=$2 cpu=$3 a queue_in=labels priority="" memory="" grace=1 command="sleep 600" deadline=""
  shift 3
  for a in "$@"; do
    case $a in
      queue_in=*) queue_in=${a#*=} ;;
      priority=*) priority=", kueue.x-k8s.io/priority-class: ${a#*=}" ;;
      memory=*) memory=", memory: ${a#*=}" ;;
      grace=*) grace=${a#*=} ;;
      command=*) command=${a#*=} ;;
      deadline=*) deadline=$'\n'"  activeDeadlineSeconds: ${a#*=}" ;;
      *) echo "e2e_yaml_job: unknown option $a" >&2; return 1 ;;
    esac
  done
  [ -z "$grace" ] || grace=$'\n'"      terminationGracePeriodSeconds: $grace"
  cat <<EOF
---
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  namespace: $ns
  $queue_in: {kueue.x-k8s.io/queue-name: user-queue$priority}
spec:$deadline
  template:
    spec:
      restartPolicy: Never$grace
      containers:
      - name: main
        image: busybox
        command: [/bin/sh, -c, '$command']
        resources: {requests: {cpu: "$cpu"$memory}}
EOF
}

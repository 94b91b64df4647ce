#!/usr/bin/env bash
# Running pods outlive the control plane (issue 15), on a real server with real torch
# processes, driven by the real kubectl:
#   (a) kill -9 of `berth server` during a 2-node torch TrainJob: the ranks keep their pids
#       and keep training while the server is down; after the restart the job finishes in
#       one attempt (pods, uids and pids unchanged, restartCount 0, no eviction, no JobSet
#       restart) and `kubectl logs` shows the steps logged while the server was down;
#   (e) ... and the server that comes back is another build of berth (the binary file was
#       replaced, as an upgrade does) while the supervisors keep running the old one;
#   (b) the same with SIGTERM of the server (its default: pods keep running);
#   (c) a container that exits 0 while the server is down is reported Succeeded with its
#       exit code, and its Job completes after the restart;
#   (d) `berth agent` (remote, over HTTP) killed with -9 and restarted on its data
#       directory while a 2-rank TrainJob runs on it: same outcome;
#   and a second agent on a data directory in use is refused with a clear message.
# Usage: adoption_e2e.sh <berth binary> <repo root>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl, or /usr/bin/python3 without torch).
set -uo pipefail
BUILT=$(realpath "${1:?berth binary}")
ROOT=$(realpath "${2:?repo root}")
source "$(dirname "$0")/lib.sh"
e2e_init adoption
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "SKIP: /usr/bin/python3 cannot import torch"; exit 77; }

# The server runs from a copy that (e) replaces, as an upgrade replaces the installed file.
mkdir -p "$WORK/bin"
cp "$BUILT" "$WORK/bin/berth"
BERTH=$WORK/bin/berth
# train.py and the checkpoints: a host directory the pods mount (hostPath; the nodes allow
# it), outside the server's data, writable by the team's uid (sticky, as /tmp).
DEMO=$WORK/demo
install -D -m 0755 "$ROOT/examples/train/train.py" "$DEMO/train.py"
install -d -m 1777 "$DEMO/checkpoints"
NODES_ARGS=(--nodes 2 --node-capacity cpu=1,memory=4Gi --shutdown-grace-period 0 --allowed-host-paths "$DEMO")

# ---- helpers ---------------------------------------------------------------------------
pods_of() { "$KUBECTL" get pods -n team-a -l "jobset.sigs.k8s.io/jobset-name=$1" "${@:2}"; }
# "uid pid..." snapshot of a TrainJob: pod uids, and the pids of its torch processes.
uids_of() { pods_of "$1" -o jsonpath='{range .items[*]}{.metadata.uid} {end}'; }
pids_of() {
  local p
  for p in $(pgrep -f "$DEMO/train.py"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "JOB_NAME=$1" && echo "$p"
  done | sort -n | tr '\n' ' '
}
all_alive() { local p; for p in $1; do kill -0 "$p" 2>/dev/null || return 1; done; }
# The highest step rank 0 of TrainJob $1 logged, read from the log files on disk.
last_step() {
  local f
  f=$(find "$2" -path "*team-a_$1-node-0-0-*/logs/node/0.log" 2>/dev/null | head -1)
  [ -n "$f" ] || { echo 0; return; }
  local n
  n=$(grep -o '^step [0-9]* ' "$f" | tail -1 | awk '{print $2+0}')
  echo "${n:-0}"
}
step_at_least() { [ "$(last_step "$1" "$2")" -ge "$3" ]; }
complete() { "$KUBECTL" get trainjob -n team-a "$1" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' | grep -qx True; }
both_running() { [ "$(pods_of "$1" -o jsonpath='{.items[*].status.phase}')" = "Running Running" ]; }

# One 2-rank TrainJob: 100 steps of 0.3 s (30 s of training after the rendezvous: longer than a
# restart takes on a loaded 2-core machine, so the job is still running when the server is back).
trainjob_yaml() {
  cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-adopt}
  trainer:
    numNodes: 2
    args: ["--steps", "100", "--step-seconds", "0.3", "--checkpoint-every", "0"]
    resourcesPerNode: {requests: {cpu: "1", memory: 1Gi}}
EOF
}

setup_yaml() {
  e2e_yaml_queues cpu=2 memory=8Gi
  cat <<EOF
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-adopt
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                terminationGracePeriodSeconds: 30
                volumes: [{name: demo, hostPath: {path: $DEMO, type: Directory}}]
                containers:
                - name: node
                  image: pytorch/pytorch
                  volumeMounts: [{name: demo, mountPath: $DEMO}]
                  command: [/usr/bin/python3, -m, torch.distributed.run, --redirects=2, --tee=2, $DEMO/train.py]
                  env:
                  - name: JOB_NAME
                    valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}}
                  - name: CHECKPOINT_DIR
                    value: $DEMO/checkpoints/\$(JOB_NAME)
EOF
}

# The log of pod $1: what `kubectl logs` serves (for a remote agent's pod, relayed from the
# agent's streaming server, which a restarted agent serves again on its new port).
kubectl_logs() { "$KUBECTL" logs -n team-a "$1" 2>&1; }

# Runs TrainJob $1 until step 3, stops the control plane with $2 (a function), checks the
# ranks train on while it is down, restarts it with $3 (a function), and checks the job
# finishes in one attempt with the steps logged meanwhile in its log. $4: the data
# directory holding the pods' logs; $5: what is played.
play() {
  local job=$1 stop=$2 restart=$3 data=$4 what=$5
  trainjob_yaml "$job" | "$KUBECTL" apply -f - >/dev/null || { fail "$what: apply TrainJob $job"; return; }
  wait_until 120 both_running "$job" || { fail "$what: $job not running"; "$KUBECTL" get pods -A; return; }
  wait_until 90 step_at_least "$job" "$data" 3 || { fail "$what: $job never reached step 3"; return; }
  local uids pids down_step up_step
  uids=$(uids_of "$job")
  pids=$(pids_of "$job")
  [ "$(wc -w <<<"$pids")" -ge 2 ] || fail "$what: expected the torch processes of $job, found '$pids'"
  $stop
  down_step=$(last_step "$job" "$data")
  sleep 3
  all_alive "$pids" || fail "$what: a rank of $job died with the control plane (pids $pids)"
  up_step=$(last_step "$job" "$data")
  [ "$up_step" -gt "$down_step" ] || fail "$what: $job did not train while the control plane was down (step $down_step -> $up_step)"
  $restart
  [ "$(pids_of "$job")" = "$pids" ] || fail "$what: the torch processes of $job changed: '$pids' -> '$(pids_of "$job")'"
  [ "$(uids_of "$job")" = "$uids" ] || fail "$what: the pods of $job were replaced: '$uids' -> '$(uids_of "$job")'"
  wait_until 120 complete "$job" || { fail "$what: $job did not complete"; "$KUBECTL" get pods,workloads -n team-a; return; }
  local restarts evicted jobset_restarts rank0 logs s
  restarts=$(pods_of "$job" -o jsonpath='{.items[*].status.containerStatuses[0].restartCount}')
  [ "$restarts" = "0 0" ] || fail "$what: restartCount of $job's pods: '$restarts'"
  [ "$(uids_of "$job")" = "$uids" ] || fail "$what: $job ran more than one attempt"
  evicted=$("$KUBECTL" get workloads -n team-a -o jsonpath="{.items[?(@.metadata.ownerReferences[0].name==\"$job\")].status.conditions[?(@.type==\"Evicted\")].status}")
  [ -z "$evicted" ] || fail "$what: the Workload of $job was evicted"
  jobset_restarts=$("$KUBECTL" get jobset -n team-a "$job" -o jsonpath='{.status.restarts}')
  [ "${jobset_restarts:-0}" = 0 ] || fail "$what: JobSet $job restarted $jobset_restarts times"
  rank0=$(pods_of "$job" -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -- "-node-0-0-")
  logs=$(kubectl_logs "$rank0")
  for s in $(seq $((down_step + 1)) "$up_step"); do
    grep -q "^step $s loss" <<<"$logs" || { fail "$what: kubectl logs $rank0 lacks step $s (logged while the server was down)"; break; }
  done
  grep -q "training complete at step 100" <<<"$logs" || fail "$what: $rank0 did not complete: $(tail -3 <<<"$logs")"
  [ "$FAILURES" -eq 0 ] && echo "ok: $what: $job trained through steps $((down_step + 1))..$up_step with the control plane down and completed in one attempt"
}

# ---- (a) + (e): kill -9 of the server, then another build of it ---------------------------
e2e_start_server "${NODES_ARGS[@]}"
e2e_wait_node_ready node-0 20
setup_yaml | "$KUBECTL" apply -f - >/dev/null || fail "apply the setup"

kill9_server() { kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=; }
upgrade_and_start() {
  # Another build: the same code with one more ELF section (another file, another hash),
  # installed by rename as package managers do, while the supervisors run the old file.
  objcopy --add-section .note.berth-upgrade=<(date +%s%N) "$BUILT" "$WORK/bin/berth.new" 2>/dev/null ||
    { cp "$BUILT" "$WORK/bin/berth.new"; echo "1" >>"$WORK/bin/berth.new"; }
  chmod +x "$WORK/bin/berth.new"
  local old_sum
  old_sum=$(sha256sum <"$WORK/bin/berth")
  mv "$WORK/bin/berth.new" "$WORK/bin/berth"
  [ "$(sha256sum <"$WORK/bin/berth")" != "$old_sum" ] || fail "(e): the replacement binary is the same file"
  e2e_start_server "${NODES_ARGS[@]}"
  e2e_wait_node_ready node-0 20 "after the upgrade"
}
play explore kill9_server upgrade_and_start "$WORK/data" "(a)+(e) kill -9 and upgrade of the server"
grep -q "adopted 1 running container" "$WORK/server.log" || fail "(a): the server log does not say it adopted containers"

# ---- (b): SIGTERM of the server --------------------------------------------------------
term_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || fail "(b): the server exited non-zero on SIGTERM"
  SERVER_PID=
}
start_again() { e2e_start_server "${NODES_ARGS[@]}"; e2e_wait_node_ready node-0 20 "after the restart"; }
play sigterm term_server start_again "$WORK/data" "(b) SIGTERM of the server"

# ---- (c): a container that exits 0 while the server is down ----------------------------
e2e_yaml_job team-a finisher 500m "command=while [ ! -f go ]; do sleep 0.1; done; echo finished-while-away" |
  "$KUBECTL" apply -f - >/dev/null || fail "(c): apply Job"
finisher_running() { "$KUBECTL" get pods -n team-a -l job-name=finisher -o jsonpath='{.items[0].status.phase}' | grep -qx Running; }
wait_until 60 finisher_running || fail "(c): the Job's pod is not running"
FINISHER_UID=$("$KUBECTL" get pods -n team-a -l job-name=finisher -o jsonpath='{.items[0].metadata.uid}')
term_server
# The pod waits for a file in its working directory (its pod directory's work/, which a
# sandboxed pod sees at the same path; the host's /tmp is not the pod's).
touch "$(find "$WORK/data" -path "*_${FINISHER_UID}/work" | head -1)/go"
exit_recorded() { find "$WORK/data" -path "*_${FINISHER_UID}/runs/main/0/exit.json" | grep -q .; }
wait_until 20 exit_recorded || fail "(c): the supervisor recorded no exit while the server was down"
start_again
job_complete() { "$KUBECTL" get job -n team-a finisher -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' | grep -qx True; }
wait_until 60 job_complete || fail "(c): the Job did not complete after the restart"
TERMINATED=$("$KUBECTL" get pods -n team-a -l job-name=finisher -o jsonpath='{.items[0].metadata.uid} {.items[0].status.phase} {.items[0].status.containerStatuses[0].state.terminated.exitCode} {.items[0].status.containerStatuses[0].restartCount}')
[ "$TERMINATED" = "$FINISHER_UID Succeeded 0 0" ] || fail "(c): the pod is '$TERMINATED', want '$FINISHER_UID Succeeded 0 0'"
"$KUBECTL" logs -n team-a -l job-name=finisher | grep -q finished-while-away || fail "(c): kubectl logs lacks the line logged while the server was down"
[ "$FAILURES" -eq 0 ] && echo "ok: (c) a container that exited 0 while the server was down is Succeeded and its Job Complete"

# A second agent on a data directory in use is refused.
out=$("$BERTH" agent --kubeconfig "$KUBECONFIG" --name node-0 --data-dir "$WORK/data/nodes/node-0" --port 0 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q "data directory $WORK/data/nodes/node-0 is in use by another berth agent (pid $SERVER_PID)" <<<"$out" ||
  fail "a second agent on node-0's data directory: rc $rc: $out"
e2e_stop_server

# ---- (d): a remote `berth agent` killed with -9 and restarted ---------------------------
mv "$WORK/data" "$WORK/data-embedded"  # a fresh cluster: no Node of the embedded agents
e2e_start_server --nodes 0 --shutdown-grace-period 0
setup_yaml | "$KUBECTL" apply -f - >/dev/null || fail "(d): apply the setup"
AGENT_PID=
start_agent() {
  "$BERTH" agent --kubeconfig "$KUBECONFIG" --name remote-0 --data-dir "$WORK/remote-0" --port 0 \
    --eviction-hard "$E2E_EVICTION_HARD" --capacity cpu=2,memory=8Gi --allowed-host-paths "$DEMO" >>"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
  e2e_wait_node_ready remote-0 20 "(agent)"
}
kill9_agent() { kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; }
start_agent
play remote kill9_agent start_agent "$WORK/remote-0" "(d) kill -9 of a remote berth agent"
e2e_stop_server  # the agent first: a non-zero exit on SIGTERM is a failure

[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES check(s) failed; logs in $WORK"; exit 1; }

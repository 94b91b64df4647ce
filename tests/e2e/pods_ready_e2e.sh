#!/usr/bin/env bash
# Kueue's waitForPodsReady through `berth server --config` and the real kubectl:
#  (a) a Configuration with an unknown field stops the server with the field named;
#  (b) node allocatable cpu 2, ClusterQueue nominalQuota 8: a 4-cpu Job is admitted but
#      its pod can never be placed, so PodsReady stays False; after the 3 s timeout the
#      Workload is evicted with reason PodsReadyTimeout ("Exceeded the PodsReady timeout
#      team-a/<workload>", Event EvictedDueToPodsReadyTimeout), the Job is suspended,
#      requeueState.count is 1, and after the 6 s backoff (Requeued BackoffFinished) it is
#      admitted again; at the second timeout backoffLimitCount 1 deactivates it
#      (spec.active false, Evicted reason Deactivated).
#  (c) a fitting 1-cpu Job reaches PodsReady=True (reason Started) and is never evicted;
#  (d) with integrations.frameworks [batch/job] the server warns that the other kinds are
#      not managed, and a PyTorchJob with the queue-name label runs unmanaged (not
#      suspended, no Workload).
# Usage: pods_ready_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init pods-ready
wl_of() { "$KUBECTL" get workloads -n team-a -l "kueue.x-k8s.io/job-uid=$("$KUBECTL" get job -n team-a "$1" -o jsonpath='{.metadata.uid}')" -o jsonpath='{.items[0].metadata.name}'; }
cond() {  # cond WORKLOAD TYPE FIELD
  "$KUBECTL" get workload -n team-a "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"
}
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }

# ---- (a) strict decoding ------------------------------------------------------------
cat >"$WORK/bad.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timout: 3s
EOF
e2e_expect_bad_config "$WORK/bad.yaml" 'strict decoding error: unknown field "waitForPodsReady.timout"'

# ---- (b) never ready: evicted, requeued after backoff, then deactivated -----------------
cat >"$WORK/kueue.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 3s
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffLimitCount: 1
    backoffBaseSeconds: 6
    backoffMaxSeconds: 10
integrations:
  frameworks: [batch/job]
EOF
e2e_start_node_server cpu=2,memory=8Gi --config "$WORK/kueue.yaml"
e2e_yaml_queues cpu=8 | "$KUBECTL" apply -f - >/dev/null
job() { e2e_yaml_job team-a "$1" "$2"; }  # job NAME CPU
job too-big 4 | "$KUBECTL" apply -f - >/dev/null
wait_until 20 wl_of too-big || fail "no Workload for too-big"
WL=$(wl_of too-big)
wait_until 20 cond_is "$WL" Admitted status True || fail "too-big not admitted"
wait_until 10 cond_is "$WL" PodsReady reason WaitForStart || fail "PodsReady WaitForStart: $(cond "$WL" PodsReady reason)"
# Reason and message are read in one GET: once the backoff ends the workload is admitted
# again and Evicted turns False ("Previously: ..."). The 6 s backoff is the window in which
# the evicted state below (event, requeueState, suspended Job) is checked.
evicted() { "$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.status.conditions[?(@.type=="Evicted")].reason}|{.status.conditions[?(@.type=="Evicted")].message}'; }
evicted_by_timeout() { evicted | grep -q '^PodsReadyTimeout|'; }
wait_until 30 evicted_by_timeout || fail "not evicted by PodsReadyTimeout: $(evicted)"
[ "$(evicted)" = "PodsReadyTimeout|Exceeded the PodsReady timeout team-a/$WL" ] || fail "eviction: $(evicted)"
"$KUBECTL" get events -n team-a --field-selector "involvedObject.name=$WL" -o jsonpath='{.items[*].reason}' |
  grep -q EvictedDueToPodsReadyTimeout || fail "no EvictedDueToPodsReadyTimeout event"
[ "$("$KUBECTL" get workload -n team-a "$WL" -o jsonpath='{.status.requeueState.count}')" = 1 ] ||
  fail "requeueState.count after the first timeout"
wait_until 20 "$KUBECTL" wait -n team-a job/too-big --for=jsonpath='{.spec.suspend}'=true --timeout=1s ||
  fail "too-big not suspended"
# Requeued after the backoff and admitted again, then deactivated at the second timeout.
wait_until 30 "$KUBECTL" wait -n team-a "workload/$WL" --for=jsonpath='{.spec.active}'=false --timeout=1s ||
  fail "not deactivated after backoffLimitCount: $("$KUBECTL" get workload -n team-a "$WL" -o yaml)"
wait_until 10 cond_is "$WL" Evicted reason Deactivated || fail "Evicted reason $(cond "$WL" Evicted reason)"
[ "$(cond "$WL" Evicted message)" = "The workload is deactivated due to exceeding the maximum number of re-queuing retries" ] ||
  fail "deactivation message: $(cond "$WL" Evicted message)"
"$KUBECTL" get events -n team-a --field-selector "involvedObject.name=$WL" -o jsonpath='{.items[*].reason}' |
  grep -q QuotaReserved || fail "no QuotaReserved event"
# Both reservations came right when too-big was (re)queued, so both Events read "wait time
# since queued was 0s" and are one Event with count 2 (the recorder aggregates identical ones).
reserved=$("$KUBECTL" get events -n team-a --field-selector "involvedObject.name=$WL,reason=QuotaReserved" \
  -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{n += $1} END {print n + 0}')
[ "$reserved" -ge 2 ] || fail "too-big was not admitted a second time after the backoff ($reserved QuotaReserved)"

# ---- (c) a job that fits becomes PodsReady and stays admitted ---------------------------
job fits 1 | "$KUBECTL" apply -f - >/dev/null
wait_until 20 wl_of fits || fail "no Workload for fits"
WL2=$(wl_of fits)
wait_until 30 cond_is "$WL2" PodsReady status True || fail "fits never PodsReady"
[ "$(cond "$WL2" PodsReady reason)" = Started ] || fail "PodsReady reason $(cond "$WL2" PodsReady reason)"
sleep 4  # longer than the timeout: a ready workload is never evicted
cond_is "$WL2" Evicted status True && fail "a ready workload was evicted"

# ---- (d) integrations.frameworks [batch/job]: other kinds are not Kueue's -------------
# The server says so at start, and a labelled PyTorchJob is left alone: stored not
# suspended, no Workload, its pod runs (Kueue registers no webhook for a disabled kind).
grep -q "kubeflow.org/pytorchjob, trainer.kubeflow.org/trainjob are NOT managed by Kueue" "$WORK/server.log" ||
  fail "no warning naming the unmanaged kinds in the server log"
"$KUBECTL" apply -f - >/dev/null <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: unmanaged
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: pytorch
            image: busybox
            command: [/bin/sh, -c, 'sleep 600']
            resources: {requests: {cpu: 100m}}
EOF
[ "$("$KUBECTL" get pytorchjob -n team-a unmanaged -o jsonpath='{.spec.runPolicy.suspend}')" = false ] ||
  fail "the unmanaged PyTorchJob was stored with runPolicy.suspend $("$KUBECTL" get pytorchjob -n team-a unmanaged -o jsonpath='{.spec.runPolicy.suspend}')"
wait_until 30 "$KUBECTL" wait -n team-a pod/unmanaged-master-0 --for=jsonpath='{.status.phase}'=Running --timeout=1s ||
  fail "the unmanaged PyTorchJob's pod does not run"
[ -z "$("$KUBECTL" get workloads -n team-a -o jsonpath='{.items[?(@.metadata.ownerReferences[0].kind=="PyTorchJob")].metadata.name}')" ] ||
  fail "a Workload was created for the unmanaged PyTorchJob"
e2e_stop_server

[ "$FAILURES" -eq 0 ] && echo "PASS" || echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]

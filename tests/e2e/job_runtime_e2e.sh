#!/usr/bin/env bash
# End-to-end through the real kubectl: a Job's runtime limits and the node agent's restarts
# (issue 17, "Job and pod runtime"), as kube's Job controller and kubelet do them:
#   - restartPolicy OnFailure, `exit 1`, backoffLimit 1: the container's restart counts toward
#     the backoff limit, the Job ends Failed BackoffLimitExceeded and its pod is deleted;
#   - activeDeadlineSeconds 3 running `sleep 60`: Failed DeadlineExceeded within 10 s of its
#     creation, its pod deleted;
#   - a pod whose command does not exist, under OnFailure: restarted with restartCount
#     counting, waiting in CrashLoopBackOff with the kubelet's message;
#   - an Indexed Job with backoffLimitPerIndex 1 whose index 0 always exits 1: index 0 is
#     retried once, 10 s after its failure (the pod-failure backoff), its replacement
#     annotated job-index-failure-count 1; then the Job ends Failed FailedIndexes with
#     failedIndexes "0", completedIndexes "1" and 3 pods in all;
#   - podFailurePolicy FailJob on exit code 42: `kubectl wait --for=condition=Failed`, reason
#     PodFailurePolicy with the upstream message naming the container, pod and rule;
#   - successPolicy succeededIndexes "0" of 3 indexes: Complete SuccessPolicy once index 0
#     succeeded, the other indexes' pods deleted;
#   - a pod's own activeDeadlineSeconds 2: Failed DeadlineExceeded (the kubelet's message);
#   - a Job suspended and resumed 7 times (default backoffLimit 6) whose container exits 1 on
#     SIGTERM, as torchrun does when Kueue preempts it: never Failed, status.failed stays 0;
#   - a JobSet with startupPolicy InOrder whose driver has a readinessProbe that passes 3 s
#     after it starts: the workers' Job is created only after the driver is Ready.
#
# Usage: job_runtime_e2e.sh <berth binary>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail

BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init job-runtime
e2e_start_node_server cpu=4,memory=8Gi

# condition JOB TYPE: "<status> <reason>: <message>" of the Job's condition TYPE.
condition() {
  "$KUBECTL" get job "$1" -o jsonpath="{range .status.conditions[?(@.type==\"$2\")]}{.status} {.reason}: {.message}{end}"
}
job_failed() { [ "$(condition "$1" Failed)" != "" ]; }
no_pods_of() { [ -z "$("$KUBECTL" get pods -l "batch.kubernetes.io/job-name=$1" -o name 2>/dev/null)" ]; }

"$KUBECTL" apply -f - >/dev/null <<'YAML' || fail "apply"
apiVersion: batch/v1
kind: Job
metadata: {name: crash}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, "exit 1"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: deadline}
spec:
  activeDeadlineSeconds: 3
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, "sleep 60"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: perindex}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimitPerIndex: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, 'test "$JOB_COMPLETION_INDEX" = 1']}
---
apiVersion: batch/v1
kind: Job
metadata: {name: policy}
spec:
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, "exit 42"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: successpolicy}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  successPolicy:
    rules:
    - succeededIndexes: "0"
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, 'test "$JOB_COMPLETION_INDEX" = 0 || sleep 60']}
---
apiVersion: v1
kind: Pod
metadata: {name: poddeadline}
spec:
  restartPolicy: Never
  activeDeadlineSeconds: 2
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [/bin/sh, -c, "sleep 60"]}
---
apiVersion: v1
kind: Pod
metadata: {name: nocmd}
spec:
  restartPolicy: OnFailure
  containers:
  - {name: main, image: busybox, command: [no-such-command-berth]}
YAML
created=$(date +%s)

# A container that cannot start is restarted with restartCount counting, then waits.
nocmd_waiting() {
  [ "$("$KUBECTL" get pod nocmd -o jsonpath='{.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].state.waiting.reason}')" = "1 CrashLoopBackOff" ]
}
if wait_until 10 nocmd_waiting; then
  uid=$("$KUBECTL" get pod nocmd -o jsonpath='{.metadata.uid}')
  got=$("$KUBECTL" get pod nocmd -o jsonpath='{.status.containerStatuses[0].state.waiting.message}|{.status.containerStatuses[0].lastState.terminated.reason} {.status.containerStatuses[0].lastState.terminated.exitCode}|{.status.phase}')
  want="back-off 10s restarting failed container=main pod=nocmd_default($uid)|StartError 128|Running"
  [ "$got" = "$want" ] || fail "nocmd: got '$got', want '$want'"
  "$KUBECTL" get pod nocmd --no-headers | grep -Eq '^nocmd +0/1 +CrashLoopBackOff +1 ' ||
    fail "nocmd: kubectl get pod: $("$KUBECTL" get pod nocmd --no-headers)"
else
  fail "nocmd: not waiting in CrashLoopBackOff after one restart: $("$KUBECTL" get pod nocmd -o jsonpath='{.status.containerStatuses}')"
fi

# OnFailure restarts count toward backoffLimit.
if wait_until 20 job_failed crash; then
  got=$(condition crash Failed)
  [ "$got" = "True BackoffLimitExceeded: Job has reached the specified backoff limit" ] || fail "crash: Failed is '$got'"
  wait_until 10 no_pods_of crash || fail "crash: its pods were not deleted"
else
  fail "crash: not Failed: $("$KUBECTL" get job crash -o jsonpath='{.status}')"
fi

# activeDeadlineSeconds: Failed DeadlineExceeded within 10 s of its creation.
if wait_until 10 job_failed deadline; then
  took=$(($(date +%s) - created))
  [ "$took" -le 10 ] || fail "deadline: Failed only after ${took}s"
  got=$(condition deadline Failed)
  [ "$got" = "True DeadlineExceeded: Job was active longer than specified deadline" ] || fail "deadline: Failed is '$got'"
  wait_until 10 no_pods_of deadline || fail "deadline: its pod was not deleted"
  "$KUBECTL" get job deadline --no-headers | grep -Eq '^deadline +Failed +0/1 ' ||
    fail "deadline: kubectl get job: $("$KUBECTL" get job deadline --no-headers)"
else
  fail "deadline: not Failed within 10 s: $("$KUBECTL" get job deadline -o jsonpath='{.status}')"
fi

# backoffLimitPerIndex: index 0 gets one retry, after the 10 s backoff, then the Job fails.
if wait_until 40 job_failed perindex; then
  took=$(($(date +%s) - created))
  [ "$took" -ge 10 ] || fail "perindex: Failed after ${took}s, before the 10 s backoff could run"
  got=$(condition perindex Failed)
  [ "$got" = "True FailedIndexes: Job has failed indexes" ] || fail "perindex: Failed is '$got'"
  got=$("$KUBECTL" get job perindex -o jsonpath='{.status.failedIndexes} {.status.completedIndexes} {.status.failed} {.status.succeeded}')
  [ "$got" = "0 1 2 1" ] || fail "perindex: failedIndexes completedIndexes failed succeeded: '$got'"
  got=$("$KUBECTL" get pods -l batch.kubernetes.io/job-name=perindex --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}:{.metadata.annotations.batch\.kubernetes\.io/job-index-failure-count} {end}')
  case "$got" in
    "0:0 1:0 0:1 " | "1:0 0:0 0:1 ") ;;
    *) fail "perindex: pods (index:failure-count) '$got'" ;;
  esac
else
  fail "perindex: not Failed within 40 s: $("$KUBECTL" get job perindex -o jsonpath='{.status}')"
fi

# podFailurePolicy FailJob: the Job fails at the first exit 42, with upstream's message.
if "$KUBECTL" wait --for=condition=Failed job/policy --timeout=20s >/dev/null; then
  pod=$("$KUBECTL" get pods -l batch.kubernetes.io/job-name=policy -o jsonpath='{.items[0].metadata.name}')
  got=$(condition policy Failed)
  want="True PodFailurePolicy: Container main for pod default/$pod failed with exit code 42 matching FailJob rule at index 0"
  [ "$got" = "$want" ] || fail "policy: Failed is '$got', want '$want'"
  got=$("$KUBECTL" get job policy -o jsonpath='{.status.conditions[0].type} {.status.failed}')
  [ "$got" = "FailureTarget 1" ] || fail "policy: first condition and failed count: '$got'"
else
  fail "policy: not Failed: $("$KUBECTL" get job policy -o jsonpath='{.status}')"
fi

# successPolicy: index 0 alone completes the Job; the other indexes' pods are deleted.
if "$KUBECTL" wait --for=condition=Complete job/successpolicy --timeout=20s >/dev/null; then
  got=$(condition successpolicy Complete)
  [ "$got" = "True SuccessPolicy: Matched rules at index 0" ] || fail "successpolicy: Complete is '$got'"
  got=$("$KUBECTL" get job successpolicy -o jsonpath='{.status.completedIndexes} {.status.succeeded}')
  [ "$got" = "0 1" ] || fail "successpolicy: completedIndexes succeeded: '$got'"
  left=$("$KUBECTL" get pods -l batch.kubernetes.io/job-name=successpolicy     -o jsonpath='{range .items[*]}{.status.phase} {end}')
  [ "$left" = "Succeeded " ] || fail "successpolicy: pods left: '$left'"
else
  fail "successpolicy: not Complete: $("$KUBECTL" get job successpolicy -o jsonpath='{.status}')"
fi

# A pod's own activeDeadlineSeconds (the kubelet's active deadline).
if "$KUBECTL" wait --for=jsonpath='{.status.phase}'=Failed pod/poddeadline --timeout=15s >/dev/null; then
  got=$("$KUBECTL" get pod poddeadline -o jsonpath='{.status.reason}: {.status.message}')
  [ "$got" = "DeadlineExceeded: Pod was active on the node longer than the specified deadline" ] ||
    fail "poddeadline: '$got'"
else
  fail "poddeadline: not Failed: $("$KUBECTL" get pod poddeadline -o jsonpath='{.status}')"
fi

# Suspended and resumed 7 times (Kueue preempting it), exiting 1 on each SIGTERM: the
# pods the Job controller deletes on suspend are no failures, so backoffLimit 6 is never hit.
"$KUBECTL" apply -f - >/dev/null <<'YAML' || fail "apply preempted"
apiVersion: batch/v1
kind: Job
metadata: {name: preempted}
spec:
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      containers:
      - {name: main, image: busybox, command: [/bin/sh, -c, "trap 'exit 1' TERM; echo ready; while :; do sleep 0.1; done"]}
YAML
pod_running() {
  [ "$("$KUBECTL" get pods -l batch.kubernetes.io/job-name=preempted -o jsonpath='{.items[*].status.phase}')" = "Running" ]
}
for cycle in 1 2 3 4 5 6 7; do
  wait_until 10 pod_running || { fail "preempted: no running pod in cycle $cycle"; break; }
  "$KUBECTL" patch job preempted --type=merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "suspend $cycle"
  wait_until 10 no_pods_of preempted || { fail "preempted: pods left after suspend $cycle"; break; }
  "$KUBECTL" patch job preempted --type=merge -p '{"spec":{"suspend":false}}' >/dev/null || fail "resume $cycle"
done
wait_until 10 pod_running || fail "preempted: no running pod after the last resume"
got=$("$KUBECTL" get job preempted -o jsonpath='{.status.failed}|{.status.conditions[?(@.type=="Failed")].status}')
[ "$got" = "|" ] || [ "$got" = "0|" ] || fail "preempted: failed|Failed after 7 suspensions: '$got'"

# JobSet startupPolicy InOrder with a readiness probe (JobSet's startup-policy example): the
# driver becomes Ready only when its probe passes (it makes its file after 3 s), and the
# workers' Job is created only after that.
"$KUBECTL" apply -f - >/dev/null <<'YAML' || fail "apply inorder"
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: inorder}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - name: main
              image: busybox
              command: [/bin/sh, -c, "sleep 3; touch up; exec sleep 600"]
              readinessProbe: {exec: {command: [test, -f, up]}, periodSeconds: 1}
  - name: workers
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - {name: main, image: busybox, command: [/bin/sh, -c, "exec sleep 600"]}
YAML
driver_ready() {
  [ "$("$KUBECTL" get pods -l jobset.sigs.k8s.io/replicatedjob-name=driver -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}')" = True ]
}
workers_job() { "$KUBECTL" get job inorder-workers-0 -o jsonpath='{.metadata.creationTimestamp}' 2>/dev/null; }
wait_until 20 driver_ready || fail "inorder: the driver never became Ready"
wait_until 20 sh -c "'$KUBECTL' get job inorder-workers-0 >/dev/null 2>&1" || fail "inorder: no workers Job"
ready_at=$("$KUBECTL" get pods -l jobset.sigs.k8s.io/replicatedjob-name=driver -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].lastTransitionTime}')
started_at=$("$KUBECTL" get pods -l jobset.sigs.k8s.io/replicatedjob-name=driver -o jsonpath='{.items[0].status.containerStatuses[0].state.running.startedAt}')
created=$(workers_job)
[ -n "$ready_at" ] && [ -n "$created" ] && [[ ! "$created" < "$ready_at" ]] ||
  fail "inorder: workers Job created at $created, before the driver was Ready at $ready_at"
[ "$(( $(date -d "$ready_at" +%s) - $(date -d "$started_at" +%s) ))" -ge 3 ] ||
  fail "inorder: the driver was Ready at $ready_at, less than 3 s after it started at $started_at (the probe was not waited for)"
"$KUBECTL" delete jobset inorder --wait=false >/dev/null 2>&1

"$KUBECTL" delete pod nocmd --wait=false >/dev/null 2>&1
e2e_stop_server
[ "$FAILURES" -eq 0 ] && echo PASS || { echo "$FAILURES failure(s)"; exit 1; }

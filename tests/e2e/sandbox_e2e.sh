#!/usr/bin/env bash
# Pod isolation (issue 20; docs/security.md "Pod isolation") with a real `berth server
# --sandbox=on` and kubectl, as root:
#  - every namespace gets its own block of ids from the control plane (the annotation
#    openshift.io/sa.scc.uid-range, which a cluster-admin cannot change); a team-a pod and a
#    team-b pod run as their blocks' base uids; team-a's process cannot
#    read or write team-b's work directory (hidden in its mount namespace; on the host it is
#    team-b's, mode 0700: team-a's uid gets EACCES there too), cannot read berth's data
#    directory (berth.db, pki/), and cannot signal team-b's processes, berth's, or its own
#    init (ESRCH outside its PID namespace, EPERM for the init);
#  - writes outside the pod's own directories stay in the pod (the host's /etc is untouched);
#  - a pod whose script starts a `setsid` child leaves no such process once it is deleted;
#  - runAsUser: 0 is refused (CreateContainerConfigError) without --allow-root-pods;
#  - a team-a pod naming team-b's uid, gid 0, the shadow group (42) or an fsGroup outside its
#    block is refused (CreateContainerConfigError naming the field); one with ids inside its
#    block runs with exactly those ids;
#  - with 2 stand-in GPUs (mknod, --device-dir), a pod given GPU 1 can open its device
#    node and not GPU 0's;
#  - the Node says pods are isolated (berth.dev/PodIsolationDegraded False);
#  - an emptyDir over its sizeLimit, and a container whose /tmp passes its
#    limits.ephemeral-storage, are evicted with the kubelet's messages and Evicted events.
# Usage: sandbox_e2e.sh <berth binary>   Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
e2e_init sandbox

DEV=$WORK/dev
mkdir -p "$DEV"
for i in 0 1; do mknod -m 0666 "$DEV/nvidia$i" c 1 3 || { echo "SKIP: mknod"; exit 77; }; done
mkdir -p "$WORK/data"
e2e_start_node_server "cpu=4,memory=8Gi,nvidia.com/gpu=2" --sandbox=on --device-dir "$DEV"
grep -q "pods are sandboxed" "$WORK/server.log" || fail "the server did not say pods are sandboxed"
[ "$("$KUBECTL" get node node-0 -o jsonpath='{.status.conditions[?(@.type=="berth.dev/PodIsolationDegraded")].status}')" = False ] ||
  fail "node-0's PodIsolationDegraded condition is not False"

pod() {  # pod NAMESPACE NAME SCRIPT [extra container YAML lines]
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    command: [sh, -c, '$3']
${4:-}
EOF
}
{
  e2e_yaml_namespace team-a team-b
  pod team-a pa 'echo a-secret > a.ckpt; exec sleep 3600'
  pod team-b pb 'echo b-secret > b.ckpt; exec sleep 3600'
} | "$KUBECTL" apply -f - >/dev/null || fail "creating the pods"
for p in team-a/pa team-b/pb; do
  wait_until 30 sh -c "'$KUBECTL' get pod -n ${p%/*} ${p#*/} -o jsonpath='{.status.phase}' | grep -qx Running" ||
    fail "pod $p not Running"
done

in_a() { "$KUBECTL" exec -n team-a pa -- sh -c "$1" 2>&1; }
PODS=$WORK/data/nodes/node-0/pods
B_UID=$("$KUBECTL" get pod -n team-b pb -o jsonpath='{.metadata.uid}')
B_WORK=$PODS/team-b_pb_$B_UID/work
A_ID=$(in_a 'id -u')
B_ID=$("$KUBECTL" exec -n team-b pb -- id -u)
block() { "$KUBECTL" get ns "$1" -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.uid-range}'; }
A_BLOCK=$(block team-a)
B_BLOCK=$(block team-b)
A_BASE=${A_BLOCK%/*}
B_BASE=${B_BLOCK%/*}
[ "${A_BLOCK#*/}" = 10000 ] && [ "${B_BLOCK#*/}" = 10000 ] && [ "$A_BASE" -ge 1000000000 ] &&
  [ $((A_BASE > B_BASE ? A_BASE - B_BASE : B_BASE - A_BASE)) -ge 10000 ] ||
  fail "namespace blocks: team-a '$A_BLOCK', team-b '$B_BLOCK' (want two disjoint n/10000 above 1000000000)"
[ "$A_ID" = "$A_BASE" ] && [ "$B_ID" = "$B_BASE" ] || fail "uids: team-a $A_ID, team-b $B_ID (want $A_BASE, $B_BASE)"
[ "$(in_a 'id -g')" = "$A_BASE" ] || fail "team-a's gid: $(in_a 'id -g') (want $A_BASE)"
# Not even cluster-admin can move a namespace's block.
out=$("$KUBECTL" annotate ns team-a --overwrite "openshift.io/sa.scc.uid-range=$B_BLOCK" 2>&1)
[[ $out == *"forbidden"*"openshift.io/sa.scc.uid-range is set by the control plane"* ]] ||
  fail "cluster-admin changed team-a's block: [$out]"
[ "$(block team-a)" = "$A_BLOCK" ] || fail "team-a's block changed to $(block team-a)"
[ "$(in_a 'cat a.ckpt')" = a-secret ] || fail "team-a cannot read its own work directory"

# team-b's work directory: absent in team-a's mount namespace, and closed to team-a's uid on the host.
out=$(in_a "cat '$B_WORK/b.ckpt'")
[[ $out == *"No such file or directory"* ]] || fail "team-a read team-b's checkpoint: [$out]"
out=$(in_a "echo x > '$B_WORK/evil'")
[[ $out == *"Directory nonexistent"* ]] || fail "team-a wrote into team-b: [$out]"
[ ! -e "$B_WORK/evil" ] || fail "team-b's directory got team-a's file"
[ "$(stat -c '%u %a' "$B_WORK")" = "$B_ID 700" ] || fail "team-b's work dir: $(stat -c '%u %a' "$B_WORK")"
out=$(setpriv --reuid="$A_ID" --regid="$A_ID" --clear-groups cat "$B_WORK/b.ckpt" 2>&1)
[[ $out == *"Permission denied"* ]] || fail "team-a's uid read team-b's checkpoint on the host: [$out]"

# berth's data directory.
for f in "$WORK/data/berth.db" "$WORK/data/pki/ca.key" "$WORK/data/kubeconfig"; do
  out=$(in_a "cat '$f' >/dev/null")
  [[ $out == *"No such file or directory"* ]] || fail "team-a read $f: [$out]"
done
[ "$(in_a "ls -A '$WORK/data' | wc -l")" = 1 ] || fail "team-a sees more than the path to its own work dir in the data dir"
[ "$(stat -c '%a' "$WORK/data")" = 700 ] || fail "the data directory is not mode 0700"
out=$(setpriv --reuid="$A_ID" --regid="$A_ID" --clear-groups ls "$WORK/data" 2>&1)
[[ $out == *"Permission denied"* ]] || fail "team-a's uid listed the data directory on the host: [$out]"

# Signals: berth and team-b are outside team-a's PID namespace; its init is root's.
B_PID=$(pgrep -f -n "^sleep 3600" -U "$B_ID")
[ -n "$B_PID" ] || fail "team-b's sleep not found on the host"
for target in "$B_PID" "$SERVER_PID"; do
  out=$(in_a "kill -TERM $target")
  [[ $out == *"No such process"* ]] || fail "kill $target from team-a: [$out] (want ESRCH)"
done
out=$(in_a 'kill -TERM 1')
[[ $out == *"Operation not permitted"* ]] || fail "kill 1 from team-a: [$out] (want EPERM)"
# Its PID namespace holds its init, its main process and this exec's sh and ps. (No
# pipeline in the pod: ps may read /proc before a later pipeline stage has started.)
procs=$(in_a 'ps -e -o comm=; :' | tr '\n' ' ')
[ "$procs" = "berth-init sleep sh ps " ] || fail "team-a sees more than its own processes: [$procs]"
kill -0 "$B_PID" && kill -0 "$SERVER_PID" || fail "team-b or the server died"

# The host is read-only below the pod's overlay.
in_a 'echo changed > /etc/berth-sandbox-e2e' >/dev/null
[ ! -e /etc/berth-sandbox-e2e ] || { rm -f /etc/berth-sandbox-e2e; fail "a pod wrote the host's /etc"; }

# A setsid child does not outlive its pod.
pod team-a orphan 'setsid sleep 1717 & echo started; exec sleep 3600' | "$KUBECTL" apply -f - >/dev/null
wait_until 30 sh -c "'$KUBECTL' logs -n team-a orphan | grep -q started" || fail "pod orphan did not start"
wait_until 5 pgrep -f "^sleep 1717" || fail "the setsid child is not running"
"$KUBECTL" delete pod -n team-a orphan --wait=true --timeout=30s >/dev/null || fail "deleting pod orphan"
wait_until 5 sh -c '! pgrep -f "^sleep 1717"' || fail "the setsid child outlived its pod: $(pgrep -af '^sleep 1717')"

# runAsUser 0 without --allow-root-pods.
pod team-a root 'id -u' '    securityContext: {runAsUser: 0}' | "$KUBECTL" apply -f - >/dev/null
wait_until 30 sh -c "'$KUBECTL' get pod -n team-a root -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' | grep -qx CreateContainerConfigError" ||
  fail "a runAsUser 0 pod was not refused: $("$KUBECTL" get pod -n team-a root -o jsonpath='{.status.containerStatuses}')"

# Ids outside team-a's block: each a CreateContainerConfigError naming its field.
refused() {  # refused NAME FIELD-PATH POD-YAML-EXTRA
  pod team-a "$1" 'id' "$3" | "$KUBECTL" apply -f - >/dev/null || fail "creating pod $1"
  wait_until 30 sh -c "'$KUBECTL' get pod -n team-a $1 -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' | grep -qx CreateContainerConfigError" ||
    fail "pod $1 was not refused: $("$KUBECTL" get pod -n team-a "$1" -o jsonpath='{.status.containerStatuses}')"
  msg=$("$KUBECTL" get pod -n team-a "$1" -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')
  [[ $msg == "$2: Invalid value: "*"must be in the ranges: [$A_BASE, $((A_BASE + 9999))]"* ]] ||
    fail "pod $1's message: [$msg] (want $2 ... [$A_BASE, $((A_BASE + 9999))])"
}
refused as-team-b spec.containers[0].securityContext.runAsUser "    securityContext: {runAsUser: $B_BASE}"
refused gid-0 spec.containers[0].securityContext.runAsGroup '    securityContext: {runAsGroup: 0}'
refused shadow 'spec.securityContext.supplementalGroups[0]' '  securityContext: {supplementalGroups: [42]}'
refused fsgroup spec.securityContext.fsGroup "  securityContext: {fsGroup: $B_BASE}"
# Ids inside the block: exactly those.
pod team-a inside 'id -u; id -g; id -G | tr " " "\n" | sort -n | tr "\n" " "' \
  "    securityContext: {runAsUser: $((A_BASE + 5)), runAsGroup: $((A_BASE + 6))}
  securityContext: {fsGroup: $((A_BASE + 8)), supplementalGroups: [$((A_BASE + 7))]}" | "$KUBECTL" apply -f - >/dev/null
wait_until 30 sh -c "'$KUBECTL' get pod -n team-a inside -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  fail "pod inside did not succeed: $("$KUBECTL" get pod -n team-a inside -o jsonpath='{.status.containerStatuses}')"
out=$("$KUBECTL" logs -n team-a inside | tr '\n' '|')
[ "$out" = "$((A_BASE + 5))|$((A_BASE + 6))|$((A_BASE + 6)) $((A_BASE + 7)) $((A_BASE + 8)) " ] ||
  fail "pod inside's ids: [$out]"

# GPUs: the first pod takes GPU 0, the second gets GPU 1 and only its node.
gpu_limits='    resources: {limits: {nvidia.com/gpu: 1}}'
pod team-a gpu0 'exec sleep 3600' "$gpu_limits" | "$KUBECTL" apply -f - >/dev/null
wait_until 30 sh -c "'$KUBECTL' get pod -n team-a gpu0 -o jsonpath='{.status.phase}' | grep -qx Running" || fail "gpu0 not Running"
pod team-b gpu1 "echo visible=\$CUDA_VISIBLE_DEVICES; test -c $DEV/nvidia1 && cat $DEV/nvidia1 && echo own-opened; cat $DEV/nvidia0 2>&1 | grep -q \"No such file\" && echo other-absent; ls $DEV" "$gpu_limits" |
  "$KUBECTL" apply -f - >/dev/null
wait_until 30 sh -c "'$KUBECTL' get pod -n team-b gpu1 -o jsonpath='{.status.phase}' | grep -qx Succeeded" || fail "gpu1 did not succeed"
out=$("$KUBECTL" logs -n team-b gpu1)
[ "$out" = "visible=1
own-opened
other-absent
nvidia1" ] || fail "gpu1's view of the devices: [$out]"

# Local ephemeral storage: an emptyDir over its sizeLimit and a container whose /tmp (on disk)
# goes over its limits.ephemeral-storage are evicted within the kubelet's 10 s period.
pod team-a filler 'head -c 4194304 /dev/zero > /scratch/f; echo filled; exec sleep 3600' \
  "    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes: [{name: scratch, emptyDir: {sizeLimit: 1Mi}}]" | "$KUBECTL" apply -f - >/dev/null || fail "creating filler"
pod team-a tmpfill 'head -c 3145728 /dev/zero > /tmp/f; echo filled; exec sleep 3600' \
  "    resources: {limits: {ephemeral-storage: 1Mi}}" | "$KUBECTL" apply -f - >/dev/null || fail "creating tmpfill"
evicted() {  # evicted NAME MESSAGE
  wait_until 40 sh -c "'$KUBECTL' get pod -n team-a $1 -o jsonpath='{.status.reason}' | grep -qx Evicted" ||
    fail "pod $1 was not evicted: $("$KUBECTL" get pod -n team-a "$1" -o jsonpath='{.status}')"
  [ "$("$KUBECTL" get pod -n team-a "$1" -o jsonpath='{.status.phase}|{.status.message}')" = "Failed|$2" ] ||
    fail "pod $1's status: $("$KUBECTL" get pod -n team-a "$1" -o jsonpath='{.status.phase}|{.status.message}')"
  "$KUBECTL" get events -n team-a --field-selector "involvedObject.name=$1,reason=Evicted" -o jsonpath='{.items[*].message}' |
    grep -qF "$2" || fail "no Evicted event for $1"
}
evicted filler 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". '
evicted tmpfill 'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. '
[ "$("$KUBECTL" logs -n team-a filler)" = filled ] || fail "filler did not write its file before the eviction"

"$KUBECTL" delete pod -n team-a pa gpu0 root as-team-b gid-0 shadow fsgroup inside filler tmpfill --wait=false >/dev/null
"$KUBECTL" delete pod -n team-b pb gpu1 --wait=false >/dev/null
e2e_stop_server
[ "$FAILURES" -eq 0 ] && echo PASS
exit $((FAILURES > 0))

#!/usr/bin/env bash
# Which images a node runs on its host (scheduling/host_images.h), through `berth server
# --host-images` and the real kubectl:
#  (a) the Node carries the declaration as the berth.dev/host-images annotation;
#  (b) a pod naming a declared image (exact, or under a 'prefix*' entry) runs;
#  (c) a pod naming another image stays Pending with a FailedScheduling event that names
#      the image ("0/2 nodes are available: 2 node(s) cannot run image "nginx" on the host.");
#  (d) a pod bound by hand (spec.nodeName) with another image is refused by the node:
#      phase Failed, reason UnsupportedImage, the message naming the image and the declaration;
#  (e) an invalid declaration stops the server with the reason;
#  (f) `kubectl set image` on a running pod to an image the node does not run: at the
#      container's restart the node refuses it (waiting UnsupportedImage naming the image
#      and the declaration, a Warning Failed event), it does not run.
# Usage: host_images_e2e.sh <berth binary>     Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail
BERTH=${1:?berth binary}
source "$(dirname "$0")/lib.sh"
e2e_init host-images

out=$("$BERTH" server --port 0 --data-dir "$WORK/bad-data" --host-images 'py*torch' 2>&1)
[ $? -ne 0 ] || fail "(e) an invalid --host-images must stop the server"
[ "$out" = "error: invalid --host-images: image \"py*torch\": '*' is only allowed at the end" ] ||
  fail "(e) message: $out"

e2e_start_server --nodes 2 --node-capacity cpu=2,memory=4Gi --host-images 'busybox, pytorch/pytorch:*'
e2e_wait_node_ready node-0 20
e2e_wait_node_ready node-1 20
got=$("$KUBECTL" get node node-1 -o jsonpath='{.metadata.annotations.berth\.dev/host-images}')
[ "$got" = "busybox,pytorch/pytorch:*" ] || fail "(a) annotation: '$got'"

pod() {  # pod NAME IMAGE [NODE]
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n  %s\n  containers:\n  - {name: main, image: "%s", command: [sleep, "600"]}\n' \
    "$1" "${3:+nodeName: $3}" "$2"
}
pod exact busybox | "$KUBECTL" apply -f - >/dev/null
pod prefixed pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime | "$KUBECTL" apply -f - >/dev/null
pod web nginx | "$KUBECTL" apply -f - >/dev/null
pod bound redis node-1 | "$KUBECTL" apply -f - >/dev/null
phase() { "$KUBECTL" get pod "$1" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
wait_until 30 phase_is exact Running || fail "(b) exact: $(phase exact)"
wait_until 30 phase_is prefixed Running || fail "(b) prefixed: $(phase prefixed)"
event() {
  "$KUBECTL" get events --field-selector involvedObject.name=web,reason=FailedScheduling -o jsonpath='{.items[0].message}'
}
has_event() { [ -n "$(event)" ]; }
wait_until 20 has_event || fail "(c) no FailedScheduling event"
msg=$(event)
case "$msg" in
  "0/2 nodes are available: 2 node(s) cannot run image \"nginx\" on the host."*) ;;
  *) fail "(c) FailedScheduling message: $msg" ;;
esac
phase_is web Pending || fail "(c) web: $(phase web)"
wait_until 20 phase_is bound Failed || fail "(d) bound: $(phase bound)"
got=$("$KUBECTL" get pod bound -o jsonpath='{.status.reason}|{.status.message}')
[ "$got" = 'UnsupportedImage|Pod was rejected: image "redis" is not one the node node-1 runs on its host (berth.dev/host-images: busybox,pytorch/pytorch:*)' ] ||
  fail "(d) status: $got"

printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: changed, namespace: default}\nspec:\n  restartPolicy: OnFailure\n  containers:\n  - {name: main, image: busybox, command: [sh, -c, "echo ran; sleep 2; exit 1"]}\n' |
  "$KUBECTL" apply -f - >/dev/null
wait_until 30 phase_is changed Running || fail "(f) changed: $(phase changed)"
"$KUBECTL" set image pod/changed main=nginx >/dev/null || fail "(f) kubectl set image"
waiting() { "$KUBECTL" get pod changed -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}|{.status.containerStatuses[0].state.waiting.message}'; }
refused() { [ "$(waiting)" = 'UnsupportedImage|image "nginx" is not one the node '"$("$KUBECTL" get pod changed -o jsonpath='{.spec.nodeName}')"' runs on its host (berth.dev/host-images: busybox,pytorch/pytorch:*)' ]; }
wait_until 40 refused || fail "(f) waiting: $(waiting)"
runs=$("$KUBECTL" logs changed | grep -c ran)
[ "$runs" = 1 ] || fail "(f) the refused image ran: $runs runs"
failed=$("$KUBECTL" get events --field-selector involvedObject.name=changed,reason=Failed -o jsonpath='{.items[0].message}')
case "$failed" in
  'Error: image "nginx" is not one the node '*) ;;
  *) fail "(f) Failed event: $failed" ;;
esac

e2e_stop_server

[ "$FAILURES" -eq 0 ] && echo "PASS" || echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]

#!/usr/bin/env bash
# `berth server --shim-launcher` (agent/shim/launcher.h) through a real server and kubectl:
#  - by default (true) a container's supervisor is forked by a launcher process, which the
#    node's agent starts on its first container start and which ends with the server;
#  - with --shim-launcher=false no launcher is started: the supervisor is an exec of
#    `<program> shim`; the pod runs to Succeeded and `kubectl logs` shows its output either way;
#  - either way the launcher and the supervisors run the supervisor program berth embeds
#    (agent/shim/supervisor_image.h): their executable is the memfd it is installed in.
# A launcher is told apart from other tests' by its working directory, which it inherits from
# the server: each server here runs in a directory of its own.
# Usage: shim_launcher_e2e.sh <berth binary>   Exit: 0 pass, 1 fail.
set -uo pipefail
BERTH=$(realpath "${1:?berth binary}")
source "$(dirname "$0")/lib.sh"
e2e_init shim-launcher

# The pids of launchers whose working directory is $1.
launchers_in() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q '^[^ ]* shim --launcher ' || continue
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
  done
}

run_pod() {  # NAME: a pod that prints its name; Succeeded within 30 s, and its log is the name
  "$KUBECTL" run "$1" --image=x --restart=Never --command -- sh -c "echo hello from $1; sleep 1" >/dev/null ||
    { fail "$1: kubectl run"; return; }
  # Its supervisor runs the embedded program.
  local sup exe
  wait_until 10 pgrep -f "shim $WORK/.*_$1_" >/dev/null || fail "$1: no supervisor found"
  sup=$(pgrep -f "shim $WORK/.*_$1_" | head -1)
  exe=$(readlink "/proc/$sup/exe")
  [ "$exe" = "/memfd:berth-supervisor (deleted)" ] || fail "$1: its supervisor runs $exe"
  wait_until 30 sh -c "[ \"\$('$KUBECTL' get pod $1 -o jsonpath='{.status.phase}')\" = Succeeded ]" ||
    fail "$1: not Succeeded within 30 s (phase $("$KUBECTL" get pod "$1" -o jsonpath='{.status.phase}'))"
  local log
  log=$("$KUBECTL" logs "$1" 2>&1)
  [ "$log" = "hello from $1" ] || fail "$1: kubectl logs printed '$log'"
}

for mode in default false; do
  dir=$WORK/$mode
  mkdir -p "$dir"
  args=()
  [ "$mode" = false ] && args=(--shim-launcher=false)
  cd "$dir" || exit 1
  e2e_start_node_server "cpu=2,memory=4Gi" "${args[@]}"
  cd "$WORK" || exit 1
  run_pod "pod-$mode"
  found=$(launchers_in "$dir")
  if [ "$mode" = default ]; then
    [ -n "$found" ] || fail "default: no launcher runs in $dir after a container start"
    for l in $found; do
      [ "$(readlink "/proc/$l/exe")" = "/memfd:berth-supervisor (deleted)" ] ||
        fail "default: the launcher runs $(readlink "/proc/$l/exe")"
    done
  else
    [ -z "$found" ] || fail "--shim-launcher=false: launcher(s) $found run in $dir"
  fi
  e2e_stop_server
  if [ -n "$found" ] && [ "$mode" = default ]; then
    wait_until 10 sh -c "! kill -0 $found 2>/dev/null" || fail "default: launcher $found outlived its server"
  fi
  rm -rf "$WORK/data"
done

# A malformed value is refused before anything starts.
out=$("$BERTH" server --port 0 --data-dir "$WORK/data" --nodes 1 --shim-launcher=maybe 2>&1) &&
  fail "--shim-launcher=maybe was accepted"
grep -q "shim-launcher" <<<"$out" || fail "--shim-launcher=maybe: the error does not name the flag: $out"

[ "$FAILURES" -eq 0 ] && echo PASS
exit $((FAILURES > 0))

#!/usr/bin/env bash
# Kueue's scheduler performance test in real time (bench/kueue_realtime.cc):
# starts `berth server` on a free port with its own data directory, no
# embedded nodes (--nodes 0: standalone Workloads have no pods) and the given
# store, runs the scenario against it, prints the figures next to the same
# scenario's zero-latency replay (bench/kueue_replay.h) and Kueue's, and
# stops the server.
#
# Usage: bench/kueue_realtime.sh [BUILD_DIR] [memory|sqlite] [baseline|large-scale]
#   defaults: build-kueue, memory, baseline
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-kueue}
STORE=${2:-memory}
SCENARIO=${3:-baseline}
BERTH=$BUILD/cmd/berth/berth
HARNESS=$BUILD/bench/kueue_realtime
WORK=$(mktemp -d /tmp/berth-kueue-realtime.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BERTH" --log-level warn server --port 0 --data-dir "$WORK/data" --store "$STORE" --nodes 0 >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 200); do
  [ -s "$WORK/data/kubeconfig" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; exit 1; }
  sleep 0.1
done
[ -s "$WORK/data/kubeconfig" ] || { echo "server did not start"; cat "$WORK/server.log"; exit 1; }

"$HARNESS" --kubeconfig "$WORK/data/kubeconfig" --scenario "$SCENARIO" --store "$STORE"
rc=$?
# The server's CPU time for the run (utime+stime from /proc, clock ticks).
read -r utime stime < <(awk '{print $14, $15}' "/proc/$SERVER_PID/stat")
echo "  berth server CPU time: $(( (utime + stime) / $(getconf CLK_TCK) )) s (user+sys)"
exit $rc

# Shared by the kubectl-driven end-to-end scripts (sourced, not run):
#   e2e_init NAME           WORK=/tmp/berth-NAME.XXXXXX with its own HOME (kubectl caches
#                           discovery under ~/.kube/cache) and KUBECONFIG=$WORK/data/kubeconfig;
#                           on exit the server is stopped and WORK removed unless a check
#                           failed (FAILURES > 0), when it is kept for inspection.
#   e2e_start_server ARGS   `$BERTH server --port 0 --data-dir $WORK/data ARGS` in the
#                           background (log: $WORK/server.log); returns once the kubeconfig
#                           is written, exits 1 with the log when the server does not start.
#   e2e_stop_server         SIGTERM and wait; a non-zero exit counts as a failure.
# Expects BERTH (the berth binary). Sets WORK, SERVER_PID, FAILURES.

e2e_init() {
  WORK=$(mktemp -d "/tmp/berth-$1.XXXXXX")
  export HOME=$WORK/home
  mkdir -p "$HOME"
  export KUBECONFIG=$WORK/data/kubeconfig
  SERVER_PID=
  FAILURES=0
  trap e2e_cleanup EXIT
}

e2e_cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [ "$FAILURES" -eq 0 ]; then rm -rf "$WORK"; else echo "kept $WORK for inspection"; fi
}

e2e_start_server() {
  rm -f "$KUBECONFIG"
  "$BERTH" server --port 0 --data-dir "$WORK/data" "$@" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$KUBECONFIG" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: server did not start"; cat "$WORK/server.log"; exit 1
}

e2e_stop_server() {
  kill -TERM "$SERVER_PID"
  if ! wait "$SERVER_PID"; then echo "FAIL: server exited non-zero on SIGTERM"; FAILURES=$((FAILURES + 1)); fi
  SERVER_PID=
}

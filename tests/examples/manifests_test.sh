#!/usr/bin/env bash
# Every manifest under examples/ is accepted by `berth server` through the real kubectl:
# for each example directory, its top-level files (the setup: namespaces, flavors, queues,
# priority classes, runtimes) are applied for real, client-side then again server-side, and
# every file of its subdirectories (the jobs) is applied with --dry-run=server, so nothing
# starts training. Each YAML document must be reported "created" (then "unchanged" or
# "configured", then "serverside-applied") under its own name.
#
# Usage: manifests_test.sh <berth binary> <examples dir>
# Exit: 0 pass, 1 fail, 77 skip (no kubectl).
set -uo pipefail

BERTH=${1:?berth binary}
EXAMPLES=${2:?examples dir}
source "$(dirname "$0")/../e2e/lib.sh"
e2e_init examples

e2e_start_server --store=memory

# The "<kind>.<group>/<name>" (core kinds: "<kind>/<name>", kind in lower case) kubectl
# prints for each document of a file, read from the file itself.
expected_names() {
  awk '
    /^---/ { if (kind != "") print kind " " api " " name; kind = api = name = ""; inmeta = 0; next }
    /^apiVersion:/ { api = $2 }
    /^kind:/ { kind = $2 }
    /^metadata:/ { inmeta = 1; next }
    /^[^ #]/ { inmeta = 0 }
    inmeta && /^  name:/ { name = $2 }
    END { if (kind != "") print kind " " api " " name }
  ' "$1" | while read -r kind api name; do
    resource=$(echo "$kind" | tr '[:upper:]' '[:lower:]')
    group=${api%/*}
    if [ "$group" = "$api" ]; then echo "$resource/$name"; else echo "$resource.$group/$name"; fi
  done
}

# check_apply FILE SUFFIX_REGEX KUBECTL_ARGS...: applies FILE and wants one line per document.
check_apply() {
  local file=$1 suffix=$2; shift 2
  local out rc
  out=$("$KUBECTL" apply "$@" -f "$file" 2>&1); rc=$?
  if [ "$rc" -ne 0 ]; then fail "kubectl apply $* -f $file: exit $rc"; echo "$out" | sed 's/^/    /'; return; fi
  local n=0
  while read -r obj; do
    n=$((n + 1))
    if ! grep -Eq "^${obj//./\\.} (${suffix})$" <<<"$out"; then
      fail "kubectl apply $* -f $file: no line '$obj ${suffix}'"; echo "$out" | sed 's/^/    /'
    fi
  done < <(expected_names "$file")
  [ "$n" -gt 0 ] || fail "$file: no documents found"
}

examples=0
for dir in "$EXAMPLES"/*/; do
  dir=${dir%/}
  setup=$(find "$dir" -maxdepth 1 -name '*.yaml' | sort)
  jobs=$(find "$dir" -mindepth 2 -name '*.yaml' | sort)
  [ -n "$setup$jobs" ] || continue
  examples=$((examples + 1))
  for f in $setup; do check_apply "$f" 'created' ; done
  # A second client-side apply is "unchanged", except for custom resources whose lists hold
  # server-defaulted fields (ClusterTrainingRuntime replicatedJobs[].replicas/groupName):
  # kubectl sends CRDs a JSON merge patch, which replaces whole lists, so the three-way
  # patch is not empty and kubectl says "configured", against a real API server too.
  for f in $setup; do check_apply "$f" 'unchanged|configured' ; done
  for f in $setup; do check_apply "$f" 'serverside-applied' --server-side --force-conflicts; done
  for f in $jobs; do check_apply "$f" 'created \(server dry run\)' --dry-run=server; done
  for f in $jobs; do check_apply "$f" 'serverside-applied \(server dry run\)' --server-side --dry-run=server; done
done
[ "$examples" -ge 2 ] || fail "found $examples example directories under $EXAMPLES, want at least 2"

# Nothing the dry runs validated was stored.
out=$("$KUBECTL" get trainjobs,pytorchjobs -A -o name 2>&1)
[ -z "$out" ] || fail "dry runs stored objects: $out"

if [ "$FAILURES" -ne 0 ]; then echo "$FAILURES failure(s)"; exit 1; fi
echo "PASS: $examples examples"

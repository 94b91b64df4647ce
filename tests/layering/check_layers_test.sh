#!/usr/bin/env bash
# scripts/check_layers.py on a small tree of its own: clean, then an upward include, a
# sibling include, an upward link and a folder missing from the table must each fail with
# a line naming the file and the rule.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
check="$here/scripts/check_layers.py"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/docs" "$tree/core" "$tree/api" "$tree/jobs/a" "$tree/jobs/b"
cat > "$tree/docs/architecture.md" <<'MD'
<!-- layers:begin -->
| folder | library | may use |
|---|---|---|
| `core/` | `berth_core` | - |
| `api/` | `berth_api` | core |
| `jobs/a/` | `berth_jobs_a` | api |
| `jobs/b/` | `berth_jobs_b` | api |
<!-- layers:end -->
MD
echo '#pragma once' > "$tree/core/clock.h"
printf '#include "core/clock.h"\n' > "$tree/core/clock.cc"
printf '#pragma once\n#include "core/clock.h"\n' > "$tree/api/object.h"
printf '#include "api/object.h"\n' > "$tree/api/object.cc"
printf '#pragma once\n#include "api/object.h"\n' > "$tree/jobs/a/a.h"
printf '#include "jobs/a/a.h"\n' > "$tree/jobs/a/a.cc"
printf '#pragma once\n#include "api/object.h"\n' > "$tree/jobs/b/b.h"
printf '#include "jobs/b/b.h"\n' > "$tree/jobs/b/b.cc"
printf 'add_library(berth_core clock.cc)\n' > "$tree/core/CMakeLists.txt"
printf 'add_library(berth_api object.cc)\ntarget_link_libraries(berth_api PUBLIC berth_core)\n' > "$tree/api/CMakeLists.txt"
printf 'add_library(berth_jobs_a a.cc)\ntarget_link_libraries(berth_jobs_a PUBLIC berth_api)\n' > "$tree/jobs/a/CMakeLists.txt"
printf 'add_library(berth_jobs_b b.cc)\ntarget_link_libraries(berth_jobs_b PUBLIC berth_api)\n' > "$tree/jobs/b/CMakeLists.txt"

expect_fail() {  # expect_fail WHAT PATTERN
  local out
  if out=$(python3 "$check" "$tree" 2>&1); then
    echo "FAIL: $1 passed the check:"; echo "$out"; exit 1
  fi
  grep -qE "$2" <<<"$out" || { echo "FAIL: $1: no line matching '$2' in:"; echo "$out"; exit 1; }
  echo "ok: $1 -> $(grep -E "$2" <<<"$out" | head -1)"
}

python3 "$check" "$tree" | grep -q "follow the layering" || { echo "FAIL: the clean tree did not pass"; exit 1; }
echo "ok: clean tree passes"

cp "$tree/core/clock.cc" "$tree/core/clock.cc.orig"
printf '#include "api/object.h"\n' >> "$tree/core/clock.cc"
expect_fail "upward include" '^core/clock\.cc:2: includes api/object\.h of api/, a higher layer'
mv "$tree/core/clock.cc.orig" "$tree/core/clock.cc"

cp "$tree/jobs/a/a.cc" "$tree/jobs/a/a.cc.orig"
printf '#include "jobs/b/b.h"\n' >> "$tree/jobs/a/a.cc"
expect_fail "sibling include" '^jobs/a/a\.cc:2: includes jobs/b/b\.h of jobs/b/, a folder beside it'
mv "$tree/jobs/a/a.cc.orig" "$tree/jobs/a/a.cc"

printf 'target_link_libraries(berth_core PUBLIC berth_api)\n' >> "$tree/core/CMakeLists.txt"
expect_fail "upward link" '^berth_core: links berth_api \(api/\), which core/ may not use'
printf 'add_library(berth_core clock.cc)\n' > "$tree/core/CMakeLists.txt"

mkdir -p "$tree/extra" && printf '#pragma once\n' > "$tree/extra/x.h"
expect_fail "folder missing from the table" '^extra/x\.h: its folder is not in the layer table'
rm -rf "$tree/extra"

python3 "$check" "$tree" | grep -q "follow the layering" || { echo "FAIL: the restored tree did not pass"; exit 1; }
echo "ok: restored tree passes"

# Kueue's scheduler performance scenarios in real time against a running
# `berth server` (bench/kueue_realtime.sh starts one and runs the baseline).
berth_bench(kueue_realtime
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kueue_realtime.cc
  LIBS berth_client CLI11::CLI11 fmt::fmt)

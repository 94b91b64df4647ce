# Kueue's scheduler performance scenarios in real time against a running
# `berth server` (bench/kueue_realtime.sh starts one and runs the scenario),
# printed next to the same scenario's zero-latency replay (kueue_replay).
berth_bench(kueue_realtime
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kueue_realtime.cc
  LIBS berth_client kueue_replay CLI11::CLI11 fmt::fmt)

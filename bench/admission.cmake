# Kueue's scheduler performance scenarios replayed on virtual time through the
# admission engine alone (kueue_replay.h; Kueue's test/performance/scheduler):
# a library shared by admission_bench and kueue_realtime (its zero-latency
# column). Not named berth_*: bench code, outside the layer table.
add_library(kueue_replay ${CMAKE_CURRENT_LIST_DIR}/kueue_replay.cc)
target_link_libraries(kueue_replay PUBLIC berth_admission)
# Admission engine: the replays as Google Benchmarks.
berth_bench(admission_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/admission_bench.cc
  LIBS kueue_replay)
berth_test(kueue_replay_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kueue_replay_test.cc
  LIBS kueue_replay)

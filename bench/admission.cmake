# Admission engine: Kueue's scheduler performance scenarios replayed on
# virtual time through the engine alone (Kueue's test/performance/scheduler).
berth_bench(admission_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/admission_bench.cc
  LIBS berth_admission)

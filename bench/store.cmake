# store/ benchmarks: MemoryStore and SqliteStore create/update/get/list/watch,
# and durable SQLite creates with 1/4/16 concurrent writers (group commit).
berth_bench(store_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_bench.cc
  LIBS berth_store)

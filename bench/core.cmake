# core/: Quantity parse and format throughput.
berth_bench(quantity_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/quantity_bench.cc
  LIBS berth_core)

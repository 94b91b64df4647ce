# placement/: pod placement throughput on 1,000 virtual nodes (filters, scores,
# preemption dry runs, gang placement). See bench/placement_bench.cc.
berth_bench(placement_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/placement_bench.cc
  LIBS berth_placement)

# berth lint over a view of many training jobs (the pairwise rules are O(jobs^2)).
berth_bench(lint_bench SOURCES ${CMAKE_CURRENT_LIST_DIR}/lint_bench.cc LIBS berth_diagnostics)

# api/: registry load and the admission pipeline (prune + default + validate) per write.
berth_bench(api_schema_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/api_schema_bench.cc
  LIBS berth_api)

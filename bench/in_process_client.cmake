# Create+Get per second through HttpClient on loopback vs the in-process client.
berth_bench(in_process_client_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/in_process_client_bench.cc
  LIBS berth_apiserver berth_client berth_pki berth_authn)

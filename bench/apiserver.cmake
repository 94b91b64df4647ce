# apiserver/ benchmarks over HTTP: creates/s and GETs/s with 8 keep-alive
# clients, LIST of 10,000 objects, write-to-delivery delay on 100 watches.
berth_bench(apiserver_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/apiserver_bench.cc
  LIBS berth_apiserver berth_client berth_pki berth_authn)

# Callgrind driver: instructions per Pod create over HTTP (see the file).
berth_bench(apiserver_create_profile
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/apiserver_create_profile.cc
  LIBS berth_apiserver berth_client berth_pki berth_authn)

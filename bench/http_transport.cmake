# The transport alone (apiserver/http_server.h): requests/s over plain HTTP and
# TLS with 8 keep-alive clients, and the cost of a new TLS connection.
berth_bench(http_transport_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/http_transport_bench.cc
  LIBS berth_apiserver berth_client berth_pki)

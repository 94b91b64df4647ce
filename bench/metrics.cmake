# /metrics: the cost per API request of kube-apiserver's request metrics (labels +
# counter + histogram), and of serialising a scrape of a large registry.
berth_bench(metrics_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/metrics_bench.cc
  LIBS berth_apiserver berth_controllers_kueue)

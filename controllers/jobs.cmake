# berth_controllers_jobs: the pure translation layers of the job kinds (issue 5) —
# batch/v1 Job → pods (job/), JobSet → Jobs + Service + policy decisions (jobset/),
# TrainJob + runtime → JobSet (trainer/), PyTorchJob → pods + Services (pytorchjob/), and
# each kind's Kueue podSets. No client, threads or clock: JSON in, JSON/decisions out.
# Included from controllers/CMakeLists.txt; berth_controllers links it.
add_library(berth_controllers_jobs
  ${CMAKE_CURRENT_LIST_DIR}/job/job_pods.cc
  ${CMAKE_CURRENT_LIST_DIR}/job/object_fields.cc
  ${CMAKE_CURRENT_LIST_DIR}/jobset/jobset_children.cc
  ${CMAKE_CURRENT_LIST_DIR}/pytorchjob/pytorchjob_pods.cc
  ${CMAKE_CURRENT_LIST_DIR}/trainer/trainjob_builder.cc
)
target_link_libraries(berth_controllers_jobs
  PUBLIC berth_api berth_core nlohmann_json::nlohmann_json
  PRIVATE OpenSSL::Crypto)


berth_test(controllers_jobs_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/job/job_pods_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/jobset/jobset_children_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/pytorchjob/pytorchjob_pods_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/trainer/trainjob_builder_test.cc
  LIBS berth_controllers_jobs)

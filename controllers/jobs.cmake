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

# berth_job_controllers: the job kinds' reconcilers over client::Client (job/, jobset/,
# trainer/, pytorchjob/ *_controller) and their Kueue integrations (kueue/*_integration), on top of the
# translation layers above and berth_controllers (event recorder, Kueue job framework).
add_library(berth_job_controllers
  ${CMAKE_CURRENT_LIST_DIR}/job/job_controller.cc
  ${CMAKE_CURRENT_LIST_DIR}/job/owned_objects.cc
  ${CMAKE_CURRENT_LIST_DIR}/jobset/jobset_controller.cc
  ${CMAKE_CURRENT_LIST_DIR}/kueue/jobset_integration.cc
  ${CMAKE_CURRENT_LIST_DIR}/kueue/pytorchjob_integration.cc
  ${CMAKE_CURRENT_LIST_DIR}/kueue/trainjob_integration.cc
  ${CMAKE_CURRENT_LIST_DIR}/pytorchjob/pytorchjob_controller.cc
  ${CMAKE_CURRENT_LIST_DIR}/trainer/trainjob_controller.cc
)
target_link_libraries(berth_job_controllers
  PUBLIC berth_controllers_jobs berth_controllers berth_client berth_api berth_core nlohmann_json::nlohmann_json)

berth_test(controllers_job_controllers_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/trainer/trainjob_controller_test.cc
  LIBS berth_job_controllers berth_client_testing)

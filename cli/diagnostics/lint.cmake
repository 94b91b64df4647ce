# berth_lint: `berth lint` (cli/diagnostics/lint*.{h,cc}, cli/lint_command.cc) over the
# diagnostics' ClusterView. Included from cli/CMakeLists.txt after berth_diagnostics.
# Links the job kinds' pure podSet derivations and Kueue's decoder (pod requests) for the
# gang and cost figures, and berth_cli for manifests and kubectl's error texts.
add_library(berth_lint
  ${CMAKE_CURRENT_LIST_DIR}/lint.cc
  ${CMAKE_CURRENT_LIST_DIR}/lint_input.cc
  ${CMAKE_CURRENT_LIST_DIR}/../lint_command.cc
)
target_link_libraries(berth_lint
  PUBLIC berth_diagnostics berth_cli berth_controllers berth_controllers_jobs berth_client berth_api berth_core
         CLI11::CLI11 nlohmann_json::nlohmann_json
  PRIVATE yaml-cpp)

berth_test(lint_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/lint_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/lint_input_test.cc
  LIBS berth_lint)

// main() of the test binaries whose tests start container supervisors: the
// agent runs `/proc/self/exe shim <run dir>`, which in a test binary must be
// the supervisor too (as it is in `berth`).
#include <cstring>
#include <gtest/gtest.h>

#include "agent/shim/shim.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "shim") == 0) return berth::agent::shim::ShimMain(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

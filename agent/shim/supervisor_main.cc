// main() of the supervisor program (`berth-supervisor`, supervisor_image.h):
// the supervisor, the sandbox's init and the launcher, statically linked, and
// nothing else of berth.
#include "agent/shim/shim.h"

int main(int argc, char** argv) { return berth::agent::shim::ShimMain(argc, argv); }

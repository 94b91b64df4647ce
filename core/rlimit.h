// RaiseFileDescriptorLimit: the soft RLIMIT_NOFILE raised to the hard limit,
// as the Go runtime does at start for every Go program, kube-apiserver and the
// kubelet included (src/os/rlimit.go, Go 1.19+: "Some systems set an
// artificially low soft limit on open file count ... raise the soft limit to
// the hard limit"). Each connection, watch and pod log costs berth a file
// descriptor; the usual soft limit, 1024, would cap a server at about a
// thousand clients while the hard limit (often 524288) allows far more.
//
// Processes started afterwards inherit the raised soft limit (Go restores the
// original one in its children; berth's node agent does not).
//
// Thread-safety: call once at start, before threads open files.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace berth {

struct FileDescriptorLimit {
  uint64_t before = 0;  // soft limit found
  uint64_t after = 0;   // soft limit now (the hard limit, unless raising failed)
};

// Raises the soft limit to the hard one (RLIM_INFINITY counts as the hard limit
// too). Errors: kInternal with errno's text when getrlimit or setrlimit fails.
StatusOr<FileDescriptorLimit> RaiseFileDescriptorLimit();

}  // namespace berth

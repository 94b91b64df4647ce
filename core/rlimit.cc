#include "core/rlimit.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/resource.h>

namespace berth {

StatusOr<FileDescriptorLimit> RaiseFileDescriptorLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return InternalError(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  FileDescriptorLimit out;
  out.before = lim.rlim_cur;
  if (lim.rlim_cur != lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      return InternalError(std::string("setrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
    }
  }
  out.after = lim.rlim_cur;
  return out;
}

}  // namespace berth

#include "core/thread_name.h"

#include <pthread.h>

#include <string>

namespace berth {

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, 15));  // the kernel's TASK_COMM_LEN is 16, with the NUL
  pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace berth

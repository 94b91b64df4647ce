#include "agent/memory_cgroup.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace berth::agent {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return InternalError("cannot open " + path + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return InternalError("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

MemoryCgroups MemoryCgroups::Detect(const std::string& mount, std::optional<std::string> parent,
                                    const std::string& proc_self_cgroup) {
  auto controllers = ReadFile(mount + "/cgroup.controllers");
  if (!controllers) {
    return MemoryCgroups(
        "", "no cgroup v2 unified hierarchy at " + mount + " (cgroup.controllers missing; a v1 or hybrid host)");
  }
  if (!HasWord(*controllers, "memory")) {
    return MemoryCgroups("", "the cgroup v2 memory controller is not available at " + mount);
  }
  if (!parent) {
    auto self = ReadFile(proc_self_cgroup);
    std::string path;
    if (self) {
      std::istringstream in(*self);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
      }
    }
    if (path.empty()) return MemoryCgroups("", "no cgroup v2 entry in " + proc_self_cgroup);
    parent = path;
  }
  std::string dir = mount + (*parent == "/" ? "" : *parent);
  if (access(dir.c_str(), W_OK) != 0) {
    return MemoryCgroups("", "cgroup " + dir + " is not writable: " + std::strerror(errno));
  }
  auto subtree = ReadFile(dir + "/cgroup.subtree_control");
  if (!subtree || !HasWord(*subtree, "memory")) {
    Status s = WriteFile(dir + "/cgroup.subtree_control", "+memory");
    if (!s.ok()) {
      return MemoryCgroups("", "cannot enable the memory controller for children of " + dir + " (" + s.message() +
                                   "); give the agent a delegated cgroup");
    }
  }
  return MemoryCgroups(dir, "");
}

StatusOr<std::string> MemoryCgroups::Create(const std::string& name, int64_t memory_limit_bytes) const {
  if (!available()) return UnavailableError("memory cgroups unavailable: " + reason_);
  std::string dir = dir_ + "/berth-" + name;
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (ec) return InternalError("creating cgroup " + dir + ": " + ec.message());
  BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.max", std::to_string(memory_limit_bytes)));
  if (std::filesystem::exists(dir + "/memory.swap.max")) {
    BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.swap.max", "0"));
  }
  return dir;
}

bool MemoryCgroups::OomKilled(const std::string& cgroup_dir) const {
  auto events = ReadFile(cgroup_dir + "/memory.events");
  if (!events) return false;
  std::istringstream in(*events);
  std::string key;
  long long value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill" && value > 0) return true;
  }
  return false;
}

void MemoryCgroups::Remove(const std::string& cgroup_dir) const { rmdir(cgroup_dir.c_str()); }

}  // namespace berth::agent

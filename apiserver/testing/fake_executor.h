// A container executor for the API server's exec tests: every command "runs" at once as
// `echo`, so sessions can be opened, counted and refused without a node agent.
//
// Header-only; test code only (uses GoogleTest assertions).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "client/container_exec.h"

namespace berth::apiserver::testing {

// A process that wrote `text` to stdout and exited 0.
class FinishedProcess : public client::ExecProcess {
 public:
  explicit FinishedProcess(const std::string& text) {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    EXPECT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fds[1]);
    out_ = fds[0];
  }
  ~FinishedProcess() override { close(out_); }
  int stdin_fd() const override { return -1; }
  int stdout_fd() const override { return out_; }
  int stderr_fd() const override { return -1; }
  void CloseStdin() override {}
  void Resize(uint16_t, uint16_t) override {}
  int Wait() override { return 0; }
  std::optional<int> TryWait() override { return 0; }
  void Kill() override {}

 private:
  int out_ = -1;
};

// Runs every command as `echo`: its output is "<ns>/<pod>/<container> ran: <argv>\n".
class FakeExecutor : public client::ContainerExecutor {
 public:
  StatusOr<std::unique_ptr<client::ExecProcess>> StartExec(const std::string& ns, const std::string& name,
                                                           const client::ExecOptions& options) override {
    if (options.validate_only) return std::unique_ptr<client::ExecProcess>();
    std::string argv;
    for (const std::string& a : options.command) argv += " " + a;
    return std::unique_ptr<client::ExecProcess>(
        std::make_unique<FinishedProcess>(ns + "/" + name + "/" + options.container + " ran:" + argv + "\n"));
  }
};

}  // namespace berth::apiserver::testing

// Raw loopback sockets for the transport's tests: a client that can stop
// reading or send half a request, as no HTTP client library would.
//
// Header-only; test code only (uses GoogleTest assertions).
#pragma once

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdint>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace berth::apiserver::testing {

// A connected loopback socket; `receive_buffer` > 0 sets SO_RCVBUF first (a
// small window makes a client that stops reading stall the server quickly).
inline int Connect(uint16_t port, int receive_buffer = 0) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

inline void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    sent += static_cast<size_t>(n);
  }
}

// Reads what arrives within `wait`, stopping at EOF (*closed = true) or when
// `until` (if not empty) has been read.
inline std::string Receive(int fd, std::chrono::milliseconds wait, bool* closed, const std::string& until = "") {
  std::string out;
  *closed = false;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  char buf[65536];
  while (std::chrono::steady_clock::now() < deadline) {
    if (!until.empty() && out.find(until) != std::string::npos) break;
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace berth::apiserver::testing

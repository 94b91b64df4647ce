// The remote command channel protocol of `kubectl exec` (and `cp`, which is
// exec of tar) over WebSocket: each binary message is one frame whose first
// byte is a stream id and the rest its data.
//
// Upstream:
//   staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go
//     (protocol names, StreamClose = 255, NonZeroExitCodeReason,
//     ExitCodeCauseType);
//   staging/src/k8s.io/apiserver/pkg/util/wsstream/conn.go (channel framing,
//     subprotocol negotiation);
//   staging/src/k8s.io/client-go/tools/remotecommand/websocket.go (the
//     client: kubectl 1.32 offers only v5.channel.k8s.io; it writes
//     [255, id] to half-close its stdin, and reads the error stream to the
//     end of the connection);
//   pkg/kubelet/cri/streaming/remotecommand/httpstream.go
//     (v4WriteStatusFunc) and exec.go (the exit-code Status).
//
// Streams: 0 stdin (client -> server), 1 stdout, 2 stderr, 3 error (one
// JSON metav1.Status: Success, or Failure; a non-zero exit is reason
// NonZeroExitCode with details.causes [{type ExitCode, message "<code>"}]),
// 4 resize (client -> server, JSON {"Width":w,"Height":h}). v5 adds
// 255 = close: the second byte is the stream being closed (half-close).
// berth serves v5 and v4 (v4 has no close frame: stdin then ends with the
// connection); the v1-v3 and base64 variants are not served.
//
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace berth::apiserver {

inline constexpr uint8_t kStdinStream = 0;
inline constexpr uint8_t kStdoutStream = 1;
inline constexpr uint8_t kStderrStream = 2;
inline constexpr uint8_t kErrorStream = 3;
inline constexpr uint8_t kResizeStream = 4;
inline constexpr uint8_t kCloseStream = 255;  // v5 only

inline constexpr char kStreamProtocolV5[] = "v5.channel.k8s.io";
inline constexpr char kStreamProtocolV4[] = "v4.channel.k8s.io";

// The subprotocol to answer from a Sec-WebSocket-Protocol header (a comma
// separated list, in the client's order of preference): v5 when offered,
// else v4; "" when neither is (the caller refuses the upgrade with
// "requested protocol(s) are not supported: [..]; supports [v5 v4]").
std::string NegotiateStreamProtocol(std::string_view offered);

struct Frame {
  uint8_t stream = 0;
  std::string data;
  bool operator==(const Frame&) const = default;
};

// [stream][data...].
std::string EncodeFrame(uint8_t stream, std::string_view data);
// A received message. Errors: kBadRequest for an empty message.
StatusOr<Frame> DecodeFrame(std::string_view message);

struct TerminalSize {
  uint16_t width = 0;
  uint16_t height = 0;
  bool operator==(const TerminalSize&) const = default;
};
// The data of a resize frame, {"Width":80,"Height":24} (client-go's
// TerminalSize). Errors: kBadRequest when it is not such JSON.
StatusOr<TerminalSize> DecodeTerminalSize(std::string_view data);

// The error stream's Status for a command that exited with `exit_code`:
// {"metadata":{},"status":"Success"} for 0, else
// {"metadata":{},"status":"Failure","message":"command terminated with
// non-zero exit code: error executing command [sh -c exit 3], exit code 3",
// "reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode",
// "message":"3"}]}} (the kubelet's; metav1.StatusCause's "type" is "reason"
// in JSON).
std::string ExitStatusJson(int exit_code, const std::vector<std::string>& command);
// The error stream's Status for a failure that is not an exit code (a
// command that could not start): Failure, InternalError, code 500.
std::string ErrorStatusJson(const Status& error);

}  // namespace berth::apiserver

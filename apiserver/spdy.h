// SPDY/3.1 framing and the server side of a SPDY session: what `kubectl
// port-forward` speaks, tunneled in WebSocket binary messages
// (apiserver/pod_portforward.h).
//
// Upstream (facts, not code):
//   github.com/moby/spdystream spdy/types.go, read.go, write.go (the frame
//     layouts, status codes, the header block: a 32-bit pair count, then
//     32-bit length-prefixed lowercase names and values, several values of
//     one name joined by NUL), spdy/dictionary.go (the 1423-byte SPDY/3
//     zlib dictionary, whose Adler-32 is 0xe3c6a7c2), connection.go (pings
//     whose id parity is the peer's are echoed; SETTINGS and WINDOW_UPDATE
//     are read and ignored: spdystream neither grants nor honours flow
//     control windows);
//   the SPDY/3.1 draft (draft-mbelshe-httpbis-spdy-00 and the 3.1 changes):
//     control frame = 1 bit C=1, 15 bits version (3), 16 bits type, 8 bits
//     flags, 24 bits length; data frame = 1 bit C=0, 31 bits stream id,
//     8 bits flags, 24 bits length; one zlib stream per direction for all
//     header blocks of a connection, each block ending with a sync flush;
//     64 KiB initial windows, WINDOW_UPDATE deltas 1..2^31-1.
//
// Shapes: stream ids are 31-bit; a client opens odd ones, a server even
// ones. Bounds: a frame's payload at most kMaxFramePayloadBytes, a header
// block at most kMaxHeaderBlockBytes once inflated and kMaxHeaderPairs pairs;
// anything larger or malformed is an error (kBadRequest), never a crash.
//
// Thread-safety: none; each object is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace berth::apiserver::spdy {

inline constexpr uint16_t kVersion = 3;

enum class FrameType : uint16_t {
  kData = 0,  // not a control frame type: marks a DATA frame
  kSynStream = 1,
  kSynReply = 2,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kHeaders = 8,
  kWindowUpdate = 9,
};

inline constexpr uint8_t kFlagFin = 0x01;             // DATA, SYN_STREAM, SYN_REPLY, HEADERS
inline constexpr uint8_t kFlagUnidirectional = 0x02;  // SYN_STREAM
inline constexpr uint8_t kFlagSettingsClear = 0x01;   // SETTINGS

// RST_STREAM status codes.
enum RstStatus : uint32_t {
  kProtocolError = 1,
  kInvalidStream = 2,
  kRefusedStream = 3,
  kUnsupportedVersion = 4,
  kCancel = 5,
  kInternalError = 6,
  kFlowControlError = 7,
  kStreamInUse = 8,
  kStreamAlreadyClosed = 9,
  kFrameTooLarge = 11,
};
// GOAWAY status codes.
enum GoAwayStatus : uint32_t { kGoAwayOk = 0, kGoAwayProtocolError = 1, kGoAwayInternalError = 2 };

inline constexpr uint32_t kSettingsInitialWindowSize = 7;
inline constexpr int64_t kDefaultInitialWindow = 64 * 1024;
inline constexpr int64_t kMaxWindow = 0x7fffffff;

// A frame's payload (its 24-bit length) is refused above this. Upstream:
// spdystream bounds nothing below 2^24; client-go copies in 32 KiB chunks.
inline constexpr std::size_t kMaxFramePayloadBytes = 1 << 20;
// An inflated header block is refused above this (a zlib bomb's bound).
// kubectl's port-forward streams carry three short headers.
inline constexpr std::size_t kMaxHeaderBlockBytes = 64 * 1024;
inline constexpr std::size_t kMaxHeaderPairs = 256;

using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of `name` (lowercase) in `headers`, "" when absent.
std::string_view HeaderValue(const Headers& headers, std::string_view name);

struct Setting {
  uint8_t flags = 0;
  uint32_t id = 0;  // 24 bits
  uint32_t value = 0;
  bool operator==(const Setting&) const = default;
};

struct Frame {
  FrameType type = FrameType::kData;
  uint8_t flags = 0;
  // DATA, SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE: the
  // stream; GOAWAY: the last good stream id.
  uint32_t stream_id = 0;
  uint32_t associated_stream_id = 0;  // SYN_STREAM
  uint8_t priority = 0;               // SYN_STREAM, 3 bits
  uint8_t slot = 0;                   // SYN_STREAM
  Headers headers{};                  // SYN_STREAM, SYN_REPLY, HEADERS
  uint32_t status = 0;                // RST_STREAM, GOAWAY
  uint32_t value = 0;                 // PING id, WINDOW_UPDATE delta
  std::vector<Setting> settings{};    // SETTINGS
  std::string data{};                 // DATA
  bool operator==(const Frame&) const = default;
};

// The uncompressed header block. Names are lowercased; pairs of one name are
// joined into one value separated by NUL.
std::string EncodeHeaderBlock(const Headers& headers);
// Errors: kBadRequest for a truncated block, trailing bytes, an empty or
// upper-case name, a repeated name, more than kMaxHeaderPairs pairs.
StatusOr<Headers> DecodeHeaderBlock(std::string_view block);

// Writes frames, compressing header blocks with the connection's one zlib
// stream (preset dictionary, sync flush after each block).
class FrameEncoder {
 public:
  FrameEncoder();
  ~FrameEncoder();
  FrameEncoder(const FrameEncoder&) = delete;
  FrameEncoder& operator=(const FrameEncoder&) = delete;
  // The frame's bytes. The caller keeps ids and lengths in range (stream ids
  // below 2^31, data below 2^24 bytes).
  std::string Encode(const Frame& frame);
  // Just the compressed header block (continuing the stream).
  std::string CompressHeaders(const Headers& headers);

 private:
  struct Zlib;
  std::unique_ptr<Zlib> z_;
};

// Reads frames from bytes appended as they arrive (frames may span or share
// appends). Next returns nullopt until a whole frame is buffered.
class FrameDecoder {
 public:
  FrameDecoder();
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;
  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // Errors (kBadRequest; the connection cannot go on after one): a control
  // frame of another version or an unknown type, a payload above
  // kMaxFramePayloadBytes, a payload of the wrong size for its type, a
  // stream id 0 where one is needed, a PING with id 0, a header block that
  // does not inflate with the dictionary or does not decode.
  StatusOr<std::optional<Frame>> Next();
  std::size_t buffered() const { return buffer_.size(); }
  // Inflates one header block (continuing the stream). Exposed for tests.
  StatusOr<Headers> DecompressHeaders(std::string_view block);

 private:
  struct Zlib;
  std::unique_ptr<Zlib> z_;
  std::string buffer_;
  bool broken_ = false;
};

// The server side of one SPDY session whose client opens the streams
// (kubectl port-forward): stream bookkeeping, PING echo, flow control
// windows. Bytes in (Receive), events out, bytes to send (TakeOutput).
//
// Flow control: every stream has a send window (initial 64 KiB, moved by
// the client's SETTINGS INITIAL_WINDOW_SIZE and WINDOW_UPDATE) and a receive
// window (64 KiB; DATA consumes it; Consumed gives it back and sends a
// WINDOW_UPDATE once half of it is consumed). With enforce_flow_control a
// DATA frame beyond the receive window resets its stream
// (FLOW_CONTROL_ERROR) and SendData sends at most the send window. kubectl's
// spdystream neither grants nor respects windows, so the port-forward
// server runs without enforcement and bounds its buffers itself.
class ServerSession {
 public:
  struct Options {
    std::size_t max_streams = 256;  // open streams; a SYN_STREAM beyond: REFUSED_STREAM
    int64_t initial_window = kDefaultInitialWindow;
    bool enforce_flow_control = false;
  };
  struct Event {
    enum class Kind { kOpened, kData, kFinished, kReset };
    Kind kind = Kind::kOpened;
    uint32_t stream = 0;
    Headers headers{};   // kOpened
    std::string data{};  // kData
    uint32_t status = 0;  // kReset
    bool operator==(const Event&) const = default;
  };

  ServerSession() : ServerSession(Options{}) {}
  explicit ServerSession(Options options) : options_(options) {}

  // Decodes `bytes` (appended to what is buffered) and appends what happened
  // to `events`. Stream-level faults reset the stream (RST_STREAM queued)
  // and go on; a connection-level fault (FrameDecoder::Next's errors, a
  // SYN_STREAM with stream id 0) queues GOAWAY PROTOCOL_ERROR and returns
  // the error; the session is then closed (every later call fails).
  Status Receive(std::string_view bytes, std::vector<Event>* events);

  // SYN_REPLY for a stream the client opened (no-op for an unknown one).
  void Reply(uint32_t stream, const Headers& headers, bool fin);
  // DATA (with FIN when `fin`); returns the bytes taken: all of them, or
  // with enforce_flow_control at most the send window. Nothing is sent on an
  // unknown stream or one this side finished.
  std::size_t SendData(uint32_t stream, std::string_view data, bool fin);
  void Reset(uint32_t stream, RstStatus status);
  void GoAway(GoAwayStatus status);
  // The application took `bytes` of the stream's received data.
  void Consumed(uint32_t stream, std::size_t bytes);

  // Bytes to send to the client (and clears them).
  std::string TakeOutput() { return std::exchange(output_, {}); }
  bool output_pending() const { return !output_.empty(); }
  bool closed() const { return closed_; }
  bool goaway_received() const { return goaway_received_; }
  std::size_t open_streams() const { return streams_.size(); }
  bool IsOpen(uint32_t stream) const { return streams_.count(stream) > 0; }
  // Windows of an open stream (0 for an unknown one).
  int64_t send_window(uint32_t stream) const;
  int64_t receive_window(uint32_t stream) const;

 private:
  struct Stream {
    bool remote_fin = false;
    bool local_fin = false;
    bool replied = false;
    int64_t send_window = 0;
    int64_t receive_window = 0;
    int64_t unacked = 0;  // consumed, not yet given back by WINDOW_UPDATE
  };
  void Send(const Frame& frame) { output_ += encoder_.Encode(frame); }
  void ResetStream(uint32_t stream, RstStatus status);
  void MaybeErase(uint32_t stream);
  void Handle(Frame frame, std::vector<Event>* events);
  Status Fail(Status error);

  Options options_;
  FrameEncoder encoder_;
  FrameDecoder decoder_;
  std::map<uint32_t, Stream> streams_;
  uint32_t last_client_stream_ = 0;
  int64_t peer_initial_window_ = kDefaultInitialWindow;
  std::string output_;
  bool closed_ = false;
  bool goaway_received_ = false;
};

}  // namespace berth::apiserver::spdy

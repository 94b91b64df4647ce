// Fuzz target: the SPDY/3.1 frame decoder and the server session (apiserver/spdy.h), as
// every byte a `kubectl port-forward` client sends through the WebSocket tunnel reaches them.
//
// Input: raw bytes, the client's side of a SPDY connection. The first byte picks how the
// bytes are cut into Receive calls (1 to 256 bytes each), as WebSocket messages cut them.
//
// Invariants checked (a violation aborts):
//   - FrameDecoder and ServerSession never crash (ASan, UBSan) and refuse with kBadRequest;
//   - a frame the decoder accepts encodes and decodes back to itself (a fresh encoder and
//     decoder pair: header blocks go through the dictionary compression);
//   - everything the session writes back is well-formed SPDY (decodes with a fresh decoder);
//   - after an error the session is closed and stays so.
#include <cstdint>
#include <string>
#include <vector>

#include "apiserver/spdy.h"
#include "fuzz/fuzz_check.h"

using berth::fuzz::Check;
namespace spdy = berth::apiserver::spdy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::size_t step = std::size_t{data[0]} + 1;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  // The decoder alone, and the round trip of what it accepts.
  spdy::FrameDecoder decoder;
  decoder.Append(input);
  spdy::FrameEncoder encoder;
  spdy::FrameDecoder again;
  while (true) {
    auto f = decoder.Next();
    if (!f.ok()) {
      Check(f.status().code() == berth::Code::kBadRequest, "decoder error is not kBadRequest",
            f.status().ToString());
      break;
    }
    if (!f->has_value()) break;
    const spdy::Frame& frame = **f;
    again.Append(encoder.Encode(frame));
    auto back = again.Next();
    Check(back.ok() && back->has_value() && **back == frame, "a decoded frame does not round-trip");
  }

  // The session, fed in pieces; its output must decode.
  spdy::ServerSession session;
  spdy::FrameDecoder output;
  std::vector<spdy::ServerSession::Event> events;
  for (std::size_t at = 0; at < input.size(); at += step) {
    const berth::Status s = session.Receive(input.substr(at, step), &events);
    for (const auto& ev : events) {
      if (ev.kind == spdy::ServerSession::Event::Kind::kOpened) session.Reply(ev.stream, {{"x", "y"}}, false);
      if (ev.kind == spdy::ServerSession::Event::Kind::kData) {
        session.Consumed(ev.stream, ev.data.size());
        session.SendData(ev.stream, ev.data, false);
      }
    }
    events.clear();
    output.Append(session.TakeOutput());
    if (!s.ok()) {
      Check(session.closed(), "the session is not closed after an error", s.ToString());
      Check(!session.Receive("x", &events).ok(), "a closed session accepted more");
      break;
    }
  }
  output.Append(session.TakeOutput());
  while (true) {
    auto f = output.Next();
    Check(f.ok(), "the session wrote malformed SPDY", f.ok() ? "" : f.status().ToString());
    if (!f->has_value()) break;
  }
  return 0;
}

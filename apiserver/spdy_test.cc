#include "apiserver/spdy.h"

#include <gtest/gtest.h>

namespace berth::apiserver::spdy {
namespace {

using Kind = ServerSession::Event::Kind;

// kubectl's first two streams of a connection (error and data stream of request 0, port
// 8080), as spdystream writes them: compressed by an independent zlib encoder (Python's
// zlib, level 9, the SPDY/3 dictionary, one stream for both blocks, sync flush). The
// second block is 10 bytes: it only inflates with the first one's context.
const std::string kSynError(
    "\x80\x03\x00\x01\x00\x00\x00\x3d\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x78\xf9\xe3\xc6\xa7\xc2\x02\x25\x3a\x48"
    "\xf9\x5b\x04\x4e\xea\x16\x06\x16\x06\x40\x9a\xb3\x08\x12\x5f\x99\xa0\x74\xcc\x68\x00\x4e\x89\x25\x45\xa9\x89\xb9"
    "\xd0\xc2\x86\x35\x15\x14\x15\x00\x00\x00\x00\xff\xff",
    69);
const std::string kSynData(
    "\x80\x03\x00\x01\x00\x00\x00\x16\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x22\x53\x33\xa8\xa4\x4a\x04\x00\x00\x00"
    "\xff\xff",
    30);

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

std::vector<Frame> DecodeAll(FrameDecoder& d, const std::string& bytes) {
  d.Append(bytes);
  std::vector<Frame> out;
  while (true) {
    auto f = d.Next();
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (!f.ok() || !f->has_value()) return out;
    out.push_back(std::move(**f));
  }
}

TEST(SpdyFramingTest, DecodesKubectlStreamsCompressedByAnotherEncoder) {
  FrameDecoder d;
  auto frames = DecodeAll(d, kSynError + kSynData);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].type, FrameType::kSynStream);
  EXPECT_EQ(frames[0].stream_id, 1u);
  EXPECT_EQ(frames[0].headers, (Headers{{"port", "8080"}, {"requestid", "0"}, {"streamtype", "error"}}));
  EXPECT_EQ(frames[1].stream_id, 3u);
  EXPECT_EQ(frames[1].headers, (Headers{{"port", "8080"}, {"requestid", "0"}, {"streamtype", "data"}}));
  // Without the first block's context the second does not inflate.
  FrameDecoder fresh;
  fresh.Append(kSynData);
  EXPECT_FALSE(fresh.Next().ok());
}

TEST(SpdyFramingTest, HeaderBlocksUseTheSpdy3Dictionary) {
  FrameEncoder e;
  const std::string block = e.CompressHeaders({{"streamtype", "data"}});
  ASSERT_GE(block.size(), 6u);
  // zlib header (RFC 1950): CM 8, FDICT set, then the dictionary's Adler-32, 0xe3c6a7c2 for
  // SPDY/3's (the value SPDY/3 implementations' test vectors start with: 38 ea e3 c6 a7 c2).
  EXPECT_EQ(static_cast<unsigned char>(block[0]) & 0x0f, 8);
  EXPECT_NE(static_cast<unsigned char>(block[1]) & 0x20, 0);
  EXPECT_EQ(block.substr(2, 4), Bytes({0xe3, 0xc6, 0xa7, 0xc2}));
  // A sync flush ends every block.
  EXPECT_EQ(block.substr(block.size() - 4), Bytes({0x00, 0x00, 0xff, 0xff}));
}

TEST(SpdyFramingTest, FixedLayoutsByteForByte) {
  FrameEncoder e;
  Frame rst{.type = FrameType::kRstStream, .stream_id = 3, .status = kCancel};
  EXPECT_EQ(e.Encode(rst), Bytes({0x80, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 3, 0, 0, 0, 5}));
  Frame ping{.type = FrameType::kPing, .value = 1};
  EXPECT_EQ(e.Encode(ping), Bytes({0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 1}));
  Frame data{.type = FrameType::kData, .flags = kFlagFin, .stream_id = 1, .data = "hi"};
  EXPECT_EQ(e.Encode(data), Bytes({0, 0, 0, 1, 0x01, 0, 0, 2, 'h', 'i'}));
  Frame wu{.type = FrameType::kWindowUpdate, .stream_id = 5, .value = 0x10000};
  EXPECT_EQ(e.Encode(wu), Bytes({0x80, 0x03, 0x00, 0x09, 0, 0, 0, 8, 0, 0, 0, 5, 0, 1, 0, 0}));
  Frame goaway{.type = FrameType::kGoAway, .stream_id = 7, .status = kGoAwayProtocolError};
  EXPECT_EQ(e.Encode(goaway), Bytes({0x80, 0x03, 0x00, 0x07, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 1}));
  Frame settings{.type = FrameType::kSettings, .settings = {{0x01, kSettingsInitialWindowSize, 1024}}};
  EXPECT_EQ(e.Encode(settings),
            Bytes({0x80, 0x03, 0x00, 0x04, 0, 0, 0, 12, 0, 0, 0, 1, 0x01, 0, 0, 7, 0, 0, 0x04, 0}));
}

TEST(SpdyFramingTest, EveryTypeRoundTripsAcrossSplitReads) {
  std::vector<Frame> frames = {
      {.type = FrameType::kSynStream, .flags = kFlagFin, .stream_id = 1, .associated_stream_id = 0, .priority = 3,
       .headers = {{"streamtype", "error"}, {"port", "80"}}},
      {.type = FrameType::kSynReply, .stream_id = 1, .headers = {}},
      {.type = FrameType::kHeaders, .stream_id = 1, .headers = {{"x", std::string("a\0b", 3)}}},
      {.type = FrameType::kRstStream, .stream_id = 9, .status = kRefusedStream},
      {.type = FrameType::kSettings, .settings = {{0, 4, 100}, {1, 7, 70000}}},
      {.type = FrameType::kPing, .value = 0xfffffffe},
      {.type = FrameType::kGoAway, .stream_id = 11, .status = kGoAwayOk},
      {.type = FrameType::kWindowUpdate, .stream_id = 3, .value = 0x7fffffff},
      {.type = FrameType::kData, .stream_id = 3, .data = std::string(70000, 'z')},
      {.type = FrameType::kData, .flags = kFlagFin, .stream_id = 3, .data = ""},
  };
  FrameEncoder e;
  std::string wire;
  for (const Frame& f : frames) wire += e.Encode(f);
  FrameDecoder d;
  std::vector<Frame> got;
  for (char c : wire) {  // one byte at a time
    d.Append(std::string_view(&c, 1));
    auto f = d.Next();
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    if (f->has_value()) got.push_back(std::move(**f));
  }
  EXPECT_EQ(got, frames);
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(SpdyFramingTest, HeaderBlockJoinsRepeatedNamesAndLowercases) {
  EXPECT_EQ(EncodeHeaderBlock({{"A", "1"}, {"a", "2"}}),
            Bytes({0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 3, '1', 0, '2'}));
  EXPECT_FALSE(DecodeHeaderBlock(Bytes({0, 0, 0, 1, 0, 0, 0, 1, 'A', 0, 0, 0, 0})).ok());  // upper case
  EXPECT_FALSE(DecodeHeaderBlock(Bytes({0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 0, 0})).ok());
  EXPECT_FALSE(DecodeHeaderBlock(Bytes({0, 0, 0, 1, 0, 0, 0, 9, 'a'})).ok());  // truncated
  EXPECT_FALSE(DecodeHeaderBlock(Bytes({0xff, 0xff, 0xff, 0xff})).ok());       // pair count
  EXPECT_FALSE(DecodeHeaderBlock(Bytes({0, 0, 0, 0, 1})).ok());                // trailing byte
}

// Each of these ends the connection with an error, never a crash.
TEST(SpdyFramingTest, MalformedFramesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"version 2", Bytes({0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1})},
      {"unknown type 5", Bytes({0x80, 0x03, 0x00, 0x05, 0, 0, 0, 0})},
      {"type 10", Bytes({0x80, 0x03, 0x00, 0x0a, 0, 0, 0, 0})},
      {"payload too large", Bytes({0, 0, 0, 1, 0, 0xff, 0xff, 0xff})},
      {"RST of 4 bytes", Bytes({0x80, 0x03, 0x00, 0x03, 0, 0, 0, 4, 0, 0, 0, 1})},
      {"RST on stream 0", Bytes({0x80, 0x03, 0x00, 0x03, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1})},
      {"PING id 0", Bytes({0x80, 0x03, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 0})},
      {"DATA on stream 0", Bytes({0, 0, 0, 0, 0, 0, 0, 1, 'x'})},
      {"SETTINGS count mismatch", Bytes({0x80, 0x03, 0x00, 0x04, 0, 0, 0, 4, 0, 0, 0, 9})},
      {"SYN_STREAM too short", Bytes({0x80, 0x03, 0x00, 0x01, 0, 0, 0, 4, 0, 0, 0, 1})},
      {"not zlib", Bytes({0x80, 0x03, 0x00, 0x02, 0, 0, 0, 8, 0, 0, 0, 1, 'j', 'u', 'n', 'k'})},
      {"zlib with another dictionary", Bytes({0x80, 0x03, 0x00, 0x02, 0, 0, 0, 14, 0, 0, 0, 1, 0x78, 0xbb, 0, 0, 0, 1,
                                              0x63, 0x60, 0, 0})},
  };
  for (const auto& [name, bytes] : cases) {
    FrameDecoder d;
    d.Append(bytes);
    auto f = d.Next();
    EXPECT_FALSE(f.ok()) << name;
    EXPECT_FALSE(d.Next().ok()) << name << ": the decoder stays failed";
  }
}

TEST(SpdyFramingTest, InflatedHeaderBlockIsBounded) {
  FrameEncoder e;
  Frame big{.type = FrameType::kSynStream, .stream_id = 1,
            .headers = {{"x", std::string(kMaxHeaderBlockBytes + 1, 'a')}}};
  const std::string wire = e.Encode(big);
  EXPECT_LT(wire.size(), 2048u);  // it compresses to little: a bomb's shape
  FrameDecoder d;
  d.Append(wire);
  auto f = d.Next();
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("inflates to more than"), std::string::npos);
}

// A client for the session tests: its own compression context, and a decoder of the server's bytes.
struct Client {
  FrameEncoder enc;
  FrameDecoder dec;
  std::string Syn(uint32_t id, Headers h, uint8_t flags = 0) {
    return enc.Encode({.type = FrameType::kSynStream, .flags = flags, .stream_id = id, .headers = std::move(h)});
  }
  std::string Data(uint32_t id, std::string data, uint8_t flags = 0) {
    return enc.Encode({.type = FrameType::kData, .flags = flags, .stream_id = id, .data = std::move(data)});
  }
  std::vector<Frame> Read(ServerSession& s) { return DecodeAll(dec, s.TakeOutput()); }
};

TEST(SpdySessionTest, OpensRepliesAndCarriesData) {
  ServerSession s;
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(kSynError + kSynData, &ev).ok());
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Kind::kOpened);
  EXPECT_EQ(HeaderValue(ev[0].headers, "streamtype"), "error");
  EXPECT_EQ(ev[1].stream, 3u);
  s.Reply(1, {}, false);
  s.Reply(3, {}, false);
  s.Reply(3, {}, false);  // once only
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type, FrameType::kSynReply);
  EXPECT_EQ(out[0].stream_id, 1u);
  EXPECT_TRUE(out[0].headers.empty());
  ev.clear();
  // The client's streams were made with another encoder: continue on Python's vectors'
  // connection by sending DATA (no header block) from this test's client.
  ASSERT_TRUE(s.Receive(c.Data(3, "GET /", 0) + c.Data(3, "", kFlagFin), &ev).ok());
  EXPECT_EQ(ev, (std::vector<ServerSession::Event>{{Kind::kData, 3, {}, "GET /", 0}, {Kind::kFinished, 3, {}, {}, 0}}));
  EXPECT_EQ(s.SendData(3, "page", true), 4u);
  out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "page");
  EXPECT_EQ(out[0].flags, kFlagFin);
  EXPECT_FALSE(s.IsOpen(3));  // both sides finished
  EXPECT_EQ(s.SendData(3, "more", false), 0u);
}

TEST(SpdySessionTest, PingsOfTheClientAreEchoed) {
  ServerSession s;
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.enc.Encode({.type = FrameType::kPing, .value = 5}) +
                            c.enc.Encode({.type = FrameType::kPing, .value = 6}),
                        &ev)
                  .ok());
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, FrameType::kPing);
  EXPECT_EQ(out[0].value, 5u);
}

TEST(SpdySessionTest, StreamFaultsResetTheStreamOnly) {
  ServerSession s({.max_streams = 2});
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.Data(7, "x"), &ev).ok());  // unknown stream
  // Compressed in order: the blocks share one zlib stream (an expression's operands are not).
  std::string three = c.Syn(1, {{"a", "b"}});
  three += c.Syn(3, {});
  three += c.Syn(5, {});
  ASSERT_TRUE(s.Receive(three, &ev).ok());  // the third is refused
  ASSERT_TRUE(s.Receive(c.Syn(2, {}), &ev).ok());                                          // even id
  ASSERT_TRUE(s.Receive(c.Syn(3, {}), &ev).ok());                                          // id in use
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].status, kInvalidStream);
  EXPECT_EQ(out[0].stream_id, 7u);
  EXPECT_EQ(out[1].status, kRefusedStream);
  EXPECT_EQ(out[1].stream_id, 5u);
  EXPECT_EQ(out[2].status, kProtocolError);
  EXPECT_EQ(out[3].status, kStreamInUse);
  EXPECT_FALSE(s.IsOpen(3));  // the stream reused was reset
  EXPECT_TRUE(s.IsOpen(1));
  // The client's reset ends the stream.
  ev.clear();
  ASSERT_TRUE(s.Receive(c.enc.Encode({.type = FrameType::kRstStream, .stream_id = 1, .status = kCancel}), &ev).ok());
  EXPECT_EQ(ev, (std::vector<ServerSession::Event>{{Kind::kReset, 1, {}, {}, kCancel}}));
  EXPECT_EQ(s.open_streams(), 0u);
}

TEST(SpdySessionTest, MalformedInputSendsGoAwayAndCloses) {
  ServerSession s;
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.Syn(1, {}), &ev).ok());
  EXPECT_FALSE(s.Receive(Bytes({0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1}), &ev).ok());
  EXPECT_TRUE(s.closed());
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, FrameType::kGoAway);
  EXPECT_EQ(out[0].stream_id, 1u);  // the last stream it accepted
  EXPECT_EQ(out[0].status, kGoAwayProtocolError);
  EXPECT_FALSE(s.Receive(c.Syn(3, {}), &ev).ok());
}

TEST(SpdySessionTest, ReceiveWindowIsGivenBackAndEnforcedWhenAsked) {
  ServerSession s({.enforce_flow_control = true});
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.Syn(1, {}) + c.Data(1, std::string(40000, 'a')), &ev).ok());
  EXPECT_EQ(s.receive_window(1), kDefaultInitialWindow - 40000);
  s.Consumed(1, 20000);  // under half the window: no update yet
  EXPECT_TRUE(c.Read(s).empty());
  s.Consumed(1, 20000);
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, FrameType::kWindowUpdate);
  EXPECT_EQ(out[0].value, 40000u);
  EXPECT_EQ(s.receive_window(1), kDefaultInitialWindow);
  ev.clear();
  ASSERT_TRUE(s.Receive(c.Data(1, std::string(kDefaultInitialWindow + 1, 'b')), &ev).ok());
  EXPECT_EQ(ev, (std::vector<ServerSession::Event>{{Kind::kReset, 1, {}, {}, kFlowControlError}}));
  out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, kFlowControlError);
}

TEST(SpdySessionTest, UnenforcedWindowsOnlyCount) {
  ServerSession s;
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.Syn(1, {}) + c.Data(1, std::string(kDefaultInitialWindow + 10, 'a')), &ev).ok());
  EXPECT_EQ(ev.back().kind, Kind::kData);
  EXPECT_EQ(s.receive_window(1), -10);
  EXPECT_EQ(s.SendData(1, std::string(kDefaultInitialWindow + 5, 'b'), false), size_t(kDefaultInitialWindow + 5));
  EXPECT_EQ(s.send_window(1), -5);
}

TEST(SpdySessionTest, SendWindowFollowsSettingsAndWindowUpdates) {
  ServerSession s({.enforce_flow_control = true});
  Client c;
  std::vector<ServerSession::Event> ev;
  ASSERT_TRUE(s.Receive(c.Syn(1, {}), &ev).ok());
  ASSERT_TRUE(
      s.Receive(c.enc.Encode({.type = FrameType::kSettings, .settings = {{0, kSettingsInitialWindowSize, 10}}}), &ev)
          .ok());
  EXPECT_EQ(s.send_window(1), 10);
  EXPECT_EQ(s.SendData(1, "0123456789abc", true), 10u);  // FIN withheld: not all was sent
  auto out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "0123456789");
  EXPECT_EQ(out[0].flags, 0);
  ASSERT_TRUE(s.Receive(c.enc.Encode({.type = FrameType::kWindowUpdate, .stream_id = 1, .value = 3}), &ev).ok());
  EXPECT_EQ(s.SendData(1, "abc", true), 3u);
  out = c.Read(s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, kFlagFin);
  // A delta that overflows the window resets the stream.
  ASSERT_TRUE(s.Receive(c.Syn(3, {}), &ev).ok());
  ev.clear();
  ASSERT_TRUE(s.Receive(c.enc.Encode({.type = FrameType::kWindowUpdate, .stream_id = 3, .value = 0x7fffffff}), &ev).ok());
  EXPECT_EQ(ev, (std::vector<ServerSession::Event>{{Kind::kReset, 3, {}, {}, kFlowControlError}}));
}

}  // namespace
}  // namespace berth::apiserver::spdy

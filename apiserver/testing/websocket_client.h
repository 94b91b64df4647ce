// A blocking WebSocket client for tests: Boost.Beast over plain TCP to
// 127.0.0.1:port, offering `protocols` (Sec-WebSocket-Protocol) for `target`.
// The handshake's failure is kept in `ec` (Beast's synchronous handshake keeps
// no refused answer in `response`: read such answers as HTTP). Messages are
// sent binary. Header-only; include from tests.
#pragma once

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdint>
#include <string>

namespace berth::apiserver::testing {

struct WebSocketClient {
  WebSocketClient(uint16_t port, const std::string& target, const std::string& protocols) : ws(io) {
    boost::asio::ip::tcp::resolver resolver(io);
    boost::asio::connect(ws.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
    ws.set_option(boost::beast::websocket::stream_base::decorator([protocols](auto& req) {
      req.set(boost::beast::http::field::sec_websocket_protocol, protocols);
    }));
    ws.handshake(response, "127.0.0.1", target, ec);
    ws.binary(true);
  }
  // The next message (throws when the connection ends).
  std::string Read() {
    boost::beast::flat_buffer buffer;
    ws.read(buffer);
    return boost::beast::buffers_to_string(buffer.data());
  }
  boost::asio::io_context io;
  boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws;
  boost::beast::websocket::response_type response;
  boost::beast::error_code ec;
};

}  // namespace berth::apiserver::testing

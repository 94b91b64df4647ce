#include "apiserver/remote_command.h"

#include <nlohmann/json.hpp>

#include "apiserver/status_response.h"

namespace berth::apiserver {

std::string NegotiateStreamProtocol(std::string_view offered) {
  bool v4 = false;
  while (!offered.empty()) {
    const size_t comma = offered.find(',');
    std::string_view p = offered.substr(0, comma);
    offered = comma == std::string_view::npos ? std::string_view() : offered.substr(comma + 1);
    while (!p.empty() && (p.front() == ' ' || p.front() == '\t')) p.remove_prefix(1);
    while (!p.empty() && (p.back() == ' ' || p.back() == '\t')) p.remove_suffix(1);
    if (p == kStreamProtocolV5) return kStreamProtocolV5;
    if (p == kStreamProtocolV4) v4 = true;
  }
  return v4 ? kStreamProtocolV4 : "";
}

std::string EncodeFrame(uint8_t stream, std::string_view data) {
  std::string out;
  out.reserve(data.size() + 1);
  out.push_back(static_cast<char>(stream));
  out.append(data);
  return out;
}

StatusOr<Frame> DecodeFrame(std::string_view message) {
  if (message.empty()) return BadRequestError("empty message: a frame starts with its stream id");
  return Frame{static_cast<uint8_t>(message[0]), std::string(message.substr(1))};
}

StatusOr<TerminalSize> DecodeTerminalSize(std::string_view data) {
  nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
  auto dimension = [&j](const char* key) -> int64_t {
    if (!j.is_object() || !j.contains(key)) return 0;
    const nlohmann::json& v = j[key];
    return v.is_number_integer() ? v.get<int64_t>() : -1;
  };
  const int64_t width = dimension("Width"), height = dimension("Height");
  if (!j.is_object() || width < 0 || height < 0 || width > 65535 || height > 65535) {
    return BadRequestError("invalid resize message: " + std::string(data.substr(0, 128)));
  }
  return TerminalSize{static_cast<uint16_t>(width), static_cast<uint16_t>(height)};
}

std::string ExitStatusJson(int exit_code, const std::vector<std::string>& command) {
  nlohmann::json status = {{"metadata", nlohmann::json::object()}};
  if (exit_code == 0) {
    status["status"] = "Success";
    return status.dump();
  }
  std::string argv;
  for (const std::string& a : command) argv += (argv.empty() ? "" : " ") + a;
  status["status"] = "Failure";
  status["message"] = "command terminated with non-zero exit code: error executing command [" + argv + "], exit code " +
                      std::to_string(exit_code);
  status["reason"] = "NonZeroExitCode";
  status["details"] = {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exit_code)}}}}};
  return status.dump();
}

std::string ErrorStatusJson(const Status& error) { return StatusResponse(error).body; }

}  // namespace berth::apiserver

#include "apiserver/remote_command.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace berth::apiserver {
namespace {

TEST(RemoteCommandTest, NegotiatesV5FirstThenV4AndNothingElse) {
  EXPECT_EQ(NegotiateStreamProtocol("v5.channel.k8s.io"), "v5.channel.k8s.io");
  EXPECT_EQ(NegotiateStreamProtocol("v4.channel.k8s.io, v5.channel.k8s.io"), "v5.channel.k8s.io");
  EXPECT_EQ(NegotiateStreamProtocol("channel.k8s.io,v4.channel.k8s.io"), "v4.channel.k8s.io");
  EXPECT_EQ(NegotiateStreamProtocol("base64.channel.k8s.io, v3.channel.k8s.io"), "");
  EXPECT_EQ(NegotiateStreamProtocol(""), "");
  EXPECT_EQ(NegotiateStreamProtocol("v5.channel.k8s.iox"), "");
}

TEST(RemoteCommandTest, FramesCarryTheStreamIdInTheirFirstByte) {
  EXPECT_EQ(EncodeFrame(kStdoutStream, "hi"), std::string("\x01hi", 3));
  EXPECT_EQ(EncodeFrame(kErrorStream, ""), std::string("\x03", 1));
  auto f =
      DecodeFrame(std::string("\x00"
                              "abc",
                              4));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (Frame{kStdinStream, "abc"}));
  // v5's close of stdin: [255, 0].
  auto close = DecodeFrame(std::string("\xff\x00", 2));
  ASSERT_TRUE(close.ok());
  EXPECT_EQ(close->stream, kCloseStream);
  EXPECT_EQ(close->data, std::string(1, '\0'));
  EXPECT_EQ(DecodeFrame("").status().code(), Code::kBadRequest);
  // Binary data passes unchanged.
  const std::string binary("\x00\xff\x01\n", 4);
  EXPECT_EQ(DecodeFrame(EncodeFrame(kStdinStream, binary))->data, binary);
}

TEST(RemoteCommandTest, ResizeIsClientGosTerminalSize) {
  auto size = DecodeTerminalSize(R"({"Width":120,"Height":40})");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, (TerminalSize{120, 40}));
  EXPECT_EQ(DecodeTerminalSize("{}")->width, 0);
  EXPECT_FALSE(DecodeTerminalSize("not json").ok());
  EXPECT_FALSE(DecodeTerminalSize(R"({"Width":-1,"Height":2})").ok());
  EXPECT_FALSE(DecodeTerminalSize(R"({"Width":70000,"Height":2})").ok());
  EXPECT_FALSE(DecodeTerminalSize(R"({"Width":"80","Height":2})").ok());
}

TEST(RemoteCommandTest, ExitStatusIsTheKubeletsStatus) {
  EXPECT_EQ(nlohmann::json::parse(ExitStatusJson(0, {"true"})),
            nlohmann::json::parse(R"({"metadata":{},"status":"Success"})"));
  EXPECT_EQ(nlohmann::json::parse(ExitStatusJson(3, {"sh", "-c", "exit 3"})), nlohmann::json::parse(R"({
    "metadata":{},"status":"Failure",
    "message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3",
    "reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}})"));
}

TEST(RemoteCommandTest, OtherFailuresAreInternalErrors) {
  nlohmann::json j = nlohmann::json::parse(ErrorStatusJson(InternalError("unable to start container process")));
  EXPECT_EQ(j["status"], "Failure");
  EXPECT_EQ(j["reason"], "InternalError");
  EXPECT_EQ(j["code"], 500);
  EXPECT_EQ(j["message"], "unable to start container process");
}

}  // namespace
}  // namespace berth::apiserver

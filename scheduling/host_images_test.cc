#include "scheduling/host_images.h"

#include <gtest/gtest.h>

namespace berth::scheduling {
namespace {

TEST(HostImagesTest, ParsesCommaSeparatedEntriesIgnoringSpacesAndEmptyOnes) {
  EXPECT_EQ(ParseHostImages(" busybox, pytorch/pytorch:* ,,"),
            (std::vector<std::string>{"busybox", "pytorch/pytorch:*"}));
  EXPECT_TRUE(ParseHostImages("").empty());
  EXPECT_TRUE(ParseHostImages(" , ").empty());
}

TEST(HostImagesTest, ExactNamesAndTrailingStarPrefixes) {
  const std::vector<std::string> p = {"busybox", "pytorch/pytorch:*", "registry.example.com/team-a/*"};
  EXPECT_TRUE(HostImageAllowed(p, "busybox"));
  EXPECT_FALSE(HostImageAllowed(p, "busybox:1.36"));  // names compared as written
  EXPECT_FALSE(HostImageAllowed(p, "docker.io/library/busybox"));
  EXPECT_TRUE(HostImageAllowed(p, "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"));
  EXPECT_TRUE(HostImageAllowed(p, "pytorch/pytorch:"));
  EXPECT_FALSE(HostImageAllowed(p, "pytorch/pytorch"));
  EXPECT_TRUE(HostImageAllowed(p, "registry.example.com/team-a/trainer:v1"));
  EXPECT_FALSE(HostImageAllowed(p, "registry.example.com/team-b/trainer:v1"));
  EXPECT_FALSE(HostImageAllowed(p, ""));
  EXPECT_TRUE(HostImageAllowed({"*"}, "anything/at:all"));
  EXPECT_FALSE(HostImageAllowed({}, "busybox"));
}

TEST(HostImagesTest, FirstUnsupportedImageIsNulloptWhenTheNodeDeclaredNothing) {
  EXPECT_EQ(FirstUnsupportedImage(std::nullopt, {"anything"}), std::nullopt);
  const std::optional<std::vector<std::string>> p = std::vector<std::string>{"busybox"};
  EXPECT_EQ(FirstUnsupportedImage(p, {"busybox", "busybox"}), std::nullopt);
  EXPECT_EQ(FirstUnsupportedImage(p, {"busybox", "nginx", "redis"}), "nginx");
  // A declaration that names nothing runs no image.
  EXPECT_EQ(FirstUnsupportedImage(std::vector<std::string>{}, {"busybox"}), "busybox");
  EXPECT_EQ(UnsupportedImageReason("nginx"), "node(s) cannot run image \"nginx\" on the host");
}

TEST(HostImagesTest, FormattingJoinsWithCommasAndParsesBack) {
  const std::vector<std::string> p = {"busybox", "pytorch/*"};
  EXPECT_EQ(FormatHostImages(p), "busybox,pytorch/*");
  EXPECT_EQ(ParseHostImages(FormatHostImages(p)), p);
  EXPECT_EQ(FormatHostImages({}), "");
}

TEST(HostImagesTest, ValidationNamesTheBadEntry) {
  EXPECT_EQ(ValidateHostImages("busybox, pytorch/*"), "");
  EXPECT_EQ(ValidateHostImages("py*torch"), "image \"py*torch\": '*' is only allowed at the end");
  std::string many;
  for (size_t i = 0; i <= kMaxHostImagePatterns; ++i) many += "i" + std::to_string(i) + ",";
  EXPECT_EQ(ValidateHostImages(many), "more than 256 images");
  EXPECT_EQ(ParseHostImages(many).size(), kMaxHostImagePatterns);
  const std::string longname(kMaxHostImagePatternBytes + 1, 'x');
  EXPECT_NE(ValidateHostImages(longname).find("is longer than 512 bytes"), std::string::npos);
  EXPECT_TRUE(ParseHostImages(longname).empty());
}

}  // namespace
}  // namespace berth::scheduling

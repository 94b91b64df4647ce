// status.fairSharing.admissionFairSharingStatus amounts: written precisely enough that a
// restart, which seeds the usage ledger from them, keeps the LocalQueues' order.
#include "controllers/kueue/queue_status.h"

#include <gtest/gtest.h>

namespace berth::controllers::kueue {
namespace {

TEST(ConsumedAmountTest, SubMilliAmountsAreWrittenInNanoUnitsAndReadBack) {
  // An entry penalty of 1 cpu at usageSamplingInterval 5m, usageHalfLifeTime 168h: 0.34m.
  EXPECT_EQ(FormatConsumedAmount("cpu", 0.343631), "343631n");
  EXPECT_DOUBLE_EQ(*ParseConsumedAmount("343631n"), 0.343631);
  EXPECT_DOUBLE_EQ(*ParseConsumedAmount("382u"), 0.382);
  // Whole milli-units keep the resource's usual form.
  EXPECT_EQ(FormatConsumedAmount("cpu", 31999), "31999m");
  EXPECT_EQ(FormatConsumedAmount("cpu", 2000), "2");
  EXPECT_EQ(FormatConsumedAmount("memory", 12.0 * 1024 * 1024 * 1024 * 1000), "12Gi");
  EXPECT_DOUBLE_EQ(*ParseConsumedAmount("31999m"), 31999);
  EXPECT_DOUBLE_EQ(*ParseConsumedAmount("12Gi"), 12.0 * 1024 * 1024 * 1024 * 1000);
  // Large amounts: a milli-unit is below what changes an order.
  EXPECT_EQ(FormatConsumedAmount("memory", 2e12 + 0.5), FormatConsumedAmount("memory", 2e12));
  // Nothing negative, NaN or infinite is written; nothing unreadable is read.
  EXPECT_EQ(FormatConsumedAmount("cpu", -1), "0");
  EXPECT_EQ(FormatConsumedAmount("cpu", std::nan("")), "0");
  EXPECT_EQ(ParseConsumedAmount("-5n"), std::nullopt);
  EXPECT_EQ(ParseConsumedAmount("lots"), std::nullopt);
  EXPECT_EQ(ParseConsumedAmount("-1"), std::nullopt);
}

TEST(ConsumedAmountTest, PersistedStatusSeedsTheSameAmounts) {
  api::Object lq = {{"status",
                     {{"fairSharing",
                       {{"admissionFairSharingStatus",
                         {{"consumedResources", {{"cpu", FormatConsumedAmount("cpu", 0.382)},
                                                 {"memory", FormatConsumedAmount("memory", 1.5e6)}}}}}}}}}};
  const admission::UsageAmounts seeded = PersistedConsumedResources(lq);
  ASSERT_EQ(seeded.size(), 2u);
  EXPECT_DOUBLE_EQ(seeded.at("cpu"), 0.382);
  EXPECT_DOUBLE_EQ(seeded.at("memory"), 1.5e6);
}

}  // namespace
}  // namespace berth::controllers::kueue

#include "core/status.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidError("odd", {{"FieldValueInvalid", "spec.x", "Invalid value: 3: must be even"}});
  return x / 2;
}

Status UseHalf(int x, int* out) {
  BERTH_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::Ok();
}

TEST(StatusTest, OkAndCodes) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(NotFoundError("x").code(), Code::kNotFound);
  EXPECT_EQ(CodeHttpStatus(Code::kInvalid), 422);
  EXPECT_EQ(CodeReason(Code::kGone), "Expired");
  EXPECT_EQ(CodeHttpStatus(Code::kConflict), 409);
  // An error nothing classified (etcd's "request is too large"): 500, no reason.
  EXPECT_EQ(UnknownError("x").code(), Code::kUnknown);
  EXPECT_EQ(CodeHttpStatus(Code::kUnknown), 500);
  EXPECT_EQ(CodeReason(Code::kUnknown), "");
}

TEST(StatusTest, StatusOrCarriesValueOrError) {
  auto good = Half(4);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 2);
  auto bad = Half(3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  ASSERT_EQ(bad.status().causes().size(), 1u);
  EXPECT_EQ(bad.status().causes()[0].field, "spec.x");
  EXPECT_EQ(bad.value_or(-1), -1);
}

TEST(StatusTest, MacrosPropagate) {
  int out = 0;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status s = UseHalf(5, &out);
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_EQ(out, 4);
}

TEST(StatusTest, ContextAndString) {
  Status s = ConflictError("the object has been modified").WithContext("clusterqueues \"cq\"");
  EXPECT_EQ(s.message(), "clusterqueues \"cq\": the object has been modified");
  EXPECT_EQ(s.ToString(), "Conflict: clusterqueues \"cq\": the object has been modified");
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  EXPECT_DEATH({ auto v = Half(3); (void)v.value(); }, "BERTH_CHECK failed");
}

TEST(StatusTest, StatusOrFromOkStatusIsInternalError) {
  StatusOr<int> s{Status::Ok()};
  EXPECT_EQ(s.status().code(), Code::kInternal);
}

}  // namespace
}  // namespace berth

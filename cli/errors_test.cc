#include "cli/errors.h"

#include <gtest/gtest.h>

#include "client/api_status.h"

namespace berth::cli {
namespace {

TEST(ErrorsTest, ServerErrorsCarryTheirReason) {
  Status s = client::StatusFromResponse(
      404, R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404})");
  EXPECT_EQ(ErrorText(s), "Error from server (NotFound): pods \"x\" not found\n");
  EXPECT_EQ(ErrorText(ConflictError("Operation cannot be fulfilled")),
            "Error from server (Conflict): Operation cannot be fulfilled\n");
}

TEST(ErrorsTest, SourceIsAddedToServerMessages) {
  Status s = AddSource(BadRequestError("strict decoding error: unknown field \"spec.bogus\""), "creating", "t.yaml");
  EXPECT_EQ(ErrorText(s),
            "Error from server (BadRequest): error when creating \"t.yaml\": strict decoding error: unknown field "
            "\"spec.bogus\"\n");
  EXPECT_EQ(ErrorText(AddSource(NotFoundError("x"), "deleting", "")), "Error from server (NotFound): x\n");
}

TEST(ErrorsTest, InvalidUsesKindNameAndCauses) {
  Status one = InvalidError("ClusterQueue.kueue.x-k8s.io \"invalid-cq\" is invalid: spec.a: Invalid value: \"-1\": must be greater than or equal to 0",
                            {{"FieldValueInvalid", "spec.a", "Invalid value: \"-1\": must be greater than or equal to 0"}});
  EXPECT_EQ(ErrorText(one),
            "The ClusterQueue \"invalid-cq\" is invalid: spec.a: Invalid value: \"-1\": must be greater than or equal to 0\n");
  Status two = InvalidError("Pod \"inv-a\" is invalid: [a, b]",
                            {{"FieldValueInvalid", "spec.replicas", "Invalid value: -1: must be greater than or equal to 0"},
                             {"FieldValueRequired", "spec.podSets", "Required value"},
                             {"FieldValueRequired", "spec.podSets", "Required value"}});
  EXPECT_EQ(ErrorText(two),
            "The Pod \"inv-a\" is invalid: \n"
            "* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n"
            "* spec.podSets: Required value\n");
  EXPECT_EQ(ErrorText(InvalidError("ClusterQueue.kueue.x-k8s.io \"x\" is invalid")),
            "The ClusterQueue \"x\" is invalid\n");
  // A source does not change how Invalid prints (kubectl reads the details).
  EXPECT_EQ(ErrorText(AddSource(InvalidError("LocalQueue.kueue.x-k8s.io \"q\" is invalid"), "creating", "f.yaml")),
            "The LocalQueue \"q\" is invalid\n");
}

TEST(ErrorsTest, TransportErrors) {
  EXPECT_EQ(ErrorText(UnavailableError(
                "Get \"http://127.0.0.1:1/api\": dial tcp 127.0.0.1:1: connect: Connection refused")),
            "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n");
  EXPECT_EQ(ErrorText(TimeoutError("Get \"http://10.0.0.1:6443/apis\": context deadline exceeded (Client.Timeout exceeded)")),
            "Unable to connect to the server: context deadline exceeded (Client.Timeout exceeded)\n");
  // kubectl's words for a server it does not trust.
  EXPECT_EQ(ErrorText(UnavailableError("Get \"https://127.0.0.1:6443/api\": tls: failed to verify certificate: x509: "
                                       "certificate signed by unknown authority")),
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown "
            "authority\n");
  // Transport errors have no source to add.
  Status t = UnavailableError("Patch \"http://h:1/x\": EOF");
  EXPECT_EQ(AddSource(t, "patching", "f.yaml"), t);
}

TEST(ErrorsTest, ClientSideAndUnauthorized) {
  Status c = ClientError("the server doesn't have a resource type \"foo\"");
  EXPECT_TRUE(IsClientError(c));
  EXPECT_FALSE(IsClientError(BadRequestError("x")));
  EXPECT_EQ(ErrorText(c), "error: the server doesn't have a resource type \"foo\"\n");
  EXPECT_EQ(ErrorText(AddSource(c, "creating", "f.yaml")), "error: the server doesn't have a resource type \"foo\"\n");
  EXPECT_EQ(ErrorText(Status(Code::kUnauthorized, "Unauthorized")),
            "error: You must be logged in to the server (Unauthorized)\n");
}

}  // namespace
}  // namespace berth::cli

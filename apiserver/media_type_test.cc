// Response media type negotiation (negotiation.NegotiateMediaTypeOptions) and the YAML
// and 406 answers, unit and through the API server.
#include "apiserver/media_type.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace berth::apiserver {
namespace {

TEST(MediaTypeTest, NegotiatesTheFirstServedClauseByQuality) {
  using M = ResponseMediaType;
  struct Case {
    const char* accept;
    bool builtin;
    M want;
    Transform transform = Transform::kNone;
    const char* meta_version = "";
  };
  using T = Transform;
  const Case cases[] = {
      {"", true, M::kJson},
      {"application/yaml", true, M::kYaml},
      {"Application/YAML; charset=utf-8", false, M::kYaml},
      {"application/yaml;q=0.5, application/json", true, M::kJson},
      {"application/json;q=0.5, application/yaml", true, M::kYaml},
      {"text/plain, application/*", true, M::kJson},
      {"text/html, */*", false, M::kJson},
      {"application/vnd.kubernetes.protobuf, application/yaml", true, M::kYaml},
      {"application/vnd.kubernetes.protobuf", true, M::kJson},  // berth encodes no protobuf
      {"application/vnd.kubernetes.protobuf", false, M::kNotAcceptable},
      {"text/plain", true, M::kNotAcceptable},
      {"application/json;q=0", true, M::kNotAcceptable},
      // The Table transform is the chosen clause's: what kubectl get sends...
      {"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
       "application/json",
       true, M::kJson, T::kTable, "v1"},
      {"application/json;as=Table;v=v1beta1;g=meta.k8s.io", false, M::kJson, T::kTable, "v1beta1"},
      {"application/yaml; as=Table; g=meta.k8s.io; v=v1", false, M::kYaml, T::kTable, "v1"},
      {"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", true, M::kJson, T::kTable, "v1"},
      // ...not a later clause's, nor one of a lower quality...
      {"application/json, application/json;as=Table;v=v1;g=meta.k8s.io", true, M::kJson},
      {"application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5, application/yaml", true, M::kYaml},
      // What client-go's metadata client sends for a LIST and for a GET or a watch.
      {"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
       "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
       true, M::kJson, T::kPartialObjectMetadataList, "v1"},
      {"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json", false, M::kJson,
       T::kPartialObjectMetadata, "v1beta1"},
      {"application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", false, M::kYaml, T::kPartialObjectMetadata,
       "v1"},
      // ...and a Table of a group or version not served is skipped: 406 when nothing is left.
      {"application/json;as=Table;v=v99;g=meta.k8s.io", true, M::kNotAcceptable},
      {"application/json;as=Table;v=v1;g=example.com", false, M::kNotAcceptable},
      {"application/json;as=Table;v=v1", true, M::kNotAcceptable},
      {"application/json;as=Table;v=v99;g=meta.k8s.io, application/yaml", true, M::kYaml},
      // Any other transform, or one of another group, is skipped too.
      {"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2", true, M::kNotAcceptable},
      {"application/json;as=PartialObjectMetadata;g=example.com;v=v1, application/yaml", true, M::kYaml},
      {"application/json;as=Deployment;g=apps;v=v1", true, M::kNotAcceptable},
      {"application/json;as=Scale;g=meta.k8s.io;v=v1", true, M::kNotAcceptable},
      {"application/json;g=meta.k8s.io;v=v1", true, M::kNotAcceptable},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NegotiateResponseFormat(c.accept, c.builtin), (ResponseFormat{c.want, c.transform, c.meta_version}))
        << c.accept;
  }
}

TEST(MediaTypeTest, NotAcceptableListsTheServedTypes) {
  HttpResponse r = NotAcceptableResponse(true);
  EXPECT_EQ(r.status, 406);
  const nlohmann::json body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body, (nlohmann::json{{"kind", "Status"},
                                  {"apiVersion", "v1"},
                                  {"metadata", nlohmann::json::object()},
                                  {"status", "Failure"},
                                  {"message",
                                   "only the following media types are accepted: application/json, "
                                   "application/yaml, application/vnd.kubernetes.protobuf"},
                                  {"reason", "NotAcceptable"},
                                  {"code", 406}}));
  EXPECT_EQ(nlohmann::json::parse(NotAcceptableResponse(false).body)["message"],
            "only the following media types are accepted: application/json, application/yaml");
}

TEST(MediaTypeTest, JsonBodiesBecomeYamlOtherBodiesStay) {
  HttpResponse r;
  r.body = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}})";
  EncodeResponseAsYaml(&r);
  EXPECT_EQ(r.content_type, "application/yaml");
  EXPECT_EQ(r.body, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
  HttpResponse log;
  log.content_type = "text/plain";
  log.body = "{\"line\":1}\n";
  EncodeResponseAsYaml(&log);
  EXPECT_EQ(log.body, "{\"line\":1}\n");
}

}  // namespace
}  // namespace berth::apiserver

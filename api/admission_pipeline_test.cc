#include "api/admission_pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string>
#include <tuple>
#include <vector>

#include "api/yaml_codec.h"

namespace berth::api {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr const char* kQueues = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: queues.example.com}
spec:
  group: example.com
  names: {plural: queues, kind: Queue}
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              cohort: {type: string}
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            default: {}
            required: [owner]
            properties:
              owner: {type: string}
              cohortName: {type: string}
              strategy: {type: string, enum: [StrictFIFO, BestEffortFIFO], default: BestEffortFIFO}
              weight: {type: integer, minimum: 0}
              labels: {type: object, additionalProperties: {type: string, maxLength: 3}}
          status:
            type: object
            properties:
              pending: {type: integer, minimum: 0}
)";

constexpr const char* kConfigs = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: configs
  annotations: {berth.io/builtin: "true"}
spec:
  group: ""
  names: {plural: configs, kind: Config}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          data: {type: object, additionalProperties: {type: string, maxLength: 3}}
)";

Object Yaml(const std::string& text) {
  StatusOr<Object> o = ParseYaml(text);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : Object();
}

// Kueue-like rules: spec.owner is immutable, a finalizer is added, names are DNS labels.
class QueueStrategy : public Strategy {
 public:
  void Default(Object* obj) const override {
    auto& finalizers = (*obj)["metadata"]["finalizers"];
    if (!finalizers.is_array()) finalizers = Object::array();
    if (std::find(finalizers.begin(), finalizers.end(), "example.com/in-use") == finalizers.end()) {
      finalizers.push_back("example.com/in-use");
    }
  }
  std::vector<std::string> ValidateName(std::string_view name, bool prefix) const override {
    return NameIsDNSLabel(name, prefix);
  }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    if (obj["spec"].value("owner", "") == "nobody") {
      return {Invalid(FieldPath("spec").Child("owner"), "nobody", "must name someone")};
    }
    return {};
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs;
    if (obj["spec"].value("owner", "") != old["spec"].value("owner", "")) {
      errs.push_back(Invalid(FieldPath("spec").Child("owner"), obj["spec"].value("owner", ""), "field is immutable"));
    }
    // A rule that tightened after objects were stored (checked on every update).
    if (obj["spec"].value("cohortName", "") == "legacy") {
      errs.push_back(Invalid(FieldPath("spec").Child("cohortName"), "legacy", "is no longer supported"));
    }
    return errs;
  }
  FieldErrorList ValidateStatusUpdate(const Object& obj, const Object& old) const override {
    ++status_validations;
    return {};
  }
  mutable int status_validations = 0;
};

class AdmissionPipelineTest : public ::testing::Test {
 protected:
  AdmissionPipelineTest() {
    std::vector<EmbeddedFile> files = {{"resources/example.com/queues.yaml", kQueues},
                                       {"resources/core/configs.yaml", kConfigs}};
    StatusOr<Registry> r = Registry::FromFiles(files);
    EXPECT_TRUE(r.ok()) << r.status();
    registry_ = std::make_unique<Registry>(std::move(r).value());
    auto s = std::make_unique<QueueStrategy>();
    strategy_ = s.get();
    strategies_.Register("example.com", "Queue", std::move(s));
  }

  StatusOr<AdmittedWrite> Create(const std::string& yaml, FieldValidation fv = FieldValidation::kStrict) {
    AdmissionPipeline pipeline(*registry_, strategies_);
    WriteRequest req;
    req.object = Yaml(yaml);
    req.field_validation = fv;
    return pipeline.Admit(std::move(req));
  }

  StatusOr<AdmittedWrite> Update(const Object& old, const std::string& yaml, Operation op = Operation::kUpdate) {
    AdmissionPipeline pipeline(*registry_, strategies_);
    WriteRequest req;
    req.operation = op;
    req.object = Yaml(yaml);
    req.old = &old;
    return pipeline.Admit(std::move(req));
  }

  std::unique_ptr<Registry> registry_;
  StrategyRegistry strategies_;
  QueueStrategy* strategy_ = nullptr;
};

TEST_F(AdmissionPipelineTest, CreateDefaultsPreparesAndValidates) {
  StatusOr<AdmittedWrite> w = Create(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: team-a}
status: {pending: 3}
)");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->definition->name, "queues.example.com");
  EXPECT_THAT(w->warnings, IsEmpty());
  // A new uid (FillObjectMetaSystemFields), which the store keeps.
  EXPECT_THAT(w->object["metadata"]["uid"].get<std::string>(),
              ::testing::MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  w->object["metadata"].erase("uid");
  EXPECT_EQ(w->object, Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, generation: 1, finalizers: [example.com/in-use]}
spec: {owner: team-a, strategy: BestEffortFIFO}
)"));  // status dropped: the kind has a status subresource
}

TEST_F(AdmissionPipelineTest, ReportsEveryErrorAsOneInvalidStatus) {
  StatusOr<AdmittedWrite> w = Create(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: Q_1}
spec: {strategy: Foo, weight: -1, labels: {zone: long}}
)");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalid);
  EXPECT_EQ(w.status().message(),
            "Queue.example.com \"Q_1\" is invalid: ["
            "metadata.name: Invalid value: \"Q_1\": a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
            "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), "
            "spec.labels.zone: Too long: may not be more than 3 bytes, "
            "spec.strategy: Unsupported value: \"Foo\": supported values: \"StrictFIFO\", \"BestEffortFIFO\", "
            "spec.weight: Invalid value: -1: spec.weight in body should be greater than or equal to 0, "
            "spec.owner: Required value]");
  std::vector<std::string> fields;
  for (const auto& c : w.status().causes()) fields.push_back(c.type + " " + c.field);
  EXPECT_THAT(fields, ElementsAre("FieldValueInvalid metadata.name", "FieldValueTooLong spec.labels.zone",
                                  "FieldValueNotSupported spec.strategy", "FieldValueInvalid spec.weight",
                                  "FieldValueRequired spec.owner"));
}

TEST_F(AdmissionPipelineTest, StrategyErrorsJoinSchemaErrors) {
  StatusOr<AdmittedWrite> w = Create(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: nobody}
)");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "Queue.example.com \"q1\" is invalid: spec.owner: Invalid value: \"nobody\": must name someone");
}

TEST_F(AdmissionPipelineTest, UnknownFieldsFollowFieldValidation) {
  const std::string body = R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, bogus: 1}
spec: {owner: a, foo: 1}
)";
  StatusOr<AdmittedWrite> strict = Create(body, FieldValidation::kStrict);
  EXPECT_EQ(strict.status(),
            BadRequestError("Queue in version \"v1\" cannot be handled as a Queue: strict decoding error: "
                            "unknown field \"metadata.bogus\", unknown field \"spec.foo\""));

  StatusOr<AdmittedWrite> warn = Create(body, FieldValidation::kWarn);
  ASSERT_TRUE(warn.ok()) << warn.status();
  EXPECT_THAT(warn->warnings, ElementsAre("unknown field \"metadata.bogus\"", "unknown field \"spec.foo\""));
  EXPECT_FALSE(warn->object["spec"].contains("foo"));
  EXPECT_FALSE(warn->object["metadata"].contains("bogus"));

  StatusOr<AdmittedWrite> ignore = Create(body, FieldValidation::kIgnore);
  ASSERT_TRUE(ignore.ok()) << ignore.status();
  EXPECT_THAT(ignore->warnings, IsEmpty());
  EXPECT_FALSE(ignore->object["spec"].contains("foo"));
}

TEST_F(AdmissionPipelineTest, UnknownKindsAndMissingTypeInformation) {
  EXPECT_EQ(Create("{apiVersion: example.com/v1, kind: Foo, metadata: {name: a}}").status(),
            NotFoundError("no matches for kind \"Foo\" in version \"example.com/v1\""));
  EXPECT_EQ(Create("{apiVersion: example.com/v2, kind: Queue, metadata: {name: a}}").status(),
            NotFoundError("no matches for kind \"Queue\" in version \"example.com/v2\""));
  StatusOr<AdmittedWrite> no_kind = Create("{apiVersion: example.com/v1, metadata: {name: a}}");
  EXPECT_EQ(no_kind.status().code(), Code::kBadRequest);
  EXPECT_EQ(no_kind.status().message(),
            "Object 'Kind' is missing in '{\"apiVersion\":\"example.com/v1\",\"metadata\":{\"name\":\"a\"}}'");
}

TEST_F(AdmissionPipelineTest, ConvertsToTheStorageVersionThroughTheHook) {
  std::vector<std::string> targets;
  ConversionFunc convert = [&](const Registry&, const Object& obj, std::string_view target) -> StatusOr<Object> {
    targets.emplace_back(target);
    Object out = obj;
    out["apiVersion"] = std::string(target);
    out["spec"]["cohortName"] = obj["spec"]["cohort"];
    out["spec"].erase("cohort");
    out["spec"]["owner"] = "converted";
    return out;
  };
  AdmissionPipeline pipeline(*registry_, strategies_, convert);
  WriteRequest req;
  req.object = Yaml("{apiVersion: example.com/v1beta1, kind: Queue, metadata: {name: q1}, spec: {cohort: c}}");
  StatusOr<AdmittedWrite> w = pipeline.Admit(std::move(req));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(targets, ElementsAre("example.com/v1"));
  EXPECT_EQ(w->object["apiVersion"], "example.com/v1");
  EXPECT_EQ(w->object["spec"], Yaml("{cohortName: c, owner: converted, strategy: BestEffortFIFO}"));

  // Strategy None: only apiVersion changes, so v1beta1's cohort is pruned by v1's schema.
  StatusOr<Object> none = NoneConversion(*registry_, Yaml("{apiVersion: example.com/v1beta1, kind: Queue}"),
                                         "example.com/v1");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Yaml("{apiVersion: example.com/v1, kind: Queue}"));
}

TEST_F(AdmissionPipelineTest, UpdateKeepsStatusAndSystemFieldsAndBumpsGeneration) {
  const Object old = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, creationTimestamp: "2026-01-01T00:00:00Z", generation: 4,
           resourceVersion: "10", finalizers: [example.com/in-use]}
spec: {owner: a, strategy: StrictFIFO}
status: {pending: 2}
)");
  // Only metadata changes: same generation.
  StatusOr<AdmittedWrite> labels = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, resourceVersion: "10", labels: {x: y}}
spec: {owner: a, strategy: StrictFIFO}
status: {pending: 99}
)");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->object["metadata"], Yaml(R"({name: q1, uid: u-1, creationTimestamp: "2026-01-01T00:00:00Z",
      generation: 4, resourceVersion: "10", labels: {x: y}, finalizers: [example.com/in-use]})"));
  EXPECT_EQ(labels->object["status"], Yaml("{pending: 2}"));  // the status subresource owns status

  StatusOr<AdmittedWrite> spec = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: a}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->object["metadata"]["generation"], 5);  // strategy defaulted back to BestEffortFIFO
  EXPECT_EQ(spec->object["spec"]["strategy"], "BestEffortFIFO");
}

// Generation moves with any change outside metadata and the status subresource's status:
// a top-level field changed, added or removed; not a metadata or status change alone.
TEST_F(AdmissionPipelineTest, GenerationMovesWithEveryChangeOutsideMetadataAndStatus) {
  const Object old = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 4, resourceVersion: "10"}
spec: {owner: a, strategy: StrictFIFO}
status: {pending: 2}
)");
  struct Case {
    const char* what;
    const char* body;
    int64_t generation;
  };
  const Case cases[] = {
      {"same",
       "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1}, spec: {owner: a, strategy: StrictFIFO}}", 4},
      {"status only",
       "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1}, spec: {owner: a, strategy: StrictFIFO}, "
       "status: {pending: 7}}",
       4},
      {"metadata only",
       "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1, annotations: {a: b}}, "
       "spec: {owner: a, strategy: StrictFIFO}}",
       4},
      {"a field changed",
       "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1}, spec: {owner: a, strategy: BestEffortFIFO}}",
       5},
  };
  for (const Case& c : cases) {
    StatusOr<AdmittedWrite> w = Update(old, c.body);
    ASSERT_TRUE(w.ok()) << c.what << ": " << w.status();
    EXPECT_EQ(w->object["metadata"]["generation"], c.generation) << c.what;
  }
}

TEST_F(AdmissionPipelineTest, UpdateValidatesImmutability) {
  const Object old = Yaml("{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1, uid: u-1}, spec: {owner: a}}");
  StatusOr<AdmittedWrite> w = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q2, uid: u-2}
spec: {owner: b}
)");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "Queue.example.com \"q2\" is invalid: [metadata.name: Invalid value: \"q2\": field is immutable, "
            "metadata.uid: Invalid value: \"u-2\": field is immutable, "
            "spec.owner: Invalid value: \"b\": field is immutable]");
}

TEST_F(AdmissionPipelineTest, StatusUpdateChangesOnlyStatus) {
  const Object old = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 2, resourceVersion: "7"}
spec: {owner: a, strategy: StrictFIFO}
status: {pending: 1}
)");
  StatusOr<AdmittedWrite> w = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, resourceVersion: "8", labels: {ignored: "yes"}}
spec: {owner: someone-else}
status: {pending: 5}
)", Operation::kUpdateStatus);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object, Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 2, resourceVersion: "8"}
spec: {owner: a, strategy: StrictFIFO}
status: {pending: 5}
)"));
  EXPECT_EQ(strategy_->status_validations, 1);

  StatusOr<AdmittedWrite> bad = Update(old, "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1}, "
                                            "status: {pending: -1}}", Operation::kUpdateStatus);
  EXPECT_EQ(bad.status().message(), "Queue.example.com \"q1\" is invalid: status.pending: Invalid value: -1: "
                                    "status.pending in body should be greater than or equal to 0");
}

// An object stored before its schema tightened (here spec.weight: "heavy" where the schema
// now wants an integer) still takes status updates and updates that leave that value alone;
// an update that adds a new error is refused, and so is a create with the old one.
TEST_F(AdmissionPipelineTest, SchemaErrorsTheStoredObjectHadAreRatchetedOnUpdate) {
  const Object old = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 1, resourceVersion: "7"}
spec: {owner: a, strategy: StrictFIFO, weight: heavy}
status: {pending: 1}
)");
  StatusOr<AdmittedWrite> status = Update(old,
                                          "{apiVersion: example.com/v1, kind: Queue, metadata: {name: q1}, "
                                          "status: {pending: 3}}",
                                          Operation::kUpdateStatus);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->object["status"]["pending"], 3);
  EXPECT_EQ(status->object["spec"]["weight"], "heavy");

  StatusOr<AdmittedWrite> relabel = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, labels: {x: y}}
spec: {owner: a, strategy: StrictFIFO, weight: heavy}
)");
  EXPECT_TRUE(relabel.ok()) << relabel.status();

  StatusOr<AdmittedWrite> worse = Update(old, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: a, strategy: StrictFIFO, weight: heavy, labels: {k: toolong}}
)");
  ASSERT_FALSE(worse.ok());
  EXPECT_EQ(worse.status().message(),
            "Queue.example.com \"q1\" is invalid: spec.labels.k: Too long: may not be more than 3 bytes");

  StatusOr<AdmittedWrite> create = Create(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q2}
spec: {owner: a, weight: heavy}
)");
  ASSERT_FALSE(create.ok());
  EXPECT_THAT(create.status().message(), ::testing::HasSubstr("spec.weight in body must be of type integer"));
}

// The same for the kind's own rules: a stored object that breaks a rule added later can be
// relabelled, but an update may not introduce the broken value, and the immutability rules
// still hold.
TEST_F(AdmissionPipelineTest, StrategyErrorsTheStoredObjectHadAreRatchetedOnUpdate) {
  const Object legacy = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 1, resourceVersion: "7"}
spec: {owner: a, strategy: StrictFIFO, cohortName: legacy}
)");
  StatusOr<AdmittedWrite> relabel = Update(legacy, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, labels: {x: y}}
spec: {owner: a, strategy: StrictFIFO, cohortName: legacy}
)");
  EXPECT_TRUE(relabel.ok()) << relabel.status();

  StatusOr<AdmittedWrite> owner = Update(legacy, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: b, strategy: StrictFIFO, cohortName: legacy}
)");
  ASSERT_FALSE(owner.ok());
  EXPECT_EQ(owner.status().message(),
            "Queue.example.com \"q1\" is invalid: spec.owner: Invalid value: \"b\": field is immutable");

  const Object current = Yaml(R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1, uid: u-1, generation: 1, resourceVersion: "7"}
spec: {owner: a, strategy: StrictFIFO, cohortName: c}
)");
  StatusOr<AdmittedWrite> introduce = Update(current, R"(
apiVersion: example.com/v1
kind: Queue
metadata: {name: q1}
spec: {owner: a, strategy: StrictFIFO, cohortName: legacy}
)");
  ASSERT_FALSE(introduce.ok());
  EXPECT_EQ(introduce.status().message(),
            "Queue.example.com \"q1\" is invalid: spec.cohortName: Invalid value: \"legacy\": is no longer supported");
}

TEST_F(AdmissionPipelineTest, BuiltinKindsWriteMapKeysInBrackets) {
  StatusOr<AdmittedWrite> w = Create(R"(
apiVersion: v1
kind: Config
metadata: {name: c1, namespace: default}
data: {key: long}
)");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "Config \"c1\" is invalid: data[key]: Too long: may not be more than 3 bytes");

  // Namespaced kinds need a namespace (the API server fills it from the URL first).
  StatusOr<AdmittedWrite> no_ns = Create("{apiVersion: v1, kind: Config, metadata: {name: c1}}");
  EXPECT_EQ(no_ns.status().message(), "Config \"c1\" is invalid: metadata.namespace: Required value");
}

TEST(FieldValidationTest, ParsesTheQueryParameter) {
  EXPECT_EQ(*ParseFieldValidation(""), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Warn"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Strict"), FieldValidation::kStrict);
  EXPECT_EQ(*ParseFieldValidation("Ignore"), FieldValidation::kIgnore);
  EXPECT_EQ(ParseFieldValidation("strict").status(),
            BadRequestError("fieldValidation: Unsupported value: \"strict\": supported values: \"\", "
                            "\"Ignore\", \"Strict\", \"Warn\""));
}

// A top-level field added or removed moves the generation too (a ConfigMap's data).
TEST(AdmissionPipelineGenerationTest, ATopLevelFieldAddedOrRemovedMovesTheGeneration) {
  StrategyRegistry strategies;
  AdmissionPipeline pipeline(Registry::Default(), strategies);
  const Object with = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"c","namespace":"default","uid":"u","generation":3,"resourceVersion":"5"},"data":{"a":"1"}})");
  const Object without = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"c","namespace":"default","uid":"u","generation":3,"resourceVersion":"5"}})");
  for (const auto& [from, to, generation] :
       {std::tuple{&with, &without, 4}, std::tuple{&without, &with, 4}, std::tuple{&with, &with, 3}}) {
    WriteRequest req;
    req.operation = Operation::kUpdate;
    req.object = *to;
    req.old = from;
    auto w = pipeline.Admit(std::move(req));
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->object["metadata"]["generation"], generation) << from->dump() << " -> " << to->dump();
  }
}

// A view (berth.io/stored-as) is converted to, admitted and stored as the kind it is stored
// as: events.k8s.io/v1 Event becomes the core/v1 Event.
TEST(AdmissionPipelineViewTest, AnEventsV1EventIsAdmittedAsTheCoreEvent) {
  StrategyRegistry strategies;
  AdmissionPipeline pipeline(Registry::Default(), strategies);
  WriteRequest req;
  req.object = nlohmann::json::parse(R"({"apiVersion":"events.k8s.io/v1","kind":"Event",
      "metadata":{"name":"e","namespace":"default"},"reason":"Started","note":"Started container c",
      "type":"Normal","reportingController":"kubelet","deprecatedCount":2,
      "regarding":{"apiVersion":"v1","kind":"Pod","name":"p","namespace":"default"}})");
  req.field_validation = FieldValidation::kStrict;
  auto w = pipeline.Admit(std::move(req));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->definition, Registry::Default().Find(GroupResource{"", "events"}));
  EXPECT_EQ(w->object["apiVersion"], "v1");
  EXPECT_EQ(w->object["message"], "Started container c");
  EXPECT_EQ(w->object["involvedObject"]["name"], "p");
  EXPECT_EQ(w->object["reportingComponent"], "kubelet");
  EXPECT_EQ(w->object["count"], 2);
  EXPECT_FALSE(w->object.contains("note"));
}

}  // namespace
}  // namespace berth::api

#include "api/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

#include "api/pod_validation.h"
#include "api/resource_definition.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kClusterQueues = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterqueues.kueue.x-k8s.io
spec:
  group: kueue.x-k8s.io
  names: {plural: clusterqueues, kind: ClusterQueue, shortNames: [cq]}
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: use v1beta2
    schema:
      openAPIV3Schema: {type: object}
  - name: v1beta2
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Cohort, type: string, jsonPath: .spec.cohortName, description: The cohort}
    - {name: Pending Workloads, type: integer, jsonPath: .status.pendingWorkloads}
    - {name: Admitted Workloads, type: integer, priority: 1, jsonPath: .status.admittedWorkloads}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              template: {$ref: "#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec"}
)";

constexpr const char* kPods = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: pods
  annotations: {berth.io/builtin: "true"}
spec:
  group: ""
  names: {plural: pods, singular: pod, kind: Pod, shortNames: [po], categories: [all]}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}},
     schema: {openAPIV3Schema: {type: object}}}
)";

constexpr const char* kJobs = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobs.batch
  annotations: {berth.io/builtin: "true"}
spec:
  group: batch
  names: {plural: jobs, kind: Job}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
)";

// A custom kind whose plural collides with a built-in one (kubectl picks the first group).
constexpr const char* kOtherJobs = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobs.example.com
spec:
  group: example.com
  names: {plural: jobs, kind: Job, shortNames: [cq]}
  scope: Namespaced
  versions:
  - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
)";

constexpr const char* kDefinitions = R"(
io.k8s.api.core.v1.PodTemplateSpec:
  type: object
  properties:
    spec: {type: object}
)";

Object Yaml(const char* text) {
  StatusOr<Object> o = ParseYaml(text);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : Object();
}

Registry MustBuild() {
  std::vector<EmbeddedFile> files = {
      {"resources/kueue.x-k8s.io/clusterqueues.yaml", kClusterQueues},
      {"resources/core/pods.yaml", kPods},
      {"resources/batch/jobs.yaml", kJobs},
      {"resources/example.com/jobs.yaml", kOtherJobs},
      {"resources/definitions/core-v1.yaml", kDefinitions},
  };
  StatusOr<Registry> r = Registry::FromFiles(files);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

TEST(ResourceDefinitionTest, ParsesEveryField) {
  StatusOr<ResourceDefinition> d = ParseResourceDefinition(Yaml(kClusterQueues), "cq.yaml");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->source, "cq.yaml");
  EXPECT_EQ(d->name, "clusterqueues.kueue.x-k8s.io");
  EXPECT_EQ(d->group, "kueue.x-k8s.io");
  EXPECT_EQ(d->names.plural, "clusterqueues");
  EXPECT_EQ(d->names.singular, "clusterqueue");      // defaulted from kind
  EXPECT_EQ(d->names.list_kind, "ClusterQueueList");  // defaulted from kind
  EXPECT_THAT(d->names.short_names, ElementsAre("cq"));
  EXPECT_FALSE(d->namespaced());
  EXPECT_FALSE(d->builtin);
  EXPECT_EQ(d->QualifiedKind(), "ClusterQueue.kueue.x-k8s.io");
  ASSERT_EQ(d->versions.size(), 2u);
  const DefinitionVersion& v1beta1 = d->versions[0];
  EXPECT_TRUE(v1beta1.served);
  EXPECT_FALSE(v1beta1.storage);
  EXPECT_TRUE(v1beta1.deprecated);
  EXPECT_EQ(v1beta1.deprecation_warning, "use v1beta2");
  EXPECT_FALSE(v1beta1.status_subresource);
  EXPECT_EQ(d->StorageVersion().name, "v1beta2");
  EXPECT_EQ(d->PreferredVersion().name, "v1beta2");
  EXPECT_TRUE(d->StorageVersion().status_subresource);
  EXPECT_THAT(d->StorageVersion().printer_columns,
              ElementsAre(PrinterColumn{"Cohort", "string", "", "The cohort", 0, ".spec.cohortName"},
                          PrinterColumn{"Pending Workloads", "integer", "", "", 0, ".status.pendingWorkloads"},
                          PrinterColumn{"Admitted Workloads", "integer", "", "", 1,
                                        ".status.admittedWorkloads"}));
  EXPECT_EQ(d->FindVersion("v2"), nullptr);

  StatusOr<ResourceDefinition> pods = ParseResourceDefinition(Yaml(kPods), "pods.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_TRUE(pods->builtin);
  EXPECT_EQ(pods->group, "");
  EXPECT_EQ(pods->QualifiedKind(), "Pod");
  EXPECT_THAT(pods->names.categories, ElementsAre("all"));
}

TEST(ResourceDefinitionTest, RejectsBrokenDefinitionsNamingTheFile) {
  struct Case {
    std::string edit;  // YAML merged over a valid definition's spec/metadata
    std::string error;
  };
  const std::string base = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, kind: Widget}
  scope: Namespaced
)";
  const std::string one_version =
      "  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n";
  const Case cases[] = {
      {"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}},"
       " {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
       "w.yaml: spec.versions: must have exactly one version marked as storage version, found 2"},
      {"  versions: [{name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}]\n",
       "must have exactly one version marked as storage version, found 0"},
      {"  versions: [{name: v1, served: false, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
       "spec.versions: must have at least one version served"},
      {"  versions: []\n", "spec.versions: must have at least one version"},
      {"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}},"
       " {name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}]\n",
       "spec.versions[1].name: Duplicate value: \"v1\""},
      {"  versions: [{name: v1, served: true, storage: true}]\n",
       "spec.versions[0].schema.openAPIV3Schema: Required value"},
      {"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: string}}}]\n",
       "spec.versions[0].schema.openAPIV3Schema.type: Invalid value: \"string\": must be object at the root"},
      {"  versions: [{name: V1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
       "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label"},
      {"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}},"
       " additionalPrinterColumns: [{name: X, type: map, jsonPath: .a}]}]\n",
       "spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: \"map\": supported values: "
       "\"integer\", \"number\", \"string\", \"boolean\", \"date\""},
      {"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}},"
       " additionalPrinterColumns: [{name: X, type: string, jsonPath: spec.a}]}]\n",
       "jsonPath: Invalid value: \"spec.a\": must be a simple json path starting with ."},
      {"  versions: [{name: v1, served: true, storage: true, deprecationWarning: old,"
       " schema: {openAPIV3Schema: {type: object}}}]\n",
       "deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions"},
  };
  for (const Case& c : cases) {
    StatusOr<ResourceDefinition> d = ParseResourceDefinition(Yaml((base + c.edit).c_str()), "w.yaml");
    ASSERT_FALSE(d.ok()) << c.error;
    EXPECT_EQ(d.status().code(), Code::kInvalid);
    EXPECT_THAT(d.status().message(), HasSubstr(c.error));
    EXPECT_THAT(d.status().message(), ::testing::StartsWith("w.yaml: "));
  }
  // And the base with one version is fine; each of these edits breaks it.
  ASSERT_TRUE(ParseResourceDefinition(Yaml((base + one_version).c_str()), "w.yaml").ok());
  const std::pair<std::string, std::string> meta_cases[] = {
      {"metadata: {name: gadgets.example.com}", "metadata.name: Invalid value: \"gadgets.example.com\": "
                                                "must be spec.names.plural+\".\"+spec.group"},
      {"  scope: Global", "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", "
                          "\"Namespaced\""},
      {"  group: example", "spec.group: Invalid value: \"example\": should be a domain with at least one dot"},
      {"  names: {plural: widgets, kind: widget}", "spec.names.kind: Invalid value: \"widget\": must start with "
                                                   "an upper-case letter"},
      {"  names: {plural: widgets, kind: Widget, shortNames: [w, w]}",
       "spec.names.shortNames[1]: Duplicate value: \"w\""},
  };
  for (const auto& [edit, error] : meta_cases) {
    std::string text = base + one_version;
    std::string key = edit.substr(0, edit.find(':') + 1);
    auto pos = text.find(key);
    ASSERT_NE(pos, std::string::npos) << key;
    text.replace(pos, text.find('\n', pos) - pos, edit);
    StatusOr<ResourceDefinition> d = ParseResourceDefinition(Yaml(text.c_str()), "w.yaml");
    ASSERT_FALSE(d.ok()) << error;
    EXPECT_THAT(d.status().message(), HasSubstr(error));
  }
}

TEST(KubeAwareVersionTest, SortsAsDiscoveryDoes) {
  std::vector<std::string> versions = {"v1alpha1", "foo10", "v1", "v1beta1", "v2", "v12alpha1",
                                       "v1beta2",  "foo1",  "v11alpha2", "v10beta3"};
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return CompareKubeAwareVersions(a, b) < 0;
  });
  EXPECT_THAT(versions, ElementsAre("v2", "v1", "v10beta3", "v1beta2", "v1beta1", "v12alpha1",
                                    "v11alpha2", "v1alpha1", "foo1", "foo10"));
}

TEST(RegistryTest, OrdersCoreThenBuiltinThenCustomGroups) {
  Registry r = MustBuild();
  std::vector<std::string> order;
  for (const ResourceDefinition* d : r.Definitions()) order.push_back(d->Resource().String());
  EXPECT_THAT(order, ElementsAre("pods", "jobs.batch", "jobs.example.com", "clusterqueues.kueue.x-k8s.io"));
  EXPECT_THAT(r.Groups(), ElementsAre("", "batch", "example.com", "kueue.x-k8s.io"));
}

TEST(RegistryTest, Lookups) {
  Registry r = MustBuild();
  const ResourceDefinition* cq = r.Find({"kueue.x-k8s.io", "clusterqueues"});
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->names.kind, "ClusterQueue");
  EXPECT_EQ(r.Find({"kueue.x-k8s.io", "clusterqueue"}), nullptr);
  EXPECT_EQ(r.FindByGroupKind("kueue.x-k8s.io", "ClusterQueue"), cq);
  EXPECT_EQ(r.FindByGroupKind("", "ClusterQueue"), nullptr);
  std::vector<std::string> jobs;
  for (const auto* d : r.FindByKind("job")) jobs.push_back(d->group);
  EXPECT_THAT(jobs, ElementsAre("batch", "example.com"));

  StatusOr<const ResourceDefinition*> k = r.ForKind("kueue.x-k8s.io/v1beta1", "ClusterQueue");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, cq);
  StatusOr<const ResourceDefinition*> unknown = r.ForKind("x/v1", "Foo");
  EXPECT_EQ(unknown.status(), NotFoundError("no matches for kind \"Foo\" in version \"x/v1\""));
  // A version the kind has but does not serve is no match either.
  EXPECT_EQ(r.ForKind("example.com/v1", "Job").status().message(),
            "no matches for kind \"Job\" in version \"example.com/v1\"");

  const Schema* s = r.SchemaFor({"kueue.x-k8s.io", "v1beta2", "ClusterQueue"});
  ASSERT_NE(s, nullptr);
  // The $ref to the shared PodTemplateSpec was resolved: its unknown fields are pruned.
  EXPECT_THAT(s->UnknownFields(Object::parse(R"({"spec": {"template": {"spec": {}, "bogus": 1}}})")),
              ElementsAre("spec.template.bogus"));
  EXPECT_EQ(r.SchemaFor({"kueue.x-k8s.io", "v9", "ClusterQueue"}), nullptr);
  EXPECT_EQ(r.schema_definitions().count("io.k8s.api.core.v1.PodTemplateSpec"), 1u);
}

TEST(RegistryTest, ResolvesNamesAsKubectlDoes) {
  Registry r = MustBuild();
  struct Case {
    std::string typed;
    std::string resource;  // group/resource String(), "" when not found
    std::string version;
  };
  const Case cases[] = {
      {"clusterqueue", "clusterqueues.kueue.x-k8s.io", "v1beta2"},
      {"clusterqueues", "clusterqueues.kueue.x-k8s.io", "v1beta2"},
      {"ClusterQueue", "clusterqueues.kueue.x-k8s.io", "v1beta2"},
      {"clusterqueues.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "v1beta2"},
      {"clusterqueues.v1beta1.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "v1beta1"},
      {"cq.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "v1beta2"},
      {"po", "pods", "v1"},
      {"pod", "pods", "v1"},
      {"pods", "pods", "v1"},
      {"jobs", "jobs.batch", "v1"},  // the built-in group comes first
      {"jobs.example.com", "jobs.example.com", "v1alpha1"},
      {"jobs.v1alpha1.example.com", "jobs.example.com", "v1alpha1"},
      {"jobs.v1.example.com", "", ""},  // not served
      {"clusterqueues.kueue", "", ""},  // groups are not prefix-matched
      {"nope", "", ""},
  };
  for (const Case& c : cases) {
    StatusOr<ResourceMatch> m = r.Resolve(c.typed);
    if (c.resource.empty()) {
      EXPECT_EQ(m.status(), NotFoundError("the server doesn't have a resource type \"" + c.typed + "\""))
          << c.typed;
      continue;
    }
    ASSERT_TRUE(m.ok()) << c.typed << ": " << m.status();
    EXPECT_EQ(m->definition->Resource().String(), c.resource) << c.typed;
    EXPECT_EQ(m->version, c.version) << c.typed;
  }
}

TEST(RegistryTest, ShortNamesFollowDiscoveryOrder) {
  // Both example.com's Job and kueue's ClusterQueue claim "cq". Custom groups are listed by
  // name, "example.com" before "kueue.x-k8s.io", so kubectl would pick example.com's; with the
  // group given ("cq.kueue.x-k8s.io", in the table above) kueue's is found.
  Registry r = MustBuild();
  StatusOr<ResourceMatch> m = r.Resolve("cq");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->definition->Resource().String(), "jobs.example.com");
}

TEST(RegistryTest, BuildRejectsDuplicatesAndBrokenSchemas) {
  {
    std::vector<EmbeddedFile> files = {{"a/pods.yaml", kPods}, {"b/pods.yaml", kPods}};
    StatusOr<Registry> r = Registry::FromFiles(files);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "b/pods.yaml: resource \"pods\" is already defined by a/pods.yaml");
  }
  {
    std::vector<EmbeddedFile> files = {{"resources/kueue.x-k8s.io/clusterqueues.yaml", kClusterQueues}};
    StatusOr<Registry> r = Registry::FromFiles(files);  // no definitions: the $ref dangles
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(),
                HasSubstr("resources/kueue.x-k8s.io/clusterqueues.yaml: spec.versions[1].schema."
                          "openAPIV3Schema.properties.spec.properties.template: $ref "
                          "\"#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec\" not found"));
  }
  {
    std::vector<EmbeddedFile> files = {{"resources/definitions/a.yaml", kDefinitions},
                                       {"resources/definitions/b.yaml", kDefinitions}};
    StatusOr<Registry> r = Registry::FromFiles(files);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(),
                HasSubstr("resources/definitions/b.yaml: definition \"io.k8s.api.core.v1.PodTemplateSpec\" "
                          "is already defined by resources/definitions/a.yaml"));
  }
  {
    std::vector<EmbeddedFile> files = {{"resources/core/bad.yaml", "a: [1"}};
    StatusOr<Registry> r = Registry::FromFiles(files);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("resources/core/bad.yaml"));
  }
}

TEST(RegistryTest, AViewIsStoredAsTheDefinitionItNames) {
  const Registry& r = Registry::Default();
  const ResourceDefinition* view = r.Find(GroupResource{"events.k8s.io", "events"});
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->StorageResource(), (GroupResource{"", "events"}));
  EXPECT_EQ(&r.StorageDefinition(*view), r.Find(GroupResource{"", "events"}));
  const ResourceDefinition* core = r.Find(GroupResource{"", "events"});
  EXPECT_EQ(&r.StorageDefinition(*core), core);
  // kubectl's "ev" is the core group's (listed first), as against a cluster.
  auto ev = r.Resolve("ev");
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->definition, core);
  auto qualified = r.Resolve("events.v1.events.k8s.io");
  ASSERT_TRUE(qualified.ok());
  EXPECT_EQ(qualified->definition, view);
}

TEST(RegistryTest, BuildRejectsAViewOfNothing) {
  std::string view = kPods;
  view.replace(view.find("name: pods"), 10, "name: pods.example.com");
  view.replace(view.find("group: \"\""), 9, "group: example.com");
  view.replace(view.find("annotations: {berth.io/builtin: \"true\"}"),
               std::string_view("annotations: {berth.io/builtin: \"true\"}").size(),
               "annotations: {berth.io/builtin: \"true\", berth.io/stored-as: widgets}");
  std::vector<EmbeddedFile> files = {{"resources/definitions/core-v1.yaml", kDefinitions},
                                     {"resources/example.com/pods.yaml", view}};
  StatusOr<Registry> r = Registry::FromFiles(files);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("resources/example.com/pods.yaml: berth.io/stored-as \"widgets\""));
  files.push_back({"resources/core/pods.yaml", kPods});
  view.replace(view.find("stored-as: widgets"), 18, "stored-as: pods");
  files[1].contents = view;
  EXPECT_TRUE(Registry::FromFiles(files).ok());
}

// The paths under `node` whose object keeps unknown fields (x-kubernetes-preserve-unknown-
// fields), following $refs into `defs` (each definition once per path, as refs may recur).
void CollectUntyped(const nlohmann::json& node, const std::string& path, const SchemaDefinitions& defs,
                    std::set<std::string> seen, std::set<std::string>* out) {
  if (!node.is_object()) return;
  if (auto ref = node.find("$ref"); ref != node.end()) {
    const std::string name = ref->get<std::string>().substr(ref->get<std::string>().rfind('/') + 1);
    auto def = defs.find(name);
    ASSERT_NE(def, defs.end()) << name;
    if (!seen.insert(name).second) return;
    CollectUntyped(def->second, path, defs, seen, out);
    return;
  }
  if (node.value("x-kubernetes-preserve-unknown-fields", false)) out->insert(path);
  if (auto props = node.find("properties"); props != node.end()) {
    for (const auto& [key, child] : props->items()) CollectUntyped(child, path + "." + key, defs, seen, out);
  }
  if (auto items = node.find("items"); items != node.end()) CollectUntyped(*items, path + "[]", defs, seen, out);
  if (auto extra = node.find("additionalProperties"); extra != node.end()) {
    CollectUntyped(*extra, path + "{}", defs, seen, out);
  }
  for (const char* key : {"allOf", "anyOf", "oneOf"}) {
    if (auto list = node.find(key); list != node.end() && list->is_array()) {
      for (const auto& child : *list) CollectUntyped(child, path, defs, seen, out);
    }
  }
}

// Every field a user writes in a spec is typed, so a value of the wrong type or an unknown
// key is refused as kube-apiserver's decoder refuses it (Go clients could not decode the
// object otherwise, and the node agent would skip a probe it cannot read). The objects
// kept as written are only those berth never reads, each listed here with its reason.
TEST(RegistryTest, EverySpecFieldIsTypedExceptWhatBerthNeverReads) {
  // Volume sources the node agent does not mount (a pod naming one never starts).
  const std::set<std::string> mounted = {"emptyDir", "hostPath", "secret", "configMap", "downwardAPI", "projected"};
  std::set<std::string> unmounted;
  for (const char* source : kVolumeSourceFields) {
    if (mounted.count(source) == 0) unmounted.insert(source);
  }
  const std::vector<std::string> allowed_suffixes = {
      ".metadata.managedFields[]",           // written by the server's field manager
      ".spec.ephemeralContainers[]",         // refused on create and in templates
      ".spec.resourceClaims[]",              // dynamic resource allocation: not implemented
      ".volumeClaimPolicies[].templates[]",  // JobSet PVC templates: not implemented
      ".elasticPolicy.metrics[]",            // HPA metric specs: not implemented
  };
  const std::set<std::string> allowed_exact = {
      "nodes .spec.configSource",             // deprecated dynamic kubelet config
      "services .spec.sessionAffinityConfig"  // services are not load-balanced
  };
  const Registry& r = Registry::Default();
  size_t walked = 0;
  for (const ResourceDefinition* d : r.Definitions()) {
    for (const DefinitionVersion& v : d->versions) {
      const nlohmann::json* spec = &v.schema;
      for (const char* key : {"properties", "spec"})
        spec = spec->is_object() && spec->contains(key) ? &(*spec)[key] : nullptr;
      if (spec == nullptr) continue;
      ++walked;
      std::set<std::string> untyped;
      CollectUntyped(*spec, ".spec", r.schema_definitions(), {}, &untyped);
      for (const std::string& path : untyped) {
        bool ok = allowed_exact.count(d->names.plural + " " + path) != 0;
        for (const std::string& suffix : allowed_suffixes) ok = ok || path.ends_with(suffix);
        const size_t volume = path.rfind(".volumes[].");
        ok = ok || (volume != std::string::npos && unmounted.count(path.substr(volume + 11)) != 0);
        EXPECT_TRUE(ok) << d->names.plural << " " << v.name << ": " << path << " keeps unknown fields";
      }
    }
  }
  EXPECT_GT(walked, 20u);
}

TEST(RegistryTest, DefaultRegistryLoadsTheEmbeddedResources) {
  const Registry& r = Registry::Default();
  EXPECT_FALSE(EmbeddedResourceFiles().empty());
  for (const EmbeddedFile& f : EmbeddedResourceFiles()) {
    EXPECT_EQ(f.path.rfind("resources/", 0), 0u) << f.path;
    EXPECT_EQ(f.path.find("resources/testdata/"), std::string_view::npos) << f.path;
  }
  // Every definition file became one kind, with its schemas compiled.
  size_t crds = 0;
  for (const EmbeddedFile& f : EmbeddedResourceFiles()) {
    if (f.path.find("/definitions/") == std::string_view::npos) ++crds;
  }
  EXPECT_EQ(r.Definitions().size(), crds);
  for (const ResourceDefinition* d : r.Definitions()) {
    for (const DefinitionVersion& v : d->versions) {
      EXPECT_FALSE(v.compiled.empty()) << d->name << " " << v.name;
    }
  }
  EXPECT_EQ(&Registry::Default(), &r);
}

}  // namespace
}  // namespace berth::api

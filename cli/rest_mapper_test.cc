#include "cli/rest_mapper.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using nlohmann::json;

// A trimmed copy of what /api and /apis answer (apidiscovery.k8s.io/v2).
const json kCore = json::parse(R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
  {"metadata":{"name":""},"versions":[{"version":"v1","resources":[
    {"resource":"events","responseKind":{"group":"","version":"v1","kind":"Event"},"scope":"Namespaced","singularResource":"event","shortNames":["ev"]},
    {"resource":"namespaces","responseKind":{"group":"","version":"v1","kind":"Namespace"},"scope":"Cluster","singularResource":"namespace","shortNames":["ns"]},
    {"resource":"pods","responseKind":{"group":"","version":"v1","kind":"Pod"},"scope":"Namespaced","singularResource":"pod","shortNames":["po"],
     "subresources":[{"subresource":"log"},{"subresource":"status"}]}]}]}]})");
const json kGroups = json::parse(R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
  {"metadata":{"name":"events.k8s.io"},"versions":[{"version":"v1","resources":[
    {"resource":"events","responseKind":{"group":"events.k8s.io","version":"v1","kind":"Event"},"scope":"Namespaced","singularResource":"event","shortNames":["ev"]}]}]},
  {"metadata":{"name":"kueue.x-k8s.io"},"versions":[
    {"version":"v1beta2","resources":[
      {"resource":"clusterqueues","responseKind":{"group":"kueue.x-k8s.io","version":"v1beta2","kind":"ClusterQueue"},"scope":"Cluster","singularResource":"clusterqueue","shortNames":["cq"]},
      {"resource":"localqueues","responseKind":{"group":"kueue.x-k8s.io","version":"v1beta2","kind":"LocalQueue"},"scope":"Namespaced","singularResource":"localqueue","shortNames":["queue","queues","lq"]}]},
    {"version":"v1beta1","resources":[
      {"resource":"clusterqueues","responseKind":{"group":"kueue.x-k8s.io","version":"v1beta1","kind":"ClusterQueue"},"scope":"Cluster","singularResource":"clusterqueue","shortNames":["cq"]}]}]},
  {"metadata":{"name":"trainer.kubeflow.org"},"versions":[{"version":"v1alpha1","resources":[
    {"resource":"trainjobs","responseKind":{"group":"trainer.kubeflow.org","version":"v1alpha1","kind":"TrainJob"},"scope":"Namespaced"}]}]}]})");

RestMapper Mapper() { return *RestMapper::FromAggregated(kCore, kGroups); }

std::string Resolve(std::string_view name) {
  auto r = Mapper().ResourceFor(name);
  if (!r.ok()) return r.status().message();
  return r->resource + "." + r->version + "." + r->group + (r->namespaced ? " namespaced" : " cluster");
}

TEST(RestMapperTest, ResolvesTypedNamesAsKubectl) {
  EXPECT_EQ(Resolve("cq"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("clusterqueue"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("ClusterQueue"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("clusterqueues"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("CQ"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("clusterqueues.kueue.x-k8s.io"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("clusterqueue.kueue.x-k8s.io"), "clusterqueues.v1beta2.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("clusterqueues.v1beta1.kueue.x-k8s.io"), "clusterqueues.v1beta1.kueue.x-k8s.io cluster");
  EXPECT_EQ(Resolve("queues"), "localqueues.v1beta2.kueue.x-k8s.io namespaced");
  EXPECT_EQ(Resolve("po"), "pods.v1. namespaced");
  EXPECT_EQ(Resolve("trainjob"), "trainjobs.v1alpha1.trainer.kubeflow.org namespaced");
}

TEST(RestMapperTest, CoreGroupWinsOverLaterGroups) {
  EXPECT_EQ(Resolve("events"), "events.v1. namespaced");
  EXPECT_EQ(Resolve("ev"), "events.v1. namespaced");
  EXPECT_EQ(Resolve("events.events.k8s.io"), "events.v1.events.k8s.io namespaced");
}

TEST(RestMapperTest, UnknownNames) {
  EXPECT_EQ(Resolve("foo"), "the server doesn't have a resource type \"foo\"");
  EXPECT_EQ(Resolve("clusterqueues.v9.kueue.x-k8s.io"),
            "the server doesn't have a resource type \"clusterqueues.v9.kueue.x-k8s.io\"");
  EXPECT_EQ(Resolve("pods.kueue.x-k8s.io"), "the server doesn't have a resource type \"pods.kueue.x-k8s.io\"");
  EXPECT_EQ(Mapper().ResourceFor("foo").status().code(), Code::kNotFound);
}

TEST(RestMapperTest, KindForManifests) {
  auto cq = Mapper().KindFor("kueue.x-k8s.io/v1beta1", "ClusterQueue");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ(cq->version, "v1beta1");
  EXPECT_EQ(cq->KindGroup(), "clusterqueue.kueue.x-k8s.io");
  EXPECT_EQ(cq->GroupResource(), "clusterqueues.kueue.x-k8s.io");
  auto ns = Mapper().KindFor("v1", "Namespace");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->KindGroup(), "namespace");
  EXPECT_FALSE(ns->namespaced);
  auto missing = Mapper().KindFor("kueue.x-k8s.io/v1", "ClusterQueue");
  EXPECT_EQ(missing.status().message(), "no matches for kind \"ClusterQueue\" in version \"kueue.x-k8s.io/v1\"");
}

TEST(RestMapperTest, AggregatedKeepsSubresourcesAndDefaultsSingular) {
  RestMapper m = Mapper();
  auto pods = m.ResourceFor("pods");
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(pods->subresources, (std::vector<std::string>{"log", "status"}));
  auto tj = m.ResourceFor("trainjobs");
  ASSERT_TRUE(tj.ok());
  EXPECT_EQ(tj->singular, "trainjob");  // no singularResource: the lower-case kind
}

TEST(RestMapperTest, LegacyResourceLists) {
  std::vector<json> lists{
      json::parse(R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
        {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","shortNames":["po"]},
        {"name":"pods/log","singularName":"","namespaced":true,"kind":"Pod"}]})"),
      json::parse(R"({"kind":"APIResourceList","groupVersion":"kueue.x-k8s.io/v1beta2","resources":[
        {"name":"clusterqueues","singularName":"clusterqueue","namespaced":false,"kind":"ClusterQueue","shortNames":["cq"]},
        {"name":"clusterqueues/status","singularName":"","namespaced":false,"kind":"ClusterQueue"}]})")};
  auto m = RestMapper::FromResourceLists(lists);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->resources().size(), 2u);
  auto cq = m->ResourceFor("cq");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ(cq->group, "kueue.x-k8s.io");
  EXPECT_EQ(cq->subresources, std::vector<std::string>{"status"});
  EXPECT_EQ(m->ResourceFor("po")->subresources, std::vector<std::string>{"log"});
}

}  // namespace
}  // namespace berth::cli

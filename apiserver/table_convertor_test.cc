#include "apiserver/table_convertor.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(HumanDurationTest, MatchesApimachinery) {
  // Cases from k8s.io/apimachinery/pkg/util/duration TestHumanDuration.
  const std::pair<Duration, const char*> cases[] = {
      {seconds(-2), "<invalid>"},
      {seconds(-1), "0s"},
      {seconds(0), "0s"},
      {seconds(1), "1s"},
      {seconds(33), "33s"},
      {seconds(119), "119s"},
      {seconds(120), "2m"},
      {seconds(123), "2m3s"},
      {minutes(5), "5m"},
      {minutes(9) + seconds(59), "9m59s"},
      {minutes(10), "10m"},
      {minutes(60), "60m"},
      {minutes(179), "179m"},
      {hours(3), "3h"},
      {hours(3) + minutes(5), "3h5m"},
      {hours(7) + minutes(59), "7h59m"},
      {hours(8), "8h"},
      {hours(47) + minutes(59), "47h"},
      {hours(48), "2d"},
      {hours(51), "2d3h"},
      {hours(24 * 8), "8d"},
      {hours(24 * 729), "729d"},
      {hours(24 * 730), "2y"},
      {hours(24 * 740), "2y10d"},
      {hours(24 * 365 * 8), "8y"},
      {hours(24 * 365 * 9 + 24 * 5), "9y"},
  };
  for (const auto& [d, want] : cases) {
    EXPECT_EQ(HumanDuration(d), want) << std::chrono::duration_cast<seconds>(d).count() << "s";
  }
}

TEST(HumanDurationTest, AgeOfTimestamps) {
  FakeClock clock;  // 2026-01-01T00:00:00Z
  Time now = clock.Now() + minutes(5) + seconds(10);
  EXPECT_EQ(AgeOf("2026-01-01T00:00:00Z", now), "5m10s");
  EXPECT_EQ(AgeOf(nullptr, now), "<unknown>");
  EXPECT_EQ(AgeOf("yesterday", now), "<unknown>");
}

TEST(JsonPathTest, Subset) {
  json obj = json::parse(R"({
    "spec": {"queueName": "lq", "list": [1, 2, 3]},
    "status": {"conditions": [
      {"type": "QuotaReserved", "status": "True"},
      {"type": "Admitted", "status": "False"}]}})");
  EXPECT_EQ(EvalJsonPath(obj, ".spec.queueName"), std::vector<json>{"lq"});
  EXPECT_EQ(EvalJsonPath(obj, "{.spec.queueName}"), std::vector<json>{"lq"});
  EXPECT_EQ(EvalJsonPath(obj, ".status.conditions[?(@.type=='Admitted')].status"), std::vector<json>{"False"});
  EXPECT_EQ(EvalJsonPath(obj, R"(.status.conditions[?(@.type=="QuotaReserved")].status)"), std::vector<json>{"True"});
  EXPECT_EQ(EvalJsonPath(obj, ".status.conditions[-1:].type"), std::vector<json>{"Admitted"});
  EXPECT_EQ(EvalJsonPath(obj, ".status.conditions[0].type"), std::vector<json>{"QuotaReserved"});
  EXPECT_EQ(EvalJsonPath(obj, ".status.conditions[*].type"), (std::vector<json>{"QuotaReserved", "Admitted"}));
  EXPECT_EQ(EvalJsonPath(obj, ".spec.list[0:2]"), (std::vector<json>{1, 2}));
  EXPECT_TRUE(EvalJsonPath(obj, ".spec.missing").empty());
  EXPECT_TRUE(EvalJsonPath(obj, ".status.conditions[?(@.type=='Finished')].status").empty());
  EXPECT_TRUE(EvalJsonPath(obj, ".spec.list[7]").empty());
}

json ClusterQueue(const char* name, json spec, json status) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}, {"creationTimestamp", "2026-01-01T00:00:00Z"}, {"resourceVersion", "7"}}},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

TEST(TableConvertorTest, PrinterColumns) {
  std::vector<PrinterColumn> cols = {
      {"Cohort", "string", "", "", 0, ".spec.cohortName"},
      {"Strategy", "string", "", "", 1, ".spec.queueingStrategy"},
      {"Pending Workloads", "integer", "", "", 0, ".status.pendingWorkloads"},
      {"Admitted Workloads", "integer", "", "", 1, ".status.admittedWorkloads"},
  };
  TableConvertor tc = TableConvertor::FromColumns(cols);
  const json& defs = tc.ColumnDefinitions();
  ASSERT_EQ(defs.size(), 5u);
  EXPECT_EQ(defs[0]["name"], "Name");
  EXPECT_EQ(defs[0]["format"], "name");
  EXPECT_EQ(defs[2]["name"], "Strategy");
  EXPECT_EQ(defs[2]["priority"], 1);
  FakeClock clock;
  json cq = ClusterQueue("cq", {{"queueingStrategy", "BestEffortFIFO"}}, {{"pendingWorkloads", 3}});
  json row = tc.Row(cq, clock.Now(), IncludeObject::kMetadata);
  // No cohort -> null cell (printed empty); absent admittedWorkloads -> null.
  EXPECT_EQ(row["cells"], json::parse(R"(["cq", null, "BestEffortFIFO", 3, null])"));
  EXPECT_EQ(row["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(row["object"]["metadata"]["name"], "cq");

  json table = tc.Table({&cq}, clock.Now(), IncludeObject::kNone, "42", "");
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(table["metadata"], json::parse(R"({"resourceVersion":"42"})"));
  EXPECT_FALSE(table["rows"][0].contains("object"));
}

TEST(TableConvertorTest, NoColumnsMeansNameAndAge) {
  TableConvertor tc = TableConvertor::FromColumns({});
  ASSERT_EQ(tc.ColumnDefinitions().size(), 2u);
  EXPECT_EQ(tc.ColumnDefinitions()[1]["name"], "Age");
  FakeClock clock;
  json rf = {{"metadata", {{"name", "default-flavor"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}}};
  json row = tc.Row(rf, clock.Now() + hours(3) + minutes(5), IncludeObject::kNone);
  EXPECT_EQ(row["cells"], json::parse(R"(["default-flavor", "3h5m"])"));
}

TEST(TableConvertorTest, StringColumnRendersValuesAsText) {
  TableConvertor tc = TableConvertor::FromColumns(
      {{"Suspended", "string", "", "", 0, ".spec.suspend"}, {"Obj", "string", "", "", 0, ".spec.sel"}});
  json js = {{"metadata", {{"name", "js"}}}, {"spec", {{"suspend", true}, {"sel", {{"a", "b"}}}}}};
  EXPECT_EQ(tc.Row(js, Time{}, IncludeObject::kNone)["cells"], json::parse(R"(["js", "true", "{\"a\":\"b\"}"])"));
}

json Pod(json spec, json status) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p1"}, {"namespace", "default"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

TEST(TableConvertorTest, PodColumns) {
  auto tc = TableConvertor::Builtin("", "Pod");
  ASSERT_TRUE(tc.has_value());
  EXPECT_EQ(tc->ColumnDefinitions().size(), 9u);
  FakeClock clock;
  Time now = clock.Now() + minutes(2);
  json pending = Pod(json::parse(R"({"containers":[{"name":"c"}]})"), json::parse(R"({"phase":"Pending"})"));
  EXPECT_EQ(tc->Row(pending, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["p1","0/1","Pending","0","2m","<none>","<none>","<none>","<none>"])"));

  json running = Pod(json::parse(R"({"containers":[{"name":"c"},{"name":"d"}],"nodeName":"node-1"})"),
                     json::parse(R"({"phase":"Running","podIP":"10.0.0.5","containerStatuses":[
                       {"name":"c","ready":true,"restartCount":0,"state":{"running":{}}},
                       {"name":"d","ready":false,"restartCount":2,
                        "state":{"waiting":{"reason":"CrashLoopBackOff"}},
                        "lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-01-01T00:01:30Z"}}}]})"));
  EXPECT_EQ(
      tc->Row(running, now, IncludeObject::kNone)["cells"],
      json::parse(R"j(["p1","1/2","CrashLoopBackOff","2 (30s ago)","2m","10.0.0.5","node-1","<none>","<none>"])j"));

  json gated = Pod(json::parse(R"({"containers":[{"name":"c"}]})"), json::parse(R"({"phase":"Pending","conditions":[
                     {"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]})"));
  EXPECT_EQ(tc->Row(gated, now, IncludeObject::kNone)["cells"][2], "SchedulingGated");

  json terminating = running;
  terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:02:00Z";
  EXPECT_EQ(tc->Row(terminating, now, IncludeObject::kNone)["cells"][2], "Terminating");

  json completed =
      Pod(json::parse(R"({"containers":[{"name":"c"}]})"), json::parse(R"({"phase":"Succeeded","containerStatuses":[
                         {"name":"c","ready":false,"restartCount":0,
                          "state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})"));
  EXPECT_EQ(tc->Row(completed, now, IncludeObject::kNone)["cells"][2], "Completed");

  json init = Pod(json::parse(R"({"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]})"),
                  json::parse(R"({"phase":"Pending","initContainerStatuses":[
                    {"name":"i","state":{"running":{}}}]})"));
  EXPECT_EQ(tc->Row(init, now, IncludeObject::kNone)["cells"][2], "Init:0/1");
}

TEST(TableConvertorTest, NodeAndNamespaceAndEvent) {
  FakeClock clock;
  Time now = clock.Now() + hours(50);
  auto node = TableConvertor::Builtin("", "Node");
  ASSERT_TRUE(node.has_value());
  json n = json::parse(R"({"metadata":{"name":"node-1","creationTimestamp":"2026-01-01T00:00:00Z",
      "labels":{"node-role.kubernetes.io/worker":"","node-role.kubernetes.io/gpu":""}},
    "spec":{"unschedulable":true},
    "status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.0"},
      "addresses":[{"type":"InternalIP","address":"10.0.0.1"}]}})");
  EXPECT_EQ(
      node->Row(n, now, IncludeObject::kNone)["cells"],
      json::parse(
          R"(["node-1","Ready,SchedulingDisabled","gpu,worker","2d2h","v1.32.0","10.0.0.1","<none>","<unknown>","<unknown>","<unknown>"])"));

  auto ns = TableConvertor::Builtin("", "Namespace");
  ASSERT_TRUE(ns.has_value());
  json nso = json::parse(R"({"metadata":{"name":"team-a","creationTimestamp":"2026-01-01T00:00:00Z"},
                               "status":{"phase":"Active"}})");
  EXPECT_EQ(ns->Row(nso, now, IncludeObject::kNone)["cells"], json::parse(R"(["team-a","Active","2d2h"])"));

  auto ev = TableConvertor::Builtin("", "Event");
  ASSERT_TRUE(ev.has_value());
  json e = json::parse(R"({"metadata":{"name":"p1.17f","namespace":"default"},
    "involvedObject":{"kind":"Pod","name":"p1"},"reason":"FailedScheduling","type":"Warning",
    "message":"  0/1 nodes are available: 1 Insufficient cpu.  ",
    "source":{"component":"default-scheduler"},"firstTimestamp":"2026-01-01T00:00:00Z",
    "lastTimestamp":"2026-01-03T01:00:00Z","count":3})");
  EXPECT_EQ(ev->Row(e, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["60m","Warning","FailedScheduling","pod/p1","","default-scheduler",
                            "0/1 nodes are available: 1 Insufficient cpu.","2d2h",3,"p1.17f"])"));
  EXPECT_FALSE(TableConvertor::Builtin("kueue.x-k8s.io", "Pod").has_value());
}

// printers.go: PriorityClass (globalDefault false when absent) and ConfigMap
// (number of data + binaryData keys).
TEST(TableConvertorTest, PriorityClassAndConfigMap) {
  FakeClock clock;
  Time now = clock.Now() + hours(50);
  auto pc = TableConvertor::Builtin("scheduling.k8s.io", "PriorityClass");
  ASSERT_TRUE(pc.has_value());
  EXPECT_EQ(pc->ColumnDefinitions().size(), 5u);
  EXPECT_EQ(pc->ColumnDefinitions()[2]["name"], "Global-Default");
  json p = json::parse(R"({"metadata":{"name":"zero","creationTimestamp":"2026-01-01T00:00:00Z"},
                            "value":0,"preemptionPolicy":"Never"})");
  EXPECT_EQ(pc->Row(p, now, IncludeObject::kNone)["cells"], json::parse(R"(["zero",0,false,"2d2h","Never"])"));

  auto cm = TableConvertor::Builtin("", "ConfigMap");
  ASSERT_TRUE(cm.has_value());
  json c = json::parse(R"({"metadata":{"name":"cfg","creationTimestamp":"2026-01-01T00:00:00Z"},
                            "data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}})");
  EXPECT_EQ(cm->Row(c, now, IncludeObject::kNone)["cells"], json::parse(R"(["cfg",3,"2d2h"])"));
}

json Job(json spec, json status) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}, {"namespace", "team-a"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
              {"spec", std::move(spec)},
              {"status", std::move(status)}};
  job["spec"]["template"] = json::parse(R"({"spec":{"containers":[
      {"name":"main","image":"busybox"},{"name":"sidecar","image":"registry.local/log:1"}]}})");
  return job;
}

// printJob (Kubernetes 1.32): Name, Status, Completions, Duration, Age,
// Containers, Images, Selector.
TEST(TableConvertorTest, JobColumns) {
  auto tc = TableConvertor::Builtin("batch", "Job");
  ASSERT_TRUE(tc.has_value());
  const json& defs = tc->ColumnDefinitions();
  std::vector<std::string> names;
  std::vector<int> priorities;
  for (const auto& d : defs) {
    names.push_back(d["name"]);
    priorities.push_back(d["priority"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Status", "Completions", "Duration", "Age", "Containers", "Images",
                                             "Selector"}));
  EXPECT_EQ(priorities, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(defs[0]["format"], "name");
  EXPECT_FALSE(TableConvertor::Builtin("", "Job").has_value());

  FakeClock clock;  // 2026-01-01T00:00:00Z
  Time now = clock.Now() + minutes(10);
  // Admitted by Kueue and running: the Suspended condition turned False stays
  // in the list (last), so the status must not be read from the last condition.
  json running = Job(json::parse(R"({"parallelism":2,"completions":2,"suspend":false,
      "selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u-1"}}})"),
                     json::parse(R"({"active":2,"startTime":"2026-01-01T00:07:30Z","conditions":[
      {"type":"Suspended","status":"False","reason":"JobResumed"}]})"));
  EXPECT_EQ(tc->Row(running, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["train","Running","0/2","2m30s","10m","main,sidecar",
                            "busybox,registry.local/log:1","batch.kubernetes.io/controller-uid=u-1"])"));

  json complete =
      Job(json::parse(R"({"completions":1})"), json::parse(R"({"succeeded":1,"startTime":"2026-01-01T00:01:00Z",
      "completionTime":"2026-01-01T00:01:42Z","conditions":[
      {"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]})"));
  EXPECT_EQ(tc->Row(complete, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["train","Complete","1/1","42s","10m","main,sidecar",
                            "busybox,registry.local/log:1","<none>"])"));

  // Queued: suspended, never started -> empty duration; no completions and
  // parallelism 3 -> "0/1 of 3".
  json suspended = Job(json::parse(R"({"parallelism":3,"suspend":true})"),
                       json::parse(R"({"conditions":[{"type":"Suspended","status":"True"}]})"));
  json cells = tc->Row(suspended, now, IncludeObject::kNone)["cells"];
  EXPECT_EQ(cells[1], "Suspended");
  EXPECT_EQ(cells[2], "0/1 of 3");
  EXPECT_EQ(cells[3], "");

  // Neither completions nor parallelism > 1: "<succeeded>/1".
  json single = Job(json::parse(R"({"parallelism":1})"), json::object());
  cells = tc->Row(single, now, IncludeObject::kNone)["cells"];
  EXPECT_EQ(cells[1], "Running");
  EXPECT_EQ(cells[2], "0/1");

  json failed = Job(json::parse(R"({"completions":4})"),
                    json::parse(R"({"succeeded":1,"failed":7,"startTime":"2026-01-01T00:00:00Z",
      "conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]})"));
  cells = tc->Row(failed, now, IncludeObject::kNone)["cells"];
  EXPECT_EQ(cells[1], "Failed");
  EXPECT_EQ(cells[2], "1/4");
  EXPECT_EQ(cells[3], "10m");  // no completionTime: now - startTime

  json failure_target = failed;
  failure_target["status"]["conditions"] = json::parse(R"([{"type":"FailureTarget","status":"True"}])");
  EXPECT_EQ(tc->Row(failure_target, now, IncludeObject::kNone)["cells"][1], "FailureTarget");

  // 1.32 has no SuccessCriteriaMet status: such a Job prints Running.
  json criteria = failed;
  criteria["status"]["conditions"] = json::parse(R"([{"type":"SuccessCriteriaMet","status":"True"}])");
  EXPECT_EQ(tc->Row(criteria, now, IncludeObject::kNone)["cells"][1], "Running");

  // Deleted: Terminating, unless already Complete or Failed; it wins over Suspended.
  json deleting = suspended;
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:09:00Z";
  EXPECT_EQ(tc->Row(deleting, now, IncludeObject::kNone)["cells"][1], "Terminating");
  json deleted_complete = complete;
  deleted_complete["metadata"]["deletionTimestamp"] = "2026-01-01T00:09:00Z";
  EXPECT_EQ(tc->Row(deleted_complete, now, IncludeObject::kNone)["cells"][1], "Complete");

  // The first condition of a type decides (hasJobCondition).
  json flapping = single;
  flapping["status"]["conditions"] = json::parse(R"([{"type":"Complete","status":"False"},
                                                     {"type":"Complete","status":"True"}])");
  EXPECT_EQ(tc->Row(flapping, now, IncludeObject::kNone)["cells"][1], "Running");

  // Selector: matchExpressions in metav1.FormatLabelSelector's form, sorted by key.
  json selected = single;
  selected["spec"]["selector"] = json::parse(R"({"matchLabels":{"job":"x"},"matchExpressions":[
      {"key":"tier","operator":"In","values":["b","a"]},{"key":"canary","operator":"DoesNotExist"}]})");
  EXPECT_EQ(tc->Row(selected, now, IncludeObject::kNone)["cells"][7], "!canary,job=x,tier in (a,b)");
  selected["spec"]["selector"] = json::parse(R"({"matchExpressions":[{"key":"a","operator":"Near"}]})");
  EXPECT_EQ(tc->Row(selected, now, IncludeObject::kNone)["cells"][7], "<error>");
}

json Service(json spec, json status = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", "svc"}, {"namespace", "team-a"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

// printService: Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector.
TEST(TableConvertorTest, ServiceColumns) {
  auto tc = TableConvertor::Builtin("", "Service");
  ASSERT_TRUE(tc.has_value());
  ASSERT_EQ(tc->ColumnDefinitions().size(), 7u);
  EXPECT_EQ(tc->ColumnDefinitions()[4]["name"], "Port(s)");
  EXPECT_EQ(tc->ColumnDefinitions()[6]["priority"], 1);
  FakeClock clock;
  Time now = clock.Now() + seconds(45);

  // JobSet's headless Service: clusterIP "None", no ports.
  json headless = Service(json::parse(R"({"type":"ClusterIP","clusterIP":"None",
      "selector":{"jobset.sigs.k8s.io/jobset-name":"js"}})"));
  EXPECT_EQ(tc->Row(headless, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["svc","ClusterIP","None","<none>","<none>","45s","jobset.sigs.k8s.io/jobset-name=js"])"));

  json node_port = Service(json::parse(R"({"type":"NodePort","clusterIP":"10.96.0.9",
      "clusterIPs":["10.96.0.10"],"externalIPs":["1.2.3.4","5.6.7.8"],
      "ports":[{"port":80,"protocol":"TCP","nodePort":30080},{"port":53,"protocol":"UDP"}],
      "selector":{"b":"2","a":"1"}})"));
  EXPECT_EQ(tc->Row(node_port, now, IncludeObject::kNone)["cells"],
            json::parse(R"(["svc","NodePort","10.96.0.10","1.2.3.4,5.6.7.8","80:30080/TCP,53/UDP","45s","a=1,b=2"])"));

  json lb = Service(json::parse(R"({"type":"LoadBalancer","ports":[{"port":443,"protocol":"TCP"}]})"));
  EXPECT_EQ(tc->Row(lb, now, IncludeObject::kNone)["cells"][3], "<pending>");
  lb["status"] =
      json::parse(R"({"loadBalancer":{"ingress":[{"ip":"9.9.9.9"},{"hostname":"lb.example"},{"ip":"9.9.9.9"}]}})");
  EXPECT_EQ(tc->Row(lb, now, IncludeObject::kNone)["cells"][3], "9.9.9.9,lb.example");
  lb["spec"]["externalIPs"] = json::parse(R"(["1.1.1.1"])");
  EXPECT_EQ(tc->Row(lb, now, IncludeObject::kNone)["cells"][3], "9.9.9.9,lb.example,1.1.1.1");
  EXPECT_EQ(tc->Row(lb, now, IncludeObject::kNone)["cells"][2], "<none>");

  json external = Service(json::parse(R"({"type":"ExternalName","externalName":"db.example.com"})"));
  EXPECT_EQ(tc->Row(external, now, IncludeObject::kNone)["cells"][3], "db.example.com");
}

// A built-in kind's resource file lists the complete column set, Name
// included: no second Name column.
TEST(TableConvertorTest, CompleteColumnListsKeepTheirName) {
  FakeClock clock;
  std::vector<PrinterColumn> cols = {{"Name", "string", "", "", 0, ".metadata.name"},
                                     {"Holder", "string", "", "", 0, ".spec.holderIdentity"}};
  TableConvertor tc = TableConvertor::FromColumns(cols, /*name_included=*/true);
  ASSERT_EQ(tc.ColumnDefinitions().size(), 2u);
  EXPECT_EQ(tc.ColumnDefinitions()[0]["format"], "name");
  json lease = json::parse(R"({"metadata":{"name":"node-1"},"spec":{"holderIdentity":"node-1"}})");
  EXPECT_EQ(tc.Row(lease, clock.Now(), IncludeObject::kNone)["cells"], json::parse(R"(["node-1","node-1"])"));
  EXPECT_EQ(TableConvertor::FromColumns(cols).ColumnDefinitions().size(), 3u);
}

}  // namespace
}  // namespace berth::apiserver

namespace berth::apiserver {
namespace {

// kubectl get rolebindings [-o wide], as printRoleBinding: <kind>/<name>, and the
// subjects by kind in the wide columns.
TEST(TableConvertorTest, RoleBindingColumns) {
  for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
    auto tc = TableConvertor::Builtin("rbac.authorization.k8s.io", kind);
    ASSERT_TRUE(tc.has_value()) << kind;
    json columns = tc->ColumnDefinitions();
    ASSERT_EQ(columns.size(), 6u);
    EXPECT_EQ(columns[1]["name"], "Role");
    EXPECT_EQ(columns[3]["name"], "Users");
    EXPECT_EQ(columns[3]["priority"], 1);
    FakeClock clock;
    json binding = json::parse(R"({"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "team-a-edit",
      "namespace": "team-a", "creationTimestamp": ")" +
                               FormatRfc3339(clock.Now()) + R"("},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
      "subjects": [{"kind": "Group", "name": "team-a"}, {"kind": "User", "name": "alice"},
                   {"kind": "User", "name": "bob"}, {"kind": "ServiceAccount", "name": "ci", "namespace": "team-a"}]})");
    EXPECT_EQ(tc->Row(binding, clock.Now() + std::chrono::seconds(17), IncludeObject::kNone)["cells"],
              json::parse(R"(["team-a-edit", "ClusterRole/edit", "17s", "alice, bob", "team-a", "team-a/ci"])"));
  }
}

}  // namespace
}  // namespace berth::apiserver

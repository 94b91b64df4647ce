// /healthz, /livez and /readyz with their checks; storage faults through the
// API (503 and a failing readyz while the disk is full, both recovering by
// themselves); Events removed by the server after their TTL.
#include <chrono>
#include <filesystem>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <thread>

#include "apiserver/testing/test_api_server.h"
#include "store/sqlite_store.h"
#include "store/testing/fault_vfs.h"

namespace berth::apiserver {
namespace {

using store::testing::FaultVfs;
using ::testing::HasSubstr;
using testing::Respond;
using testing::TestApiServer;

std::string Header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(HealthTest, ChecksListedWithVerboseAndServedOneByOne) {
  TestApiServer api;
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    HttpResponse r = Respond(api.server, "GET", path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
    EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
    EXPECT_EQ(Header(r, "X-Content-Type-Options"), "nosniff");
  }
  EXPECT_EQ(Respond(api.server, "GET", "/readyz?verbose").body, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n");
  EXPECT_EQ(Respond(api.server, "GET", "/livez?verbose").body, "[+]ping ok\nlivez check passed\n");
  EXPECT_EQ(Respond(api.server, "GET", "/readyz?verbose&exclude=etcd").body,
            "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n");
  EXPECT_EQ(Respond(api.server, "GET", "/readyz/etcd").body, "ok");
  EXPECT_EQ(Respond(api.server, "GET", "/readyz/nothing").status, 404);
}

class StorageFaultApiTest : public ::testing::Test {
 protected:
  StorageFaultApiTest()
      : store_(Open()),
        pipeline_(api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert),
        server_(api::Registry::Default(), pipeline_, *store_, clock_, testing::WithoutGarbageCollector()) {}
  ~StorageFaultApiTest() override {
    FaultVfs::Get().SetFull(false);
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<store::SqliteStore> Open() {
    FaultVfs::Get();
    store::SqliteOptions o;
    o.vfs = FaultVfs::kName;
    std::filesystem::create_directories(dir_);
    auto s = store::SqliteStore::Open(dir_ + "/berth.db", clock_, o);
    BERTH_CHECK_OK(s.status());
    return std::move(s).value();
  }
  HttpResponse CreateConfigMap(const std::string& name) {
    return Respond(server_, "POST", "/api/v1/namespaces/default/configmaps",
                   R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("},"data":{"k":")" +
                       std::string(20000, 'v') + R"("}})");
  }

  FakeClock clock_;
  std::string dir_ =
      (std::filesystem::temp_directory_path() / ("berth-health-" + std::to_string(::getpid()) + "-" +
                                                 ::testing::UnitTest::GetInstance()->current_test_info()->name()))
          .string();
  std::unique_ptr<store::SqliteStore> store_;
  api::AdmissionPipeline pipeline_;
  ApiServer server_;
};

TEST_F(StorageFaultApiTest, DiskFullWritesAre503AndReadyzFailsUntilSpaceReturns) {
  ASSERT_TRUE(server_.EnsureSystemNamespaces().ok());
  ASSERT_EQ(CreateConfigMap("before").status, 201);
  const int64_t revision = store_->CurrentRevision();

  FaultVfs::Get().SetFull(true);
  HttpResponse refused = CreateConfigMap("during");
  EXPECT_EQ(refused.status, 503);
  const nlohmann::json status = nlohmann::json::parse(refused.body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "ServiceUnavailable");
  EXPECT_EQ(status["code"], 503);
  EXPECT_THAT(status["message"].get<std::string>(), HasSubstr("database or disk is full"));
  EXPECT_EQ(Respond(server_, "GET", "/api/v1/namespaces/default/configmaps/during").status, 404);
  EXPECT_EQ(store_->CurrentRevision(), revision);
  EXPECT_EQ(Respond(server_, "GET", "/api/v1/namespaces/default/configmaps/before").status, 200);  // reads work

  HttpResponse ready = Respond(server_, "GET", "/readyz");
  EXPECT_EQ(ready.status, 500);
  EXPECT_EQ(ready.body, "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n");
  HttpResponse etcd = Respond(server_, "GET", "/readyz/etcd");
  EXPECT_EQ(etcd.status, 500);
  EXPECT_THAT(etcd.body, HasSubstr("internal server error: storage commit failed: "));
  EXPECT_THAT(etcd.body, HasSubstr("database or disk is full"));
  EXPECT_EQ(Respond(server_, "GET", "/livez").status, 200);

  FaultVfs::Get().SetFull(false);
  ready = Respond(server_, "GET", "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok");
  EXPECT_EQ(CreateConfigMap("after").status, 201);
  EXPECT_EQ(store_->CurrentRevision(), revision + 1);
}

TEST(EventTtlApiTest, TheServerRemovesEventsAfterTheirTtl) {
  store::StoreOptions store_options;
  store_options.ttl[store::kEventsResource] = std::chrono::hours(1);
  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.http.address = "127.0.0.1";
  TestApiServer api(options, store_options);
  ASSERT_TRUE(api.server.Start().ok());
  const std::string event =
      R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"Test","message":"m"})";
  ASSERT_EQ(Respond(api.server, "POST", "/api/v1/namespaces/default/events", event).status, 201);
  auto watcher = api.store.Watch(store::kEventsResource, {});
  ASSERT_TRUE(watcher.ok());
  api.clock.Advance(std::chrono::hours(1));
  // The server's sweep runs every store::kExpirySweepInterval (real time).
  auto ev = (*watcher)->Next(std::chrono::seconds(30));
  ASSERT_TRUE(ev.ok() && ev->has_value());
  EXPECT_EQ((*ev)->type, store::EventType::kDeleted);
  EXPECT_EQ(api::Name(*(*ev)->object), "e1");
  EXPECT_EQ(Respond(api.server, "GET", "/api/v1/namespaces/default/events/e1").status, 404);
  api.server.Stop();
}

}  // namespace
}  // namespace berth::apiserver

#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <string>
#include <utility>
#include <vector>

namespace berth::store {
namespace {

constexpr int64_t kSchemaVersion = 1;

Status SqlError(sqlite3* db, const std::string& what) {
  return UnavailableError("sqlite: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// The store's persistence in one SQLite file. Commit is called by one thread
// at a time (CachedStore's commit leader), so the connection runs without
// SQLite's own mutex.
class SqlitePersistence final : public Persistence {
 public:
  ~SqlitePersistence() override {
    for (sqlite3_stmt* s : {begin_, commit_, rollback_, put_, remove_, set_revision_, probe_}) {
      sqlite3_finalize(s);
    }
    sqlite3_close(db_);
  }

  // Opens path and reads its contents into *state.
  static StatusOr<std::unique_ptr<SqlitePersistence>> Open(const std::string& path, const SqliteOptions& options,
                                                           RecoveredState* state) {
    std::unique_ptr<SqlitePersistence> p(new SqlitePersistence);
    int rc = sqlite3_open_v2(path.c_str(), &p->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             options.vfs.empty() ? nullptr : options.vfs.c_str());
    if (rc != SQLITE_OK) return SqlError(p->db_, "opening " + path);
    // Exclusive locking before the first WAL access: no shared-memory file,
    // and a second process opening the same file fails instead of sharing it.
    const std::string pragmas =
        std::string("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=") +
        (options.sync == SqliteOptions::Sync::kFull ? "FULL;" : "NORMAL;");
    BERTH_RETURN_IF_ERROR(p->Exec(pragmas, "setting pragmas on " + path));
    BERTH_RETURN_IF_ERROR(p->Exec("BEGIN IMMEDIATE", "locking " + path));
    Status loaded = p->CreateAndLoad(state);
    if (!loaded.ok()) {
      (void)p->Exec("ROLLBACK", "rollback");
      return loaded;
    }
    BERTH_RETURN_IF_ERROR(p->Exec("COMMIT", "committing the schema"));
    BERTH_RETURN_IF_ERROR(p->Prepare());
    return p;
  }

  Status Commit(const std::vector<Mutation>& batch) override {
    if (batch.empty()) return Status::Ok();
    bool commit_failed = false;
    Status s = InTransaction([&] { return WriteBatch(batch); }, &commit_failed);
    // A failed COMMIT may have left the whole transaction in the WAL with its
    // commit frame (an fsync error after the frames were written): a crash
    // now would recover it although it was refused. The probe's transaction
    // is written where it starts, which ends the refused one's checksum chain
    // (the probe itself changes no object). Only a crash between the COMMIT
    // and this write can still recover the refused transaction.
    if (commit_failed) (void)Probe();
    return s;
  }

  // Rewrites the meta row "probe" with a new value: the commit appends a WAL
  // frame and fsyncs, as an object write would.
  Status Probe() override {
    bool commit_failed = false;
    return InTransaction(
        [&] {
          sqlite3_bind_int64(probe_, 1, ++probes_);
          if (Step(probe_) != SQLITE_DONE) return SqlError(db_, "writing the probe");
          return Status::Ok();
        },
        &commit_failed);
  }

 private:
  SqlitePersistence() = default;

  // BEGIN, write(), COMMIT (*commit_failed: the COMMIT step failed). When the
  // transaction is still open on the way out (an error, a failed COMMIT, an
  // exception from write) it is rolled back, so the file keeps its last
  // committed state and the next BEGIN starts afresh.
  template <typename Write>
  Status InTransaction(const Write& write, bool* commit_failed) {
    if (Step(begin_) != SQLITE_DONE) return SqlError(db_, "BEGIN");
    struct RollbackIfOpen {
      SqlitePersistence* p;
      ~RollbackIfOpen() {
        if (!sqlite3_get_autocommit(p->db_)) Step(p->rollback_);
      }
    } guard{this};
    BERTH_RETURN_IF_ERROR(write());
    if (Step(commit_) != SQLITE_DONE) {
      *commit_failed = true;
      return SqlError(db_, "COMMIT");
    }
    return Status::Ok();
  }

  Status Exec(const std::string& sql, const std::string& what) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return UnavailableError("sqlite: " + what + ": " + msg);
  }

  Status PrepareOne(const char* sql, sqlite3_stmt** stmt) {
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
      return SqlError(db_, std::string("preparing ") + sql);
    }
    return Status::Ok();
  }

  Status Prepare() {
    BERTH_RETURN_IF_ERROR(PrepareOne("BEGIN IMMEDIATE", &begin_));
    BERTH_RETURN_IF_ERROR(PrepareOne("COMMIT", &commit_));
    BERTH_RETURN_IF_ERROR(PrepareOne("ROLLBACK", &rollback_));
    BERTH_RETURN_IF_ERROR(PrepareOne("INSERT OR REPLACE INTO objects(key, revision, value) VALUES(?1, ?2, ?3)", &put_));
    BERTH_RETURN_IF_ERROR(PrepareOne("DELETE FROM objects WHERE key = ?1", &remove_));
    BERTH_RETURN_IF_ERROR(PrepareOne("UPDATE meta SET value = ?1 WHERE name = 'revision'", &set_revision_));
    BERTH_RETURN_IF_ERROR(PrepareOne("INSERT OR REPLACE INTO meta(name, value) VALUES('probe', ?1)", &probe_));
    return Status::Ok();
  }

  // Steps once and resets; returns the step's result code.
  static int Step(sqlite3_stmt* stmt) {
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return rc;
  }

  Status WriteBatch(const std::vector<Mutation>& batch) {
    std::string key, value;
    for (const Mutation& m : batch) {
      key = SqliteStore::EncodeKey(*m.key);
      if (m.object != nullptr) {
        value = m.object->dump();
        sqlite3_bind_text(put_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
        sqlite3_bind_int64(put_, 2, m.revision);
        sqlite3_bind_text(put_, 3, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
        if (Step(put_) != SQLITE_DONE) return SqlError(db_, "writing " + key);
      } else {
        sqlite3_bind_text(remove_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
        if (Step(remove_) != SQLITE_DONE) return SqlError(db_, "deleting " + key);
      }
    }
    sqlite3_bind_int64(set_revision_, 1, batch.back().revision);
    if (Step(set_revision_) != SQLITE_DONE) return SqlError(db_, "writing the revision");
    return Status::Ok();
  }

  // Inside a transaction: creates the schema when missing, then reads it.
  Status CreateAndLoad(RecoveredState* state) {
    BERTH_RETURN_IF_ERROR(
        Exec("CREATE TABLE IF NOT EXISTS objects(key TEXT PRIMARY KEY, revision INTEGER NOT NULL, "
             "value TEXT NOT NULL) WITHOUT ROWID;"
             "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
             "INSERT OR IGNORE INTO meta(name, value) VALUES('revision', 0), ('schema_version', " +
                 std::to_string(kSchemaVersion) + ");",
             "creating the schema"));
    int64_t schema = -1, revision = -1;
    sqlite3_stmt* stmt = nullptr;
    BERTH_RETURN_IF_ERROR(PrepareOne("SELECT name, value FROM meta", &stmt));
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      if (name == "schema_version") schema = sqlite3_column_int64(stmt, 1);
      if (name == "revision") revision = sqlite3_column_int64(stmt, 1);
    }
    sqlite3_finalize(stmt);
    if (schema != kSchemaVersion || revision < 0) {
      return InternalError("sqlite: unsupported store schema_version " + std::to_string(schema));
    }
    state->revision = revision;
    state->objects.clear();
    BERTH_RETURN_IF_ERROR(PrepareOne("SELECT key, revision, value FROM objects", &stmt));
    Status status;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string key_text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      int64_t row_revision = sqlite3_column_int64(stmt, 1);
      const char* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2));
      const int size = sqlite3_column_bytes(stmt, 2);
      ObjectKey key;
      api::Object obj = api::Object::parse(text, text + size, nullptr, /*allow_exceptions=*/false);
      if (!SqliteStore::DecodeKey(key_text, &key) || !obj.is_object() || row_revision > revision ||
          api::ResourceVersion(obj) != std::to_string(row_revision)) {
        status = InternalError("sqlite: corrupt object row " + key_text);
        break;
      }
      state->objects.emplace_back(std::move(key), std::make_shared<const api::Object>(std::move(obj)));
    }
    if (status.ok() && rc != SQLITE_DONE && rc != SQLITE_ROW) status = SqlError(db_, "reading objects");
    sqlite3_finalize(stmt);
    return status;
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  sqlite3_stmt* remove_ = nullptr;
  sqlite3_stmt* set_revision_ = nullptr;
  sqlite3_stmt* probe_ = nullptr;
  int64_t probes_ = 0;
};

}  // namespace

std::string SqliteStore::EncodeKey(const ObjectKey& key) {
  return key.resource.group + "/" + key.resource.resource + "/" + key.ns + "/" + key.name;
}

bool SqliteStore::DecodeKey(const std::string& encoded, ObjectKey* key) {
  std::string parts[4];
  size_t begin = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = i < 3 ? encoded.find('/', begin) : encoded.size();
    if (end == std::string::npos) return false;
    parts[i] = encoded.substr(begin, end - begin);
    begin = end + 1;
  }
  if (parts[1].empty() || parts[3].empty() || parts[3].find('/') != std::string::npos) return false;
  *key = ObjectKey{{parts[0], parts[1]}, parts[2], parts[3]};
  return true;
}

StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, Clock& clock,
                                                         const SqliteOptions& options) {
  RecoveredState state;
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqlitePersistence> persistence,
                         SqlitePersistence::Open(path, options, &state));
  return std::unique_ptr<SqliteStore>(new SqliteStore(clock, options.store, std::move(persistence), std::move(state)));
}

}  // namespace berth::store

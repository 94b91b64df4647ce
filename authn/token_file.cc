#include "authn/token_file.h"

#include <utility>
#include <vector>

#include "core/file.h"

namespace berth::authn {

StatusOr<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;         // inside a quoted field
  bool after_quote = false;    // a quoted field just closed
  bool field_started = false;  // the record has at least one character
  int line = 1;
  auto end_record = [&] {
    if (field_started || !record.empty()) {
      record.push_back(std::move(field));
      records.push_back(std::move(record));
    }
    record.clear();
    field.clear();
    field_started = false;
    after_quote = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = true;
      after_quote = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      ++line;
    } else if (c == '"' && field.empty() && !after_quote) {
      quoted = true;
      field_started = true;
    } else {
      if (after_quote) {
        return InvalidError("line " + std::to_string(line) + ": extraneous or missing \" in quoted-field");
      }
      field.push_back(c);
      field_started = true;
    }
  }
  if (quoted) return InvalidError("line " + std::to_string(line) + ": extraneous or missing \" in quoted-field");
  end_record();
  return records;
}

StatusOr<TokenFile> TokenFile::Parse(std::string_view text, std::string_view source) {
  if (text.size() > kMaxTokenFileBytes) {
    return InvalidError("token file '" + std::string(source) + "' is larger than " +
                        std::to_string(kMaxTokenFileBytes) + " bytes");
  }
  auto records = ParseCsv(text);
  if (!records.ok()) {
    return InvalidError("token file '" + std::string(source) + "': " + records.status().message());
  }
  TokenFile file;
  for (auto& record : *records) {
    if (record.size() < 3) {
      return InvalidError("token file '" + std::string(source) +
                          "' must have at least 3 columns (token, user name, user uid), found " +
                          std::to_string(record.size()));
    }
    if (record[0].empty()) continue;
    UserInfo user;
    user.name = record[1];
    user.uid = record[2];
    if (record.size() >= 4) {
      std::string_view groups = record[3];
      while (true) {
        const std::size_t comma = groups.find(',');
        user.groups.emplace_back(groups.substr(0, comma));
        if (comma == std::string_view::npos) break;
        groups.remove_prefix(comma + 1);
      }
    }
    file.tokens_[std::move(record[0])] = std::move(user);
  }
  return file;
}

StatusOr<TokenFile> TokenFile::Load(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxTokenFileBytes);
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

std::optional<UserInfo> TokenFile::Authenticate(std::string_view token) const {
  if (token.empty() || token.size() > kMaxBearerTokenBytes) return std::nullopt;
  auto it = tokens_.find(std::string(token));
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

}  // namespace berth::authn

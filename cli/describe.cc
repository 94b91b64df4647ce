#include "cli/describe.h"

#include <algorithm>
#include <cctype>

#include "api/unstructured.h"
#include "cli/tab_writer.h"

namespace berth::cli {

using nlohmann::json;

namespace {

constexpr size_t kMaxAnnotationLen = 140;
constexpr std::string_view kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

std::string Indent(int level) { return std::string(static_cast<size_t>(level) * 2, ' '); }

// Go's %v of a decoded JSON scalar.
std::string GoValue(const json& v) {
  if (v.is_null()) return "<nil>";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

enum class CharClass { kLower, kUpper, kDigit, kOther };
CharClass ClassOf(unsigned char c) {
  if (std::islower(c)) return CharClass::kLower;
  if (std::isupper(c)) return CharClass::kUpper;
  if (std::isdigit(c)) return CharClass::kDigit;
  return CharClass::kOther;
}

// github.com/fatih/camelcase.Split for ASCII text.
std::vector<std::string> CamelSplit(std::string_view s) {
  std::vector<std::string> runs;
  CharClass last = CharClass::kOther;
  for (size_t i = 0; i < s.size(); ++i) {
    CharClass c = ClassOf(static_cast<unsigned char>(s[i]));
    if (i > 0 && c == last) {
      runs.back() += s[i];
    } else {
      runs.emplace_back(1, s[i]);
    }
    last = c;
  }
  // "APIVersion" -> "API", "Version": an upper run followed by a lower run
  // gives its last letter to the lower run.
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    if (ClassOf(runs[i][0]) == CharClass::kUpper && ClassOf(runs[i + 1][0]) == CharClass::kLower) {
      runs[i + 1].insert(runs[i + 1].begin(), runs[i].back());
      runs[i].pop_back();
    }
  }
  std::vector<std::string> out;
  for (auto& r : runs) {
    if (!r.empty()) out.push_back(std::move(r));
  }
  return out;
}

void PrintContent(std::string* w, int level, const json& content, const std::string& prefix,
                  const std::vector<std::string>& skip) {
  for (const auto& [field, value] : content.items()) {  // sorted keys
    const std::string path = prefix + "." + field;
    if (std::find(skip.begin(), skip.end(), path) != skip.end()) continue;
    if (value.is_object()) {
      *w += Indent(level) + SmartLabel(field) + ":\n";
      PrintContent(w, level + 1, value, path, skip);
    } else if (value.is_array()) {
      *w += Indent(level) + SmartLabel(field) + ":\n";
      for (const auto& child : value) {
        if (child.is_object()) {
          PrintContent(w, level + 1, child, path, skip);
        } else {
          *w += Indent(level + 1) + GoValue(child) + "\n";
        }
      }
    } else {
      *w += Indent(level) + SmartLabel(field) + ":\t" + GoValue(value) + "\n";
    }
  }
}

const json& Meta(const json& obj, const char* field) {
  static const json kNull;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return kNull;
  auto f = m->find(field);
  return f == m->end() ? kNull : *f;
}

std::string MetaString(const json& obj, const char* field) {
  const json& v = Meta(obj, field);
  return v.is_string() ? v.get<std::string>() : "";
}

void PrintLabels(std::string* w, const json& labels) {
  *w += "Labels:\t";
  if (!labels.is_object() || labels.empty()) {
    *w += "<none>\n";
    return;
  }
  bool first = true;
  for (const auto& [k, v] : labels.items()) {
    if (!first) *w += "\t";
    first = false;
    *w += k + "=" + GoValue(v) + "\n";
  }
}

void PrintAnnotations(std::string* w, const json& annotations) {
  *w += "Annotations:\t";
  std::vector<std::pair<std::string, std::string>> kept;
  if (annotations.is_object()) {
    for (const auto& [k, v] : annotations.items()) {
      if (k != kLastApplied) kept.emplace_back(k, GoValue(v));
    }
  }
  if (kept.empty()) {
    *w += "<none>\n";
    return;
  }
  bool first = true;
  for (auto& [key, raw] : kept) {
    if (!first) *w += "\t";
    first = false;
    std::string value = raw;
    if (!value.empty() && value.back() == '\n') value.pop_back();
    if (value.size() + key.size() + 2 > kMaxAnnotationLen || value.find('\n') != std::string::npos) {
      *w += key + ":\n";
      size_t start = 0;
      for (;;) {
        size_t nl = value.find('\n', start);
        std::string line = value.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (line.size() > kMaxAnnotationLen - 2) line = line.substr(0, kMaxAnnotationLen - 2) + "...";
        *w += "\t  " + line + "\n";
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
    } else {
      *w += key + ": " + value + "\n";
    }
  }
}

std::string AgeOf(const json& timestamp, Time now) {
  Time t;
  if (!timestamp.is_string() || !ParseRfc3339(timestamp.get<std::string>(), &t)) return "<unknown>";
  return HumanDuration(std::chrono::duration_cast<Duration>(now - t));
}

void PrintEvents(std::string* w, std::vector<json> events, Time now) {
  // SortableEvents: by lastTimestamp (absent first); stable for equal times.
  auto last = [](const json& e) {
    Time t{};
    const json& ts = api::NestedField(e, {"lastTimestamp"});
    if (ts.is_string()) ParseRfc3339(ts.get<std::string>(), &t);
    return t;
  };
  std::stable_sort(events.begin(), events.end(), [&](const json& a, const json& b) { return last(a) < last(b); });
  *w += "Events:\n  Type\tReason\tAge\tFrom\tMessage\n";
  *w += "  ----\t------\t----\t----\t-------\n";
  for (const auto& e : events) {
    const json& event_time = api::NestedField(e, {"eventTime"});
    std::string first_seen = event_time.is_string() && !event_time.get<std::string>().empty()
                                 ? AgeOf(event_time, now)
                                 : AgeOf(api::NestedField(e, {"firstTimestamp"}), now);
    std::string interval;
    const json& series = api::NestedField(e, {"series"});
    const int64_t count = api::NestedField(e, {"count"}).is_number_integer() ? api::NestedField(e, {"count"}).get<int64_t>() : 0;
    if (series.is_object()) {
      const json& sc = api::NestedField(series, {"count"});
      interval = AgeOf(api::NestedField(series, {"lastObservedTime"}), now) + " (x" +
                 (sc.is_number_integer() ? std::to_string(sc.get<int64_t>()) : "0") + " over " + first_seen + ")";
    } else if (count > 1) {
      interval = AgeOf(api::NestedField(e, {"lastTimestamp"}), now) + " (x" + std::to_string(count) + " over " + first_seen + ")";
    } else {
      interval = first_seen;
    }
    std::string source = api::NestedString(e, {"source", "component"});
    if (source.empty()) source = api::NestedString(e, {"reportingComponent"});
    std::string message = api::NestedString(e, {"message"});
    const auto not_space = [](unsigned char c) { return !std::isspace(c); };
    message.erase(message.begin(), std::find_if(message.begin(), message.end(), not_space));
    message.erase(std::find_if(message.rbegin(), message.rend(), not_space).base(), message.end());
    *w += "  " + api::NestedString(e, {"type"}) + "\t" + api::NestedString(e, {"reason"}) + "\t" + interval + "\t" +
          source + "\t" + message + "\n";
  }
}

}  // namespace

std::string SmartLabel(std::string_view field) {
  for (unsigned char c : field) {
    if (!std::isalpha(c) && c != '-') return std::string(field);
  }
  static const std::vector<std::string> kAcronyms{"API", "URL", "UID", "OSB", "GUID"};
  std::string out;
  for (std::string part : CamelSplit(field)) {
    if (part == "_") continue;
    std::string upper = part;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::find(kAcronyms.begin(), kAcronyms.end(), upper) != kAcronyms.end()) {
      part = upper;
    } else {
      part[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(part[0])));
    }
    if (!out.empty()) out += ' ';
    out += part;
  }
  return out;
}

std::string DescribeObject(const json& obj, const std::vector<json>& events, Time now) {
  std::string w;
  w += "Name:\t" + MetaString(obj, "name") + "\n";
  w += "Namespace:\t" + MetaString(obj, "namespace") + "\n";
  PrintLabels(&w, Meta(obj, "labels"));
  PrintAnnotations(&w, Meta(obj, "annotations"));
  PrintContent(&w, 0, obj, "",
               {".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels",
                ".metadata.annotations"});
  TabWriter tw(TabWriter::DescribeOptions());
  if (events.empty()) {
    w += "Events:\t<none>\n";
    tw.Write(w);
    return tw.Flush();
  }
  // DescribeEvents flushes the writer before its table: aligned on its own.
  tw.Write(w);
  std::string out = tw.Flush();
  std::string table;
  PrintEvents(&table, events, now);
  tw.Write(table);
  return out + tw.Flush();
}

std::string EventFieldSelector(const json& obj) {
  std::string kind = obj.value("kind", "");
  return "involvedObject.name=" + MetaString(obj, "name") + ",involvedObject.namespace=" +
         MetaString(obj, "namespace") + ",involvedObject.kind=" + kind + ",involvedObject.uid=" +
         MetaString(obj, "uid");
}

}  // namespace berth::cli

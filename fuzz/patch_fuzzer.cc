// Fuzz target: the three PATCH formats (api/patch.h: JSON patch, JSON merge patch;
// api/strategic_merge_patch.h: strategic merge patch) applied to a valid stored object,
// and the result through the admission pipeline as the update it becomes (the API
// server's PATCH: apiserver/object_ops.cc ApplyPatch, then AdmissionPipeline::Admit).
//
// Input: <object byte><type byte><patch JSON>. The object byte picks one of
// fuzz/fuzz_objects.h's seed objects (by value modulo their count); the type byte is
// 'j' (JSON patch), 'm' (merge patch) or 's' (strategic merge patch; any other byte maps
// onto one by value).
//
// Invariants checked (a violation aborts):
//   - applying never crashes or throws; a refused patch is a 400/422 Status;
//   - a merge patch result equals ApplyMergePatch(original, CreateMergePatch(original,
//     result)) (RFC 7386 round trip; skipped when the result holds a null, which a merge
//     patch cannot express);
//   - the admission of the result never throws; an admitted result is storable
//     (fuzz/fuzz_objects.h CheckStorable), and admitting it again as an unchanged update
//     succeeds (validation accepts what it produced).
#include <cstdint>
#include <string>

#include "api/patch.h"
#include "api/strategic_merge_patch.h"
#include "api/yaml_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_objects.h"

using berth::api::Object;
using berth::fuzz::Check;
using berth::fuzz::CheckInputError;

namespace {

bool ContainsNull(const Object& v) {
  if (v.is_null()) return true;
  if (v.is_structured()) {
    for (const auto& e : v) {
      if (ContainsNull(e)) return true;
    }
  }
  return false;
}

berth::api::WriteRequest Update(const Object& obj, const Object& old) {
  berth::api::WriteRequest req;
  req.operation = berth::api::Operation::kUpdate;
  req.object = obj;
  req.old = &old;
  return req;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& seeds = berth::fuzz::SeedObjects();
  berth::fuzz::Input in(data, size);
  const std::string_view input = in.text();
  const Object& live = seeds[in.Byte() % seeds.size()].object;
  char type = static_cast<char>(in.Byte());
  if (std::string_view("jms").find(type) == std::string_view::npos) type = "jms"[static_cast<uint8_t>(type) % 3];
  auto patch = berth::api::ParseJson(in.Rest());
  if (!patch.ok()) return 0;

  berth::StatusOr<Object> patched = berth::Status(berth::Code::kInternal, "unset");
  if (type == 'j') {
    patched = berth::api::ApplyJsonPatch(live, *patch);
  } else if (type == 'm') {
    patched = berth::api::ApplyMergePatch(live, *patch);
  } else {
    const std::string group = [&] {
      std::string av = live["apiVersion"];
      size_t slash = av.find('/');
      return slash == std::string::npos ? std::string() : av.substr(0, slash);
    }();
    patched = berth::api::ApplyStrategicMergePatch(
        live, *patch, berth::api::StrategicMergeSchema::ForKind(group, live["kind"].get<std::string>()));
  }
  if (!patched.ok()) return CheckInputError(patched.status(), input), 0;

  if (patched->is_object() && !ContainsNull(*patched)) {
    auto round = berth::api::ApplyMergePatch(live, berth::api::CreateMergePatch(live, *patched));
    Check(round.ok() && *round == *patched, "CreateMergePatch does not reproduce the patched object", input);
  }

  auto admitted = berth::fuzz::Pipeline().Admit(Update(*patched, live));
  if (!admitted.ok()) {
    // Forbidden/NotFound/Conflict are answers admission gives for valid input too.
    return 0;
  }
  berth::fuzz::CheckStorable(admitted->object, input);
  auto again = berth::fuzz::Pipeline().Admit(Update(admitted->object, admitted->object));
  Check(again.ok(), "an admitted object is refused as an unchanged update: " + again.status().ToString(), input);
  return 0;
}

// Fuzz target: Kubernetes protobuf request bodies (apiserver/protobuf_codec.h), what
// kubectl's typed commands send, decoded and then written through the admission
// pipeline as the API server does with the result.
//
// Input: <mode byte><bytes>. Mode 'o' (or any byte that is not one of kKinds' index
// letters): <bytes> is a whole body, "k8s\0" + runtime.Unknown (DecodeProtobufObject);
// 'a'..: <bytes> is the raw message of kKinds[mode - 'a'] (DecodeProtobufMessage), which
// reaches the message tables without the envelope.
//
// Invariants checked (a violation aborts):
//   - decoding never crashes or throws; a refused body is a 400 or 415 Status;
//   - a decoded body is a JSON object that serialises (valid UTF-8 throughout);
//   - its admission passes fuzz/fuzz_objects.h AdmitChecked's checks.
#include <cstdint>
#include <string>

#include "apiserver/protobuf_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_objects.h"

using berth::fuzz::Check;

namespace {

struct Kind {
  std::string_view api_version, kind;
};
constexpr Kind kKinds[] = {
    {"v1", "Namespace"},
    {"v1", "ConfigMap"},
    {"v1", "Secret"},
    {"v1", "ServiceAccount"},
    {"v1", "Pod"},
    {"v1", "Service"},
    {"scheduling.k8s.io/v1", "PriorityClass"},
    {"batch/v1", "Job"},
    {"policy/v1", "Eviction"},
    {"meta.k8s.io/v1", "DeleteOptions"},
};
constexpr size_t kKindCount = sizeof(kKinds) / sizeof(kKinds[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)berth::fuzz::SeedObjects();  // the pipeline's registries, built before the first input
  berth::fuzz::Input in(data, size);
  const std::string_view input = in.text();
  const uint8_t mode = in.Byte();
  berth::StatusOr<nlohmann::json> decoded = berth::Status(berth::Code::kInternal, "unset");
  if (mode >= 'a' && mode < 'a' + kKindCount) {
    const Kind& k = kKinds[mode - 'a'];
    decoded = berth::apiserver::DecodeProtobufMessage(k.api_version, k.kind, in.Rest());
    if (decoded.ok()) {
      Check(decoded->is_object(), "a decoded message is not a JSON object", input);
      (*decoded)["apiVersion"] = k.api_version;
      (*decoded)["kind"] = k.kind;
    }
  } else {
    decoded = berth::apiserver::DecodeProtobufObject(in.Rest());
  }
  if (!decoded.ok()) return berth::fuzz::CheckInputError(decoded.status(), input), 0;
  Check(decoded->is_object(), "a decoded body is not a JSON object", input);
  try {
    (void)decoded->dump();
  } catch (const std::exception& e) {
    berth::fuzz::Violation(std::string("a decoded body does not serialise: ") + e.what(), input);
  }
  berth::fuzz::AdmitChecked(std::move(*decoded), berth::api::FieldValidation::kStrict, input);
  return 0;
}

// Fuzz target: a request body decoded as JSON or YAML (api/yaml_codec.h) and written
// through the whole admission pipeline (api/admission_pipeline.h: unknown fields,
// defaulting, conversion, strategies, validation), as a create and then as an update and
// a status update of what was admitted. This is the API server's write path without the
// HTTP layer and the store; fuzz/request_fuzzer.cc covers those.
//
// Input: <mode byte><body>. Mode bits: 0-1 fieldValidation (Ignore, Warn, Strict,
// Strict); bit 2: the body is a YAML stream and every document is written (kubectl apply
// -f of a multi-document file), otherwise ParseJsonOrYaml as the API server decodes one
// body.
//
// Invariants checked (a violation aborts):
//   - decoding and admission never crash or throw; a refused body is a Status;
//   - what is admitted passes fuzz/fuzz_objects.h AdmitChecked's checks.
#include <cstdint>
#include <string>
#include <vector>

#include "api/yaml_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)berth::fuzz::SeedObjects();  // the pipeline's registries, built before the first input
  berth::fuzz::Input in(data, size);
  const std::string_view input = in.text();
  const uint8_t mode = in.Byte();
  constexpr berth::api::FieldValidation kValidations[] = {
      berth::api::FieldValidation::kIgnore, berth::api::FieldValidation::kWarn, berth::api::FieldValidation::kStrict,
      berth::api::FieldValidation::kStrict};
  const auto validation = kValidations[mode & 3];
  if (mode & 4) {
    auto docs = berth::api::ParseYamlStream(in.Rest());
    if (!docs.ok()) return berth::fuzz::CheckInputError(docs.status(), input), 0;
    for (auto& doc : *docs) berth::fuzz::AdmitChecked(std::move(doc), validation, input);
  } else {
    auto obj = berth::api::ParseJsonOrYaml(in.Rest());
    if (!obj.ok()) return berth::fuzz::CheckInputError(obj.status(), input), 0;
    berth::fuzz::AdmitChecked(std::move(*obj), validation, input);
  }
  return 0;
}

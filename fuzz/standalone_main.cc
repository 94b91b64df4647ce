// A driver for LLVMFuzzerTestOneInput when the build has no libFuzzer (GCC):
// runs every corpus file as is, then `-runs=N` deterministic mutations of
// them (byte flips, inserts, deletes, duplicated spans, splices of two inputs
// and insertions of tokens that matter to the decoders). Same command line
// shape as libFuzzer's (`-runs=N [-seed=S] DIR|FILE...`), so CTest runs
// either build the same way. Exit 0 when every input passed; an invariant
// violation aborts inside the target.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr std::string_view kTokens[] = {"{",
                                        "}",
                                        "[",
                                        "]",
                                        "\"",
                                        ":",
                                        ",",
                                        "null",
                                        "true",
                                        "-1",
                                        "1e400",
                                        "\"$patch\":\"delete\"",
                                        "\"$patch\":\"replace\"",
                                        "\"$retainKeys\":[]",
                                        "\"$setElementOrder/containers\":[{\"name\":\"c\"}]",
                                        "\"$deleteFromPrimitiveList/finalizers\":[\"a\"]",
                                        "\n- ",
                                        ": &a",
                                        "*a",
                                        "<<: *a",
                                        "!!binary",
                                        "%25",
                                        "%",
                                        "?",
                                        "&",
                                        "=",
                                        "/status",
                                        "/namespaces/",
                                        "watch=true",
                                        "resourceVersion=",
                                        "labelSelector=",
                                        "fieldSelector=",
                                        "\\u0000",
                                        "\xff",
                                        "9223372036854775807",
                                        "\"metadata\":{\"name\":\"x\"}"};

std::string Mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < steps; ++i) {
    const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos % s.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // insert a random byte
        s.insert(pos, 1, static_cast<char>(rng() % 256));
        break;
      case 2: {  // delete a span
        if (s.empty()) break;
        size_t len = 1 + rng() % std::min<size_t>(16, s.size());
        s.erase(pos % s.size(), len);
        break;
      }
      case 3: {  // duplicate a span
        if (s.empty()) break;
        size_t from = rng() % s.size(), len = 1 + rng() % std::min<size_t>(32, s.size() - from);
        s.insert(pos, s.substr(from, len));
        break;
      }
      case 4: {  // token
        std::string_view t = kTokens[rng() % (sizeof(kTokens) / sizeof(kTokens[0]))];
        s.insert(pos, t);
        break;
      }
      case 5: {  // splice with another input
        const std::string& other = corpus[rng() % corpus.size()];
        if (other.empty()) break;
        size_t from = rng() % other.size();
        s = s.substr(0, pos) + other.substr(from);
        break;
      }
    }
  }
  return s;
}

// Runs one input; reports inputs slower than a second (as libFuzzer's
// -report_slow_units), which usually means quadratic work in a decoder.
// With BERTH_FUZZ_CURRENT=<file>, each input is written there before it runs,
// so an input that hangs can be recovered.
int Run(const std::string& input) {
  static const char* current = std::getenv("BERTH_FUZZ_CURRENT");
  if (current != nullptr) std::ofstream(current, std::ios::binary | std::ios::trunc) << input;
  const auto start = std::chrono::steady_clock::now();
  int rc = LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  const auto took = std::chrono::steady_clock::now() - start;
  if (took > std::chrono::seconds(1)) {
    std::fprintf(stderr, "slow input (%lld ms): %s\n",
                 static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
                 input.substr(0, 300).c_str());
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 1000;
  uint64_t seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("-runs=", 0) == 0) {
      runs = std::stol(std::string(arg.substr(6)));
    } else if (arg.rfind("-seed=", 0) == 0) {
      seed = std::stoull(std::string(arg.substr(6)));
    } else if (arg.rfind("-", 0) == 0) {
      continue;  // other libFuzzer flags
    } else {
      std::vector<std::filesystem::path> files;
      if (std::filesystem::is_directory(arg)) {
        for (const auto& e : std::filesystem::directory_iterator(arg)) files.push_back(e.path());
      } else {
        files.emplace_back(arg);
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        corpus.push_back(s.str());
      }
    }
  }
  if (corpus.empty()) corpus.push_back("");
  for (const auto& c : corpus) Run(c);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < runs; ++i) {
    Run(Mutate(corpus[rng() % corpus.size()], corpus, rng));
  }
  std::printf("standalone fuzz driver: %zu corpus inputs, %ld mutations, no invariant violated\n", corpus.size(), runs);
  return 0;
}

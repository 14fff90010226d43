// akview's `fit` figures against what llama.cpp itself allocated for the same models
// (tests/fit/data/llama_truth.txt, recorded by tests/fit/record_llama_truth.sh with llama.cpp's own
// loader): weights, KV cache (K and V apart) and output buffer equal to the byte, the compute buffer
// within 10 %. The models are written again here from the same specs.
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/fit/fit_estimate.hpp"
#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/fit_models.hpp"

namespace akview::fit {
namespace {

struct TruthLine {
  std::map<std::string, std::string> kv;
  uint64_t num(const std::string& k) const {
    auto it = kv.find(k);
    return it == kv.end() ? 0 : std::stoull(it->second);
  }
  std::string text;
};

std::vector<TruthLine> read_truth() {
  std::ifstream in(std::string(AKVIEW_SOURCE_DIR) + "/tests/fit/data/llama_truth.txt");
  std::vector<TruthLine> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    TruthLine t;
    t.text = line;
    std::istringstream words(line);
    for (std::string w; words >> w;)
      if (auto eq = w.find('='); eq != std::string::npos) t.kv[w.substr(0, eq)] = w.substr(eq + 1);
    lines.push_back(std::move(t));
  }
  return lines;
}

TEST(FitGroundTruth, MatchesWhatLlamaCppAllocates) {
  const auto truth = read_truth();
  ASSERT_GE(truth.size(), 40u) << "tests/fit/data/llama_truth.txt is missing or short";
  akview::testing::TempDir dir;
  std::map<std::string, Model> models;
  for (const auto& spec : akview::testing::fit_model_specs()) {
    const std::string path = dir.file(spec.name + ".gguf");
    ASSERT_TRUE(akview::testing::build_fit_model(spec).write(path, /*sparse=*/true));
    auto m = open_model(path);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    models.emplace(spec.name, std::move(*m));
  }
  std::set<std::string> archs_seen;
  double worst_compute = 0;
  for (const auto& t : truth) {
    SCOPED_TRACE(t.text);
    auto it = models.find(t.kv.at("model"));
    ASSERT_NE(it, models.end());
    FitQuery q;
    q.context = t.num("ctx");
    q.batch = static_cast<uint32_t>(t.num("batch"));
    q.ubatch = static_cast<uint32_t>(t.num("ubatch"));
    q.kv_type = *type_from_name(t.kv.at("kv_type"));
    auto e = estimate_fit(it->second, q);
    ASSERT_TRUE(e.ok()) << e.error().to_string();
    archs_seen.insert(e->arch);
    uint64_t weights = 0;
    for (const auto& [k, v] : t.kv)
      if (k.starts_with("weights_")) weights += std::stoull(v);
    EXPECT_EQ(e->weights.bytes, weights);
    EXPECT_EQ(e->cells, t.num("n_ctx"));
    ASSERT_TRUE(e->kv);
    EXPECT_EQ(e->kv->bytes, t.num("kv_total"));
    EXPECT_EQ(e->k_bytes, t.num("full_k") + t.num("swa_k"));
    EXPECT_EQ(e->v_bytes, t.num("full_v") + t.num("swa_v"));
    ASSERT_TRUE(e->output);
    EXPECT_EQ(e->output->bytes, t.num("output"));
    ASSERT_TRUE(e->compute);
    const double truth_compute = static_cast<double>(t.num("compute"));
    const double err = std::abs(static_cast<double>(e->compute->bytes) - truth_compute) / truth_compute;
    worst_compute = std::max(worst_compute, err);
    EXPECT_LE(err, 0.10) << "compute " << e->compute->bytes << " vs llama.cpp's " << truth_compute;
  }
  // every architecture fit must cover is among the recorded cases
  for (const char* arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3", "deepseek2"})
    EXPECT_TRUE(archs_seen.count(arch)) << arch;
  RecordProperty("worst_compute_error", std::to_string(worst_compute));
}

}   // namespace
}   // namespace akview::fit

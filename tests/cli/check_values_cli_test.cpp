// `akview check`'s value scan through the real binary: a NaN in an f32 tensor and an Inf block scale
// of a q8_0 tensor are each one line FILE@0xOFFSET naming the tensor and the count, exit 1; --json
// carries them as non_finite problems; --no-values checks the structure alone (exit 0); every oracle
// GGUF (finite values) still passes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_util.hpp"
#include "tests/cli/run_process.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {
namespace {

struct PlantedModel {
  std::string path;
  uint64_t nan_at = 0, inf_block_at = 0;
};

PlantedModel write_planted(const TempDir& dir) {
  PlantedModel m;
  m.path = dir.file("planted.gguf");
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  GgufTensorSpec f32("weights.f32", 0, {64, 4});
  f32.data.resize(64 * 4 * 4);
  for (size_t i = 0; i < 256; ++i) {
    const float v = i == 77 ? NAN : 0.5f;
    std::memcpy(&f32.data[4 * i], &v, 4);
  }
  GgufTensorSpec q8("weights.q8_0", 8, {64, 8});   // 16 blocks of 34 bytes; block 9's d is +Inf
  q8.data.assign(16 * 34, 0x11);
  q8.data[9 * 34] = 0x00, q8.data[9 * 34 + 1] = 0x7C;
  w.add_tensor(std::move(f32));
  w.add_tensor(std::move(q8));
  EXPECT_TRUE(w.write(m.path));
  const uint64_t start = w.header().size();
  m.nan_at = start + w.data_offsets()[0] + 77 * 4;
  m.inf_block_at = start + w.data_offsets()[1] + 9 * 34;
  return m;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

TEST(CheckValues, NanAndInfAreProblemsAtTheirOffsets) {
  const TempDir dir;
  const PlantedModel m = write_planted(dir);
  auto r = run_akview({"check", m.path});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(m.path + "@" + hex(m.nan_at) +
                       ": tensor 'weights.f32' (f32): 1 NaN value of 256 (the first is here)\n"),
            std::string::npos)
      << r.err;
  // 0x11 codes times +Inf: every value of the block is +Inf.
  EXPECT_NE(r.err.find(m.path + "@" + hex(m.inf_block_at) +
                       ": tensor 'weights.q8_0' (q8_0): 32 Inf values in 1 of 16 blocks"),
            std::string::npos)
      << r.err;

  auto j = run_akview({"check", m.path, "--json"});
  EXPECT_EQ(j.exit_code, 1);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["values_scanned"], true);
  ASSERT_EQ(doc["problems"].size(), 2u) << j.out;
  EXPECT_EQ(doc["problems"][0]["code"], "non_finite");
  EXPECT_EQ(doc["problems"][0]["offset"], m.nan_at);
  EXPECT_EQ(doc["problems"][1]["offset"], m.inf_block_at);

  auto structure = run_akview({"check", m.path, "--no-values", "--json"});
  EXPECT_EQ(structure.exit_code, 0) << structure.out;
  EXPECT_EQ(nlohmann::json::parse(structure.out)["values_scanned"], false);
}

TEST(CheckValues, EveryOracleGgufPasses) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int files = 0;
  for (const auto& f : manifest["gguf"]["files"]) {
    const std::string path = kOracles + "/" + f["path"].get<std::string>();
    auto r = run_akview({"check", path});
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
    ++files;
  }
  EXPECT_GE(files, 27);
}

}   // namespace
}   // namespace akview::testing

// `akview fit` through the real binary: the text names the buffers and their sources, --json is
// the documented document, bad options are usage errors (exit 2) and hostile metadata a one-line
// error naming the key (exit 1).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/fit_models.hpp"

namespace akview::testing {
namespace {

std::string write_model(const TempDir& dir, const std::string& name, GgufWriter w) {
  const std::string path = dir.file(name + ".gguf");
  EXPECT_TRUE(w.write(path, /*sparse=*/true));
  return path;
}

GgufWriter model_named(const std::string& name) {
  for (const auto& s : fit_model_specs())
    if (s.name == name) return build_fit_model(s);
  ADD_FAILURE() << name;
  return {};
}

TEST(FitCli, TextAndJson) {
  TempDir dir;
  const std::string path = write_model(dir, "gemma2", model_named("gemma2"));
  ProcessResult text = run_akview({"fit", path, "--ctx", "8192"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("KV cache"), std::string::npos);
  EXPECT_NE(text.out.find("gguf: gemma2.attention.head_count_kv"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sliding"), std::string::npos);
  ProcessResult json = run_akview({"fit", path, "--ctx", "8192", "--kv-type", "q8_0", "--gpu-mem", "1,1", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["kv_type"], "q8_0");
  EXPECT_EQ(j["cells"], 8192);
  EXPECT_EQ(j["buffers"]["kv_cache"]["bytes"], 5292032);   // llama.cpp's figure (tests/fit/data)
  EXPECT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["gpu_layers"], 5);
  EXPECT_EQ(j["kv_layers"].size(), 4u);
  EXPECT_TRUE(j["table"].is_array());
}

TEST(FitCli, UsageAndHostileErrors) {
  TempDir dir;
  const std::string path = write_model(dir, "llama", model_named("llama-gqa"));
  EXPECT_EQ(run_akview({"fit", path, "--kv-type", "q3_k"}).exit_code, 2);
  EXPECT_EQ(run_akview({"fit", path, "--gpu-mem", "24,x"}).exit_code, 2);
  GgufWriter w = model_named("llama-gqa");
  w.set("llama.attention.head_count", gguf_u32(0));
  ProcessResult r = run_akview({"fit", write_model(dir, "zero", std::move(w))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("llama.attention.head_count"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}   // namespace
}   // namespace akview::testing

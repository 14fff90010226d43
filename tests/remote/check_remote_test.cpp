// `akview check` of a remote model (a plain URL to the demo GGUF on the test server): the value
// scan reads every byte, so without --fetch-all it says how many bytes that fetches and exits 1;
// --no-values checks the structure from the headers alone; with --fetch-all it scans every value and
// answers as on disk. Skipped when nginx cannot start.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/remote/hub_server.hpp"

namespace akview::testing {
namespace {

TEST(CheckRemote, TheValueScanNeedsFetchAllAndSaysWhatItFetches) {
  const std::filesystem::path demo = std::filesystem::path(AKVIEW_DEMO_DIR) / "demo" / "llama-demo-q4km.gguf";
  HubServer server;
  server.add_file("/files/llama-demo-q4km.gguf", demo);
  if (!server.start()) GTEST_SKIP() << "test servers unavailable: " << server.reason();
  const TempDir cache;
  std::vector<std::string> env = server.client_env();
  env.push_back("AKVIEW_CACHE_DIR=" + cache.path());
  env.push_back("AKVIEW_HTTP_CONNECT_TIMEOUT=5");
  const std::string url = server.url(Block::plain, "/files/llama-demo-q4km.gguf");

  auto refused = run_akview({"check", url}, env);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("--fetch-all"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("bytes) to fetch"), std::string::npos) << refused.err;

  auto structure = run_akview({"check", url, "--no-values", "--json"}, env);
  ASSERT_EQ(structure.exit_code, 0) << structure.err;
  EXPECT_EQ(nlohmann::json::parse(structure.out)["values_scanned"], false);

  auto scanned = run_akview({"check", url, "--fetch-all", "--json"}, env);
  ASSERT_EQ(scanned.exit_code, 0) << scanned.err;
  const auto remote = nlohmann::json::parse(scanned.out);
  EXPECT_EQ(remote["values_scanned"], true);
  EXPECT_EQ(remote["ok"], true);
  auto local = run_akview({"check", demo.string(), "--json"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote["tensors"], nlohmann::json::parse(local.out)["tensors"]);
}

}   // namespace
}   // namespace akview::testing

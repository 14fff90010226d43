// `akview layout` through the real binary: the JSON shapes the README documents, a folder's files,
// one block of a tensor, escaping of hostile names in text, and one-line errors for bad input.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {
namespace {

const std::string kOracles = AKVIEW_ORACLES_DIR;

TEST(LayoutCli, JsonRegionsOfAGguf) {
  const std::string path = kOracles + "/gguf/q4_0.gguf";
  auto r = run_akview({"layout", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["file"], path);
  EXPECT_GT(j["size"].get<uint64_t>(), 0u);
  ASSERT_GT(j["regions"].size(), 100u);
  const std::vector<std::string> keys = {"depth", "kind", "label", "offset", "size", "value"};
  uint64_t top_end = 0;
  for (const auto& region : j["regions"]) {
    std::vector<std::string> got;
    for (auto it = region.begin(); it != region.end(); ++it) got.push_back(it.key());
    ASSERT_EQ(got, keys);
    if (region["depth"] == 0) {
      EXPECT_EQ(region["offset"].get<uint64_t>(), top_end);
      top_end += region["size"].get<uint64_t>();
    }
  }
  EXPECT_EQ(top_end, j["size"].get<uint64_t>());
  EXPECT_EQ(j["regions"][0]["kind"], "header");
  EXPECT_EQ(j["regions"][1]["kind"], "magic");
  EXPECT_FALSE(j.contains("files"));
}

TEST(LayoutCli, AFolderListsEveryFile) {
  auto r = run_akview({"layout", kOracles + "/st/sharded_bf16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("files"));
  std::set<std::string> names = {j["file"].get<std::string>()};
  for (const auto& f : j["files"]) {
    names.insert(f["file"].get<std::string>());
    EXPECT_FALSE(f["regions"].empty());
  }
  size_t shards = 0, index = 0;
  for (const auto& n : names) {
    shards += n.ends_with(".safetensors");
    index += n.ends_with("model.safetensors.index.json");
  }
  EXPECT_EQ(shards, 2u);
  EXPECT_EQ(index, 1u);
}

TEST(LayoutCli, OneBlockOfAQ4KTensor) {
  const std::string path = kOracles + "/gguf/lq_q4_k_m.gguf";
  auto r = run_akview({"layout", path, "blk.0.attn_k.weight", "--block", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "blk.0.attn_k.weight");
  EXPECT_EQ(j["type"], "q4_k");
  EXPECT_EQ(j["block"], 3);
  EXPECT_EQ(j["block_bytes"], 144);
  EXPECT_EQ(j["block_elems"], 256);
  EXPECT_EQ(j["n_blocks"].get<uint64_t>() * 144, j["nbytes"].get<uint64_t>());
  ASSERT_EQ(j["fields"].size(), 4u);
  const uint64_t base = j["offset"].get<uint64_t>() + 3 * 144;
  const std::vector<std::pair<std::string, uint64_t>> want = {{"d", 0}, {"dmin", 2}, {"scales", 4}, {"qs", 16}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(j["fields"][i]["name"], want[i].first);
    EXPECT_EQ(j["fields"][i]["offset"].get<uint64_t>(), base + want[i].second);
    EXPECT_EQ(j["fields"][i]["hex"].get<std::string>().size(), 2 * j["fields"][i]["size"].get<size_t>());
  }
  // Canonical names work too, and a block past the end is a one-line not_found error.
  auto canonical = run_akview({"layout", path, "layers.0.attention.k.weight", "--json"});
  EXPECT_EQ(canonical.exit_code, 0) << canonical.err;
  auto past = run_akview({"layout", path, "blk.0.attn_k.weight", "--block", "999999"});
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_NE(past.err.find("(not_found)"), std::string::npos) << past.err;
}

TEST(LayoutCli, TextEscapesHostileNames) {
  TempDir dir;
  const std::string path = dir.path() + "/hostile.gguf";
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("evil\x1b]0;pwned\x07", gguf_string("red\x1b[31m"));
  w.add_tensor({"t\x1b[2J", 0, {4}});
  ASSERT_TRUE(w.write(path));
  auto r = run_akview({"layout", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("evil\\x1b]0;pwned\\x07"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("t\\x1b[2J"), std::string::npos) << r.out;
}

// A file that does not open: its layout as far as it makes sense on stdout (ending in the failure
// and the unexplained bytes), the one-line error on stderr, exit 1.
TEST(LayoutCli, BadInputIsOneLineWithFileOffsetAndRule) {
  for (const char* name : {"gguf_bad_magic.gguf", "gguf_key_len_beyond_eof.gguf", "st_header_len_2p63.safetensors"}) {
    auto r = run_akview({"layout", kOracles + "/malformed/" + name});
    EXPECT_EQ(r.exit_code, 1) << name;
    EXPECT_NE(r.out.find("(does not open, "), std::string::npos) << name << "\n" << r.out;
    EXPECT_NE(r.out.find("failure cannot be read = "), std::string::npos) << name << "\n" << r.out;
    ASSERT_FALSE(r.err.empty()) << name;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(std::string(name) + "@0x"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" ("), std::string::npos) << r.err;
  }
}

// A GGUF whose third key cannot be read: the header and the two keys before it as regions, the
// failure as a region with its message, the rest of the file as unexplained bytes; JSON alike.
TEST(LayoutCli, ABrokenFileIsLaidOutUpToItsFailure) {
  TempDir dir;
  const std::string path = dir.file("broken.gguf");
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("two keys read"));
  w.set("general.third", gguf_u32(7));
  w.add_tensor({"t", 0, {64}});
  ASSERT_TRUE(w.write(path));
  // The third key's value type (after its 8-byte length and 13-byte name) becomes 99: no GGUF type.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t third = bytes.find("general.third");
  ASSERT_NE(third, std::string::npos);
  bytes[third + 13] = 99;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  auto r = run_akview({"layout", path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("kv general.architecture = llama"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kv general.name = two keys read"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kv general.third"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("{:#010x}", third - 8)), std::string::npos) << "the failure starts at the key\n"
                                                                               << r.out;
  EXPECT_NE(r.out.find("failure cannot be read = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gap unexplained bytes"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  auto j = run_akview({"layout", path, "--json"});
  EXPECT_EQ(j.exit_code, 1);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["opened"], false);
  uint64_t covered = 0;
  std::vector<std::string> kinds;
  for (const auto& region : doc["regions"]) {
    if (region["depth"] == 0) covered += region["size"].get<uint64_t>();
    kinds.push_back(region["kind"]);
  }
  EXPECT_EQ(covered, doc["size"].get<uint64_t>());   // depth 0 covers the file once
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "failure"), kinds.end());
  EXPECT_EQ(kinds.back(), "gap");
}

}   // namespace
}   // namespace akview::testing

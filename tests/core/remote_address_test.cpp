// Remote addresses as users type or paste them, and the header extent judged from a file's first bytes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/remote/address.hpp"
#include "core/remote/head_extent.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::remote {
namespace {

TEST(RemoteAddress, HfForms) {
  unsetenv("HF_ENDPOINT");
  auto a = parse_address("hf://org/repo");
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->kind, AddressKind::hub);
  EXPECT_EQ(a->repo, "org/repo");
  EXPECT_EQ(a->revision, "main");
  EXPECT_EQ(a->path, "");
  EXPECT_EQ(a->endpoint, "https://huggingface.co");
  auto b = parse_address("hf://org/repo@v1.0/sub/model.gguf");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->revision, "v1.0");
  EXPECT_EQ(b->path, "sub/model.gguf");
  EXPECT_FALSE(parse_address("hf://org"));
  EXPECT_FALSE(parse_address("hf://org/repo/../x"));
  EXPECT_FALSE(parse_address("hf://o rg/repo"));
}

TEST(RemoteAddress, HubBrowserUrls) {
  unsetenv("HF_ENDPOINT");
  auto tree = parse_address("https://huggingface.co/org/repo/tree/refs%2Fpr%2F1/sub");
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->kind, AddressKind::hub);
  EXPECT_EQ(tree->revision, "refs/pr/1");
  EXPECT_EQ(tree->path, "sub");
  EXPECT_FALSE(tree->path_is_file);
  auto blob = parse_address("https://huggingface.co/org/repo/blob/main/model.safetensors");
  ASSERT_TRUE(blob);
  EXPECT_TRUE(blob->path_is_file);
  auto resolve = parse_address("https://huggingface.co/org/repo/resolve/abc/m.gguf?download=true");
  ASSERT_TRUE(resolve);
  EXPECT_EQ(resolve->path, "m.gguf");
  EXPECT_EQ(resolve->revision, "abc");
  auto root = parse_address("https://huggingface.co/org/repo");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->kind, AddressKind::hub);
  // Not a repository URL on the Hub's host: a plain URL.
  auto api = parse_address("https://huggingface.co/api/models/org/repo");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->kind, AddressKind::url);
  // Another host is a plain URL, whatever its path looks like.
  auto other = parse_address("https://example.com/org/repo/resolve/main/m.gguf");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->kind, AddressKind::url);
}

TEST(RemoteAddress, HfEndpointReplacesTheHub) {
  setenv("HF_ENDPOINT", "https://127.0.0.1:8443/", 1);
  auto a = parse_address("https://127.0.0.1:8443/org/repo/resolve/main/x.gguf");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, AddressKind::hub);
  EXPECT_EQ(a->endpoint, "https://127.0.0.1:8443");
  auto h = parse_address("https://huggingface.co/org/repo");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, AddressKind::url);   // the Hub is elsewhere now
  unsetenv("HF_ENDPOINT");
}

TEST(RemoteAddress, OllamaForms) {
  auto a = parse_address("ollama://llama3.2:1b");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->registry, "https://registry.ollama.ai");
  EXPECT_EQ(a->name_space, "library");
  EXPECT_EQ(a->model, "llama3.2");
  EXPECT_EQ(a->tag, "1b");
  auto b = parse_address("ollama://127.0.0.1:9999/ns/model");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->registry, "https://127.0.0.1:9999");
  EXPECT_EQ(b->name_space, "ns");
  EXPECT_EQ(b->tag, "latest");
  EXPECT_FALSE(parse_address("ollama://a/b/c/d"));
  EXPECT_FALSE(parse_address("ollama://ns/../x"));
}

TEST(RemoteAddress, OnlyRemoteSchemes) {
  EXPECT_TRUE(is_remote_address("hf://a/b"));
  EXPECT_TRUE(is_remote_address("https://x/y"));
  EXPECT_FALSE(is_remote_address("/models/x.gguf"));
  EXPECT_FALSE(is_remote_address("llama3:8b"));
}

TEST(HeadExtent, SafetensorsPrefixIsExact) {
  std::vector<uint8_t> b(64, ' ');
  const uint64_t n = 1000;
  std::memcpy(b.data(), &n, 8);
  b[8] = '{';
  auto e = estimate_head_extent(b, 5000);
  EXPECT_TRUE(e.exact);
  EXPECT_EQ(e.bytes, 1008u);
  // A length past the file is no SafeTensors header: only the bytes at hand.
  EXPECT_FALSE(estimate_head_extent(b, 500).exact);
}

TEST(HeadExtent, GgufWalkedToItsEndOrEstimated) {
  testing::GgufWriter w;
  std::vector<testing::GgufValue> tokens;
  for (int i = 0; i < 20000; ++i) tokens.push_back(testing::gguf_string("token_" + std::to_string(i)));
  w.set("tokenizer.ggml.tokens", testing::gguf_array(testing::kGgufString, tokens));
  w.set("general.architecture", testing::gguf_string("llama"));
  for (int i = 0; i < 50; ++i)
    w.add_tensor(testing::GgufTensorSpec("blk." + std::to_string(i) + ".attn_q.weight", 0, {8, 8}));
  const std::vector<uint8_t> file = w.bytes();
  const uint64_t infos_end = w.infos_end();
  // The whole header at hand: exact.
  auto whole = estimate_head_extent(file, file.size());
  EXPECT_TRUE(whole.exact);
  EXPECT_EQ(whole.bytes, infos_end);
  // Only the first 4 KiB: an estimate that covers the header without running far past it.
  auto part = estimate_head_extent(std::span<const uint8_t>(file.data(), 4096), file.size());
  EXPECT_FALSE(part.exact);
  EXPECT_GE(part.bytes, infos_end);
  EXPECT_LE(part.bytes, infos_end + (64 << 10));
}

}   // namespace
}   // namespace akview::remote

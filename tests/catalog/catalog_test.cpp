// The model catalog (core/catalog.hpp): which paths are lists of models, the names, open paths and
// sources of their entries, what describing an entry fills in, and the local stores found through
// HOME / OLLAMA_MODELS / HF_HOME. Every store is built in a TempDir by the writers in tests/writers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/catalog.hpp"
#include "core/formats/format.hpp"
#include "core/types.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/ollama_writer.hpp"
#include "tests/writers/quantize.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;

void make_dirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  ASSERT_FALSE(ec) << dir << ": " << ec.message();
}

// A GGUF model of `rows` x 32 in q4_0 (18 bytes a row) plus an f32 norm of 32 (128 bytes):
// 32*rows + 32 parameters; with 16 rows q4_0 holds the most bytes.
GgufWriter gguf_model(int64_t rows = 16) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.add_tensor(
      GgufTensorSpec("blk.0.attn_q.weight", static_cast<uint32_t>(type_info(TypeId::q4_0).ggml_id), {32, rows}));
  w.add_tensor(GgufTensorSpec("blk.0.attn_norm.weight", static_cast<uint32_t>(type_info(TypeId::f32).ggml_id), {32}));
  return w;
}

void write_gguf(const std::string& path, int64_t rows = 16) {
  make_dirs(fs::path(path).parent_path().string());
  ASSERT_TRUE(gguf_model(rows).write(path)) << path;
}

// A one-file SafeTensors model folder (model.safetensors + config.json): 64 BF16 parameters.
void write_st_folder(const std::string& dir) {
  make_dirs(dir);
  std::vector<float> values(64, 0.5f);
  ASSERT_TRUE(write_safetensors(dir + "/model.safetensors",
                                {{"model.norm.weight", "BF16", {64}, quantize(TypeId::bf16, values)}}));
  ASSERT_TRUE(write_text(dir + "/config.json", R"({"model_type": "llama"})"));
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names(const std::vector<CatalogEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

// An Ollama store holding `gguf:latest` (a GGUF blob) and `st:int4` (one BF16 safetensors tensor blob).
void write_ollama_store(const std::string& root, const std::string& gguf_model_name = "tiny") {
  TempDir scratch;
  write_gguf(scratch.file("m.gguf"));
  OllamaStoreWriter store(root);
  nlohmann::ordered_json gguf_layers = nlohmann::ordered_json::array();
  gguf_layers.push_back(store.put("application/vnd.ollama.image.model", file_bytes(scratch.file("m.gguf"))));
  gguf_layers.push_back(store.put_text("application/vnd.ollama.image.template", "{{ .Prompt }}"));
  ASSERT_TRUE(store.write_manifest(gguf_model_name, "latest", {{"model_format", "gguf"}}, gguf_layers));
  std::vector<float> values(64, 0.25f);
  auto blob = safetensors_bytes({{"model.norm.weight", "BF16", {64}, quantize(TypeId::bf16, values)}});
  nlohmann::ordered_json st_layers = nlohmann::ordered_json::array();
  st_layers.push_back(store.put("application/vnd.ollama.image.tensor", blob, "model.norm.weight"));
  ASSERT_TRUE(store.write_manifest("st", "int4", {{"model_format", "safetensors"}}, st_layers));
}

TEST(Catalog, OllamaStoreListsEveryModelByDisplayName) {
  TempDir dir;
  write_ollama_store(dir.path());
  auto catalog = list_catalog(dir.path());
  ASSERT_TRUE(catalog);
  ASSERT_EQ(names(*catalog), (std::vector<std::string>{"st:int4", "tiny:latest"}));
  for (const auto& e : *catalog) {
    EXPECT_EQ(e.source, "ollama");
    EXPECT_FALSE(e.described);
  }
  EXPECT_EQ((*catalog)[1].open_path, dir.path() + "/manifests/registry.ollama.ai/library/tiny/latest");
  for (auto& e : *catalog) describe_catalog_entry(e);
  EXPECT_EQ((*catalog)[0].error, "");
  EXPECT_EQ((*catalog)[0].format, "ollama");
  EXPECT_EQ((*catalog)[0].parameters, 64u);
  EXPECT_EQ((*catalog)[0].main_type(), "bf16");
  EXPECT_EQ((*catalog)[1].parameters, 32u * 16 + 32);
  EXPECT_EQ((*catalog)[1].main_type(), "q4_0");
  EXPECT_EQ((*catalog)[1].files.size(), 4u);   // manifest, config blob, model blob, template blob
  // The two models share no blob, so their files together are every file of the store.
  uint64_t store_bytes = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir.path()))
    if (f.is_regular_file()) store_bytes += f.file_size();
  EXPECT_EQ((*catalog)[0].size_bytes + (*catalog)[1].size_bytes, store_bytes);
  EXPECT_EQ((*catalog)[0].files.size(), 3u);   // manifest, config blob, tensor blob
}

TEST(Catalog, OllamaStoreOfOneModelIsStillAListButAnEmptyOneIsNot) {
  TempDir dir;
  write_ollama_store(dir.path());
  fs::remove_all(dir.path() + "/manifests/registry.ollama.ai/library/st");
  auto one = list_catalog(dir.path());
  ASSERT_TRUE(one);
  EXPECT_EQ(names(*one), std::vector<std::string>{"tiny:latest"});
  EXPECT_TRUE(open_model(dir.path()).ok());   // batch commands still open a one-model store directly

  TempDir empty;
  make_dirs(empty.path() + "/manifests");
  make_dirs(empty.path() + "/blobs");
  EXPECT_FALSE(list_catalog(empty.path()));   // nothing to list: opening it says why
}

// A Hugging Face hub cache: snapshot files are symlinks into ../../blobs.
void write_hf_repo(const std::string& hub, const std::string& folder, const std::vector<std::string>& revisions) {
  const std::string repo = hub + "/" + folder;
  make_dirs(repo + "/blobs");
  make_dirs(repo + "/refs");
  TempDir scratch;
  write_st_folder(scratch.path());
  for (const std::string file : {"model.safetensors", "config.json"}) {
    auto bytes = file_bytes(scratch.file(file));
    std::ofstream(repo + "/blobs/" + file + "-blob", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    for (const auto& rev : revisions) {
      make_dirs(repo + "/snapshots/" + rev);
      fs::create_symlink("../../blobs/" + file + "-blob", repo + "/snapshots/" + rev + "/" + file);
    }
  }
  ASSERT_TRUE(write_text(repo + "/refs/main", revisions.back()));
}

TEST(Catalog, HuggingFaceCacheNamesReposAndFollowsSnapshotSymlinks) {
  TempDir home;
  const std::string hub = home.path() + "/hub";
  write_hf_repo(hub, "models--org--tiny", {"0123456789abcdef"});
  write_hf_repo(hub, "models--solo", {"aaaaaaa111", "bbbbbbb222"});
  // A GGUF repo: its snapshot holds two models, listed one by one under the repo's name.
  write_gguf(hub + "/models--org--tiny-GGUF/snapshots/cafe/tiny-Q4_0.gguf");
  write_gguf(hub + "/models--org--tiny-GGUF/snapshots/cafe/tiny-Q8_0.gguf");
  make_dirs(hub + "/models--org--tokenizer-only/snapshots/beef");   // no model: skipped
  ASSERT_TRUE(write_text(hub + "/models--org--tokenizer-only/snapshots/beef/tokenizer.json", "{}"));
  make_dirs(hub + "/datasets--org--data/snapshots/d00d");
  make_dirs(hub + "/.locks/models--org--tiny");

  auto catalog = list_catalog(hub);
  ASSERT_TRUE(catalog);
  EXPECT_EQ(names(*catalog),
            (std::vector<std::string>{"org/tiny", "org/tiny-GGUF/tiny-Q4_0.gguf", "org/tiny-GGUF/tiny-Q8_0.gguf",
                                      "solo@aaaaaaa", "solo@bbbbbbb"}));
  for (const auto& e : *catalog) EXPECT_EQ(e.source, "huggingface") << e.name;
  EXPECT_EQ((*catalog)[0].open_path, hub + "/models--org--tiny/snapshots/0123456789abcdef");
  EXPECT_EQ((*catalog)[1].open_path, hub + "/models--org--tiny-GGUF/snapshots/cafe/tiny-Q4_0.gguf");
  describe_catalog_entry((*catalog)[0]);
  EXPECT_EQ((*catalog)[0].error, "");
  EXPECT_EQ((*catalog)[0].format, "safetensors");
  EXPECT_EQ((*catalog)[0].parameters, 64u);
  EXPECT_EQ((*catalog)[0].files.size(), 1u);
  EXPECT_EQ((*catalog)[0].size_bytes, fs::file_size(hub + "/models--org--tiny/blobs/model.safetensors-blob"));

  // HF_HOME (the folder above hub/) and one repo folder list the same models.
  auto from_home = list_catalog(home.path());
  ASSERT_TRUE(from_home);
  EXPECT_EQ(names(*from_home), names(*catalog));
  auto one_repo = list_catalog(hub + "/models--solo");
  ASSERT_TRUE(one_repo);
  EXPECT_EQ(names(*one_repo), (std::vector<std::string>{"solo@aaaaaaa", "solo@bbbbbbb"}));
  // A snapshot is one model: opened directly.
  EXPECT_FALSE(list_catalog(hub + "/models--org--tiny/snapshots/0123456789abcdef"));
}

TEST(Catalog, LmStudioFolderListsPublisherRepoModels) {
  TempDir home;
  const std::string root = home.path() + "/.lmstudio/models";
  write_gguf(root + "/pub/tiny-GGUF/tiny-Q4_0.gguf");
  write_gguf(root + "/pub/two-GGUF/two-Q4_0.gguf");
  write_gguf(root + "/pub/two-GGUF/two-Q8_0.gguf");
  write_st_folder(root + "/other/mlx-like");
  auto catalog = list_catalog(root);
  ASSERT_TRUE(catalog);
  EXPECT_EQ(names(*catalog), (std::vector<std::string>{"other/mlx-like", "pub/tiny-GGUF", "pub/two-GGUF/two-Q4_0.gguf",
                                                       "pub/two-GGUF/two-Q8_0.gguf"}));
  for (const auto& e : *catalog) EXPECT_EQ(e.source, "lmstudio") << e.name;
  EXPECT_EQ((*catalog)[1].open_path, root + "/pub/tiny-GGUF");
  for (auto& e : *catalog) {
    describe_catalog_entry(e);
    EXPECT_EQ(e.error, "") << e.name;
  }
  EXPECT_EQ((*catalog)[1].format, "gguf");
}

TEST(Catalog, PlainFolderListsFilesSplitSetsAndModelFoldersInNaturalOrder) {
  TempDir dir;
  write_gguf(dir.file("m10.gguf"));
  write_gguf(dir.file("m2.gguf"));
  GgufWriter split = gguf_model();
  split.add_tensor(
      GgufTensorSpec("blk.1.attn_q.weight", static_cast<uint32_t>(type_info(TypeId::q4_0).ggml_id), {32, 16}));
  ASSERT_EQ(write_gguf_split(dir.path(), "set", 2, split).size(), 2u);
  write_st_folder(dir.file("folder"));
  make_dirs(dir.file("empty-folder"));
  write_gguf(dir.file(".hidden.gguf"));
  write_gguf(dir.file("partial.gguf.partial"));
  write_gguf(dir.file("download.gguf.incomplete"));
  ASSERT_TRUE(write_text(dir.file("notes.txt"), "not a model"));

  auto catalog = list_catalog(dir.path());
  ASSERT_TRUE(catalog);
  EXPECT_EQ(names(*catalog), (std::vector<std::string>{"folder", "m2.gguf", "m10.gguf", "set-00001-of-00002.gguf"}));
  for (const auto& e : *catalog) EXPECT_EQ(e.source, "folder");
  EXPECT_EQ((*catalog)[0].open_path, dir.file("folder"));
  for (auto& e : *catalog) describe_catalog_entry(e);
  EXPECT_EQ((*catalog)[3].format, "gguf-split");
  EXPECT_EQ((*catalog)[3].files.size(), 2u);
  EXPECT_EQ((*catalog)[3].parameters, 2u * 32 * 16 + 32);
  EXPECT_EQ((*catalog)[1].size_bytes, fs::file_size(dir.file("m2.gguf")));
  EXPECT_EQ((*catalog)[0].main_type(), "bf16");

  // Batch commands name the models instead of opening one of them.
  auto opened = open_model(dir.path());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::usage);
  EXPECT_EQ(opened.error().file, dir.path());
  EXPECT_NE(opened.error().message.find("holds 4 models (folder, m2.gguf, m10.gguf, set-00001-of-00002.gguf)"),
            std::string::npos)
      << opened.error().to_string();
}

TEST(Catalog, BrokenModelGetsAnErrorAndTheOthersAreStillDescribed) {
  TempDir dir;
  write_gguf(dir.file("good.gguf"));
  ASSERT_TRUE(write_text(dir.file("broken.gguf"), "GGUF but not really"));
  auto catalog = list_catalog(dir.path());
  ASSERT_TRUE(catalog);
  ASSERT_EQ(names(*catalog), (std::vector<std::string>{"broken.gguf", "good.gguf"}));
  for (auto& e : *catalog) describe_catalog_entry(e);
  EXPECT_TRUE((*catalog)[0].described);
  EXPECT_NE((*catalog)[0].error.find("broken.gguf"), std::string::npos) << (*catalog)[0].error;
  EXPECT_EQ((*catalog)[0].error.find('\n'), std::string::npos);
  EXPECT_EQ((*catalog)[1].error, "");
  EXPECT_EQ((*catalog)[1].format, "gguf");
  EXPECT_EQ((*catalog)[1].main_type(), "q4_0");
}

TEST(Catalog, SingleModelsAreNotCatalogs) {
  TempDir dir;
  write_gguf(dir.file("one/model.gguf"));
  EXPECT_FALSE(list_catalog(dir.file("one/model.gguf")));   // a file
  EXPECT_FALSE(list_catalog(dir.file("one")));              // a folder of one GGUF
  make_dirs(dir.file("split"));
  ASSERT_EQ(write_gguf_split(dir.file("split"), "set", 2, gguf_model()).size(), 2u);
  EXPECT_FALSE(list_catalog(dir.file("split")));   // one split set
  write_st_folder(dir.file("st"));
  EXPECT_FALSE(list_catalog(dir.file("st")));       // model.safetensors
  write_gguf(dir.file("st/original/other.gguf"));   // a model folder's sub-folders are its own
  EXPECT_FALSE(list_catalog(dir.file("st")));
  make_dirs(dir.file("mlx"));
  ASSERT_TRUE(write_text(dir.file("mlx/config.json"), R"({"quantization": {"group_size": 64, "bits": 4}})"));
  EXPECT_FALSE(list_catalog(dir.file("mlx")));            // MLX config
  EXPECT_FALSE(list_catalog(dir.file("nothing-here")));   // absent
  make_dirs(dir.file("empty"));
  EXPECT_FALSE(list_catalog(dir.file("empty")));   // nothing in it: opening says so
  // A folder holding one model folder is a list of one: the folder itself would not open.
  make_dirs(dir.file("wrapper"));
  write_st_folder(dir.file("wrapper/inner"));
  auto wrapper = list_catalog(dir.file("wrapper"));
  ASSERT_TRUE(wrapper);
  EXPECT_EQ(names(*wrapper), std::vector<std::string>{"inner"});
}

// Sets an environment variable for the test's duration, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Catalog, DefaultStoresComeFromHomeOllamaModelsAndHfHome) {
  TempDir home, ollama, hf_home;
  write_ollama_store(ollama.path());
  write_hf_repo(hf_home.path() + "/hub", "models--org--tiny", {"0123456"});
  write_gguf(home.path() + "/.lmstudio/models/pub/tiny-GGUF/tiny-Q4_0.gguf");
  {
    ScopedEnv h("HOME", home.path().c_str()), o("OLLAMA_MODELS", ollama.path().c_str()),
        f("HF_HOME", hf_home.path().c_str()), c("HF_HUB_CACHE", nullptr);
    auto stores = list_default_stores();
    ASSERT_EQ(stores.size(), 3u);
    EXPECT_EQ(stores[0].source, "ollama");
    EXPECT_EQ(stores[0].path, ollama.path());
    EXPECT_EQ(names(stores[0].entries), (std::vector<std::string>{"st:int4", "tiny:latest"}));
    EXPECT_EQ(stores[1].source, "huggingface");
    EXPECT_EQ(stores[1].path, hf_home.path() + "/hub");
    EXPECT_EQ(names(stores[1].entries), std::vector<std::string>{"org/tiny"});
    EXPECT_EQ(stores[2].source, "lmstudio");
    EXPECT_EQ(names(stores[2].entries), std::vector<std::string>{"pub/tiny-GGUF"});
    EXPECT_EQ(stores[2].entries[0].source, "lmstudio");
  }
  {
    // Only what exists: no OLLAMA_MODELS, no HF_HOME, a HOME with only ~/.ollama/models (empty).
    TempDir bare;
    make_dirs(bare.path() + "/.ollama/models");
    ScopedEnv h("HOME", bare.path().c_str()), o("OLLAMA_MODELS", nullptr), f("HF_HOME", nullptr),
        c("HF_HUB_CACHE", nullptr);
    auto stores = list_default_stores();
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].source, "ollama");
    EXPECT_EQ(stores[0].path, bare.path() + "/.ollama/models");
    EXPECT_TRUE(stores[0].entries.empty());
  }
}

}   // namespace
}   // namespace akview::testing

// The model catalog: paths that hold several models (an Ollama models folder, a Hugging Face cache,
// an LM Studio models folder, a plain folder of GGUF files or model folders) and the local stores
// (PRODUCT.md "Inputs", "The terminal UI"). Listing is cheap (directory entries and sniffers, no
// model opened); describing one entry opens its headers and may be slow (the TUI runs it on a worker).
//
// What is a catalog (list_catalog), decided in this order:
//  * not a directory (a file, a manifest, `name:tag`): never a catalog.
//  * an Ollama models folder (manifests/ + blobs/) holding at least one model: a catalog, even of one
//    model, because the TUI lists a store it is given. Batch commands still open a store of exactly
//    one model directly (open_model does not refuse a store); list_catalog serves the TUI only.
//    An empty store is not a catalog: opening it says "holds no manifests".
//  * a Hugging Face hub cache (`models--org--name/snapshots/REV/` folders), the parent of one (a
//    folder holding `hub/`), or one `models--org--name` folder: each snapshot that is a model is an
//    entry "org/name" ("org/name@rev7" when the repo has several model snapshots); a snapshot that
//    holds several models (a GGUF repo) gives "org/name/<entry>". Snapshot files are symlinks into
//    ../../blobs and are followed. Non-model snapshots (tokenizer only) and datasets are skipped.
//  * any other folder: its own model, if the folder is one, plus
//      - each .gguf file that is not part of a split set, and each split set once (by its first part);
//      - each PyTorch checkpoint (.bin .pt .pth .ckpt, sniffed by content) when the folder is no
//        SafeTensors/MLX model (those ship pytorch_model.bin beside model.safetensors: the same model);
//      - each loose .safetensors file when the folder is not a SafeTensors model (several files, no index);
//      - each sub-folder that is a model ("sub") or itself a catalog ("sub/<entry>", 3 levels deep).
//    A folder that is itself a SafeTensors or MLX model (model.safetensors, an index, exactly one
//    .safetensors, config.json with quantization) is one model and never a catalog: its sub-folders
//    (original/, onnx/) are other copies of the same weights. A folder is not a catalog when it holds
//    exactly one GGUF model (one file or one split set) and no other model; otherwise it is a catalog
//    as soon as it holds one model (a folder holding one model folder lists it: opening the folder
//    itself would fail). An LM Studio models folder (publisher/repo/*.gguf) is this case two levels deep.
//  Hidden and partial entries (".*", "*.partial", "*-partial", "*.incomplete") are skipped everywhere.
//  Entries come in natural name order ("layers.2" < "layers.10"); names are relative to the path given.
//
// Batch commands: open_model (core/open_model.cpp, above the catalog) on a directory that list_catalog calls
// a catalog (other than an Ollama store) fails with a usage error naming the folder and its first models,
// instead of opening one of them. The catalog itself opens its entries through open_one_model.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fit/fit_estimate.hpp"
#include "core/names/model_config.hpp"

namespace akview {

// One type's share of a model (non-companion tensors; composite types carry bits and group).
struct CatalogType {
  std::string type;   // "q4_k", "mlx.affine 4-bit g64"
  uint64_t tensors = 0;
  uint64_t bytes = 0;
};

struct CatalogFile {
  std::string path;
  std::string role;   // SourceFile::role: "model", "shard 1/4", "blob", "config", ...
  uint64_t size = 0;
};

struct CatalogEntry {
  std::string name;   // "llama3.2:1b", "org/name", "org/name@1a2b3c4", "model.gguf", "folder", "ollama/llama3.2:1b"
  std::string open_path;   // what open_model() / open_one_model() take to open this one model
  std::string source;      // "ollama", "huggingface", "lmstudio", "folder"
  // Filled in by describe_catalog_entry (opens the headers):
  bool described = false;
  std::string format;               // Model::format
  uint64_t size_bytes = 0;          // sum of the sizes of the model's files
  uint64_t parameters = 0;          // Model::total_parameters()
  std::string model_name;           // general.name, when the model carries one
  uint64_t tensors = 0;             // non-companion tensors
  std::vector<CatalogType> types;   // by bytes, most first
  std::vector<CatalogFile> files;   // each file once, in the model's order
  ModelConfig config;               // empty (arch "") when the model carries none (or it does not parse)
  std::string error;                // one line (Error::to_string) when the model does not open
  // Will it fit (core/fit): the table over contexts for the default query (CPU only; llama.cpp's f16
  // KV cache, or a stored model's own dtype), the runtime and KV type it assumes; empty when the KV
  // cache could not be estimated.
  std::vector<fit::FitTableRow> fit;
  std::string fit_runtime, fit_kv_type;

  // The type holding the most bytes among non-companion tensors ("" before describe or on error).
  const std::string& main_type() const;
};

// nullopt when `path` is not a catalog (open it directly); otherwise the models it holds (rules above).
std::optional<std::vector<CatalogEntry>> list_catalog(const std::string& path);

// One local store that exists on this machine, with its models (possibly none).
struct CatalogStore {
  std::string source;   // "ollama", "huggingface", "lmstudio"
  std::string path;
  std::vector<CatalogEntry> entries;
};
// The stores that exist, in this order: Ollama ($OLLAMA_MODELS, else ~/.ollama/models), Hugging Face
// ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), LM Studio (~/.lmstudio/models).
// Grouped rather than flat so the list can show where models live, and that a store exists but is empty.
std::vector<CatalogStore> list_default_stores();

// Opens the entry's model (headers only) and fills the described fields, or `error`. Never throws;
// `cancel` is passed to the open.
void describe_catalog_entry(CatalogEntry& entry, const std::atomic<bool>* cancel = nullptr);

}   // namespace akview

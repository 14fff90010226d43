// `akview info`: what the model is: format, files, tensor and parameter counts, type mix.
#include <algorithm>
#include <map>

#include "core/names/model_config.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

std::string meta_string(const Model& model, std::string_view key) {
  const MetaEntry* m = model.find_meta(key);
  return m && m->value.type == MetaType::string ? std::string(m->value.str) : std::string();
}

}   // namespace

InfoReport make_info_report(const Model& model) {
  InfoReport r;
  r.path = model.path;
  r.format = model.format;
  r.architecture = meta_string(model, "general.architecture");
  if (r.architecture.empty())   // SafeTensors, MLX, Ollama safetensors: config.json's model_type
    if (auto config = extract_config(model)) r.architecture = config->arch;
  r.name = meta_string(model, "general.name");
  for (const auto& f : model.files) r.files.push_back({f.path, f.role, f.map.size(), f.header_bytes, f.data_offset});
  std::map<std::string, TypeMixRow> mix;
  for (const auto& t : model.tensors) {
    if (t.flags & kTensorCompanion) continue;
    ++r.tensors;
    uint64_t n = model.n_elements(t);
    r.parameters += n;
    r.bytes += t.nbytes;
    auto& row = mix[std::string(type_info(t.type).name)];
    row.type = type_info(t.type).name;
    ++row.tensors;
    row.parameters += n;
    row.bytes += t.nbytes;
  }
  for (auto& [_, row] : mix) r.types.push_back(row);
  std::sort(r.types.begin(), r.types.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  r.metadata_keys = model.meta.size();
  for (const auto& n : model.notes)
    r.notes.push_back({std::string(error_info(n.code).slug), n.file, n.offset, n.message, n.fails_check});
  return r;
}

}   // namespace akview

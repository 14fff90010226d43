// `akview meta [KEY]`: metadata keys with their types and values; arrays are read on demand and
// truncated in the overview (tokenizer arrays hold 100k+ strings).
#include <algorithm>

#include <fmt/format.h>

#include "core/formats/gguf.hpp"
#include "core/quote.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

nlohmann::json scalar_to_json(const MetaValue& v) {
  switch (v.type) {   // the value's active union member depends on its type
    case MetaType::u8:
    case MetaType::u16:
    case MetaType::u32:
    case MetaType::u64: return v.num.u;
    case MetaType::i8:
    case MetaType::i16:
    case MetaType::i32:
    case MetaType::i64: return v.num.i;
    case MetaType::f32:
    case MetaType::f64: return v.num.f;
    case MetaType::boolean: return v.num.u != 0;
    case MetaType::string: return std::string(v.str);
    case MetaType::json: {
      auto j = nlohmann::json::parse(v.str.begin(), v.str.end(), nullptr, false);
      return j.is_discarded() ? nlohmann::json(std::string(v.str)) : j;
    }
    case MetaType::array: return nullptr;
  }
  return nullptr;
}

Result<nlohmann::json> value_to_json(const Model& model, const MetaEntry& entry, const MetaValue& v, uint64_t max_elems,
                                     bool& truncated) {
  if (v.type != MetaType::array) return scalar_to_json(v);
  auto elems = read_gguf_array(model, entry, v, max_elems);
  if (!elems) return std::move(elems).error();
  if (elems->size() < v.count) truncated = true;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& e : *elems) {
    auto j = value_to_json(model, entry, e, max_elems, truncated);
    if (!j) return j.error();
    arr.push_back(std::move(*j));
  }
  return arr;
}

std::string type_label(const MetaValue& v) {
  if (v.type != MetaType::array) return std::string(meta_type_name(v.type));
  std::string inner(meta_type_name(v.elem_type));
  for (int d = 0; d < v.depth; ++d) inner = "ARRAY[" + inner + "]";
  return "ARRAY[" + inner + "]";
}

}   // namespace

Result<RowStream<MetaRow>> meta_row_source(const Model& model, const std::optional<std::string>& key,
                                           uint64_t max_array_elems) {
  if (key && std::none_of(model.meta.begin(), model.meta.end(), [&](const MetaEntry& m) { return m.key == *key; }))
    return make_error(ErrorCode::not_found, model.path, kNoOffset, fmt::format("no metadata key {}", quote_name(*key)));
  return RowStream<MetaRow>([&model, key, max_array_elems](const RowSink<MetaRow>& sink) -> Status {
    for (const auto& m : model.meta) {
      if (key && m.key != *key) continue;
      MetaRow row;
      row.key = m.key;
      row.type = type_label(m.value);
      row.count = m.value.type == MetaType::array ? m.value.count : 0;
      auto value = value_to_json(model, m, m.value, key ? ~uint64_t{0} : max_array_elems, row.truncated);
      if (!value) return std::move(value).error();
      row.value = std::move(*value);
      row.source = m.source;
      row.file = m.file < model.files.size() ? model.files[m.file].path : model.path;
      row.offset = m.offset;
      sink(row);
    }
    return Status();
  });
}

Result<std::vector<MetaRow>> make_meta_rows(const Model& model, const std::optional<std::string>& key,
                                            uint64_t max_array_elems) {
  auto source = meta_row_source(model, key, max_array_elems);
  if (!source) return std::move(source).error();
  return collect_rows(*source);
}

}   // namespace akview

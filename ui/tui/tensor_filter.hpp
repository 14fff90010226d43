// The Tensors filter (`\`): terms separated by spaces, all of which a row must pass. A term is a
// column and a value (`type:q6_k`, `layer:1`, `layer:2-5`, `role:attention`, values separated by
// commas) or a name pattern (ECMAScript regex over the native and canonical names, as before); a
// leading '!' inverts a term. Parsed once per keystroke; matching is per tensor and allocation-free.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/types.hpp"

namespace akview::tui {

// The prompt's label: what the filter takes.
inline constexpr std::string_view kFilterPrompt = "filter (name regex, type:q6_k, layer:1, role:norm; ! inverts)";

struct FilterTerm {
  enum class Key : uint8_t { name, type, layer, role };
  Key key = Key::name;
  bool invert = false;
  std::string literal;                       // name: plain characters and '.' (matched without std::regex)
  std::shared_ptr<const std::regex> regex;   // name: anything else
  std::array<bool, static_cast<size_t>(TypeId::count_)> types{};   // type: the types named
  std::vector<std::pair<int64_t, int64_t>> layers;                 // layer: inclusive ranges
  std::vector<std::string> roles;                                  // role: lower-case substrings of the mapped role
};

struct TensorFilter {
  std::vector<FilterTerm> terms;   // empty: every row passes
  bool empty() const { return terms.empty(); }
  // A single plain name term (no regex, not inverted): typing one more character only narrows it.
  bool plain_literal() const {
    return terms.size() == 1 && terms[0].key == FilterTerm::Key::name && !terms[0].invert && !terms[0].regex;
  }
};

// The filter `text` describes, or an error whose message says in one line what is wrong with it (a bad
// regex, an unknown column, a type or layer that cannot be).
Result<TensorFilter> parse_tensor_filter(std::string_view text);

// A pattern of plain characters and '.' (any character but a line break) found in `hay`, without std::regex.
bool dot_literal_search(std::string_view hay, std::string_view pat);
// Whether a name term matches one of the names (the canonical one may be empty), before inversion.
bool name_term_hits(const FilterTerm& term, std::string_view native, std::string_view canonical);
// Whether a column term matches a tensor of this type, layer (-1: none) and role ("" when unmapped), before inversion.
bool column_term_hits(const FilterTerm& term, TypeId type, int64_t layer, std::string_view role);

}   // namespace akview::tui

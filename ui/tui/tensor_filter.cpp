// The Tensors filter's terms (tensor_filter.hpp).
#include "ui/tui/tensor_filter.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

struct KeyName {
  std::string_view word;
  FilterTerm::Key key;
};
constexpr KeyName kKeys[] = {
    {"type", FilterTerm::Key::type},
    {"layer", FilterTerm::Key::layer},
    {"role", FilterTerm::Key::role},
    {"name", FilterTerm::Key::name},
};

bool is_dot_literal(std::string_view p) { return p.find_first_of("\\^$|?*+()[]{}") == std::string_view::npos; }

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// A filter that cannot be: what the prompt shows.
Error filter_error(std::string message) { return make_error(ErrorCode::usage, "", kNoOffset, std::move(message)); }

// The value of a `column:value` term, parsed into `term`; fails when it names nothing.
Status parse_value(FilterTerm& term, std::string_view value) {
  const std::vector<std::string_view> parts = split(value, ',');
  if (parts.empty()) return filter_error("filter: nothing after ':'");
  for (std::string_view part : parts) {
    switch (term.key) {   // one value syntax per column
      case FilterTerm::Key::type: {
        const std::string want = lower_ascii(part);
        bool any = false;
        for (const TypeInfo& t : all_types())
          if (lower_ascii(t.name) == want) term.types[static_cast<size_t>(t.id)] = any = true;
        if (!any)
          return filter_error(
              fmt::format("filter: no type '{}' (types as the type column shows them: q6_k, bf16, …)", part));
        break;
      }
      case FilterTerm::Key::layer: {
        const size_t dash = part.find('-', 1);
        const auto lo = parse_int(part.substr(0, dash));
        const auto hi = dash == std::string_view::npos ? lo : parse_int(part.substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
          return filter_error(fmt::format("filter: layer '{}' is not a number or a range like 2-5", part));
        term.layers.emplace_back(*lo, *hi);
        break;
      }
      case FilterTerm::Key::role: term.roles.push_back(lower_ascii(part)); break;
      case FilterTerm::Key::name: break;
    }
  }
  return Status();
}

Status parse_name(FilterTerm& term, std::string_view pattern) {
  if (is_dot_literal(pattern)) {
    term.literal = std::string(pattern);
    return Status();
  }
  try {
    term.regex =
        std::make_shared<const std::regex>(std::string(pattern), std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return filter_error(bad_pattern_message(pattern, e.what()));
  }
  return Status();
}

}   // namespace

Result<TensorFilter> parse_tensor_filter(std::string_view text) {
  TensorFilter filter;
  for (std::string_view word : split(text, ' ')) {
    FilterTerm term;
    if (word[0] == '!') {
      term.invert = true;
      word.remove_prefix(1);
      if (word.empty()) continue;   // a lone '!' while typing: nothing to invert yet
    }
    // `column:value` when the part before the first ':' is a word of letters; else a name pattern.
    const size_t colon = word.find(':');
    const std::string_view head = colon == std::string_view::npos ? std::string_view() : word.substr(0, colon);
    const bool keyed =
        !head.empty() && std::all_of(head.begin(), head.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    Status parsed;
    if (keyed) {
      const auto* k =
          std::find_if(std::begin(kKeys), std::end(kKeys), [&](const KeyName& n) { return n.word == head; });
      if (k == std::end(kKeys))
        return filter_error(
            fmt::format("filter: no column '{}' (type:, layer:, role:, name:, or a name pattern)", head));
      term.key = k->key;
      const std::string_view value = word.substr(colon + 1);
      if (value.empty()) continue;   // `type:` while typing: no term yet
      parsed = term.key == FilterTerm::Key::name ? parse_name(term, value) : parse_value(term, value);
    } else {
      parsed = parse_name(term, word);
    }
    AKV_TRY(parsed);
    filter.terms.push_back(std::move(term));
  }
  return filter;
}

bool dot_literal_search(std::string_view hay, std::string_view pat) {
  if (pat.size() > hay.size()) return false;
  if (pat.find('.') == std::string_view::npos) return hay.find(pat) != std::string_view::npos;
  auto match_at = [&](size_t i) {
    size_t k = 0;
    while (k < pat.size() && (pat[k] == '.' ? hay[i + k] != '\n' && hay[i + k] != '\r' : hay[i + k] == pat[k])) ++k;
    return k == pat.size();
  };
  // The longest run without a dot is looked for with find() (memchr and memcmp); only where it
  // occurs is the whole pattern tried.
  size_t anchor = 0, anchor_len = 0;
  for (size_t a = 0; a < pat.size();) {
    size_t b = a;
    while (b < pat.size() && pat[b] != '.') ++b;
    if (b - a > anchor_len) anchor = a, anchor_len = b - a;
    a = b + 1;
  }
  if (anchor_len == 0) {
    for (size_t i = 0; i + pat.size() <= hay.size(); ++i)
      if (match_at(i)) return true;
    return false;
  }
  const std::string_view run = pat.substr(anchor, anchor_len);
  for (size_t p = hay.find(run, anchor); p != std::string_view::npos; p = hay.find(run, p + 1)) {
    const size_t i = p - anchor;
    if (i + pat.size() > hay.size()) return false;
    if (match_at(i)) return true;
  }
  return false;
}

bool name_term_hits(const FilterTerm& term, std::string_view native, std::string_view canonical) {
  if (term.regex)
    return std::regex_search(native.begin(), native.end(), *term.regex) ||
           (!canonical.empty() && std::regex_search(canonical.begin(), canonical.end(), *term.regex));
  return dot_literal_search(native, term.literal) ||
         (!canonical.empty() && dot_literal_search(canonical, term.literal));
}

bool column_term_hits(const FilterTerm& term, TypeId type, int64_t layer, std::string_view role) {
  switch (term.key) {   // one test per column
    case FilterTerm::Key::type: return term.types[static_cast<size_t>(type)];
    case FilterTerm::Key::layer:
      return std::any_of(term.layers.begin(), term.layers.end(),
                         [&](const auto& r) { return layer >= r.first && layer <= r.second; });
    case FilterTerm::Key::role:
      return !role.empty() && std::any_of(term.roles.begin(), term.roles.end(), [&](const std::string& r) {
        return find_ignore_case(role, r) != std::string_view::npos;
      });
    case FilterTerm::Key::name: break;
  }
  return false;
}

}   // namespace akview::tui

// The Tensors table's rows (tensor_table.hpp).
#include "ui/tui/tensor_table.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>

#include "ui/batch/commands.hpp"
#include "ui/tui/tensor_filter.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

constexpr std::array<ColumnSpec, static_cast<size_t>(Column::count_)> kColumns = {{
    {Column::name, "name", 0, 0, false},
    {Column::type, "type", 11, 1, false},
    {Column::shape, "shape", 14, 2, false},
    {Column::params, "params", 7, 5, true},
    {Column::bytes, "bytes", 10, 3, true},
    {Column::bpw, "bpw", 5, 6, true},
    {Column::file, "file", 12, 10, false},
    {Column::offset, "offset", 10, 11, true},
    {Column::min, "min", 9, 7, true},
    {Column::max, "max", 9, 8, true},
    {Column::std, "std", 9, 9, true},
    {Column::hist, "histogram", 9, 4, false},
}};

constexpr bool columns_in_order() {
  for (size_t i = 0; i < kColumns.size(); ++i)
    if (static_cast<size_t>(kColumns[i].id) != i) return false;
  return true;
}
static_assert(columns_in_order(), "one ColumnSpec per Column, in enum order");

bool icontains(std::string_view hay, std::string_view needle) {
  return needle.empty() || find_ignore_case(hay, lower_ascii(needle)) != std::string_view::npos;
}

// A layer number from a native name when there is no name map: the number after blk/layers/layer/h/block.
int64_t parse_layer(std::string_view name) {
  static constexpr std::string_view kWords[] = {"blk", "layers", "layer", "h", "block", "blocks"};
  size_t start = 0;
  std::string_view prev;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!part.empty() && part.size() < 10 &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::find(std::begin(kWords), std::end(kWords), prev) != std::end(kWords))
      return std::stoll(std::string(part));
    if (dot == std::string_view::npos) break;
    prev = part;
    start = dot + 1;
  }
  return -1;
}

}   // namespace

std::span<const ColumnSpec> column_specs() { return kColumns; }

TensorTable::TensorTable(const ModelSession& session) : session_(session) {
  const Model& m = session.model;
  // The model's order puts each companion right after its tensor (order_companions).
  auto owns = [&](uint32_t owner, uint32_t c) {
    const Tensor& t = m.tensors[owner];
    if ((t.flags & kTensorCompanion) || t.quant >= m.quants.size()) return false;
    const QuantInfo& q = m.quants[t.quant];
    return c == q.scales || c == q.biases || c == q.global_scale;
  };
  // Units are stored only when some tensor has companions; a plain model's unit u is tensor u.
  const auto n = static_cast<uint32_t>(m.tensors.size());
  bool companions = false;   // a unit's first companion comes right after its tensor
  for (uint32_t i = 0; i < n; ++i) {
    all_bytes_ += m.tensors[i].nbytes;
    companions = companions || (i > 0 && (m.tensors[i].flags & kTensorCompanion) && owns(i - 1, i));
  }
  if (companions) {
    units_.reserve(n);
    unit_end_.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (!units_.empty() && (m.tensors[i].flags & kTensorCompanion) && owns(units_.back(), i)) {
        unit_end_.back() = i + 1;
      } else {
        units_.push_back(i);
        unit_end_.push_back(i + 1);
      }
    }
  }
  unit_count_ = companions ? static_cast<uint32_t>(units_.size()) : n;
  rebuild_rows();
}

uint64_t TensorTable::shown_parameters() const {
  if (!shown_params_) {
    uint64_t params = 0;
    for (uint32_t u = 0; u < unit_count_; ++u)
      if (kept(u)) params += session_.model.n_elements(session_.model.tensors[lead(u)]);
    shown_params_ = params;
  }
  return *shown_params_;
}

std::string_view TensorTable::display_name(uint32_t tensor) const {
  if (show_canonical_)
    if (const std::string_view c = session_.canonical(tensor); !c.empty()) return c;
  return session_.model.tensors[tensor].name;
}

double TensorTable::bits_per_weight(uint32_t tensor) const {
  const Model& m = session_.model;
  const Tensor& t = m.tensors[tensor];
  if (t.quant >= m.quants.size()) return type_bits_per_weight(t.type);
  uint64_t all = t.nbytes;
  const QuantInfo& q = m.quants[t.quant];
  for (uint32_t k : {q.scales, q.biases, q.global_scale})
    if (k < m.tensors.size()) all += m.tensors[k].nbytes;
  const uint64_t n = m.n_elements(t);
  return n ? 8.0 * static_cast<double>(all) / static_cast<double>(n) : 0.0;
}

int64_t TensorTable::layer_of(uint32_t tensor) const {
  if (const auto e = session_.entry(tensor)) return e->layer;
  return parse_layer(session_.model.tensors[tensor].name);
}

bool TensorTable::unit_matches(uint32_t u) const {
  // Every term must pass. A name term passes when the tensor or one of its companions matches (as the
  // name filter always did); a column term looks at the unit's tensor, not at its scales.
  const Model& m = session_.model;
  const uint32_t lead = this->lead(u);
  for (const FilterTerm& term : terms_.terms) {
    bool hit = false;
    if (term.key == FilterTerm::Key::name) {
      for (uint32_t t = lead; t < unit_end(u) && !hit; ++t)
        hit = name_term_hits(term, m.tensors[t].name, session_.canonical(t));
    } else {
      const auto entry = term.key == FilterTerm::Key::role ? session_.entry(lead) : std::nullopt;
      hit = column_term_hits(term, m.tensors[lead].type, term.key == FilterTerm::Key::layer ? layer_of(lead) : -1,
                             entry ? entry->role : std::string_view());
    }
    if (hit == term.invert) return false;
  }
  return true;
}

Status TensorTable::set_filter(std::string_view pattern) {
  Result<TensorFilter> parsed = parse_tensor_filter(pattern);
  if (!parsed) return std::move(parsed).error();
  TensorFilter terms = std::move(*parsed);
  // Backspace returns to a pattern typed a moment ago: its result is taken back, not recomputed.
  for (size_t h = filter_history_.size(); h-- > 0;) {
    if (filter_history_[h].pattern != pattern) continue;
    const std::vector<uint64_t>& bits = filter_history_[h].keep;
    keep_.resize(unit_count_);
    for (uint32_t u = 0; u < unit_count_; ++u) keep_[u] = static_cast<uint8_t>(bits[u / 64] >> (u % 64) & 1);
    filter_history_.resize(h + 1);
    filter_ = std::string(pattern);
    terms_ = std::move(terms);
    rebuild_rows();
    return Status();
  }
  // Typing one more character of a plain name only narrows: test the units kept so far.
  const bool narrowing = terms.plain_literal() && terms_.plain_literal() && !terms_.terms[0].literal.empty() &&
                         terms.terms[0].literal.find(terms_.terms[0].literal) != std::string::npos;
  filter_ = std::string(pattern);
  terms_ = std::move(terms);
  if (terms_.empty()) {
    keep_.clear();   // every unit passes
  } else {
    if (!narrowing) keep_.assign(unit_count_, 1);
    for (uint32_t u = 0; u < unit_count_; ++u) {
      if (narrowing && !keep_[u]) continue;
      keep_[u] = static_cast<uint8_t>(unit_matches(u));
    }
  }
  // Remembered as bits (a million units: 125 KB a pattern), the last kFilterHistory patterns.
  if (!terms_.empty()) {
    if (filter_history_.size() >= kFilterHistory) filter_history_.erase(filter_history_.begin());
    FilterResult r{std::string(pattern), std::vector<uint64_t>((unit_count_ + 63) / 64, 0)};
    for (uint32_t u = 0; u < unit_count_; ++u) r.keep[u / 64] |= uint64_t{keep_[u]} << (u % 64);
    filter_history_.push_back(std::move(r));
  }
  rebuild_rows();
  return Status();
}

bool TensorTable::less(Column c, uint32_t a, uint32_t b) const {
  const Model& m = session_.model;
  const Tensor &ta = m.tensors[a], &tb = m.tensors[b];
  auto value = [&](uint32_t t, auto field) {
    const ValueSummary* v = session_.value(t);
    return v && v->state == ValueSummary::State::done ? static_cast<double>(v->*field) : 1e300;   // unknown last
  };
  switch (c) {   // one comparison per column
    case Column::name: return natural_less(display_name(a), display_name(b));
    case Column::type: return type_info(ta.type).name < type_info(tb.type).name;
    case Column::shape: {
      auto sa = m.shape(ta), sb = m.shape(tb);
      return std::lexicographical_compare(sa.begin(), sa.end(), sb.begin(), sb.end());
    }
    case Column::params: return m.n_elements(ta) < m.n_elements(tb);
    case Column::bytes: return ta.nbytes < tb.nbytes;
    case Column::bpw: return bits_per_weight(a) < bits_per_weight(b);
    case Column::file: return ta.file != tb.file ? ta.file < tb.file : ta.offset < tb.offset;
    case Column::offset: return ta.offset < tb.offset;
    case Column::min: return value(a, &ValueSummary::min) < value(b, &ValueSummary::min);
    case Column::max: return value(a, &ValueSummary::max) < value(b, &ValueSummary::max);
    case Column::std:
    case Column::hist: return value(a, &ValueSummary::std) < value(b, &ValueSummary::std);
    case Column::count_: break;
  }
  return false;
}

const std::vector<uint32_t>* TensorTable::sorted_units() {
  auto key = std::make_pair(sort_, descending_);
  auto it = sort_cache_.find(key);
  if (it != sort_cache_.end()) return &it->second;
  const Column c = sort_;
  const bool desc = descending_;
  const Model& m = session_.model;
  std::vector<uint32_t> order(unit_count_);
  if (auto rev = sort_cache_.find(std::make_pair(c, !desc)); rev != sort_cache_.end()) {
    // The opposite direction is known: reverse it (O(n)), then put each run of equal keys back in
    // the model's order, as a stable sort leaves them.
    order.assign(rev->second.rbegin(), rev->second.rend());
    auto equal = [&](uint32_t x, uint32_t y) { return !less(c, lead(x), lead(y)) && !less(c, lead(y), lead(x)); };
    for (size_t i = 0; i < order.size();) {
      size_t j = i + 1;
      while (j < order.size() && equal(order[j - 1], order[j])) ++j;
      std::reverse(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(j));
      i = j;
    }
    return &sort_cache_.emplace(key, std::move(order)).first->second;
  }
  std::iota(order.begin(), order.end(), 0u);
  auto stable = [&](auto&& less_than) {
    if (desc) std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return less_than(y, x); });
    else std::stable_sort(order.begin(), order.end(), less_than);
  };
  if (c == Column::name) {
    if (unit_count_ >= async_name_sort_units_) {
      // Too many names to sort between two frames: the model's order until the worker's order lands.
      name_sort_pending_ = true;
      return nullptr;
    }
    NameOrders orders = natural_name_orders(m, NameSortRequest{show_canonical_, session_.names_version, session_.names,
                                                               session_.entry_of, units_, unit_count_});
    sort_cache_[std::make_pair(c, false)] = std::move(orders.ascending);
    sort_cache_[std::make_pair(c, true)] = std::move(orders.descending);
    return &sort_cache_[key];
  } else if (c == Column::bytes || c == Column::params || c == Column::offset) {
    std::vector<uint64_t> k(unit_count_);
    for (uint32_t u = 0; u < unit_count_; ++u) {
      const Tensor& t = m.tensors[lead(u)];
      k[u] = c == Column::bytes ? t.nbytes : c == Column::params ? m.n_elements(t) : t.offset;
    }
    stable([&](uint32_t x, uint32_t y) { return k[x] < k[y]; });
  } else {
    stable([&](uint32_t x, uint32_t y) { return less(c, lead(x), lead(y)); });
  }
  return &sort_cache_.emplace(key, std::move(order)).first->second;
}

NameOrders natural_name_orders(const Model& model, const NameSortRequest& r) {
  // One natural-order key per unit in one buffer, then byte comparisons (natural_order.hpp).
  auto shown = [&](uint32_t tensor) -> std::string_view {
    if (r.canonical && r.names && tensor < r.entry_of.size() && r.entry_of[tensor] != kNone)
      if (const std::string_view c = r.names->entries.canonical(r.entry_of[tensor]); !c.empty()) return c;
    return model.tensors[tensor].name;
  };
  // Sized once (a million keys take ~25 MB; growing by doubling would hold half as much again).
  const uint32_t n = r.unit_count;
  auto lead = [&](uint32_t u) { return r.units.empty() ? u : r.units[u]; };
  size_t total = 0;
  for (uint32_t u = 0; u < n; ++u) total += natural_key_size(shown(lead(u)));
  std::string keys;
  keys.reserve(total);
  std::vector<uint32_t> at(n + 1);
  for (uint32_t u = 0; u < n; ++u) {
    at[u] = static_cast<uint32_t>(keys.size());
    append_natural_key(keys, shown(lead(u)));
  }
  at.back() = static_cast<uint32_t>(keys.size());
  auto key = [&](uint32_t u) { return std::string_view(keys).substr(at[u], at[u + 1] - at[u]); };
  NameOrders o;
  o.ascending.resize(n);
  std::iota(o.ascending.begin(), o.ascending.end(), 0u);
  std::stable_sort(o.ascending.begin(), o.ascending.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
  // Descending: the reverse, with each run of equal keys put back in the units' order.
  o.descending.assign(o.ascending.rbegin(), o.ascending.rend());
  for (size_t i = 0; i < o.descending.size();) {
    size_t j = i + 1;
    while (j < o.descending.size() && key(o.descending[j - 1]) == key(o.descending[j])) ++j;
    std::reverse(o.descending.begin() + static_cast<std::ptrdiff_t>(i),
                 o.descending.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
  return o;
}

std::optional<NameSortRequest> TensorTable::take_name_sort_request() {
  if (!name_sort_pending_ || name_sort_requested_) return std::nullopt;
  name_sort_requested_ = true;
  return NameSortRequest{show_canonical_, session_.names_version, session_.names, session_.entry_of, units_,
                         unit_count_};
}

void TensorTable::install_name_orders(bool canonical, uint64_t names_version, NameOrders orders) {
  name_sort_requested_ = false;
  if (canonical != show_canonical_ || names_version != session_.names_version || orders.ascending.size() != unit_count_)
    return;   // stale: still pending, and the next request asks again
  name_sort_pending_ = false;
  sort_cache_[std::make_pair(Column::name, false)] = std::move(orders.ascending);
  sort_cache_[std::make_pair(Column::name, true)] = std::move(orders.descending);
  rebuild_rows();
}

void TensorTable::cancel_name_sort() {
  if (!name_sort_pending_) return;
  name_sort_pending_ = name_sort_requested_ = false;
  sorted_ = false;
  descending_ = false;
  rebuild_rows();
}

void TensorTable::set_sort(Column column, bool descending) {
  sort_ = column;
  descending_ = descending;
  sorted_ = true;
  rebuild_rows();
}

void TensorTable::set_grouping(bool by_layer) {
  grouping_ = by_layer;
  rebuild_rows();
}

void TensorTable::toggle_fold(uint32_t row) {
  if (!is_group(row)) return;
  bool& f = folded_[groups_[row & ~kGroupRow].layer];
  f = !f;
  rebuild_rows();
}

void TensorTable::refresh(bool names_changed) {
  for (auto it = sort_cache_.begin(); it != sort_cache_.end();) {
    Column c = it->first.first;
    bool stale = c == Column::min || c == Column::max || c == Column::std || c == Column::hist ||
                 (names_changed && c == Column::name);
    it = stale ? sort_cache_.erase(it) : std::next(it);
  }
  if (names_changed) filter_history_.clear();   // canonical names match from now on
  if (names_changed && !filter_.empty()) {
    // Canonical names now match too (the filter parsed before: it cannot fail now). Every unit is
    // tested again: what the native names left out may match now, so this is no narrowing.
    terms_ = TensorFilter{};
    static_cast<void>(set_filter(std::string(filter_)));
    return;
  }
  rebuild_rows();
}

void TensorTable::rebuild_rows() {
  ++rows_version_;
  shown_ = 0;
  const Model& m = session_.model;
  // The sort's unit order; nullptr: the model's order (unsorted, or a name sort the worker has not
  // answered yet), reversed when unsorted and descending.
  const std::vector<uint32_t>* order = sorted_ ? sorted_units() : nullptr;
  const bool reversed = !sorted_ && descending_;
  const bool model_order = !order && !reversed;
  auto unit_at = [&](uint32_t k) -> uint32_t { return order ? (*order)[k] : reversed ? unit_count_ - 1 - k : k; };
  // The totals of the rows passing the filter; with none, the model's (its parameters counted when asked).
  shown_params_.reset();
  if (keep_.empty()) {
    shown_ = m.tensors.size();
    shown_units_ = unit_count_;
    shown_bytes_ = all_bytes_;
  } else {
    shown_ = shown_units_ = shown_bytes_ = 0;
    uint64_t params = 0;
    for (uint32_t u = 0; u < unit_count_; ++u) {
      if (!keep_[u]) continue;
      shown_ += unit_end(u) - lead(u);
      ++shown_units_;
      params += m.n_elements(m.tensors[lead(u)]);
      for (uint32_t t = lead(u); t < unit_end(u); ++t) shown_bytes_ += m.tensors[t].nbytes;
    }
    shown_params_ = params;
  }
  if (!grouping_ && model_order && keep_.empty()) {
    // Every tensor in the model's order (units are runs of consecutive tensors): row r is tensor r.
    rows_.set_identity(m.tensors.size());
    return;
  }
  std::vector<uint32_t>& rows = rows_.store();
  auto add_unit = [&](uint32_t u) {
    for (uint32_t t = lead(u); t < unit_end(u); ++t) rows.push_back(t);
  };
  if (!grouping_) {
    rows.reserve(shown_);
    for (uint32_t k = 0; k < unit_count_; ++k)
      if (const uint32_t u = unit_at(k); kept(u)) add_unit(u);
    return;
  }
  // Group by layer: layers in numeric order (tensors outside any layer first), the sort inside each.
  std::map<int64_t, std::vector<uint32_t>> by_layer;
  for (uint32_t k = 0; k < unit_count_; ++k)
    if (const uint32_t u = unit_at(k); kept(u)) by_layer[layer_of(lead(u))].push_back(u);
  groups_.clear();
  for (auto& [layer, members] : by_layer) {
    LayerGroup g;
    g.layer = layer;
    g.folded = folded_[layer];
    for (uint32_t u : members)
      for (uint32_t t = lead(u); t < unit_end(u); ++t) {
        ++g.tensors;
        g.bytes += m.tensors[t].nbytes;
      }
    rows.push_back(kGroupRow | static_cast<uint32_t>(groups_.size()));
    groups_.push_back(g);
    if (!g.folded)
      for (uint32_t u : members) add_unit(u);
  }
}

int64_t TensorTable::search(std::string_view needle, int64_t from, int dir) const {
  const int64_t n = static_cast<int64_t>(rows_.size());
  if (n == 0 || needle.empty()) return -1;
  from = std::clamp<int64_t>(from, 0, n - 1);
  for (int64_t k = 0; k < n; ++k) {
    int64_t r = ((from + (dir >= 0 ? k : -k)) % n + n) % n;
    uint32_t row = rows_[static_cast<size_t>(r)];
    if (!is_group(row) && icontains(display_name(row), needle)) return r;
  }
  return -1;
}

int64_t TensorTable::row_of(uint32_t tensor) const { return rows_.find(tensor); }

}   // namespace akview::tui

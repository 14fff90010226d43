// The Tensors table as data: which tensors are shown and in what order, as indices (never strings),
// so a 1,000,000-tensor model costs what its Model costs. Filter, sort (natural order for names),
// group by layer with folding, and search permute indices; scales and biases stay beneath their
// tensor under every sort and filter (a tensor and its companions move as one unit).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ui/tui/row_list.hpp"
#include "ui/tui/session.hpp"
#include "ui/tui/tensor_filter.hpp"

namespace akview::tui {

enum class Column : uint8_t { name, type, shape, params, bytes, bpw, file, offset, min, max, std, hist, count_ };

struct ColumnSpec {
  Column id;
  std::string_view title;
  int width;      // columns (the name column takes what is left)
  int priority;   // lower stays longer when the terminal is narrow
  bool right;     // right-aligned
};
// One row per column, in display order.
std::span<const ColumnSpec> column_specs();

// A name sort of a big table, to run on the worker: what it needs copied out of the session (the
// UI thread may replace the name map meanwhile), and what it was asked for.
struct NameSortRequest {
  bool canonical = true;
  uint64_t names_version = 0;
  std::shared_ptr<const NameMap> names;
  std::vector<uint32_t> entry_of;   // tensor -> names->entries index (ModelSession::entry_of)
  std::vector<uint32_t> units;      // the units' leading tensors; empty: unit u is tensor u
  uint32_t unit_count = 0;
};
// Unit indices in natural order of the names shown (canonical where mapped and asked for, else
// native), ascending and descending; ties keep the units' order in both.
struct NameOrders {
  std::vector<uint32_t> ascending, descending;
};
NameOrders natural_name_orders(const Model& model, const NameSortRequest& request);

class TensorTable {
 public:
  static constexpr uint32_t kGroupRow = 0x80000000u;   // row value of a layer header: kGroupRow | group

  struct LayerGroup {
    int64_t layer = -1;   // -1: tensors outside any layer
    uint32_t tensors = 0;
    uint64_t bytes = 0;
    bool folded = false;
  };

  explicit TensorTable(const ModelSession& session);

  // The rows shown: tensor indices, and layer headers (kGroupRow | group) when grouped. Virtual (no
  // index stored) in the model's order with nothing filtered or grouped.
  const RowList& rows() const { return rows_; }
  uint64_t rows_version() const { return rows_version_; }   // bumped whenever rows() is rebuilt
  bool is_group(uint32_t row) const { return row & kGroupRow; }
  const LayerGroup& group(uint32_t row) const { return groups_[row & ~kGroupRow]; }
  uint64_t shown_tensors() const { return shown_; }   // tensor rows passing the filter (folded ones too)
  // Totals of the rows passing the filter: tensors without their companions (as the title counts
  // them), their parameters, and bytes with the companions' (scales belong to a tensor's size).
  uint64_t shown_units() const { return shown_units_; }
  uint64_t shown_parameters() const;
  uint64_t shown_bytes() const { return shown_bytes_; }
  uint64_t all_bytes() const { return all_bytes_; }   // every tensor's bytes, the share's denominator

  void set_show_canonical(bool on) { show_canonical_ = on; }
  bool show_canonical() const { return show_canonical_; }
  // The name shown: canonical (when mapped and chosen) or native.
  std::string_view display_name(uint32_t tensor) const;

  // The filter of tensor_filter.hpp: name patterns (ECMAScript regex over native and canonical
  // names) and column terms (type:, layer:, role:), all of which must pass; "" clears. Fails for a
  // filter that cannot be (a bad regex, an unknown column: the filter is then unchanged); the error's
  // message says why.
  Status set_filter(std::string_view pattern);
  const std::string& filter() const { return filter_; }
  void set_sort(Column column, bool descending);
  bool sorted() const { return sorted_; }   // false: the model's own order
  bool sorted_by_values() const {
    return sorted_ && (sort_ == Column::min || sort_ == Column::max || sort_ == Column::std || sort_ == Column::hist);
  }
  Column sort_column() const { return sort_; }
  bool sort_descending() const { return descending_; }
  void set_grouping(bool by_layer);
  bool grouping() const { return grouping_; }
  void toggle_fold(uint32_t row);
  // Re-sorts after the value statistics or the name map changed (sorts by them are cached).
  void refresh(bool names_changed);

  // Tables of at least this many units sort by name on the worker: the sort stays pending (rows in
  // the model's order) until its order is installed.
  static constexpr size_t kAsyncNameSortUnits = 50000;
  void set_async_name_sort_units(size_t units) { async_name_sort_units_ = units; }
  bool name_sort_pending() const { return name_sort_pending_; }
  // The pending name sort to hand to the worker, once per request.
  std::optional<NameSortRequest> take_name_sort_request();
  // The worker's answer; ignored when the names shown changed since the request (a new one follows).
  void install_name_orders(bool canonical, uint64_t names_version, NameOrders orders);
  // Esc while sorting: back to the model's order.
  void cancel_name_sort();

  // First tensor row at or after `from` (dir > 0) or at or before it (dir < 0), wrapping, whose shown
  // name contains `needle` (case-insensitive); -1 when none.
  int64_t search(std::string_view needle, int64_t from, int dir) const;
  int64_t layer_of(uint32_t tensor) const;
  // Stored bits per element (composite types include their scales and biases).
  double bits_per_weight(uint32_t tensor) const;
  // The row index showing `tensor`, or -1.
  int64_t row_of(uint32_t tensor) const;

 private:
  bool unit_matches(uint32_t unit) const;
  // Unit u: tensors lead(u) .. unit_end(u)-1, the tensor and its companions.
  uint32_t lead(uint32_t u) const { return units_.empty() ? u : units_[u]; }
  uint32_t unit_end(uint32_t u) const { return unit_end_.empty() ? u + 1 : unit_end_[u]; }
  bool kept(uint32_t u) const { return keep_.empty() || keep_[u]; }
  // The unit order of the sort asked for; nullptr: the model's order.
  const std::vector<uint32_t>* sorted_units();
  void rebuild_rows();
  bool less(Column c, uint32_t a, uint32_t b) const;

  const ModelSession& session_;
  // Leading tensor of each unit in model order, and the end of its run of companions; both empty
  // when no tensor has companions (unit u is then tensor u: nothing to store for a plain model).
  std::vector<uint32_t> units_;
  std::vector<uint32_t> unit_end_;
  uint32_t unit_count_ = 0;
  std::vector<uint8_t> keep_;   // per unit: passes the filter; empty: no filter, every unit passes
  // The filters typed last and their results (so Backspace answers at once on a big model).
  struct FilterResult {
    std::string pattern;
    std::vector<uint64_t> keep;   // bit u: unit u passes
  };
  static constexpr size_t kFilterHistory = 64;
  std::vector<FilterResult> filter_history_;
  std::map<std::pair<Column, bool>, std::vector<uint32_t>> sort_cache_;   // unit order per sort
  std::vector<LayerGroup> groups_;
  std::map<int64_t, bool> folded_;   // layer -> folded (kept across rebuilds)
  RowList rows_;
  uint64_t rows_version_ = 0;
  size_t async_name_sort_units_ = kAsyncNameSortUnits;
  bool name_sort_pending_ = false;     // a name sort waits for the worker
  bool name_sort_requested_ = false;   // ... and was handed to it
  std::string filter_;
  TensorFilter terms_;   // filter_ parsed
  Column sort_ = Column::name;
  bool sorted_ = false;   // false: the model's own order
  bool descending_ = false;
  bool grouping_ = false;
  bool show_canonical_ = true;
  uint64_t shown_ = 0;
  uint64_t shown_units_ = 0, shown_bytes_ = 0, all_bytes_ = 0;
  mutable std::optional<uint64_t> shown_params_;   // counted when first asked
};

}   // namespace akview::tui

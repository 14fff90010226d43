// `akview diff A B` as data (PRODUCT.md batch mode): pairs two Models' tensors through canonical
// names (native names where neither side maps), reports missing tensors and shape/type changes and,
// when asked, each pair's value error (max abs, RMS, relative RMS, cosine), streamed in row chunks
// on every thread with progress and cancellation. B is the reference: errors are of A's values against B's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

// Decodes rows [row_begin, row_end) of tensor `index` of `model` (logical shape: rows = all but the
// innermost dimension) into `out`. The default decodes through core/decode (PyTorch strided views
// are gathered first). Called from several threads at once (DiffOptions::threads).
using RowDecoder =
    std::function<Status(const Model& model, uint32_t index, int64_t row_begin, int64_t row_end, float* out)>;
Status decode_tensor_rows(const Model& model, uint32_t index, int64_t row_begin, int64_t row_end, float* out);

struct ValueError {
  double max_abs = 0;
  double rmse = 0;
  double rel_rmse = 0;   // rmse / RMS of B (0 when B is all zero)
  double cosine = 0;     // of A and B as flat vectors (1 when both are zero)
  uint64_t elements = 0;
};

struct TensorDiff {
  std::string key;   // canonical name (the per-expert one for a stacked pair), or the native name for unmapped pairs
  bool canonical = true;           // false: paired by native name
  uint32_t a = kNone, b = kNone;   // tensor indices; kNone = missing on that side
  // MoE: a side whose experts are stacked in one [E, ...] tensor is compared expert by expert with
  // the other side's per-expert tensors: the expert's slice of the stacked tensor (-1: the whole tensor).
  int64_t a_expert = -1, b_expert = -1;
  bool shape_differs = false;
  bool type_differs = false;
  std::string_view note;   // conversion transform the rule expects (llama q/k permutation, gemma +1)
  bool has_values = false;
  ValueError error;
  std::string value_problem;   // why values were not compared ("" when they were or were not asked for)
};

struct DiffReport {
  std::vector<TensorDiff> rows;   // A's order, then B-only tensors
  size_t only_a = 0, only_b = 0, shape_changes = 0, type_changes = 0;
  bool cancelled = false;
};

struct DiffOptions {
  bool values = false;                    // compute value errors
  RowDecoder decode;                      // empty: decode_tensor_rows
  uint64_t chunk_elems = 1 << 16;         // elements decoded per step, side and thread (bounds memory;
                                          // 2 x 256 KiB of floats stay in a core's L2 while compared)
  int threads = 0;                        // threads that decode and compare (0: all the machine has);
                                          // the sums merge in chunk order, so any count gives the same bits
  std::function<void(double)> progress;   // in [0,1], over the pairs compared
  const std::atomic<bool>* cancel = nullptr;
};

DiffReport diff_models(const Model& a, const Model& b, const DiffOptions& options = {});
// The same rows handed to `sink` as they are made (A's order, then B-only tensors); the report
// returned has the counts and no rows. Pairing holds a hash and an index per tensor of B, no names.
using DiffSink = std::function<void(const TensorDiff&)>;
DiffReport diff_models(const Model& a, const Model& b, const DiffOptions& options, const DiffSink& sink);

// The value error of tensor `ia` of `a` against `ib` of `b` (same element count and row length).
Result<ValueError> compare_values(const Model& a, uint32_t ia, const Model& b, uint32_t ib,
                                  const DiffOptions& options = {});
// The same for a row's sides as TensorDiff names them: an expert's slice of a stacked tensor is its
// rows [E·n, (E+1)·n) where n is the other side's row count.
Result<ValueError> compare_values(const Model& a, const Model& b, const TensorDiff& pair,
                                  const DiffOptions& options = {});

// "layers.3.ffn.experts.up.weight" <-> "layers.3.ffn.experts.7.up.weight": the stacked key of a
// per-expert canonical name (and its expert), or a stacked name's key for expert `e`. Empty/nullopt
// when the name is not of that form.
struct ExpertKey {
  std::string stacked;
  int64_t expert = -1;
};
std::optional<ExpertKey> split_expert_key(std::string_view per_expert);
std::string expert_key(std::string_view stacked, int64_t expert);   // "" when not an experts name

}   // namespace akview

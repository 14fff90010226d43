// Printers: render reports as text for people, JSON for scripts, CSV for tables.
// Text output escapes control characters (ui/text/escape.hpp), so a hostile tensor name never reaches
// the terminal raw.
#pragma once

#include <algorithm>
#include <cstdio>
#include <future>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/catalog.hpp"
#include "core/layout/block_fields.hpp"
#include "core/model.hpp"
#include "core/result.hpp"
#include "ui/batch/json_writer.hpp"
#include "ui/batch/reports.hpp"
#include "ui/text/escape.hpp"
#include "ui/text/format.hpp"

namespace akview {

enum class OutputFormat { text, json, csv };

nlohmann::json to_json(const InfoReport& r);
nlohmann::json to_json(const CheckReport& r);
nlohmann::json to_json(const NoteRow& r);
// Dumps JSON with invalid UTF-8 replaced (never throws on hostile names).
std::string dump_json(const nlohmann::json& j, int indent = 2);
// dump_json(j) and a newline: the output of every command's --json.
void print_json(std::FILE* out, const nlohmann::json& j);

void print_info(std::FILE* out, const InfoReport& r, OutputFormat format);
// A JSON array of a stream's rows, each written by `write(JsonWriter&, const Row&)` as it comes.
template <typename Row, typename Write>
Status print_json_rows(std::FILE* out, const RowStream<Row>& rows, Write&& write) {
  JsonWriter w(out);
  w.begin_array();
  AKV_TRY(rows([&](const Row& r) { write(w, r); }));
  w.end_array();
  w.end_document();
  return Status();
}

// Positions [0, n) in chunks of kRowChunk, made by `make(begin, end, Piece&)` on two threads (a
// second one makes every other chunk while this one makes the chunk before it) and handed to
// `put(Piece&) -> Status` here, in order; the first put that fails ends it with its Status.
constexpr size_t kRowChunk = 4096;
template <typename Piece, typename Make, typename Put>
Status in_ordered_chunks(size_t n, Make&& make, Put&& put) {
  Piece a, b;
  for (size_t begin = 0; begin < n; begin += 2 * kRowChunk) {
    const size_t mid = std::min(n, begin + kRowChunk), end = std::min(n, begin + 2 * kRowChunk);
    std::future<void> other;
    if (mid < end) other = std::async(std::launch::async, [&] { make(mid, end, b); });
    make(begin, mid, a);
    if (other.valid()) other.get();
    AKV_TRY(put(a));
    if (mid < end) AKV_TRY(put(b));
  }
  return Status();
}

// Rows made as text in chunks (in_ordered_chunks) by `format(fmt::memory_buffer&, const Row&)`,
// which appends one row; the bytes are those of formatting them one by one. A failing chunk's rows
// up to the failure are written, then its Status returned.
template <typename Row, typename Format>
Status print_text_rows(std::FILE* out, const RangedRows<Row>& rows, Format&& format) {
  struct Piece {
    fmt::memory_buffer bytes;
    Status status;
  };
  return in_ordered_chunks<Piece>(
      rows.positions,
      [&](size_t begin, size_t end, Piece& p) {
        p.bytes.clear();
        p.status = rows.range(begin, end, [&](const Row& r) { format(p.bytes, r); });
      },
      [&](Piece& p) {
        std::fwrite(p.bytes.data(), 1, p.bytes.size(), out);
        return p.status;
      });
}

// print_json_rows over a ranged source: past a few chunks of positions the rows are made in chunks
// (in_ordered_chunks; the bytes are exactly print_json_rows'). A failing chunk's rows up to the
// failure are written, then its Status returned.
template <typename Row, typename Write>
Status print_json_rows(std::FILE* out, const RangedRows<Row>& rows, Write&& write) {
  if (rows.positions < 4 * kRowChunk) return print_json_rows(out, rows.stream(), write);
  struct Piece {
    std::string bytes;
    uint64_t elements = 0;
    Status status;
  };
  JsonWriter w(out);
  w.begin_array();
  AKV_TRY(in_ordered_chunks<Piece>(
      rows.positions,
      [&](size_t begin, size_t end, Piece& p) {
        p.bytes.clear();
        p.elements = 0;
        JsonWriter pw(&p.bytes);
        pw.continue_array(1);   // the outer array's elements: each one after a comma
        p.status = rows.range(begin, end, [&](const Row& r) {
          write(pw, r);
          ++p.elements;
        });
        pw.flush();
      },
      [&](Piece& p) {
        w.raw(p.bytes, p.elements);
        return p.status;
      }));
  w.end_array();
  w.end_document();
  return Status();
}

// Streaming printers take a RowStream and write each row as it is made; they fail only when the
// source does (the output then stops there).
Status print_tensors(std::FILE* out, const RangedRows<TensorRow>& rows, OutputFormat format);
Status print_meta(std::FILE* out, const RowStream<MetaRow>& rows, OutputFormat format, bool single_key);
void print_check(std::FILE* out, const CheckReport& r, OutputFormat format);
void print_dump(std::FILE* out, const DumpReport& r, OutputFormat format);
// `r` without its groups: those come from `groups` (rows_of(r.groups) when they are in `r`).
Status print_groups(std::FILE* out, const GroupsReport& r, const RowStream<QuantGroup>& groups, OutputFormat format);
Status print_stats(std::FILE* out, const RowStream<StatsRow>& rows, OutputFormat format);
Status print_map(std::FILE* out, const MapReport& r, OutputFormat format);
Status print_diff(std::FILE* out, const DiffTableReport& r, OutputFormat format);
// The model list of a folder of models (entries described or not): name, source, format, size,
// parameters, main type, files; an entry that failed to open shows its error instead.
void print_catalog(std::FILE* out, const std::vector<CatalogEntry>& entries, OutputFormat format);
nlohmann::json to_json(const CatalogEntry& e);

// Streams the regions of `files` of `model` (core/layout) as text or JSON; fails like walk_layout.
Status print_layout(std::FILE* out, const Model& model, const std::vector<uint32_t>& files, OutputFormat format);
// A file that does not open (`open_error`), laid out as far as it makes sense (walk_unopened_layout):
// text, or JSON `{file, size, opened: false, regions}`. Returns the failure the regions end in.
Error print_unopened_layout(std::FILE* out, const std::string& path, std::span<const uint8_t> bytes,
                            const Error& open_error, OutputFormat format);
void print_block(std::FILE* out, const BlockReport& r, const Model& model, OutputFormat format);
nlohmann::json to_json(const BlockReport& r);

// `run`'s table as the runs finish: begin (the names about to run size the text columns), a row per
// run, flushed, then end (failures, tensors missing from --ref, cancelled). JSON in the documented
// order {path, ref, runs: [...], failures, ref_missing, cancelled}.
class RunPrinter {
 public:
  RunPrinter(std::FILE* out, OutputFormat format, std::string path, std::string ref_path, bool x_quant);
  ~RunPrinter();
  void begin(const std::vector<std::string>& names);
  void row(const compute::TensorRun& run);
  void end(const RunTableReport& rest);

 private:
  std::FILE* out_;
  OutputFormat format_;
  std::string path_, ref_path_;
  bool x_quant_;
  size_t width_ = 4;
  std::unique_ptr<JsonWriter> json_;
};
// The whole report at once (the same bytes).
void print_run(std::FILE* out, const RunTableReport& r, OutputFormat format);
nlohmann::json to_json(const compute::TensorRun& run);
void print_devices(std::FILE* out, const compute::DevicesReport& r, OutputFormat format);
nlohmann::json to_json(const compute::DevicesReport& r);
nlohmann::json to_json(const DumpReport& r);
// JSON number, or null for NaN/Inf (JSON has no non-finite numbers).
nlohmann::json json_number(double v);
std::string csv_field(std::string_view s);

}   // namespace akview

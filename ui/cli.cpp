// Command-line front: one table row per batch command (name, help, options, run). Batch mode is
// any subcommand, or a stdout that is not a terminal; no curses is touched in batch mode. The help,
// the man page and the shell completions are generated from the same parser (cli_spec.hpp).
#include "ui/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "compute/backend.hpp"
#include "compute/devices.hpp"
#include "core/catalog.hpp"
#include "core/formats/format.hpp"
#include "core/remote/address.hpp"
#include "core/remote/mirror.hpp"
#include "ui/batch/commands.hpp"
#include "ui/batch/explain_report.hpp"
#include "ui/batch/fit_report.hpp"
#include "ui/batch/printers.hpp"
#include "ui/cli_spec.hpp"
#include "ui/man_page.hpp"
#include "ui/path_check.hpp"
#include "ui/shell_completions.hpp"
#include "ui/tui/app.hpp"
#include "ui/tui/terminal.hpp"

namespace akview {
namespace {

// Everything any command may take; each command's setup() registers the options it reads.
struct CliOptions {
  std::string path;
  std::vector<std::string> names;   // tensor names or metadata key
  std::string path_b;               // diff: the reference model
  std::string rows;                 // --rows A:B
  std::string tensor;               // explain: the tensor
  int64_t row = 0, col = 0;         // explain: the element
  std::string out;                  // --out FILE
  uint64_t block = 0;               // layout: --block N
  bool no_values = false;           // diff: names, shapes and types only; check: no NaN/Inf scan
  RunQuery run;                     // run: selection and options
  std::string x = "seed:0";         // run: --x
  std::string y_out;                // run: --y-out
  std::string ref;                  // run: --ref
  std::string view_ref;             // akview PATH --ref B: the interactive view's second model
  uint64_t fit_ctx = 0;             // fit: --ctx (0: trained)
  uint32_t fit_batch = 2048;        // fit: --batch
  std::string kv_type = "f16";      // fit: --kv-type
  std::string gpu_mem;              // fit: --gpu-mem GiB[,GiB...]
  bool json = false;
  bool csv = false;
  bool no_color = false;
  bool fetch_all = false;   // stats / diff / check / run of a remote model: fetch every tensor
  bool man = false;         // --man: print the man page
  std::string completion;   // --completion SHELL: print that shell's completion script
  TensorQuery query;
  OutputFormat format() const { return json ? OutputFormat::json : csv ? OutputFormat::csv : OutputFormat::text; }
};

int report_error(const Error& e) {
  std::fprintf(stderr, "%s (%s)\n", escape_for_terminal(e.to_string()).c_str(), error_info(e.code).slug);
  return e.code == ErrorCode::usage ? kExitUsage : kExitBadInput;
}

// Opens the model or prints the one-line error; the caller returns kExitBadInput on nullopt.
std::optional<Model> open_or_report(const std::string& path) {
  auto model = open_model(path);
  if (!model) {
    report_error(model.error());
    return std::nullopt;
  }
  return std::move(*model);
}

// A command that reads every tensor of a remote model says how much that fetches and needs --fetch-all.
std::optional<int> refuse_whole_fetch(const Model& model, const CliOptions& o, std::string_view what) {
  if (o.fetch_all || !remote::is_remote_model(model)) return std::nullopt;
  const uint64_t missing = remote::unfetched_tensor_bytes(model);
  if (missing == 0) return std::nullopt;
  std::fprintf(stderr,
               "%s: %s reads every tensor: %s (%llu bytes) to fetch from the server; pass --fetch-all to fetch them\n",
               escape_for_terminal(model.path).c_str(), std::string(what).c_str(), format_bytes(missing).c_str(),
               static_cast<unsigned long long>(missing));
  return kExitBadInput;
}

void add_fetch_all(CLI::App* cmd, CliOptions& o) {
  cmd->add_flag("--fetch-all", o.fetch_all,
                "remote models: fetch every tensor this command reads (it says how much without it)");
}

// Model arguments are typed MODEL: --help shows it, and the completions complete model paths there.
void add_path(CLI::App* cmd, CliOptions& o) {
  cmd->add_option("path", o.path, "model file or directory")->required()->type_name("MODEL");
}

void add_json(CLI::App* cmd, CliOptions& o) { cmd->add_flag("--json", o.json, "JSON output for scripts"); }
void add_csv(CLI::App* cmd, CliOptions& o) { cmd->add_flag("--csv", o.csv, "CSV output (tables)"); }

int run_info(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  print_info(stdout, make_info_report(*model), o.format());
  return kExitOk;
}

int run_tensors(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  auto rows = tensor_row_source(*model, o.query);
  if (!rows) return report_error(rows.error());
  if (Status s = print_tensors(stdout, *rows, o.format()); !s) return report_error(s.error());
  return kExitOk;
}

int run_meta(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  std::optional<std::string> key;
  if (!o.names.empty()) key = o.names.front();
  auto rows = meta_row_source(*model, key);
  if (!rows) return report_error(rows.error());
  if (Status s = print_meta(stdout, *rows, o.format(), key.has_value()); !s) return report_error(s.error());
  return kExitOk;
}

int run_check(CliOptions& o) {
  // The value scan and an Ollama model's digests read every byte; the structure alone does not.
  if (remote::is_remote_address(o.path)) {
    auto model = open_or_report(o.path);
    if (!model) return kExitBadInput;
    if (!o.no_values || model->format == "ollama")
      if (auto refused = refuse_whole_fetch(*model, o, "check")) return *refused;
  }
  CheckReport r = make_check_report(o.path, /*verify_digests=*/true, /*scan_values=*/!o.no_values);
  print_check(r.ok() || o.json ? stdout : stderr, r, o.format());
  return r.ok() ? kExitOk : kExitBadInput;
}

int run_dump(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  auto r = make_dump(*model, DumpQuery{o.names.front(), o.rows, o.out});
  if (!r) return report_error(r.error());
  print_dump(stdout, *r, o.format());
  return kExitOk;
}

int run_groups(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  auto r = groups_stream(*model, GroupsQuery{o.names.front(), o.rows});
  if (!r) return report_error(r.error());
  if (Status s = print_groups(stdout, r->report, r->groups, o.format()); !s) return report_error(s.error());
  return kExitOk;
}

int run_explain(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  auto r = make_explain_report(*model, ExplainQuery{o.tensor, o.row, o.col});
  if (!r) return report_error(r.error());
  print_explain(stdout, *r, o.format());
  return kExitOk;
}

int run_layout(CliOptions& o) {
  auto model = open_model(o.path);
  if (!model) {
    // A file that does not open is laid out as far as it makes sense, then its error (exit 1).
    if (o.names.empty())
      if (auto map = MappedFile::open(o.path)) {
        const Error failure = print_unopened_layout(stdout, o.path, map->bytes(), model.error(), o.format());
        std::fflush(stdout);
        return report_error(failure);
      }
    return report_error(model.error());
  }
  if (!o.names.empty()) {
    auto r = make_block_report(*model, o.names.front(), o.block);
    if (!r) return report_error(r.error());
    print_block(stdout, *r, *model, o.format());
    return kExitOk;
  }
  if (Status s = print_layout(stdout, *model, layout_files(*model, o.path), o.format()); !s) {
    std::fflush(stdout);
    return report_error(s.error());
  }
  return kExitOk;
}

int run_stats(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  if (o.names.empty())
    if (auto refused = refuse_whole_fetch(*model, o, "stats")) return *refused;
  auto rows = stats_row_source(*model, o.names);
  if (!rows) return report_error(rows.error());
  if (Status s = print_stats(stdout, *rows, o.format()); !s) return report_error(s.error());
  return kExitOk;
}

int run_map(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  if (Status s = print_map(stdout, make_map_report(*model), o.format()); !s) return report_error(s.error());
  return kExitOk;
}

int run_diff(CliOptions& o) {
  auto a = open_or_report(o.path);
  if (!a) return kExitBadInput;
  auto b = open_or_report(o.path_b);
  if (!b) return kExitBadInput;
  if (!o.no_values) {
    if (auto refused = refuse_whole_fetch(*a, o, "diff")) return *refused;
    if (auto refused = refuse_whole_fetch(*b, o, "diff")) return *refused;
  }
  DiffOptions options;
  options.values = !o.no_values;
  if (Status s = print_diff(stdout, make_diff_report(*a, *b, options), o.format()); !s) return report_error(s.error());
  return kExitOk;
}

// Writes every run's y, in run order, as raw little-endian f32.
int run_run(CliOptions& o) {
  auto input = compute::parse_input_spec(o.x);
  if (!input) return report_error(input.error());
  if (o.run.options.opencl_device >= 0) {
    if (Status s = compute::select_opencl_device(o.run.options.opencl_device); !s) return report_error(s.error());
  }
  o.run.options.input = *input;
  o.run.tensors = o.names;
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  if (o.names.empty() && o.run.layer < 0 && o.run.filter.empty())   // every matrix
    if (auto refused = refuse_whole_fetch(*model, o, "run")) return *refused;
  std::optional<Model> ref;
  if (!o.ref.empty()) {
    ref = open_or_report(o.ref);
    if (!ref) return kExitBadInput;
  }
  // Each run is printed (and its y written to --y-out) as it finishes, while the next one runs.
  std::FILE* y_out = nullptr;
  if (!o.y_out.empty() && !(y_out = std::fopen(o.y_out.c_str(), "wb")))
    return report_error(make_error(ErrorCode::io, o.y_out, kNoOffset, "cannot write --y-out"));
  bool y_ok = true;
  RunPrinter printer(stdout, o.format(), model->path, ref ? ref->path : std::string(), o.run.options.x_quant);
  compute::RunCallbacks callbacks;
  callbacks.on_run = [&](compute::TensorRun& run) {
    printer.row(run);
    if (y_out) y_ok = y_ok && std::fwrite(run.y.data(), sizeof(float), run.y.size(), y_out) == run.y.size();
  };
  auto r = make_run_report(*model, ref ? &*ref : nullptr, o.run, callbacks,
                           [&](const std::vector<std::string>& names) { printer.begin(names); });
  if (y_out) y_ok = std::fclose(y_out) == 0 && y_ok;
  if (!r) return report_error(r.error());   // nothing ran (the selection failed): nothing was printed
  printer.end(*r);
  if (!y_ok) return report_error(make_error(ErrorCode::io, o.y_out, kNoOffset, "cannot write --y-out"));
  return r->failures.empty() && !r->cancelled ? kExitOk : kExitBadInput;
}

int run_fit(CliOptions& o) {
  auto query = make_fit_query(o.fit_ctx, o.fit_batch, o.kv_type, o.gpu_mem);
  if (!query) return report_error(query.error());
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  auto r = make_fit_report(*model, *query);
  if (!r) return report_error(r.error());
  print_fit(stdout, *r, o.format());
  return kExitOk;
}

int run_devices(CliOptions& o) {
  print_devices(stdout, compute::list_devices(), o.format());
  return kExitOk;
}

struct CommandRow {
  std::string_view name;
  std::string_view help;
  std::function<void(CLI::App*, CliOptions&)> setup;
  std::function<int(CliOptions&)> run;
};

const std::vector<CommandRow>& command_table() {
  static const std::vector<CommandRow> kCommands = {
      {"info", "what it is: format, files, tensors, parameters, bytes, types",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         add_json(c, o);
       },
       run_info},
      {"tensors", "the tensor table",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         add_json(c, o);
         add_csv(c, o);
         c->add_option("--filter", o.query.filter, "keep names matching this regex");
         c->add_flag("--invert", o.query.invert, "keep names NOT matching --filter");
         c->add_option("--sort", o.query.sort, "file|name|type|shape|params|bytes|offset|bpw");
         c->add_flag("--desc", o.query.descending, "sort descending");
       },
       run_tensors},
      {"meta", "header / metadata keys (one KEY: its whole value)",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("key", o.names, "a metadata key")->expected(0, 1);
         add_json(c, o);
         add_csv(c, o);
       },
       run_meta},
      {"check",
       "validate everything; list every problem as FILE@0xOFFSET: what (every tensor's values for NaN/Inf; Ollama "
       "blobs: sizes and sha256)",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_flag("--no-values", o.no_values, "structure only: skip the scan of every tensor's values for NaN/Inf");
         add_json(c, o);
         add_fetch_all(c, o);
       },
       run_check},
      {"dump", "dequantized values (numpy order) [--rows A:B] [--out FILE.npy|FILE.f32]",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensor", o.names, "native or canonical tensor name")->required()->expected(1);
         c->add_option("--rows", o.rows, "row range A:B (rows = all but the innermost dimension)");
         c->add_option("--out", o.out, "write FILE.npy (NumPy) or raw little-endian f32 to any other name")
             ->type_name("FILE");
         add_json(c, o);
         add_csv(c, o);
       },
       run_dump},
      {"groups", "per-group quantization parameters of a row range [--rows A:B]",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensor", o.names, "native or canonical tensor name")->required()->expected(1);
         c->add_option("--rows", o.rows, "row range A:B (default: all rows up to 64, else the first 16)");
         add_json(c, o);
         add_csv(c, o);
       },
       run_groups},
      {"explain", "one group dequantized step by step: bytes, codes, scales, formula, values",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensor", o.tensor, "native or canonical tensor name")->required();
         c->add_option("row", o.row, "row of the element (rows = all but the innermost dimension)")->required();
         c->add_option("col", o.col, "column of the element (the innermost dimension)")->required();
         add_json(c, o);
       },
       run_explain},
      {"layout", "the file as annotated byte regions; with TENSOR one block's fields [--block N]",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensor", o.names, "native or canonical tensor name: its blocks")->expected(0, 1);
         c->add_option("--block", o.block, "the block (or composite group) to describe (default 0)");
         add_json(c, o);
       },
       run_layout},
      {"stats", "value statistics and histograms (all tensors, or those named)",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensors", o.names, "native or canonical tensor names");
         add_json(c, o);
         add_csv(c, o);
         add_fetch_all(c, o);
       },
       run_stats},
      {"map", "native -> canonical names and roles, and the extracted config with its sources",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         add_json(c, o);
         add_csv(c, o);
       },
       run_map},
      {"diff", "tensor by tensor through canonical names: missing, shape/type changes, value error of A against B",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("reference", o.path_b, "the model B that A is compared against")->required()->type_name("MODEL");
         c->add_flag("--no-values", o.no_values, "compare names, shapes and types only");
         add_json(c, o);
         add_csv(c, o);
         add_fetch_all(c, o);
       },
       run_diff},
      {"run", "dequant + matvec on a backend: time, GB/s, error against the f64 reference",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("tensors", o.names, "native or canonical tensor names (default: every matrix)");
         c->add_option("--layer", o.run.layer, "every matrix of layers.N");
         c->add_option("--filter", o.run.filter, "matrices whose native or canonical name matches this regex");
         const std::vector<std::string> backends = backend_choices();
         c->add_option("--backend", o.run.options.backend, fmt::format("{}", fmt::join(backends, "|")))
             ->check(CLI::IsMember(backends));
         c->add_option("--device", o.run.options.opencl_device, "OpenCL device by its `akview devices` index")
             ->check(CLI::NonNegativeNumber);
         c->add_option("--x", o.x, "input: seed:N (normal), ones, or a raw f32 file");
         c->add_option("--y-out", o.y_out, "write every output y (run order) as raw f32")->type_name("FILE");
         c->add_option("--ref", o.ref, "compare with the same canonical tensor of this model")->type_name("MODEL");
         c->add_option("--repeat", o.run.options.repeat, "timed repeats (after one warm-up)")
             ->check(CLI::Range(1, 100000));
         c->add_flag("--x-quant", o.run.options.x_quant,
                     "also run the ggml-equivalent path (x quantized to q8_0/q8_1/q8_K, integer dots) and show its "
                     "error beside");
         add_json(c, o);
         add_csv(c, o);
         add_fetch_all(c, o);
       },
       run_run},
      {"fit", "will it fit: llama.cpp's buffers (weights, KV cache, compute, output) at a context, per device",
       [](CLI::App* c, CliOptions& o) {
         add_path(c, o);
         c->add_option("--ctx", o.fit_ctx, "context in tokens (default: the model's trained context)")
             ->check(CLI::PositiveNumber);
         c->add_option("--batch", o.fit_batch, "llama.cpp's -b (n_batch; n_ubatch is min(512, this))")
             ->check(CLI::Range(1u, 1u << 20));
         c->add_option("--kv-type", o.kv_type, "KV cache type: f16, bf16, f32, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
         c->add_option("--gpu-mem", o.gpu_mem, "GiB of each GPU, e.g. 24 or 24,12: the layer split");
         add_json(c, o);
       },
       run_fit},
      {"devices", "compute backends and OpenCL platforms/devices, and why one is unavailable",
       [](CLI::App* c, CliOptions& o) { add_json(c, o); }, run_devices},
  };
  return kCommands;
}

constexpr std::string_view kSummary = "inspect and run ML weight files (SafeTensors, GGUF, MLX, Ollama, PyTorch)";
constexpr std::string_view kUsage =
    "akview [OPTIONS] PATH\n"
    "       akview COMMAND [OPTIONS] PATH ...   (akview help COMMAND: its options)\n";
constexpr std::string_view kViewNote =
    "On a terminal, akview PATH opens the interactive view: a folder of models opens on the model list, a "
    "model on its panes; ? lists every key, q quits. akview alone lists the local stores (Ollama, Hugging "
    "Face, LM Studio). When stdout is not a terminal, akview PATH prints info (the model list for a folder "
    "of models). A command runs in batch mode: text, --json or --csv, never the view.";

// --help: the usage lines above (not CLI11's), the commands under "Commands", the view note last.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_usage(app, std::move(name));
    return "Usage: " + std::string(kUsage);
  }
};

// The nearest command to a word, for "did you mean": within two edits, or the word a prefix of it.
std::optional<std::string_view> nearest_command(std::string_view word) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::optional<std::string_view> best;
  size_t best_distance = 3;
  for (const auto& row : command_table()) {
    const size_t d = row.name.rfind(word, 0) == 0 && word.size() >= 2 ? 1 : distance(word, row.name);
    if (d < best_distance) best_distance = d, best = row.name;
  }
  if (best && best_distance * 2 > word.size()) return std::nullopt;   // "ab" is no near miss of "map"
  return best;
}

// A first word that is no command and no path but close to a command ("tensor"): a usage error
// that names the command, instead of "tensor: cannot open: No such file or directory".
std::optional<std::string> misspelt_command(const std::vector<std::string>& args) {
  for (size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    if (a == "--ref" || a == "--completion") {   // the top level's options that take a value
      ++k;
      continue;
    }
    if (a.starts_with("-")) continue;
    if (a.find_first_of("/.:") != std::string::npos || std::filesystem::exists(a)) return std::nullopt;
    for (const auto& row : command_table())
      if (row.name == a) return std::nullopt;
    auto near = nearest_command(a);
    if (!near) return std::nullopt;
    return fmt::format("akview: '{}' is not a command; did you mean '{}'? (akview --help lists the commands)",
                       escape_for_terminal(a), *near);
  }
  return std::nullopt;
}

}   // namespace

// The parser's check and the help (and so the man page and the completions) take them from here.
std::vector<std::string> backend_choices() {
  std::vector<std::string> words{"auto"};
  const auto table = compute::backend_table();
  for (auto row = table.rbegin(); row != table.rend(); ++row) words.emplace_back(row->name);
  return words;
}

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // `akview help [COMMAND]` is `akview [COMMAND] --help`.
  if (!args.empty() && args.front() == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
  CLI::App app{"akview: " + std::string(kSummary), "akview"};
  app.formatter(std::make_shared<HelpFormatter>());
  std::string footer;   // the view note, wrapped at 100 columns
  for (const std::string& line : wrap_words(kViewNote, 100)) footer += (footer.empty() ? "" : "\n") + line;
  app.footer(footer);
  CliOptions options;
  app.add_option("path", options.path, "model to open (the interactive view; batch `info` when not a terminal)")
      ->type_name("MODEL");
  app.add_flag("--no-color", options.no_color, "no colours (also NO_COLOR)");
  app.add_option("--ref", options.view_ref, "a second model to compare with (the Diff pane; batch: `diff PATH REF`)")
      ->type_name("MODEL");
  app.add_flag("--json", options.json, "batch: JSON output (info, or the model list of a folder of models)");
  app.set_version_flag("-V,--version", std::string("akview ") + AKVIEW_VERSION);
  // Hidden (no group): what the build installs beside the binary.
  app.add_flag("--man", options.man, "print the man page (roff)")->group("");
  app.add_option("--completion", options.completion, "print the completion script for bash, zsh or fish")->group("");
  app.require_subcommand(0, 1);
  std::vector<std::pair<CLI::App*, const CommandRow*>> subs;
  for (const auto& row : command_table()) {
    CLI::App* sub = app.add_subcommand(std::string(row.name), std::string(row.help));
    sub->group("Commands");   // the heading --help lists them under
    row.setup(sub, options);
    subs.emplace_back(sub, &row);
  }
  if (auto message = misspelt_command(args)) {
    std::fprintf(stderr, "%s\n", message->c_str());
    return kExitUsage;
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());   // CLI11 takes the arguments last first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (options.man || !options.completion.empty()) {
    const CliSpec spec = describe_cli(app, std::string(kSummary), std::string(kUsage), std::string(kViewNote));
    const std::string text = options.man ? man_page(spec, AKVIEW_VERSION) : completion_script(spec, options.completion);
    if (text.empty()) {
      std::fprintf(stderr, "akview: --completion takes bash, zsh or fish\n");
      return kExitUsage;
    }
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  if (options.json && options.csv) {
    std::fprintf(stderr, "--json and --csv exclude each other\n");
    return kExitUsage;
  }
  for (auto& [sub, row] : subs)
    if (sub->parsed()) return row->run(options);
  // No command. A path with nothing to open is one line here, before the view could start.
  for (const std::string* path : {&options.path, &options.view_ref}) {
    if (path->empty()) continue;
    if (Status s = check_path_to_view(*path); !s) {
      report_error(s.error());
      return kExitBadInput;
    }
  }
  // The interactive view on a terminal (checked before any curses call), else batch.
  const char* no_color = std::getenv("NO_COLOR");
  if (auto terminal = tui::Terminal::open(!options.no_color && !(no_color && *no_color))) {
    tui::AppOptions tui_options;
    tui_options.path = options.path;
    tui_options.ref_path = options.view_ref;
    tui_options.test_sync = std::getenv("AKVIEW_TEST_SYNC") != nullptr;
    try {
      tui::App tui(tui_options);
      const int code = tui.run(*terminal);
      // Ended by Ctrl-C (SIGINT), SIGTERM or SIGHUP: 128 + the signal, as a shell reports it.
      if (const int sig = tui::quit_signal_received()) return 128 + sig;
      return code;
    } catch (const std::exception& e) {
      terminal.reset();   // restore the terminal before saying what went wrong
      std::fprintf(stderr, "akview: %s\n", escape_for_terminal(e.what()).c_str());
      return kExitBadInput;
    }
  }
  if (options.path.empty()) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return kExitUsage;
  }
  if (!options.view_ref.empty()) {   // batch `akview A --ref B` is `akview diff A B`
    options.path_b = options.view_ref;
    return run_diff(options);
  }
  // Batch: the model list of a path that holds several models (core/catalog.hpp), else `info`.
  if (auto catalog = list_catalog(options.path)) {
    for (auto& entry : *catalog) describe_catalog_entry(entry);
    print_catalog(stdout, *catalog, options.format());
    return kExitOk;
  }
  return run_info(options);
}

}   // namespace akview

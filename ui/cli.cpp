// Command-line front: one table row per batch command (name, help, options, run). Batch mode is
// any subcommand, or a stdout that is not a terminal; no curses is touched in batch mode.
#include "ui/cli.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "ui/batch/commands.hpp"
#include "ui/batch/printers.hpp"

namespace akview {
namespace {

// Everything any command may take; each command's setup() registers the options it reads.
struct CliOptions {
  std::string path;
  std::vector<std::string> names;    // tensor names or metadata key
  bool json = false;
  bool csv = false;
  bool no_color = false;
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

void add_path(CLI::App* cmd, CliOptions& o) { cmd->add_option("path", o.path, "model file or directory")->required(); }
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
  auto rows = make_tensor_rows(*model, o.query);
  if (!rows) return report_error(rows.error());
  print_tensors(stdout, *rows, o.format());
  return kExitOk;
}

int run_meta(CliOptions& o) {
  auto model = open_or_report(o.path);
  if (!model) return kExitBadInput;
  std::optional<std::string> key;
  if (!o.names.empty()) key = o.names.front();
  auto rows = make_meta_rows(*model, key);
  if (!rows) return report_error(rows.error());
  print_meta(stdout, *rows, o.format(), key.has_value());
  return kExitOk;
}

int run_check(CliOptions& o) {
  CheckReport r = make_check_report(o.path);
  print_check(r.ok() || o.json ? stdout : stderr, r, o.format());
  return r.ok() ? kExitOk : kExitBadInput;
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
       [](CLI::App* c, CliOptions& o) { add_path(c, o); add_json(c, o); }, run_info},
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
      {"check", "validate everything; list every problem as FILE@0xOFFSET: what",
       [](CLI::App* c, CliOptions& o) { add_path(c, o); add_json(c, o); }, run_check},
  };
  return kCommands;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"akview: inspect and run ML weight files (SafeTensors, GGUF, MLX, Ollama, PyTorch)", "akview"};
  CliOptions options;
  app.add_option("path", options.path, "model to open (the interactive view; batch `info` when not a terminal)");
  app.add_flag("--no-color", options.no_color, "no colours (also NO_COLOR)");
  app.require_subcommand(0, 1);
  std::vector<std::pair<CLI::App*, const CommandRow*>> subs;
  for (const auto& row : command_table()) {
    CLI::App* sub = app.add_subcommand(std::string(row.name), std::string(row.help));
    row.setup(sub, options);
    subs.emplace_back(sub, &row);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (options.json && options.csv) {
    std::fprintf(stderr, "--json and --csv exclude each other\n");
    return kExitUsage;
  }
  for (auto& [sub, row] : subs)
    if (sub->parsed()) return row->run(options);
  if (options.path.empty()) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return kExitUsage;
  }
  // No subcommand: the interactive view belongs to the TUI; until it lands, show `info`.
  return run_info(options);
}

}  // namespace akview

// The command line read back from its CLI11 app (cli_spec.hpp).
#include "ui/cli_spec.hpp"

#include <cctype>
#include <string_view>

#include <CLI/CLI.hpp>

namespace akview {
namespace {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t k = 0; k <= text.size(); ++k)
    if (k == text.size() || text[k] == sep) {
      out.emplace_back(text.substr(start, k - start));
      start = k + 1;
    }
  return out;
}

bool is_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// A value from a fixed set: the parser's own check (CLI::IsMember, "TEXT:{a,b,c}" in the type name),
// else a help text that starts with the words joined by '|' ("file|name|type ...").
std::vector<std::string> choices_of(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  if (const size_t open = type.find(":{"); open != std::string::npos && type.back() == '}')
    return split(std::string_view(type).substr(open + 2, type.size() - open - 3), ',');
  const std::string& help = opt.get_description();
  const std::string_view first = std::string_view(help).substr(0, help.find(' '));
  if (first.find('|') == std::string_view::npos) return {};
  std::vector<std::string> words = split(first, '|');
  for (const std::string& w : words)
    if (!is_word(w)) return {};
  return words;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

CliArg describe_option(const CLI::Option& opt) {
  CliArg a;
  a.help = opt.get_description();
  a.positional = opt.get_positional() && opt.get_snames().empty() && opt.get_lnames().empty();
  a.required = opt.get_required();
  // ui/cli.cpp names every model argument's type MODEL (what --help shows beside it).
  a.model_path = opt.get_type_name().rfind("MODEL", 0) == 0;
  if (a.positional) {
    a.name = upper(opt.get_name(true));
    a.repeats = opt.get_items_expected_max() > 1;
    a.takes_value = true;
    return a;
  }
  for (const std::string& s : opt.get_snames()) a.flags.push_back("-" + s);
  for (const std::string& l : opt.get_lnames()) a.flags.push_back("--" + l);
  a.takes_value = opt.get_items_expected_max() != 0;   // flags expect no item
  if (a.takes_value) {
    a.choices = choices_of(opt);
    const std::string type = opt.get_type_name();
    a.name = a.model_path ? "MODEL" : type.substr(0, type.find(':'));
  }
  return a;
}

std::vector<CliArg> describe_args(const CLI::App& app) {
  std::vector<CliArg> args;
  // Positionals first, in the order they are taken; hidden options (no group) are left out.
  for (const CLI::Option* opt : app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); }))
    if (opt->get_positional() && opt->get_snames().empty() && opt->get_lnames().empty())
      args.push_back(describe_option(*opt));
  for (const CLI::Option* opt : app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); }))
    if (!(opt->get_positional() && opt->get_snames().empty() && opt->get_lnames().empty()))
      args.push_back(describe_option(*opt));
  return args;
}

}   // namespace

CliSpec describe_cli(const CLI::App& app, std::string summary, std::string usage, std::string view_note) {
  CliSpec spec;
  spec.program = app.get_name();
  spec.summary = std::move(summary);
  spec.usage = std::move(usage);
  spec.view_note = std::move(view_note);
  spec.options = describe_args(app);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    spec.commands.push_back({sub->get_name(), sub->get_description(), describe_args(*sub)});
  return spec;
}

}   // namespace akview

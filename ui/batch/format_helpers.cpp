// The JSON output of every command: dumped with invalid UTF-8 replaced (printers.hpp).
#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(std::FILE* out, const nlohmann::json& j) { fmt::print(out, "{}\n", dump_json(j)); }

}   // namespace akview

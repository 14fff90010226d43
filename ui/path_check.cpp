// The check before the interactive view starts (path_check.hpp).
#include "ui/path_check.hpp"

#include "core/catalog.hpp"
#include "core/formats/format.hpp"
#include "core/formats/ollama.hpp"

namespace akview {

Status check_path_to_view(const std::string& path) {
  if (path.find("://") != std::string::npos) return Status::ok_status();
  if (auto probe = probe_path(path)) {
    for (const FormatEntry& f : format_table())
      if (f.open && f.sniff(*probe)) return Status::ok_status();
    if (probe->is_dir && list_catalog(path)) return Status::ok_status();
  } else if (resolve_ollama_reference(path)) {
    return Status::ok_status();
  }
  // Nothing here that a format recognises: open_model stops at the same probe and says why
  // (its wording stays the batch commands' wording), without opening anything large.
  auto model = open_model(path);
  if (!model) return model.error();
  return Status::ok_status();
}

}   // namespace akview

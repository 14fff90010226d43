// open_model: opening what a person names. It sits above both the format table and the catalog, so
// neither calls back up into the other: the catalog lists and describes through open_one_model, and
// only here is a folder the catalog lists as several models refused (catalog.hpp, "Batch commands").
#include <fmt/format.h>

#include "core/catalog.hpp"
#include "core/formats/format.hpp"
#include "core/formats/recognised.hpp"
#include "core/remote/address.hpp"
#include "core/remote/fault_mapping.hpp"
#include "core/remote/http.hpp"
#include "core/remote/mirror.hpp"

namespace akview {
namespace {

// A folder of several models is no one model: name them rather than open one. Ollama stores keep their
// own rule (one model opens, several are listed by open_ollama_store).
Status refuse_several_models(const std::string& path) {
  auto probe = probe_path(path);
  if (!probe || !probe->is_dir || sniff_ollama_store(*probe)) return {};
  auto catalog = list_catalog(path);
  if (!catalog) return {};
  std::string names;
  for (size_t i = 0; i < catalog->size() && i < 6; ++i) names += (i ? ", " : "") + (*catalog)[i].name;
  return make_error(ErrorCode::usage, path, kNoOffset,
                    fmt::format("folder holds {} model{} ({}{}); open one of them by its own path, e.g. {}",
                                catalog->size(), catalog->size() == 1 ? "" : "s", names,
                                catalog->size() > 6 ? ", ..." : "", catalog->front().open_path));
}

}   // namespace

Result<Model> open_model(const std::string& path, const OpenOptions& options) {
  // A remote address: its files laid out in the cache (core/remote/mirror.hpp), opened from there.
  if (remote::is_remote_address(path)) {
    remote::HeadFetch heads;
    auto local = remote::materialize(path, false, &heads);
    if (!local) return std::move(local).error();
    auto model = open_model(*local, options);
    remote::trace_phase("model parsed");
    // The headers' transfer failed: its error, whatever the parse made of what was there.
    if (Status fetched = heads.finish(); !fetched.ok()) return fetched.error();
    remote::trace_phase("model opened");
    if (!model) {
      // Named as the user named it, not by the cache's paths.
      Error e = std::move(model).error();
      e.file = e.file == *local ? path : remote::display_path(e.file);
      e.message = remote::display_text(std::move(e.message));
      return e;
    }
    model->path = path;   // disk_path stays the laid-out folder
    remote::show_remote_names(*model);
    return model;
  }
  // The parse reads remote files' headers through their mappings (a path in the cache is one): a
  // header that cannot be fetched is the open's error, not a SIGBUS (core/remote/fault_mapping.hpp).
  remote::FetchFailureScope fetches;
  AKV_TRY(fetches.checked(refuse_several_models(path)));
  return fetches.checked(open_one_model(path, options));
}

}   // namespace akview

// `akview check`: open with every validation and list each problem as FILE@0xOFFSET: what.
#include "core/formats/format.hpp"
#include "core/formats/ollama.hpp"
#include "core/nonfinite_scan.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

CheckReport make_check_report(const std::string& path, bool verify_digests, bool scan_values) {
  CheckReport r;
  r.path = path;
  auto model = open_model(path);
  if (!model) {
    const Error& e = model.error();
    r.problems.push_back({std::string(error_info(e.code).slug), e.file, e.offset, e.message, true});
    return r;
  }
  r.format = model->format;
  r.files = model->files.size();
  r.tensors = model->tensors.size();
  std::vector<Note> notes = model->notes;
  if (verify_digests && model->format == "ollama") {
    auto verified = verify_ollama_blobs(*model);
    notes.insert(notes.end(), verified.begin(), verified.end());
  }
  for (const auto& n : notes) {
    NoteRow row{std::string(error_info(n.code).slug), n.file, n.offset, n.message, n.fails_check};
    (n.fails_check ? r.problems : r.warnings).push_back(std::move(row));
  }
  // The value scan's findings: "non_finite", a check-only code (no open fails for a value).
  if (scan_values) {
    for (auto& p : scan_nonfinite(*model))
      r.problems.push_back(NoteRow{p.error ? std::string(error_info(*p.error).slug) : "non_finite", std::move(p.file),
                                   p.offset, std::move(p.message), true});
    r.values_scanned = true;
  }
  return r;
}

}   // namespace akview

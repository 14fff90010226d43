// The reference oracles the repository carries under tests/oracles (AKVIEW_ORACLES_DIR; what each set
// is and where it came from: tests/oracles/README.md): their JSON listings, read so that a missing or
// unreadable file is an error naming it. Header-only (tests/common is no test binary of its own).
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace akview::testing {

// Thrown inside a test; GoogleTest reports it as that test's failure, with this message.
struct MissingTestData : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string oracle_data_path(const std::string& rel) { return std::string(AKVIEW_ORACLES_DIR) + "/" + rel; }

// Why oracles/`rel` cannot serve as JSON test data ("" when it can).
inline std::string oracle_json_problem(const std::string& rel) {
  const std::string path = oracle_data_path(rel);
  std::ifstream in(path);
  if (!in) return "missing test data: " + path + " (the oracles live in tests/oracles)";
  if (nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false).is_discarded())
    return "test data is not valid JSON: " + path;
  return "";
}

// Parses oracles/`rel`; throws MissingTestData naming the file when it is absent or not JSON.
inline nlohmann::json oracle_json(const std::string& rel) {
  std::ifstream in(oracle_data_path(rel));
  nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false)
                        : nlohmann::json(nlohmann::json::value_t::discarded);
  if (j.is_discarded()) throw MissingTestData(oracle_json_problem(rel));
  return j;
}

// For listings read while tests are discovered (the values of a parameterised suite), where an
// exception would abort the binary: an absent or broken file gives an empty object, and the suite's
// own presence test reports oracle_json_problem().
inline nlohmann::json oracle_json_or_empty(const std::string& rel) {
  std::ifstream in(oracle_data_path(rel));
  nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false)
                        : nlohmann::json(nlohmann::json::value_t::discarded);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

}   // namespace akview::testing

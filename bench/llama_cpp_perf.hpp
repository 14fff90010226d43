// llama.cpp's own matvec timing, for the matvec bench to compare against in the same run: runs
// `test-backend-ops perf -o MUL_MAT -b CPU -p <case>` (the binary named by
// AKVIEW_LLAMA_TEST_BACKEND_OPS; README.md says how to build it) for one weight type at
// m=4096, n=1, k=14336 (the bench's shape: 4096 rows of 14336) and reads its "N runs - T us/run".
// It runs with its own threads (std::thread::hardware_concurrency()).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace akview::bench {

// The binary from the environment, or empty when unset / not executable.
inline std::string llama_test_backend_ops() {
  const char* p = std::getenv("AKVIEW_LLAMA_TEST_BACKEND_OPS");
  if (!p || !*p) return {};
  FILE* f = std::fopen(p, "rb");
  if (!f) return {};
  std::fclose(f);
  return p;
}

// ggml's type name for a bench label ("q4_k" -> "q4_K"); empty when ggml has no such type.
inline std::string ggml_type_name(const std::string& label) {
  if (label.find(' ') != std::string::npos) return {};   // MLX affine: no ggml type
  std::string t = label;
  if (t.size() == 4 && t[0] == 'q' && t[3] == 'k') t[3] = 'K';
  return t;
}

// Seconds per MUL_MAT run as test-backend-ops reports it, or nullopt (not run, unsupported, no line).
inline std::optional<double> llama_mul_mat_seconds(const std::string& binary, const std::string& ggml_type, long rows,
                                                   long cols) {
  const std::string cmd = "'" + binary + "' perf -o MUL_MAT -b CPU -p 'type_a=" + ggml_type +
                          ",type_b=f32,m=" + std::to_string(rows) + ",n=1,k=" + std::to_string(cols) + ",' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::optional<double> us;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    const std::string s(line);
    const auto at = s.find(" us/run");
    if (s.find("MUL_MAT(") == std::string::npos || at == std::string::npos) continue;
    size_t begin = s.rfind(" - ", at);
    if (begin == std::string::npos) continue;
    us = std::strtod(s.c_str() + begin + 3, nullptr);
  }
  pclose(pipe);
  if (!us || *us <= 0) return std::nullopt;
  return *us * 1e-6;
}

}   // namespace akview::bench

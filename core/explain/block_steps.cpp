// BlockSteps: the step writer shared by the ggml block explainers (block_steps.hpp).
#include "core/explain/block_steps.hpp"

#include <fmt/format.h>

#include "core/decode/float_formats.hpp"

namespace akview::explain {

std::string num(double v) {
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return fmt::format("{}", f);   // shortest float32 round trip
  return fmt::format("{}", v);
}

std::string hex_bytes(const uint8_t* p, size_t n, size_t max) {
  std::string s;
  for (size_t i = 0; i < n && i < max; ++i) s += fmt::format("{}{:02x}", i ? " " : "", p[i]);
  if (n > max) s += " …";
  return s;
}

std::string BlockSteps::at(size_t offset) const { return fmt::format("@{:#x} (+{})", origin_ + offset, offset); }

void BlockSteps::add(std::string label, std::string formula, std::vector<double> values) {
  e_.steps.push_back({std::move(label), std::move(formula), std::move(values)});
}

float BlockSteps::f16(std::string_view name, size_t offset) {
  const uint16_t h = fp::load_u16(b_ + offset);
  const float v = fp::f16_to_f32(h);
  add(fmt::format("{} (f16)", name),
      fmt::format("bytes {} {} = 0x{:04x} -> {}", hex_bytes(b_ + offset, 2), at(offset), h, num(v)), {v});
  return v;
}

float BlockSteps::f32(std::string_view name, size_t offset) {
  const float v = fp::load_f32(b_ + offset);
  add(fmt::format("{} (f32)", name),
      fmt::format("bytes {} {} = 0x{:08x} -> {}", hex_bytes(b_ + offset, 4), at(offset), fp::load_u32(b_ + offset),
                  num(v)),
      {v});
  return v;
}

uint32_t BlockSteps::u32(std::string_view name, size_t offset, std::string_view meaning) {
  const uint32_t w = fp::load_u32(b_ + offset);
  add(fmt::format("{} (u32)", name),
      fmt::format("bytes {} {} = 0x{:08x}: {}", hex_bytes(b_ + offset, 4), at(offset), w, meaning),
      {static_cast<double>(w)});
  return w;
}

uint16_t BlockSteps::u16(std::string_view name, size_t offset, std::string_view meaning) {
  const uint16_t w = fp::load_u16(b_ + offset);
  add(fmt::format("{} (u16)", name),
      fmt::format("bytes {} {} = 0x{:04x}: {}", hex_bytes(b_ + offset, 2), at(offset), w, meaning),
      {static_cast<double>(w)});
  return w;
}

void BlockSteps::raw(std::string_view name, size_t offset, size_t n, std::string_view meaning) {
  std::vector<double> values(b_ + offset, b_ + offset + n);
  add(fmt::format("{} ({} bytes)", name, n),
      fmt::format("bytes {} {}: {}", hex_bytes(b_ + offset, n), at(offset), meaning), std::move(values));
}

void BlockSteps::codes(std::string_view label, std::string meaning, std::span<const int> codes) {
  add(std::string(label), std::move(meaning), std::vector<double>(codes.begin(), codes.end()));
}

void BlockSteps::formula(std::string_view general, std::string worked) {
  add("formula", fmt::format("{}; column {}: {}", general, e_.col, worked));
}

}   // namespace akview::explain

// Natural ordering of names: digit runs compare by value, so "layers.2" sorts before "layers.10".
// Shared by the tensor table (ui) and the model catalog (core).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace akview {

bool natural_less(std::string_view a, std::string_view b);

// Appends a sort key of `name`: comparing two keys byte by byte (std::string_view::compare) orders
// them as natural_less orders the names (for sorting many names: one pass to build keys, then memcmp).
// Each digit run becomes its value's digit count (a digit byte, so it still compares like a digit
// against other characters; counts of 9 and more add a second byte) followed by the digits without
// leading zeros.
void append_natural_key(std::string& out, std::string_view name);
// The number of bytes append_natural_key appends for `name` (to size a buffer of many keys once).
size_t natural_key_size(std::string_view name);

}   // namespace akview

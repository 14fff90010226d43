// Natural ordering of names: digit runs compare by value, so "layers.2" sorts before "layers.10".
// Shared by the tensor table (ui) and the model catalog (core).
#pragma once

#include <string_view>

namespace akview {

bool natural_less(std::string_view a, std::string_view b);

}  // namespace akview

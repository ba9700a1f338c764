#pragma once
// The setup that the power-diagram and transport tests share: the unit square as a domain.

#include <sdot/half_spaces.hpp>

#include <vector>

namespace sdot_test {

/// The domain [0, 1]².
inline std::vector<sdot::HalfSpace> unit_square() {
  return sdot::box_half_spaces({0, 0}, {1, 1});
}

} // namespace sdot_test

#pragma once
/// @file
/// The domain of a power diagram: a convex polygon given as an intersection of half-spaces.

#include <array>
#include <vector>

namespace sdot {

/// The half-space { x : normal · x ≤ offset }.
struct HalfSpace {
  std::array<double, 2> normal; ///< Outward normal of the bounding line (not necessarily unit).
  double offset;                ///< Right-hand side of normal · x ≤ offset.
};

/// The four half-spaces of the box [lo[0], hi[0]] × [lo[1], hi[1]].
/// @throws std::invalid_argument if a bound is not finite or lo ≥ hi on an axis.
std::vector<HalfSpace> box_half_spaces(std::array<double, 2> lo, std::array<double, 2> hi);

/// The convex polygon that a list of half-spaces describes, computed on the host.
struct DomainPolygon {
  /// Vertices in counter-clockwise order.
  std::vector<std::array<double, 2>> vertices;
  /// edge_half_space[k]: index of the half-space that bounds the edge from vertex k to k+1.
  std::vector<int> edge_half_space;
  double area = 0;            ///< Area of the polygon.
  std::array<double, 2> lo{}; ///< Lower corner of the bounding box.
  std::array<double, 2> hi{}; ///< Upper corner of the bounding box.
};

/// The farthest a seed may lie from the domain's centre on either axis, and half the widest
/// extent of a domain; weights are bounded by its square in magnitude. Squared distances and
/// the cells' first moments (lengths cubed) then stay within double's range (about 1.8e308).
/// Seeds and domains beyond it are refused with an error naming it (PowerDiagram,
/// domain_polygon).
inline constexpr double coordinate_limit = 1e100;
/// The narrowest extent of a domain on either axis: its cells' areas then stay clear of
/// subnormal numbers, where double loses precision. Narrower domains are refused
/// (domain_polygon).
inline constexpr double smallest_domain_width = 1e-140;

/// Intersects the half-spaces.
/// @throws std::invalid_argument naming the problem when a half-space is not finite or has a
/// zero normal (with its index), when the intersection is unbounded, empty or of zero area,
/// or wider than 2 × coordinate_limit or narrower than smallest_domain_width on an axis.
DomainPolygon domain_polygon(std::vector<HalfSpace> const& half_spaces);

} // namespace sdot

#pragma once
/// @file
/// sdot::write_svg: a picture of a power diagram's cells (polygons, optionally coloured by a
/// value per cell, seeds as dots), for examples and inspection. Host code; small diagrams.

#include <sdot/power_diagram.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sdot {

/// What write_svg draws.
struct PictureOptions {
  /// Width of the picture in pixels (the height follows the domain's aspect ratio).
  int width = 800;
  /// Draw the seeds as dots.
  bool seeds = true;
  /// Radius of the seeds' dots, in pixels.
  double seed_radius = 1.5;
  /// Width of the cells' outlines, in pixels (0: none).
  double stroke_width = 0.5;
  /// Most cells drawn: more are refused (such a picture is too heavy to view; ParaView reads
  /// the cells of large diagrams, see sdot::hdf5::OutputFile::write_vtkhdf_cells).
  int max_cells = 10000;
};

namespace detail {

/// Colour of t in [0, 1] on a blue–white–red scale, as "#rrggbb".
inline std::string diverging_colour(double t) {
  t = std::isfinite(t) ? std::min(1.0, std::max(0.0, t)) : 0.5;
  double r, g, b;
  if (t < 0.5) { // blue (0.23, 0.30, 0.75) to white
    double s = t / 0.5;
    r = 0.23 + s * 0.77, g = 0.30 + s * 0.70, b = 0.75 + s * 0.25;
  } else { // white to red (0.71, 0.02, 0.15)
    double s = (t - 0.5) / 0.5;
    r = 1 - s * 0.29, g = 1 - s * 0.98, b = 1 - s * 0.85;
  }
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", int(r * 255 + 0.5), int(g * 255 + 0.5),
                int(b * 255 + 0.5));
  return buffer;
}

} // namespace detail

/// Writes an SVG picture of the cells to `path`.
///
/// @param path the SVG file to write (replaced if it exists)
/// @param polygons the cells (PowerDiagram::cell_polygons()), any memory space
/// @param positions the seeds [N, 2] (drawn as dots when options.seeds)
/// @param domain the domain (PowerDiagram::domain()), which sets the frame
/// @param values one value per cell to colour it (blue: smallest, red: largest), or an empty
///        View for plain grey cells
/// @param options what to draw, and the picture's size
/// @throws std::invalid_argument on mismatched sizes or more than options.max_cells cells,
///         std::runtime_error if the file cannot be written (nothing is left half-written
///         under `path`: the picture is written to `path` + ".tmp" first and renamed)
template <class MemorySpace, class Positions, class Values = Kokkos::View<double*, MemorySpace>>
void write_svg(std::string const& path, CellPolygons<MemorySpace> const& polygons,
               Positions const& positions, DomainPolygon const& domain, Values const& values = {},
               PictureOptions const& options = {}) {
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto vertices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
  auto seeds = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), positions);
  auto value = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  int const n = static_cast<int>(offsets.extent(0)) - 1;
  if (n < 0 || static_cast<int>(seeds.extent(0)) != n ||
      (value.extent(0) != 0 && static_cast<int>(value.extent(0)) != n))
    throw std::invalid_argument("sdot::write_svg: " + std::to_string(n) + " cells, " +
                                std::to_string(seeds.extent(0)) + " seeds and " +
                                std::to_string(value.extent(0)) + " values");
  if (n > options.max_cells)
    throw std::invalid_argument(
        "sdot::write_svg: " + std::to_string(n) +
        " cells, more than options.max_cells = " + std::to_string(options.max_cells));
  double lo = 0, hi = 0;
  if (value.extent(0) > 0) {
    lo = hi = value(0);
    for (int i = 1; i < n; ++i)
      lo = std::min(lo, value(i)), hi = std::max(hi, value(i));
  }
  double const dx = domain.hi[0] - domain.lo[0], dy = domain.hi[1] - domain.lo[1];
  double const scale = options.width / dx;
  int const height = static_cast<int>(std::ceil(dy * scale));
  auto X = [&](double x) { return (x - domain.lo[0]) * scale; };
  auto Y = [&](double y) { return (domain.hi[1] - y) * scale; }; // y up

  std::ostringstream svg;
  svg.precision(6);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << options.width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << options.width << " " << height << "\">\n";
  svg << "<g stroke=\"#333\" stroke-width=\"" << options.stroke_width
      << "\" stroke-linejoin=\"round\">\n";
  for (int i = 0; i < n; ++i) {
    if (offsets(i + 1) == offsets(i))
      continue;
    std::string const fill =
        value.extent(0) == 0
            ? std::string("#ddd")
            : detail::diverging_colour(hi > lo ? (value(i) - lo) / (hi - lo) : 0.5);
    svg << "<polygon fill=\"" << fill << "\" points=\"";
    for (int k = offsets(i); k < offsets(i + 1); ++k)
      svg << X(vertices(k, 0)) << "," << Y(vertices(k, 1)) << " ";
    svg << "\"/>\n";
  }
  svg << "</g>\n";
  if (options.seeds) {
    svg << "<g fill=\"#000\">\n";
    for (int i = 0; i < n; ++i)
      svg << "<circle cx=\"" << X(seeds(i, 0)) << "\" cy=\"" << Y(seeds(i, 1)) << "\" r=\""
          << options.seed_radius << "\"/>\n";
    svg << "</g>\n";
  }
  svg << "</svg>\n";

  std::string const temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << svg.str();
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("sdot::write_svg: cannot write " + temporary);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("sdot::write_svg: cannot rename " + temporary + " to " + path);
  }
}

} // namespace sdot

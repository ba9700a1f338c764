#pragma once
/// @file
/// sdot's version.

/// Major version number.
#define SDOT_VERSION_MAJOR 0
/// Minor version number.
#define SDOT_VERSION_MINOR 1
/// Patch version number.
#define SDOT_VERSION_PATCH 0

namespace sdot {
/// "major.minor.patch"
inline constexpr char const version_string[] = "0.1.0";
} // namespace sdot

#pragma once
/// @file
/// loom's exception type.

#include <stdexcept>
#include <string>

namespace loom {

/// Error raised by a loom operation.
///
/// A *collective* error was agreed upon by every rank (see Ranks::agree): every process
/// throws the same one at the same point, so no process is left waiting in a collective.
/// A non-collective error was raised by one process alone (a local operation such as
/// scatter_add given a bad index); inside `loom::spmd` under MPI with several processes such
/// an error aborts the job (see spmd.hpp).
class Error : public std::runtime_error {
public:
  /// An error with `message`; `collective` tells whether every rank throws it.
  explicit Error(std::string const& message, bool collective = false)
      : std::runtime_error(message), collective_(collective) {}
  /// True when every rank throws this error (it went through an agreement).
  bool collective() const noexcept { return collective_; }

private:
  bool collective_;
};

} // namespace loom

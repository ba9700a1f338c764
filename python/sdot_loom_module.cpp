// The Python extension behind the `sdot` and `loom` packages: NumPy arrays (or CPU tensors)
// in, NumPy arrays (or tensors) out, over the C++ library compiled for Kokkos' default
// execution space.
//
// Lifetime: Kokkos is initialised on import (unless the process already did it, in which case
// it is left to that code) and finalised at exit. Every object that holds Kokkos Views is
// registered and released before Kokkos is finalised; a Python object used after that raises
// RuntimeError.

#include <loom/loom.hpp>
#include <sdot/optimal_transport.hpp>
#include <sdot/sdot.hpp>

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace py = pybind11;

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using MemorySpace = Space::memory_space;
using Points = sdot::Points<MemorySpace>;
using Scalars = Kokkos::View<double*, MemorySpace>;
using SpreadPoints = loom::Spread<Points>;
using SpreadScalars = loom::Spread<Scalars>;

// ---- lifetime -----------------------------------------------------------------------------------

/// The objects that hold Views: release(true) releases one, release(false) only tells whether
/// it is still alive (false once Python dropped it).
std::vector<std::function<bool(bool)>>& live_objects() {
  static std::vector<std::function<bool(bool)>> objects;
  return objects;
}
bool kokkos_initialised_here = false;

/// A C++ object held by Python, released at exit (before Kokkos is finalised).
template <class T>
class Held {
public:
  Held() = default;
  explicit Held(T value) : value_(std::make_shared<std::optional<T>>(std::move(value))) {
    std::weak_ptr<std::optional<T>> weak = value_;
    auto& objects = live_objects();
    objects.erase(std::remove_if(objects.begin(), objects.end(),
                                 [](auto const& release) { return !release(false); }),
                  objects.end());
    objects.push_back([weak](bool now) {
      auto held = weak.lock();
      if (!held)
        return false;
      if (now)
        held->reset();
      return true;
    });
  }
  T& get() const {
    if (!value_ || !value_->has_value())
      throw std::runtime_error("sdot: this object was released when Kokkos was finalised");
    return **value_;
  }

private:
  std::shared_ptr<std::optional<T>> value_;
};

void release_and_finalize() {
  for (auto const& release : live_objects())
    release(true);
  live_objects().clear();
  if (kokkos_initialised_here && Kokkos::is_initialized())
    Kokkos::finalize();
  kokkos_initialised_here = false;
}

// ---- conversions --------------------------------------------------------------------------------

/// `obj` (a NumPy array, a sequence, or anything with __array__, as CPU tensors) as a
/// C-contiguous float64 array: other numeric types converted once; strings, objects and
/// complex numbers refused (TypeError).
py::array_t<double, py::array::c_style> as_float64(py::handle obj, std::string const& what) {
  py::array array = py::module_::import("numpy").attr("asarray")(obj);
  char const kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    throw py::type_error("sdot: " + what +
                         " must be numeric (float64, or convertible to it), not " +
                         std::string(py::str(array.dtype())));
  return py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
}

Points points_from(py::handle obj, std::string const& what) {
  auto const array = as_float64(obj, what);
  if (array.ndim() != 2 || array.shape(1) != 2) {
    std::ostringstream msg;
    msg << "sdot: " << what << " must have shape [N, 2], not [";
    for (py::ssize_t d = 0; d < array.ndim(); ++d)
      msg << (d ? ", " : "") << array.shape(d);
    msg << "]";
    throw py::value_error(msg.str());
  }
  std::size_t const n = array.shape(0);
  Points out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "sdot::python::" + what), n);
  auto host = Kokkos::create_mirror_view(out);
  auto const a = array.unchecked<2>();
  for (std::size_t i = 0; i < n; ++i) {
    host(i, 0) = a(i, 0);
    host(i, 1) = a(i, 1);
  }
  Kokkos::deep_copy(out, host);
  return out;
}

Scalars scalars_from(py::handle obj, std::string const& what) {
  auto const array = as_float64(obj, what);
  if (array.ndim() != 1) {
    std::ostringstream msg;
    msg << "sdot: " << what << " must have shape [N], not an array of " << array.ndim()
        << " dimensions";
    throw py::value_error(msg.str());
  }
  std::size_t const n = array.shape(0);
  Scalars out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "sdot::python::" + what), n);
  auto host = Kokkos::create_mirror_view(out);
  auto const a = array.unchecked<1>();
  for (std::size_t i = 0; i < n; ++i)
    host(i) = a(i);
  Kokkos::deep_copy(out, host);
  return out;
}

/// A View as a new NumPy array (copied to the host).
template <class View>
py::array_t<double> to_numpy(View const& view) {
  auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  if constexpr (View::rank == 1) {
    py::array_t<double> out(static_cast<py::ssize_t>(host.extent(0)));
    auto o = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < host.extent(0); ++i)
      o(i) = host(i);
    return out;
  } else {
    py::array_t<double> out(
        {static_cast<py::ssize_t>(host.extent(0)), static_cast<py::ssize_t>(host.extent(1))});
    auto o = out.mutable_unchecked<2>();
    for (std::size_t i = 0; i < host.extent(0); ++i)
      for (std::size_t j = 0; j < host.extent(1); ++j)
        o(i, j) = host(i, j);
    return out;
  }
}

/// Whether `obj` is a torch.Tensor (without importing torch: a tensor exists only once torch
/// is imported).
bool is_tensor(py::handle obj) {
  py::dict const modules = py::module_::import("sys").attr("modules");
  return modules.contains("torch") && py::isinstance(obj, modules["torch"].attr("Tensor"));
}

/// A result: the NumPy array itself, or with `tensors` (the input was a tensor) a CPU tensor
/// sharing its memory.
py::object as_output(py::array array, bool tensors) {
  if (!tensors)
    return std::move(array);
  return py::module_::import("torch").attr("from_numpy")(array);
}

std::vector<sdot::HalfSpace> half_spaces_from(py::handle obj) {
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    std::vector<sdot::HalfSpace> out;
    for (auto item : obj) {
      if (py::isinstance<sdot::HalfSpace>(item)) {
        out.push_back(item.cast<sdot::HalfSpace>());
        continue;
      }
      auto row = as_float64(item, "a boundary");
      if (row.ndim() != 1 || row.shape(0) != 3)
        throw py::value_error("sdot: a boundary is a HalfSpace or [a_x, a_y, c] (a·x ≤ c)");
      out.push_back({{row.at(0), row.at(1)}, row.at(2)});
    }
    return out;
  }
  auto rows = as_float64(obj, "boundaries");
  if (rows.ndim() != 2 || rows.shape(1) != 3)
    throw py::value_error("sdot: boundaries must be a list of HalfSpace or an array [K, 3] of "
                          "rows (a_x, a_y, c), each the half-space a·x ≤ c");
  std::vector<sdot::HalfSpace> out;
  for (py::ssize_t k = 0; k < rows.shape(0); ++k)
    out.push_back({{rows.at(k, 0), rows.at(k, 1)}, rows.at(k, 2)});
  return out;
}

std::array<double, 2> pair_from(py::handle obj, char const* what) {
  auto a = as_float64(obj, what);
  if (a.ndim() != 1 || a.shape(0) != 2)
    throw py::value_error(std::string("sdot: ") + what + " must hold 2 coordinates");
  return {a.at(0), a.at(1)};
}

// ---- loom ---------------------------------------------------------------------------------------

/// loom.MpiRanks / loom.TorchRanks / loom.BoxRanks.
struct PyRanks {
  loom::Ranks ranks;
};

/// A process group whose collectives are the methods of a Python object (loom's
/// `_TorchCollectives`, over torch.distributed): `rank()`, `size()`, `allgatherv(send, recv,
/// counts)`, `alltoallv(send, send_counts, recv, recv_counts)` and `barrier()`, with buffers
/// as memoryviews of bytes and counts in bytes per process.
class PythonProcessGroup final : public loom::ProcessGroup {
public:
  explicit PythonProcessGroup(py::object collectives)
      : collectives_(std::move(collectives)), rank_(collectives_.attr("rank")().cast<int>()),
        size_(collectives_.attr("size")().cast<int>()) {}
  PythonProcessGroup(PythonProcessGroup const&) = delete;
  PythonProcessGroup& operator=(PythonProcessGroup const&) = delete;
  ~PythonProcessGroup() override {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      collectives_ = py::object();
    } else {
      collectives_.release(); // the interpreter is gone: nothing to decrement
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgatherv(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                  std::size_t elem_bytes) const override {
    py::gil_scoped_acquire gil;
    auto const bytes = in_bytes(counts, elem_bytes);
    collectives_.attr("allgatherv")(view(send, bytes[rank_]), view(recv, total(bytes)), bytes);
  }
  void alltoallv(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                 std::vector<std::int64_t> const& recv_counts,
                 std::size_t elem_bytes) const override {
    py::gil_scoped_acquire gil;
    auto const send_bytes = in_bytes(send_counts, elem_bytes);
    auto const recv_bytes = in_bytes(recv_counts, elem_bytes);
    collectives_.attr("alltoallv")(view(send, total(send_bytes)), send_bytes,
                                   view(recv, total(recv_bytes)), recv_bytes);
  }
  void barrier() const override {
    py::gil_scoped_acquire gil;
    collectives_.attr("barrier")();
  }

private:
  static std::vector<std::int64_t> in_bytes(std::vector<std::int64_t> counts, std::size_t elem) {
    for (auto& c : counts)
      c *= static_cast<std::int64_t>(elem);
    return counts;
  }
  static std::int64_t total(std::vector<std::int64_t> const& v) {
    std::int64_t t = 0;
    for (auto c : v)
      t += c;
    return t;
  }
  /// `bytes` bytes at `data` (read-only for a send buffer), as a memoryview.
  template <class Data>
  static py::memoryview view(Data* data, std::int64_t bytes) {
    static char empty = 0; // a valid address for empty buffers
    void* const at = bytes > 0 ? const_cast<void*>(static_cast<void const*>(data)) : &empty;
    return py::memoryview::from_memory(at, static_cast<py::ssize_t>(bytes), std::is_const_v<Data>);
  }
  py::object collectives_;
  int rank_ = 0, size_ = 1;
};

/// A spread array: this process's block, over some ranks (inputs: positions or weights;
/// results: measures, centroids).
struct PySpread {
  Held<std::variant<SpreadPoints, SpreadScalars>> spread;
  bool tensors = false; ///< given or computed from tensors: results are tensors

  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), spread.get());
  }
  py::object value() const {
    return as_output(visit([](auto const& s) { return to_numpy(s.value()); }), tensors);
  }
  loom::Ranks ranks() const {
    return visit([](auto const& s) { return s.ranks(); });
  }
};

/// `spread` as a loom.Spread: its View as the module's type of its rank (the same View, or for
/// points of another layout a copy in sdot::Points' layout).
template <class View>
PySpread as_python(loom::Spread<View> const& spread, bool tensors) {
  if constexpr (View::rank == 1)
    return PySpread{Held<std::variant<SpreadPoints, SpreadScalars>>(
                        SpreadScalars(spread.value(), spread.offsets(), spread.ranks())),
                    tensors};
  else
    return PySpread{
        Held<std::variant<SpreadPoints, SpreadScalars>>(SpreadPoints(
            sdot::detail::in_points_layout(Space(), spread.value(), "sdot::python::points"),
            spread.offsets(), spread.ranks())),
        tensors};
}

/// The block of `obj`, a loom.Spread of the alternative `Spread` (SpreadPoints, SpreadScalars);
/// TypeError or ValueError naming `what` otherwise.
template <class Spread>
Spread const& spread_input(py::handle obj, std::string const& what) {
  if (!py::isinstance<PySpread>(obj))
    throw py::type_error("sdot: " + what + " must be spread (loom.spread) like the positions");
  auto const& held = obj.cast<PySpread const&>().spread.get();
  if (!std::holds_alternative<Spread>(held))
    throw py::value_error("sdot: spread " + what + " must be " +
                          (std::is_same_v<Spread, SpreadPoints> ? "[N, 2]" : "[N]") + " blocks");
  return std::get<Spread>(held);
}

/// Runs a collective reduction; a loom::Error becomes ValueError (the same on every process).
template <class F>
auto collective(F&& f) {
  try {
    return f();
  } catch (loom::Error const& e) {
    throw py::value_error(e.what());
  }
}

/// A collective reduction of a loom.Spread, as a Python method.
template <class F>
auto reduction(F f) {
  return [f](PySpread const& s) { return collective([&] { return s.visit(f); }); };
}

PySpread spread_block(py::handle block, PyRanks const& ranks) {
  py::array array = py::module_::import("numpy").attr("asarray")(block);
  if (array.ndim() == 2)
    return as_python(loom::spread(points_from(array, "positions"), ranks.ranks), is_tensor(block));
  return as_python(loom::spread(scalars_from(array, "weights"), ranks.ranks), is_tensor(block));
}

PySpread spread_whole(py::handle whole, PyRanks const& ranks) {
  py::array array = py::module_::import("numpy").attr("asarray")(whole);
  bool const tensors = is_tensor(whole);
  if (array.ndim() == 2)
    return as_python(loom::spread_host(points_from(array, "positions"), ranks.ranks), tensors);
  return as_python(loom::spread_host(scalars_from(array, "weights"), ranks.ranks), tensors);
}

/// Whether results computed from `positions` (an array, a tensor or a loom.Spread) are tensors.
bool tensors_from(py::handle positions) {
  if (py::isinstance<PySpread>(positions))
    return positions.cast<PySpread const&>().tensors;
  return is_tensor(positions);
}

// ---- loom's operations: route, exchange, Capacity, spmd ----------------------------------------

/// Raised by loom's operations for an error that every process raises alike (a collective
/// loom::Error): a ValueError, which a program run by loom.spmd passes on as such.
py::handle& collective_error() {
  // Set when the module is imported; the module holds the reference. A handle, not an object:
  // a static object would be released after the interpreter is finalised.
  static py::handle type;
  return type;
}

/// Runs one of loom's operations: a collective loom::Error becomes loom.CollectiveError.
template <class F>
auto operation(F&& f) {
  try {
    return f();
  } catch (loom::Error const& e) {
    if (!e.collective())
      throw;
    PyErr_SetString(collective_error().ptr(), e.what());
    throw py::error_already_set();
  }
}

/// loom.Capacity: a size that loom.spmd grows (doubling) and reruns the program with.
struct PyCapacity {
  loom::Capacity capacity;
};

/// Rows packed by destination (loom.route) or received (loom.exchange): `data` [local_count,
/// size, capacity, cols], -1 where empty, and `counts` [local_count, size].
struct PyRouted {
  Held<loom::Routed<double, MemorySpace>> routed;
};

PyRouted route_rows(PyRanks const& ranks, py::handle dest, PySpread const& rows,
                    PyCapacity const& capacity) {
  py::array_t<int, py::array::c_style | py::array::forcecast> const d =
      py::array_t<int, py::array::c_style | py::array::forcecast>::ensure(dest);
  if (!d || d.ndim() != 1)
    throw py::value_error("loom.route: dest must be one integer per row of this process");
  Kokkos::View<int*, MemorySpace> device_dest(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "loom::python::dest"), d.shape(0));
  auto host = Kokkos::create_mirror_view(device_dest);
  for (py::ssize_t i = 0; i < d.shape(0); ++i)
    host(i) = d.at(i);
  Kokkos::deep_copy(device_dest, host);
  return operation([&] {
    return PyRouted{Held<loom::Routed<double, MemorySpace>>(rows.visit([&](auto const& r) {
      return loom::route(ranks.ranks, device_dest, r.value(), r.offsets(), capacity.capacity);
    }))};
  });
}

/// What a Python program run by loom.spmd is to loom::Spmd: the callable, called with the
/// ranks and the call's arguments. A loom.CollectiveError raised in it is the same on every
/// process and goes on as a collective loom::Error; any other exception escapes as one process's
/// failure (loom::spmd ends the job when there are several processes).
struct PyProgram {
  py::object program;
  py::object operator()(loom::Ranks const& ranks, py::args const& args) const {
    try {
      return program(PyRanks{ranks}, *args);
    } catch (py::error_already_set& e) {
      if (e.matches(collective_error()))
        throw loom::Error(py::str(e.value()).cast<std::string>(), true);
      throw;
    }
  }
};

/// loom.spmd(program, ranks): a callable running `program(ranks, *args)` on every process,
/// rerun with larger Capacities while any overflowed on any rank.
struct PySpmd {
  loom::Spmd<PyProgram> spmd;
  py::object call(py::args const& args) {
    return operation([&] { return spmd(args); });
  }
};

// ---- sdot ---------------------------------------------------------------------------------------

using WholeDiagram = sdot::PowerDiagram<Space, sdot::WholeInput>;
using SpreadDiagram = sdot::PowerDiagram<Space, sdot::SpreadInput>;

/// sdot.PowerDiagram: whole input (NumPy arrays) or spread input (loom.spread blocks).
struct PyPowerDiagram {
  Held<std::variant<WholeDiagram, SpreadDiagram>> diagram;
  bool tensors = false; ///< the positions were a tensor: results are tensors

  py::object measures() {
    return result([](auto& d) { return d.measures(); });
  }
  py::object centroids() {
    return result([](auto& d) { return d.centroids(); });
  }
  /// What `get(diagram)` returns: a NumPy array (whole input) or a loom.Spread (spread input).
  template <class Get>
  py::object result(Get const& get) {
    return std::visit(
        [&](auto& d) -> py::object {
          auto r = get(d);
          if constexpr (std::decay_t<decltype(d)>::is_spread)
            return py::cast(as_python(r, tensors));
          else
            return as_output(to_numpy(r), tensors);
        },
        diagram.get());
  }
  /// New weights for the same seeds: whole arrays for whole input, loom.spread blocks for
  /// spread input (PowerDiagram::set_weights: the index, or the boxes, are kept).
  void set_weights(py::object weights) {
    std::visit(
        [&](auto& d) {
          if constexpr (std::decay_t<decltype(d)>::is_spread)
            d.set_weights(spread_input<SpreadScalars>(weights, "weights"));
          else {
            if (py::isinstance<PySpread>(weights))
              throw py::type_error("sdot.PowerDiagram.set_weights: the diagram was built from "
                                   "whole arrays; the weights must be a whole array too");
            d.set_weights(scalars_from(weights, "weights"));
          }
        },
        diagram.get());
  }
  /// New positions and weights for the same seeds (whole input only:
  /// PowerDiagram::set_positions; with warm_start the cells start from the last neighbours).
  void set_positions(py::object positions, py::object weights) {
    auto* d = std::get_if<WholeDiagram>(&diagram.get());
    if (!d)
      throw py::type_error("sdot.PowerDiagram.set_positions: spread input (loom.spread) has no "
                           "new positions; build a new PowerDiagram");
    if (py::isinstance<PySpread>(positions) || py::isinstance<PySpread>(weights))
      throw py::type_error("sdot.PowerDiagram.set_positions: the diagram was built from whole "
                           "arrays; the positions and weights must be whole arrays too");
    d->set_positions(points_from(positions, "positions"), scalars_from(weights, "weights"));
    tensors = tensors_from(positions);
  }
  /// The cells as a list of [K, 2] vertex arrays, one per seed of this process.
  py::list cell_polygons() {
    auto polygons = std::visit([](auto& d) { return d.cell_polygons(); }, diagram.get());
    auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
    auto const vertices =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
    py::list out;
    for (std::size_t i = 0; i + 1 < offsets.extent(0); ++i) {
      py::ssize_t const begin = offsets(i), count = offsets(i + 1) - offsets(i);
      py::array_t<double> cell({count, py::ssize_t(2)});
      auto c = cell.mutable_unchecked<2>();
      for (py::ssize_t k = 0; k < count; ++k) {
        c(k, 0) = vertices(begin + k, 0);
        c(k, 1) = vertices(begin + k, 1);
      }
      out.append(as_output(cell, tensors));
    }
    return out;
  }
};

/// PowerDiagramOptions::coarse_to_fine by name.
sdot::CoarseToFine coarse_to_fine_from(std::string const& mode) {
  if (mode == "automatic")
    return sdot::CoarseToFine::automatic;
  if (mode == "always")
    return sdot::CoarseToFine::always;
  if (mode == "never")
    return sdot::CoarseToFine::never;
  throw py::value_error("sdot.PowerDiagram: coarse_to_fine must be 'automatic', 'always' or "
                        "'never', not '" +
                        mode + "'");
}

PyPowerDiagram make_power_diagram(py::object positions, py::object weights, py::object boundaries,
                                  int nb_boxes, bool same_bits, bool warm_start,
                                  std::string const& coarse_to_fine) {
  sdot::PowerDiagramOptions options;
  options.nb_boxes = nb_boxes;
  options.same_bits = same_bits;
  options.warm_start = warm_start;
  options.coarse_to_fine = coarse_to_fine_from(coarse_to_fine);
  auto const domain = half_spaces_from(boundaries);
  bool const spread_positions = py::isinstance<PySpread>(positions);
  bool const spread_weights = py::isinstance<PySpread>(weights);
  if (spread_positions != spread_weights)
    throw py::type_error("sdot.PowerDiagram: positions and weights must both be spread "
                         "(loom.spread) or both be whole arrays");
  if (!spread_positions) {
    WholeDiagram d(points_from(positions, "positions"), scalars_from(weights, "weights"), domain,
                   options);
    return PyPowerDiagram{Held<std::variant<WholeDiagram, SpreadDiagram>>(std::move(d)),
                          tensors_from(positions)};
  }
  SpreadDiagram d(spread_input<SpreadPoints>(positions, "positions"),
                  spread_input<SpreadScalars>(weights, "weights"), domain, options);
  return PyPowerDiagram{Held<std::variant<WholeDiagram, SpreadDiagram>>(std::move(d)),
                        tensors_from(positions)};
}

using SpreadTransport = sdot::OptimalTransport<Space, sdot::SpreadInput>;

/// A View of this process's block as a loom.Spread over `ranks` (the whole block on its first
/// local rank, as the diagram's results).
PySpread spread_result(Scalars const& block, loom::Ranks const& ranks, bool tensors) {
  std::vector<std::int64_t> counts(ranks.local_count(), 0);
  counts[0] = static_cast<std::int64_t>(block.extent(0));
  return as_python(loom::spread(block, ranks, counts), tensors);
}

/// sdot.OptimalTransport: whole input (one process, nb_boxes boxes) or spread input.
struct PyOptimalTransport {
  Held<std::variant<sdot::OptimalTransport<Space>, SpreadTransport>> transport;
  bool tensors = false; ///< the positions were a tensor: results are tensors

  py::dict solve(py::object initial_weights) {
    py::dict out;
    auto const statistics = [&](sdot::OptimalTransportStatistics const& s) {
      out["newton_iterations"] = s.newton_iterations;
      out["cg_iterations"] = s.cg_iterations;
      out["diagram_evaluations"] = s.diagram_evaluations;
      out["max_error"] = s.max_error;
      out["seconds"] = s.seconds;
    };
    auto& held = transport.get();
    if (auto* ot = std::get_if<sdot::OptimalTransport<Space>>(&held)) {
      auto result = initial_weights.is_none()
                        ? ot->solve()
                        : ot->solve(scalars_from(initial_weights, "initial_weights"));
      out["weights"] = as_output(to_numpy(result.weights), tensors);
      out["measures"] = as_output(to_numpy(result.measures), tensors);
      statistics(result.statistics);
      return out;
    }
    auto& spread = std::get<SpreadTransport>(held);
    auto const result =
        initial_weights.is_none()
            ? spread.solve()
            : spread.solve(spread_input<SpreadScalars>(initial_weights, "initial_weights"));
    Scalars const weights = result.weights;
    Scalars const measures = result.measures;
    out["weights"] = spread_result(weights, spread.ranks(), tensors);
    out["measures"] = spread_result(measures, spread.ranks(), tensors);
    statistics(result.statistics);
    return out;
  }
  /// New positions for the same seeds (whole input only: OptimalTransport::set_positions).
  void set_positions(py::object positions) {
    auto* ot = std::get_if<sdot::OptimalTransport<Space>>(&transport.get());
    if (!ot)
      throw py::type_error("sdot.OptimalTransport.set_positions: spread input (loom.spread) has "
                           "no new positions; build a new OptimalTransport");
    if (py::isinstance<PySpread>(positions))
      throw py::type_error("sdot.OptimalTransport.set_positions: the solver was built from whole "
                           "arrays; the positions must be a whole array too");
    ot->set_positions(points_from(positions, "positions"));
    tensors = tensors_from(positions);
  }
};

PyOptimalTransport make_optimal_transport(py::object positions, py::object masses,
                                          py::object boundaries, int nb_boxes, double tol) {
  sdot::PowerDiagramOptions options;
  options.nb_boxes = nb_boxes;
  sdot::OptimalTransportOptions transport_options;
  transport_options.tol = tol;
  using Transport = std::variant<sdot::OptimalTransport<Space>, SpreadTransport>;
  bool const spread_positions = py::isinstance<PySpread>(positions);
  if (spread_positions != py::isinstance<PySpread>(masses))
    throw py::type_error("sdot.OptimalTransport: positions and masses must both be spread "
                         "(loom.spread) or both be whole arrays");
  if (!spread_positions)
    return PyOptimalTransport{
        Held<Transport>(sdot::OptimalTransport<Space>(
            points_from(positions, "positions"), scalars_from(masses, "masses"),
            half_spaces_from(boundaries), options, transport_options)),
        tensors_from(positions)};
  auto const& points = spread_input<SpreadPoints>(positions, "positions");
  auto const& targets = spread_input<SpreadScalars>(masses, "masses");
  options.nb_boxes = 1; // the boxes per process come from the spread's ranks
  if (nb_boxes != 1 && nb_boxes != points.ranks().local_count())
    throw py::value_error("sdot.OptimalTransport: with spread input the ranks come from the "
                          "spread; choose boxes per process with loom.MpiRanks(comm, K)");
  return PyOptimalTransport{
      Held<Transport>(SpreadTransport(points, targets, half_spaces_from(boundaries), options,
                                      transport_options)),
      tensors_from(positions)};
}

} // namespace

PYBIND11_MODULE(_sdot_loom, m) {
  m.doc() = "The C++ core of the sdot and loom Python packages";
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize(); // honours the KOKKOS_* environment variables
    kokkos_initialised_here = true;
  }
  py::module_::import("atexit").attr("register")(py::cpp_function(&release_and_finalize));

  // loom
  py::register_exception<loom::Error>(m, "LoomError", PyExc_RuntimeError);
  py::class_<PyRanks>(m, "Ranks")
      .def_property_readonly("size", [](PyRanks const& r) { return r.ranks.size(); })
      .def_property_readonly("rank", [](PyRanks const& r) { return r.ranks.rank(); })
      .def_property_readonly("local_count", [](PyRanks const& r) { return r.ranks.local_count(); })
      .def_property_readonly("process_rank",
                             [](PyRanks const& r) { return r.ranks.process_rank(); })
      .def_property_readonly("process_count",
                             [](PyRanks const& r) { return r.ranks.process_count(); });
#ifdef LOOM_ENABLE_MPI
  m.attr("mpi_enabled") = true;
  m.def(
      "mpi_ranks",
      [](std::int64_t fortran_comm, int boxes_per_process) {
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (!initialised)
          throw py::value_error("loom.MpiRanks: MPI is not initialised (import mpi4py.MPI first)");
        return PyRanks{
            loom::MpiRanks(MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_comm)), boxes_per_process)};
      },
      py::arg("fortran_comm"), py::arg("boxes_per_process") = 1);
#else
  m.attr("mpi_enabled") = false; // no mpi_ranks: loom.MpiRanks raises
#endif
  m.def(
      "process_group_ranks",
      [](py::object collectives, int boxes_per_process) {
        return PyRanks{loom::ProcessGroupRanks(
            std::make_shared<PythonProcessGroup>(std::move(collectives)), boxes_per_process)};
      },
      py::arg("collectives"), py::arg("boxes_per_process") = 1);
  m.def(
      "box_ranks", [](int count) { return PyRanks{loom::BoxRanks(count)}; }, py::arg("count"));

  auto const collective_error_type = py::reinterpret_steal<py::object>(
      PyErr_NewException("_sdot_loom.CollectiveError", PyExc_ValueError, nullptr));
  m.attr("CollectiveError") = collective_error_type; // the module keeps it alive
  collective_error() = collective_error_type;
  py::class_<PyCapacity>(m, "Capacity")
      .def(py::init([](int initial) { return PyCapacity{loom::Capacity(initial)}; }),
           py::arg("initial") = 1)
      .def_property_readonly("value", [](PyCapacity const& c) { return c.capacity.value(); });
  py::class_<PyRouted>(m, "Routed")
      .def_property_readonly(
          "data",
          [](PyRouted const& r) {
            auto const data =
                Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.routed.get().data);
            return py::array_t<double>(
                {data.extent(0), data.extent(1), data.extent(2), data.extent(3)}, data.data());
          })
      .def_property_readonly("counts", [](PyRouted const& r) {
        auto const counts =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.routed.get().counts);
        return py::array_t<int>({counts.extent(0), counts.extent(1)}, counts.data());
      });
  m.def("route", &route_rows, py::arg("ranks"), py::arg("dest"), py::arg("rows"),
        py::arg("capacity"));
  m.def(
      "exchange",
      [](PyRanks const& ranks, PyRouted const& sent) {
        return operation([&] {
          return PyRouted{Held<loom::Routed<double, MemorySpace>>(
              loom::exchange(ranks.ranks, sent.routed.get()))};
        });
      },
      py::arg("ranks"), py::arg("sent"));
  py::class_<PySpmd>(m, "Spmd")
      .def("__call__", &PySpmd::call)
      .def_property_readonly("last_reruns", [](PySpmd const& p) { return p.spmd.last_reruns(); })
      .def_property_readonly("total_reruns", [](PySpmd const& p) { return p.spmd.total_reruns(); });
  m.def(
      "spmd",
      [](py::object program, PyRanks const& ranks, int max_reruns) {
        return PySpmd{loom::spmd(PyProgram{std::move(program)}, ranks.ranks, max_reruns)};
      },
      py::arg("program"), py::arg("ranks"), py::arg("max_reruns") = 16);

  py::class_<PySpread>(m, "Spread")
      .def_property_readonly("value", &PySpread::value, "This process's block (a new NumPy array)")
      .def_property_readonly("ranks", [](PySpread const& s) { return PyRanks{s.ranks()}; })
      .def("sum", reduction([](auto const& x) { return double(x.sum()); }))
      .def("max", reduction([](auto const& x) { return double(x.max()); }))
      .def("min", reduction([](auto const& x) { return double(x.min()); }))
      .def("mean", reduction([](auto const& x) { return x.mean(); }));
  m.def("spread", &spread_block, py::arg("block"), py::arg("ranks"));
  m.def("spread_host", &spread_whole, py::arg("whole"), py::arg("ranks"));
  m.def("gather_to_host", [](PySpread const& s) {
    return collective([&] {
      return as_output(s.visit([](auto const& x) { return to_numpy(loom::gather_to_host(x)); }),
                       s.tensors);
    });
  });

  // sdot
  py::class_<sdot::HalfSpace>(m, "HalfSpace")
      .def(py::init([](std::array<double, 2> normal, double offset) {
             return sdot::HalfSpace{normal, offset};
           }),
           py::arg("normal"), py::arg("offset"))
      .def_readonly("normal", &sdot::HalfSpace::normal)
      .def_readonly("offset", &sdot::HalfSpace::offset)
      .def("__repr__", [](sdot::HalfSpace const& h) {
        std::ostringstream s;
        s.precision(17);
        s << "HalfSpace(normal=[" << h.normal[0] << ", " << h.normal[1] << "], offset=" << h.offset
          << ")";
        return s.str();
      });
  m.def(
      "box_half_spaces",
      [](py::object lo, py::object hi) {
        return sdot::box_half_spaces(pair_from(lo, "lo"), pair_from(hi, "hi"));
      },
      py::arg("lo"), py::arg("hi"));

  py::class_<PyPowerDiagram>(m, "PowerDiagram")
      .def(py::init(&make_power_diagram), py::arg("positions"), py::arg("weights"),
           py::arg("boundaries"), py::arg("nb_boxes") = 1, py::arg("same_bits") = false,
           py::arg("warm_start") = false, py::arg("coarse_to_fine") = "automatic")
      .def("set_weights", &PyPowerDiagram::set_weights, py::arg("weights"))
      .def("set_positions", &PyPowerDiagram::set_positions, py::arg("positions"),
           py::arg("weights"))
      .def_property_readonly("measures", &PyPowerDiagram::measures)
      .def_property_readonly("centroids", &PyPowerDiagram::centroids)
      .def_property_readonly("cell_polygons", &PyPowerDiagram::cell_polygons);

  py::class_<PyOptimalTransport>(m, "OptimalTransport")
      .def(py::init(&make_optimal_transport), py::arg("positions"), py::arg("masses"),
           py::arg("boundaries"), py::arg("nb_boxes") = 1,
           py::arg("tol") = sdot::OptimalTransportOptions{}.tol)
      .def("solve", &PyOptimalTransport::solve, py::arg("initial_weights") = py::none())
      .def("set_positions", &PyOptimalTransport::set_positions, py::arg("positions"));
}

#pragma once
/// @file
/// Semi-discrete optimal transport: the weights for which every cell of a power diagram holds
/// a prescribed mass, by a damped Newton method (Kitagawa–Mérigot–Thibert) whose linear
/// systems are solved by a preconditioned conjugate gradient (multilevel aggregation, or
/// Jacobi).

#include <sdot/base/scan.hpp>
#include <sdot/base/views.hpp>
#include <sdot/jacobian.hpp>
#include <sdot/points.hpp>
#include <sdot/power_diagram.hpp>
#include <sdot/spatial_blocks.hpp>
#include <sdot/transport/aggregation_multigrid.hpp>
#include <sdot/transport/conjugate_gradient.hpp>

#include <loom/spread.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sdot {

/// One Newton step, as reported to OptimalTransportOptions::progress.
struct NewtonProgress {
  int newton_iteration = 0;      ///< 0: the initial weights, then 1, 2, ...
  double max_error = 0;          ///< max_i |m_i − target_i| after the step
  double max_relative_error = 0; ///< max_i |m_i − target_i| / target_i after the step
  double step = 0;               ///< damping factor taken (1, 1/2, 1/4, ...); 0 at iteration 0
  int cg_iterations = 0;         ///< conjugate-gradient iterations of this step
  double cg_tol = 0;             ///< relative residual asked of this step's linear solve
  int halvings = 0;              ///< times the step was halved
  double seconds = 0;            ///< since the start of the solve
};

/// A cell that is empty with the initial weights, which Newton's method cannot start from
/// (coincident seeds, or weights too far apart); thrown on every process alike.
class EmptyCellError : public std::invalid_argument {
public:
  /// The error for seed `seed`, with `message`.
  EmptyCellError(std::int64_t seed, std::string const& message)
      : std::invalid_argument(message), seed_(seed) {}
  /// The seed's global index (its row in the concatenated blocks of the processes).
  std::int64_t seed() const { return seed_; }

private:
  std::int64_t seed_;
};

/// Preconditioners of the linear solves.
enum class CgPreconditioner {
  /// The diagonal (iterations grow like √N).
  jacobi,
  /// One W-cycle of a multilevel aggregation (aggregates along the couplings, then along the
  /// Z-order curve, within each process; Galerkin coarse matrices that keep the couplings
  /// between processes; damped Jacobi smoothing): iterations grow slowly with N and do not
  /// grow with the processes (docs/transport.md, AggregationOptions).
  aggregation,
};

/// Options of the transport solver.
struct OptimalTransportOptions {
  /// Stop when |m_i − target_i| ≤ tol × (area of the domain) for every cell i.
  double tol = 1e-10;
  /// Newton steps before giving up (std::runtime_error).
  int max_newton = 100;
  /// A step is accepted only if every cell keeps at least this fraction of the smallest
  /// target or initial mass, min_j min(target_j, m_j(initial weights)) (no cell empties), and
  /// the Euclidean error decreases by a factor 1 − step/2. In (0, 1).
  double min_mass_fraction = 0.5;
  /// Halvings of a step before giving up (std::runtime_error).
  int max_halvings = 40;
  /// The linear solves stop when |J δ − b| ≤ η |b| (Euclidean norms): η = cg_tol, or with
  /// adaptive_cg_tol an Eisenstat–Walker forcing term clamped to [cg_tol, max_cg_tol].
  double cg_tol = 1e-3;
  /// Eisenstat–Walker forcing terms (η_k = 0.9 (|m − t|_k / |m − t|_{k−1})², loose far from
  /// the solution); false: η = cg_tol at every step.
  bool adaptive_cg_tol = true;
  /// The loosest forcing term (adaptive_cg_tol only), in [cg_tol, 1). Looser directions cost
  /// more Newton steps and diagram evaluations than the CG they save, and beyond ~0.1 they may
  /// stall the damping (docs/transport.md).
  double max_cg_tol = 0.01;
  /// The loosest forcing term once the step before took the full Newton step (α = 1), in
  /// (0, 1); still within [cg_tol, max_cg_tol]. Near the solution a loose direction can leave
  /// the last step's error just above the tolerance and cost a whole Newton step
  /// (docs/transport.md).
  double full_step_max_cg_tol = 0.003;
  /// The linear solves also go on until the linear model keeps every cell's mass at least at
  /// the threshold of min_mass_fraction up to the first step the damping tries, a_max:
  /// (b − J δ)_i ≤ target_i − m_i + (m_i − threshold) / a_max on every row. The norm test
  /// alone may leave the residual on a few tiny cells, which the linear model then empties,
  /// and the damping with it (docs/transport.md).
  bool linear_model_keeps_cells = true;
  /// Conjugate-gradient iterations per Newton step at most.
  int max_cg = 20000;
  /// Preconditioner of the conjugate gradient.
  CgPreconditioner preconditioner = CgPreconditioner::aggregation;
  /// Settings of CgPreconditioner::aggregation.
  AggregationOptions aggregation;
  /// Called after every Newton step (and once for the initial weights) on every process.
  std::function<void(NewtonProgress const&)> progress;
};

/// What a solve did.
struct OptimalTransportStatistics {
  int newton_iterations = 0;   ///< Newton steps taken
  int cg_iterations = 0;       ///< all Newton steps together
  int diagram_evaluations = 0; ///< measures computed (initial, trial steps)
  /// Seconds spent assembling the Jacobians and in conjugate gradient (the rest: diagrams).
  double linear_seconds = 0;
  double max_error = 0; ///< max_i |m_i − target_i| at the end
  /// Seconds of the whole solve.
  double seconds = 0;
  std::vector<NewtonProgress> history; ///< one entry per Newton step, the initial one first
};

/// Weights found, the measures they give, and the statistics.
template <class MemorySpace>
struct OptimalTransportResult {
  Kokkos::View<double*, MemorySpace> weights;  ///< the weights found, one per seed of this process
  Kokkos::View<double*, MemorySpace> measures; ///< the cells' measures with those weights
  OptimalTransportStatistics statistics;       ///< what the solve did
};

namespace detail {

/// The cells of a PowerDiagram as the transport solver consumes them (see OneProcessCells and
/// SpreadCells, which choose the input placement).
template <class ExecutionSpace, class Input>
class DiagramCells {
public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using positions_type = Points<memory_space>;
  using scalars_type = Kokkos::View<double*, memory_space>;
  using diagram_type = PowerDiagram<ExecutionSpace, Input>;

  DiagramCells(char const* name, ExecutionSpace const& space, loom::Ranks ranks,
               positions_type positions, std::vector<HalfSpace> boundaries,
               PowerDiagramOptions options)
      : name_(name), space_(space), ranks_(std::move(ranks)), positions_(positions),
        boundaries_(std::move(boundaries)), options_(options),
        area_(domain_polygon(boundaries_).area) {
    options_.keep_polygons = true; // the Jacobian uses the polygons of the last evaluation
    options_.warm_start = true;    // each diagram from the neighbours of the one before
  }

  ExecutionSpace const& execution_space_instance() const { return space_; }
  /// The processes.
  loom::Ranks const& ranks() const { return ranks_; }
  /// This process's seeds.
  positions_type positions() const { return positions_; }
  /// Area of the whole domain.
  double domain_area() const { return area_; }
  /// Sets this process's weights (the diagram is computed on first use; collective when
  /// spread). With `abandon_below`, the computation may give up once a cell's measure is below
  /// it (abandoned()): for trial weights that such a cell would reject anyway.
  void set_weights(scalars_type weights,
                   double abandon_below = -std::numeric_limits<double>::infinity()) {
    if (diagram_) { // the same seeds: the diagram keeps what depends on the positions only
      if constexpr (diagram_type::is_spread)
        diagram_->set_weights(loom::spread(weights, ranks_));
      else if (moved_) // new positions: their cells start from the last diagram's neighbours
        diagram_->set_positions(positions_, weights);
      else
        diagram_->set_weights(weights);
      moved_ = false;
      diagram_->set_abandon_below(abandon_below);
      return;
    }
    options_.abandon_below = abandon_below;
    diagram_.reset();
    if constexpr (diagram_type::is_spread)
      diagram_.emplace(space_, loom::spread(positions_, ranks_), loom::spread(weights, ranks_),
                       boundaries_, options_);
    else
      diagram_.emplace(space_, positions_, weights, boundaries_, options_);
  }
  /// New positions for the same seeds (whole input), taken by the next set_weights(): the
  /// diagram then builds its index again, and its cells start from the neighbours of the
  /// last diagram (PowerDiagram::set_positions()).
  /// @throws std::invalid_argument for another number of positions
  template <class I = Input, class = std::enable_if_t<std::is_same<I, WholeInput>::value>>
  void set_positions(positions_type positions) {
    if (positions.extent(0) != positions_.extent(0))
      throw std::invalid_argument(
          std::string(name_) + "::set_positions: " + std::to_string(positions.extent(0)) +
          " positions given for " + std::to_string(positions_.extent(0)) + " seeds");
    positions_ = positions;
    moved_ = diagram_.has_value();
  }
  /// Whether the last computation gave up (set_weights()'s abandon_below) on this process.
  /// Several ranks give up together: every process gets the same answer.
  bool abandoned() {
    measures();
    return diagram().statistics().abandoned;
  }
  /// Areas of this process's cells.
  scalars_type measures() {
    if constexpr (diagram_type::is_spread)
      return diagram().measures().value();
    else
      return diagram().measures();
  }
  /// This process's cells; edge sources in global seed numbering (those built with the
  /// measures: PowerDiagramOptions::keep_polygons is set).
  CellPolygons<memory_space> cell_polygons() { return diagram().cell_polygons(); }
  /// cell_polygons() as the Jacobian reads them, without compacting what the computation kept.
  CellPolygonReader<memory_space> polygon_reader() { return diagram().polygon_reader(); }
  /// Frees the slots polygon_reader() read, if any (cell_polygons() would compute the
  /// polygons again).
  void release_polygons() { diagram().release_kept_slots(); }
  /// Centroids of this process's cells.
  positions_type centroids() {
    if constexpr (diagram_type::is_spread)
      return diagram().centroids().value();
    else
      return diagram().centroids();
  }
  /// The diagram for the last weights set.
  diagram_type& diagram() {
    if (!diagram_)
      throw std::logic_error(std::string(name_) + ": set_weights() was not called");
    return *diagram_;
  }

private:
  char const* name_;
  ExecutionSpace space_;
  loom::Ranks ranks_;
  positions_type positions_;
  std::vector<HalfSpace> boundaries_;
  PowerDiagramOptions options_;
  double area_;
  std::optional<diagram_type> diagram_;
  bool moved_ = false; ///< set_positions() since the diagram's last weights
};

} // namespace detail

/// The cells of a power diagram computed in one process (one box, or
/// PowerDiagramOptions::nb_boxes boxes), as the transport solver consumes them. Any type with
/// the same members can be given to solve_optimal_transport(): a distributed diagram provides
/// this process's block of seeds (in the processes' order) and cells whose edge sources are
/// global seed numbers; every member but the accessors is then collective, and abandoned()
/// must give the same answer on every process.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class OneProcessCells : public detail::DiagramCells<ExecutionSpace, WholeInput> {
public:
  /// @throws std::invalid_argument for an empty or unbounded domain
  OneProcessCells(ExecutionSpace const& space,
                  Points<typename ExecutionSpace::memory_space> positions,
                  std::vector<HalfSpace> boundaries, PowerDiagramOptions options = {})
      : detail::DiagramCells<ExecutionSpace, WholeInput>("sdot::OneProcessCells", space,
                                                         loom::Ranks{}, positions,
                                                         std::move(boundaries), options) {}
};

/// The cells of a power diagram spread over MPI processes (PowerDiagram with SpreadInput), as
/// the transport solver consumes them: this process holds a block of the seeds, the blocks
/// following each other in process order. Collective members, as those of OneProcessCells.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class SpreadCells : public detail::DiagramCells<ExecutionSpace, SpreadInput> {
public:
  /// @param space the execution space instance the kernels run on
  /// @param ranks the processes (loom::MpiRanks(comm): one rank per process)
  /// @param positions this process's block of the seeds
  /// @param boundaries half-spaces a·x ≤ c whose intersection is the (bounded) domain
  /// @param options how the diagrams are computed (see PowerDiagramOptions)
  /// @throws std::invalid_argument for an empty or unbounded domain (on every process)
  SpreadCells(ExecutionSpace const& space, loom::Ranks ranks,
              Points<typename ExecutionSpace::memory_space> positions,
              std::vector<HalfSpace> boundaries, PowerDiagramOptions options = {})
      : detail::DiagramCells<ExecutionSpace, SpreadInput>("sdot::SpreadCells", space,
                                                          std::move(ranks), positions,
                                                          std::move(boundaries), options) {}
  /// The same, on a default-constructed execution space instance.
  SpreadCells(loom::Ranks ranks, Points<typename ExecutionSpace::memory_space> positions,
              std::vector<HalfSpace> boundaries, PowerDiagramOptions options = {})
      : SpreadCells(ExecutionSpace{}, std::move(ranks), positions, std::move(boundaries), options) {
  }
};

namespace detail {

/// Collective: throws the same std::invalid_argument on every process when the target
/// masses do not fit the seeds or the domain.
template <class ExecutionSpace, class Targets>
void validate_target_masses(ExecutionSpace const& space, loom::Ranks const& ranks,
                            std::int64_t positions, Targets const& targets, double area) {
  int const n = static_cast<int>(targets.extent(0));
  int const first_bad = first_failing(
      space, "sdot::ot::validate_targets", n,
      KOKKOS_LAMBDA(int i) { return sdot::compat::isfinite(targets(i)) && targets(i) > 0; });
  double bad_value = 0;
  if (first_bad < n) {
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                 Kokkos::subview(targets, first_bad));
    bad_value = v();
  }
  double const target_sum = sum(
      space, "sdot::ot::target_sum", n, KOKKOS_LAMBDA(int i) { return targets(i); });
  // Every process sees every process's findings and picks the same first problem.
  std::vector<double> mine{double(positions), double(n), double(first_bad < n ? first_bad : -1),
                           bad_value, target_sum};
  auto all = ranks.process_count() == 1 ? mine : ranks.allgather(mine);
  std::int64_t first_row = 0;
  double total = 0;
  for (int p = 0; p < ranks.process_count(); ++p) {
    double const* f = &all[5 * p];
    std::ostringstream msg;
    msg.precision(17);
    if (f[0] != f[1]) {
      msg << "sdot::OptimalTransport: " << std::int64_t(f[0]) << " positions but "
          << std::int64_t(f[1]) << " target masses";
      if (ranks.process_count() > 1)
        msg << " on process " << p;
      throw std::invalid_argument(msg.str());
    }
    if (f[2] >= 0) {
      msg << "sdot::OptimalTransport: target mass " << first_row + std::int64_t(f[2]) << " is "
          << f[3] << ": target masses must be positive and finite";
      throw std::invalid_argument(msg.str());
    }
    first_row += std::int64_t(f[1]);
    total += f[4];
  }
  if (!(std::fabs(total - area) <= 1e-9 * area)) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "sdot::OptimalTransport: the target masses add up to " << total
        << " but the domain's area is " << area << ": they must be equal (within 1e-9 relative)";
    throw std::invalid_argument(msg.str());
  }
}

/// Local partials of max_i |m_i − t_i| and Σ ((m_i − t_i) / unit)² (`unit` a power of two near
/// the domain's area: the squares of masses leave double's range for domains below 1e-154 or
/// above 1e154 in area).
template <class ExecutionSpace, class Masses, class Targets>
std::array<double, 2> mass_errors(ExecutionSpace const& space, Masses const& m, Targets const& t,
                                  double unit) {
  int const n = static_cast<int>(m.extent(0));
  double max_error = 0;
  Kokkos::parallel_reduce(
      "sdot::ot::max_error", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(int i, double& e) {
        e = sdot::compat::fmax(e, sdot::compat::fabs(m(i) - t(i)));
      },
      Kokkos::Max<double>(max_error));
  double const squares = sum(
      space, "sdot::ot::squared_error", n, KOKKOS_LAMBDA(int i) {
        double const e = (m(i) - t(i)) / unit;
        return e * e;
      });
  return {n > 0 ? max_error : 0.0, squares};
}

/// Local max_i |m_i − t_i| / t_i (0 if no cell).
template <class ExecutionSpace, class Masses, class Targets>
double max_relative_error(ExecutionSpace const& space, Masses const& m, Targets const& t) {
  double max_error = 0;
  Kokkos::parallel_reduce(
      "sdot::ot::max_relative_error", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m.extent(0)),
      KOKKOS_LAMBDA(int i, double& e) {
        e = sdot::compat::fmax(e, sdot::compat::fabs(m(i) - t(i)) / t(i));
      },
      Kokkos::Max<double>(max_error));
  return m.extent(0) > 0 ? max_error : 0.0;
}

/// Index of the first cell whose mass is below `threshold` (n if none).
template <class ExecutionSpace, class Masses>
int first_below(ExecutionSpace const& space, Masses const& m, double threshold) {
  return first_failing(
      space, "sdot::ot::first_below", static_cast<int>(m.extent(0)),
      KOKKOS_LAMBDA(int i) { return m(i) >= threshold; });
}

/// Smallest of the masses and targets (+infinity if none).
template <class ExecutionSpace, class Masses, class Targets>
double local_min(ExecutionSpace const& space, Masses const& m, Targets const& t) {
  double smallest = sdot::compat::infinity<double>();
  Kokkos::parallel_reduce(
      "sdot::ot::local_min", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m.extent(0)),
      KOKKOS_LAMBDA(int i, double& v) {
        v = sdot::compat::fmin(v, sdot::compat::fmin(m(i), t(i)));
      },
      Kokkos::Min<double>(smallest));
  return smallest;
}

/// Index of the first cell of zero (or not finite) measure (n if none).
template <class ExecutionSpace, class Masses>
int first_non_positive(ExecutionSpace const& space, Masses const& m) {
  return first_failing(
      space, "sdot::ot::first_non_positive", static_cast<int>(m.extent(0)),
      KOKKOS_LAMBDA(int i) { return m(i) > 0; });
}

template <class ExecutionSpace, class View>
double local_sum(ExecutionSpace const& space, View const& v) {
  return sum(
      space, "sdot::ot::sum", static_cast<int>(v.extent(0)), KOKKOS_LAMBDA(int i) { return v(i); });
}

/// out(i) = (a(i) + s * b(i) + c) * scale
template <class ExecutionSpace, class Out, class A, class B>
void linear_combination(ExecutionSpace const& space, Out const& out, A const& a, double s,
                        B const& b, double c, double scale = 1) {
  Kokkos::parallel_for(
      "sdot::ot::linear_combination", Kokkos::RangePolicy<ExecutionSpace>(space, 0, out.extent(0)),
      KOKKOS_LAMBDA(int i) { out(i) = (a(i) + s * b(i) + c) * scale; });
}

} // namespace detail

namespace detail {
/// Throws std::invalid_argument naming the first option out of its range, and its value.
inline void check_transport_options(OptimalTransportOptions const& o) {
  auto check = [](bool ok, char const* name, double value, char const* range) {
    if (ok)
      return;
    std::ostringstream msg;
    msg.precision(17);
    msg << "sdot::OptimalTransport: options." << name << " is " << value << ": it must be "
        << range;
    throw std::invalid_argument(msg.str());
  };
  check(o.tol > 0, "tol", o.tol, "positive");
  check(o.min_mass_fraction > 0 && o.min_mass_fraction < 1, "min_mass_fraction",
        o.min_mass_fraction, "in (0, 1)");
  check(o.cg_tol > 0 && o.cg_tol < 1, "cg_tol", o.cg_tol, "in (0, 1)");
  check(o.max_cg_tol >= o.cg_tol && o.max_cg_tol < 1, "max_cg_tol", o.max_cg_tol, "in [cg_tol, 1)");
  check(o.full_step_max_cg_tol > 0 && o.full_step_max_cg_tol < 1, "full_step_max_cg_tol",
        o.full_step_max_cg_tol, "in (0, 1)");
  check(o.max_newton >= 0, "max_newton", o.max_newton, "≥ 0");
  check(o.max_halvings >= 0, "max_halvings", o.max_halvings, "≥ 0");
  check(o.max_cg >= 1, "max_cg", o.max_cg, "≥ 1");
  auto const& a = o.aggregation;
  check(a.matched_levels >= -1, "aggregation.matched_levels", a.matched_levels,
        "≥ −1 (−1: 3 on one process, 0 on several)");
  check(a.aggregate_size >= 2, "aggregation.aggregate_size", a.aggregate_size, "≥ 2");
  check(a.coarsest_size >= 1, "aggregation.coarsest_size", a.coarsest_size, "≥ 1");
  check(a.sweeps >= 1, "aggregation.sweeps", a.sweeps, "≥ 1");
  check(a.omega > 0 && a.omega <= 1, "aggregation.omega", a.omega, "in (0, 1]");
  check(a.coarse_scale > 0 && a.coarse_scale < 2, "aggregation.coarse_scale", a.coarse_scale,
        "in (0, 2)");
  check(a.cycle >= 1, "aggregation.cycle", a.cycle, "≥ 1");
}

/// The message of EmptyCellError for seed `index`.
inline std::string empty_cell_message(std::int64_t index) {
  return "sdot::OptimalTransport: cell " + std::to_string(index) +
         " is empty with the initial weights (coincident seeds, or weights too far apart): "
         "Newton's method needs every cell non-empty at the start";
}
} // namespace detail

namespace detail {

/// Whether `Cells` reads its polygons where its computation kept them (DiagramCells:
/// polygon_reader(), release_polygons()); other Cells types give cell_polygons().
template <class Cells, class = void>
struct reads_kept_polygons : std::false_type {};
template <class Cells>
struct reads_kept_polygons<Cells, std::void_t<decltype(std::declval<Cells&>().polygon_reader())>>
    : std::true_type {};

/// The damped Newton iteration of solve_optimal_transport(), step by step: each member
/// function is one part of a Newton step, and the members hold the iterate.
template <class Cells>
class NewtonSolver {
public:
  using ExecutionSpace = typename Cells::execution_space;
  using memory_space = typename Cells::memory_space;
  using Scalars = Kokkos::View<double*, memory_space>;
  using ConstScalars = Kokkos::View<double const*, memory_space>;

  /// Collective: checks the options and the target masses (the same exception everywhere).
  NewtonSolver(Cells& cells, ConstScalars targets, OptimalTransportOptions const& options)
      : cells_(cells), targets_(targets), options_(options),
        space_(cells.execution_space_instance()), ranks_(cells.ranks()),
        positions_(cells.positions()), n_(static_cast<int>(positions_.extent(0))),
        area_(cells.domain_area()), unit_(std::ldexp(1.0, std::ilogb(area_))) {
    check_transport_options(options);
    validate_target_masses(space_, ranks_, n_, targets, area_);
  }

  /// Collective: the solve from `initial_weights` (empty: zeros).
  OptimalTransportResult<memory_space> solve(ConstScalars initial_weights) {
    start(initial_weights);
    // Eisenstat–Walker (choice 2, γ = 0.9, α = 2): η_k = γ (|F_k| / |F_{k−1}|)², safeguarded
    // by γ η_{k−1}² when that is above 0.1; |F| = |m − t|₂.
    double forcing = options_.max_cg_tol, previous_error = error_[1];
    while (error_[0] > options_.tol * area_) {
      if (stats().newton_iterations >= options_.max_newton) {
        std::ostringstream msg;
        msg << "sdot::OptimalTransport: no convergence after " << options_.max_newton
            << " Newton iterations: max |m_i - target_i| = " << error_[0]
            << " > tol × area = " << options_.tol * area_;
        throw std::runtime_error(msg.str());
      }
      ++stats().newton_iterations;
      if (options_.adaptive_cg_tol && stats().newton_iterations > 1) {
        double const ratio = error_[1] / previous_error;
        double const safeguard = 0.9 * forcing * forcing;
        forcing = 0.9 * ratio * ratio;
        if (safeguard > 0.1)
          forcing = std::fmax(forcing, safeguard);
      }
      // After a full step, the tighter bound full_step_max_cg_tol (never below cg_tol).
      double const loosest =
          stats().newton_iterations > 1 && last_step_ >= 1
              ? std::fmax(options_.cg_tol,
                          std::fmin(options_.max_cg_tol, options_.full_step_max_cg_tol))
              : options_.max_cg_tol;
      double const eta = options_.adaptive_cg_tol
                             ? std::fmin(loosest, std::fmax(forcing, options_.cg_tol))
                             : options_.cg_tol;
      previous_error = error_[1];
      auto const cg = direction(eta);
      NewtonProgress p;
      p.newton_iteration = stats().newton_iterations;
      p.cg_iterations = cg.iterations;
      p.cg_tol = eta;
      p.step = damped_step(std::fmax(0.0, 1 - cg.relative_residual), p.halvings);
      report(p);
    }
    result_.weights = weights_;
    result_.measures = measures_;
    stats().max_error = error_[0];
    stats().seconds = timer_.seconds();
    return result_;
  }

private:
  OptimalTransportStatistics& stats() { return result_.statistics; }

  Scalars alloc(char const* label) const { return uninitialized_view<Scalars>(space_, label, n_); }

  /// The measures at weights `w`; the diagram may give up below `abandon_below`.
  Scalars evaluate(Scalars w, double abandon_below) {
    cells_.set_weights(w, abandon_below);
    ++stats().diagram_evaluations;
    return cells_.measures();
  }

  /// max |m_i − target_i| and |m − target|₂ over all processes.
  std::array<double, 2> errors(Scalars m) const {
    auto local = mass_errors(space_, m, targets_, unit_);
    return {ranks_.process_max(local[0]), std::sqrt(ranks_.process_sum(local[1])) * unit_};
  }

  void report(NewtonProgress p) {
    p.max_error = error_[0];
    p.max_relative_error = ranks_.process_max(max_relative_error(space_, measures_, targets_));
    p.seconds = timer_.seconds();
    stats().history.push_back(p);
    if (options_.progress)
      options_.progress(p);
  }

  /// The first diagram, at the initial weights: every cell non-empty, KMT's threshold, the
  /// first error (collective; a wrong length of initial weights on any process, or an empty
  /// cell, throws the same on every process).
  void start(ConstScalars initial_weights) {
    bool const given = initial_weights.data() != nullptr || initial_weights.extent(0) > 0;
    auto const lengths = ranks_.allgather(std::vector<std::int64_t>{
        given ? std::int64_t(initial_weights.extent(0)) : std::int64_t(n_), std::int64_t(n_)});
    for (int p = 0; p < ranks_.process_count(); ++p)
      if (lengths[2 * p] != lengths[2 * p + 1])
        throw std::invalid_argument(
            "sdot::OptimalTransport: " + std::to_string(lengths[2 * p + 1]) + " positions but " +
            std::to_string(lengths[2 * p]) + " initial weights" +
            (ranks_.process_count() > 1 ? " on process " + std::to_string(p) : std::string()));
    blocks_ = loom::RowBlocks(ranks_, n_);
    weights_ = alloc("sdot::ot::weights");
    if (given)
      Kokkos::deep_copy(space_, weights_, initial_weights);
    else
      Kokkos::deep_copy(space_, weights_, 0.0);
    rhs_ = alloc("sdot::ot::rhs");
    delta_ = alloc("sdot::ot::delta");
    trial_ = alloc("sdot::ot::trial");
    // Aggregates of the multilevel preconditioner: the seeds in Z order (they do not move).
    if (options_.preconditioner == CgPreconditioner::aggregation)
      order_ = morton_order(space_, ConstPoints<memory_space>(positions_));
    // One process: the linear solves in that order (z_ordered()).
    if (z_ordered()) {
      rhs_z_ = alloc("sdot::ot::rhs_in_z_order");
      delta_z_ = alloc("sdot::ot::delta_in_z_order");
      if (options_.linear_model_keeps_cells)
        residual_bounds_z_ = alloc("sdot::ot::residual_bounds_in_z_order");
    }

    measures_ = evaluate(weights_, -std::numeric_limits<double>::infinity());
    int const empty = first_non_positive(space_, measures_);
    auto const found = ranks_.allgather(
        std::vector<std::int64_t>{empty < n_ ? blocks_.begin() + empty : std::int64_t(-1)});
    for (auto index : found)
      if (index >= 0)
        throw EmptyCellError(index, empty_cell_message(index));
    // KMT's threshold: a fraction of the smallest target or initial mass, the same for all cells.
    threshold_ =
        options_.min_mass_fraction * ranks_.process_min(local_min(space_, measures_, targets_));
    if (options_.linear_model_keeps_cells)
      residual_bounds_ = alloc("sdot::ot::residual_bounds");
    error_ = errors(measures_);
    report(NewtonProgress{});
  }

  /// The Newton direction delta_ (in units of unit_): J δ = (target − m) on the zero-mean
  /// subspace, solved to relative residual `eta`; delta_mean_ its mean. Counted in
  /// linear_seconds.
  ConjugateGradientResult direction(double eta) {
    Kokkos::Timer linear_timer;
    bool const ordered = z_ordered();
    auto const jacobian =
        assemble_jacobian(space_, ranks_, ConstPoints<memory_space>(positions_), polygons(),
                          ordered ? order_ : Kokkos::View<int*, memory_space>());
    if constexpr (reads_kept_polygons<Cells>::value)
      cells_.release_polygons(); // not held through the linear solve
    double const mean =
        ranks_.process_sum(local_sum(space_, targets_) - local_sum(space_, measures_)) /
        double(blocks_.global_size());
    linear_combination(space_, rhs_, targets_, -1.0, measures_, -mean, 1 / unit_);
    // From the second step on, CG starts from the multiple of the last direction nearest the
    // new one: damped steps change the weights, hence J and the right-hand side, little.
    bool const from_last = stats().newton_iterations > 1;
    // linear_model_keeps_cells: the masses of the linear model, m + a J δ = m + a (b − r) (b's
    // mean is rounding), go linearly from m at a = 0 to m + a_max (t − m − r) at the first step
    // the damping tries: at least the threshold ε all along when
    // r ≤ t − m + (m − ε) / a_max = t + (1 / a_max − 1) m − ε / a_max.
    if (options_.linear_model_keeps_cells) {
      double const a_max = first_trial_step();
      linear_combination(space_, residual_bounds_, targets_, 1 / a_max - 1, measures_,
                         -threshold_ / a_max, 1 / unit_);
    }
    if (ordered) {
      gather_in_order(space_, "sdot::ot::to_z_order", rhs_z_, rhs_, order_);
      if (options_.linear_model_keeps_cells)
        gather_in_order(space_, "sdot::ot::to_z_order", residual_bounds_z_, residual_bounds_,
                        order_);
    }
    Kokkos::View<double const*, memory_space> const bounds =
        ordered ? residual_bounds_z_ : residual_bounds_;
    auto const* const residual_bounds = options_.linear_model_keeps_cells ? &bounds : nullptr;
    Scalars const rhs = ordered ? rhs_z_ : rhs_, delta = ordered ? delta_z_ : delta_;
    ConjugateGradientResult cg;
    if (options_.preconditioner == CgPreconditioner::aggregation) {
      MultigridProcesses<ExecutionSpace> const processes{ranks_, jacobian.blocks, &jacobian.halo};
      AggregationMultigrid<ExecutionSpace> multigrid(
          space_, jacobian.extended, jacobian.diagonal,
          ordered ? Kokkos::View<int*, memory_space>() : order_, true, options_.aggregation,
          &aggregates_, &processes);
      multigrid.project_constants = true; // J's kernel: the constants
      if (ordered)                        // the multigrid's finest level is J in the CG's numbering
        cg = conjugate_gradient(space_, ranks_,
                                SlicedLaplacian<memory_space>{multigrid.finest_level()},
                                jacobian.halo, jacobian.diagonal, rhs, delta, eta, options_.max_cg,
                                &multigrid, from_last, residual_bounds);
      else
        cg = conjugate_gradient(space_, ranks_, jacobian.extended, jacobian.halo, jacobian.diagonal,
                                rhs, delta, eta, options_.max_cg, &multigrid, from_last,
                                residual_bounds);
    } else {
      cg = conjugate_gradient(space_, ranks_, jacobian.extended, jacobian.halo, jacobian.diagonal,
                              rhs, delta, eta, options_.max_cg,
                              static_cast<JacobiPreconditioner const*>(nullptr), from_last,
                              residual_bounds);
    }
    if (ordered)
      scatter_from_order(space_, "sdot::ot::from_z_order", delta_, delta_z_, order_);
    stats().cg_iterations += cg.iterations;
    delta_mean_ = ranks_.process_sum(local_sum(space_, delta_)) / double(blocks_.global_size());
    space_.fence();
    stats().linear_seconds += linear_timer.seconds();
    return cg;
  }

  /// The cells of the last evaluation, as the Jacobian reads them.
  CellPolygonReader<memory_space> polygons() {
    if constexpr (reads_kept_polygons<Cells>::value)
      return cells_.polygon_reader();
    else
      return polygon_reader(cells_.cell_polygons());
  }

  /// Whether the linear solves run in the Z order of the seeds (order_): on one process, with
  /// the multilevel preconditioner. The Jacobian is then assembled in that order, so that rows
  /// near each other in memory are near each other in space whatever the order of the seeds;
  /// the right-hand side and the residual's bounds go there, the direction comes back. Under
  /// MPI the Jacobian keeps the seeds' order (its halo numbers other processes' seeds by their
  /// blocks; OptimalTransport's spread input puts the seeds in spatial blocks), and the
  /// multigrid alone takes the Z order.
  bool z_ordered() const { return order_.extent(0) > 0 && ranks_.process_count() == 1; }

  /// The first step the damping tries: four times the last one taken, at most 1.
  double first_trial_step() const { return std::fmin(1.0, 4 * last_step_); }

  /// Damping: halves the step along delta_ until no cell falls below the threshold and the
  /// error decreases by 1 − step × `promised` / 2; takes that step and returns it (`halvings`:
  /// how many halvings). The first step tried is four times the last one taken (at most 1):
  /// the damping needed changes slowly from one Newton step to the next, and a rejected trial
  /// is cheap (its diagram stops at the first cell below the threshold).
  double damped_step(double promised, int& halvings) {
    double step = first_trial_step();
    halvings = 0;
    for (;;) {
      // delta_ in units of unit_: step × unit_ is exact, so is the product's rounding.
      linear_combination(space_, trial_, weights_, step * unit_, delta_,
                         -step * unit_ * delta_mean_);
      // A cell below the threshold rejects the step: the diagram may give up at the first.
      Scalars trial_measures = evaluate(trial_, threshold_);
      int const below = cells_.abandoned() ? 0 : first_below(space_, trial_measures, threshold_);
      bool const kept = ranks_.process_max(below < n_ ? 1.0 : 0.0) == 0;
      std::array<double, 2> trial_error{0, 0};
      if (kept)
        trial_error = errors(trial_measures);
      // KMT's decrease 1 − α/2, for an inexact step: the linear model promises 1 − α (1 − η).
      if (kept && trial_error[1] <= (1 - step * promised / 2) * error_[1]) {
        std::swap(weights_, trial_);
        measures_ = trial_measures;
        error_ = trial_error;
        last_step_ = step;
        return step;
      }
      if (++halvings > options_.max_halvings) {
        std::ostringstream msg;
        msg << "sdot::OptimalTransport: Newton step " << stats().newton_iterations << " halved "
            << options_.max_halvings
            << " times without decreasing the error (max |m_i - target_i| = " << error_[0]
            << "; tol × area = " << options_.tol * area_ << " may be below what rounding allows)";
        throw std::runtime_error(msg.str());
      }
      step /= 2;
    }
  }

  Kokkos::Timer timer_; ///< the whole solve, checks included
  Cells& cells_;
  ConstScalars targets_;
  OptimalTransportOptions const& options_;
  ExecutionSpace space_;
  loom::Ranks ranks_;
  Points<memory_space> positions_;
  int n_;
  double area_;
  loom::RowBlocks blocks_;
  OptimalTransportResult<memory_space> result_;
  Scalars weights_, measures_, rhs_, delta_, trial_;
  Scalars residual_bounds_; ///< linear_model_keeps_cells: each step's bounds of the residual
  Kokkos::View<int*, memory_space> order_;
  /// z_ordered(): the right-hand side, the direction and the residual's bounds in Z order.
  Scalars rhs_z_, delta_z_, residual_bounds_z_;
  /// The multilevel preconditioner's aggregates, from the first Newton step's Jacobian.
  MultigridAggregates<memory_space> aggregates_;
  double threshold_ = 0, delta_mean_ = 0, last_step_ = 1;
  /// The largest power of two not above the domain's area: the linear solves work on masses
  /// (and give directions) in this unit, so that their sums of squares stay within double's
  /// range whatever the domain's size (at areas from 1 to 2, 1: the same bits).
  double unit_ = 1;
  std::array<double, 2> error_{0, 0};
};

} // namespace detail

/// Collective: finds weights for which every cell holds its target mass,
/// |m_i − target_i| ≤ options.tol × area for every i.
///
/// Damped Newton (Kitagawa, Mérigot, Thibert 2019): each step solves J δ = target − m on the
/// zero-mean subspace (J, the Jacobian of the measures, has the constants in its kernel) by a
/// preconditioned conjugate gradient (options.preconditioner; with
/// options.linear_model_keeps_cells, until the linear model keeps every cell), then halves
/// the step until every cell keeps options.min_mass_fraction × min_j min(target_j, m_j(initial
/// weights)) and the Euclidean error decreases by 1 − step/2 (the first step tried is four
/// times the last one taken, at most 1). From the second step on, CG starts from the multiple
/// of the last direction nearest the new one.
/// Steps have zero mean: the mean of the weights stays that of the initial weights.
///
/// @param cells the diagram (OneProcessCells, or a type with the same members)
/// @param targets this process's target masses: positive, finite, adding up (over all
///        processes) to the domain's area within 1e-9 relative
/// @param initial_weights this process's initial weights, or an empty View for zeros; every
///        cell must be non-empty with them
/// @param options tolerances, limits and preconditioner of the solve
/// @throws std::invalid_argument (the same on every process) on bad targets, EmptyCellError
///         (an std::invalid_argument) on an initial empty cell; std::runtime_error when max_newton
///         or max_halvings is exceeded
template <class Cells>
OptimalTransportResult<typename Cells::memory_space>
solve_optimal_transport(Cells& cells,
                        Kokkos::View<double const*, typename Cells::memory_space> targets,
                        Kokkos::View<double const*, typename Cells::memory_space> initial_weights,
                        OptimalTransportOptions const& options = {}) {
  sdot::compat::ScopedRegion region("sdot::solve_optimal_transport");
  return detail::NewtonSolver<Cells>(cells, targets, options).solve(initial_weights);
}

/// Semi-discrete optimal transport between the uniform measure on a convex domain and
/// prescribed masses at seeds, in one process (with PowerDiagramOptions::nb_boxes boxes), or
/// with the seeds spread over processes (`Input` = SpreadInput: see
/// OptimalTransport<ExecutionSpace, SpreadInput>).
///
/// Takes the same inputs as PowerDiagram, with target masses instead of weights:
/// @code
/// sdot::OptimalTransport<> ot(positions, masses, sdot::box_half_spaces({0, 0}, {1, 1}));
/// auto result = ot.solve(); // result.weights, result.measures, result.statistics
/// @endcode
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace, class Input = WholeInput>
class OptimalTransport {
  static_assert(std::is_same<Input, WholeInput>::value, "sdot::OptimalTransport: WholeInput or "
                                                        "SpreadInput");

public:
  using memory_space = typename ExecutionSpace::memory_space; ///< Where every View lives.
  using positions_type = Points<memory_space>;                ///< The seeds, [N, 2].
  using scalars_type = Kokkos::View<double*, memory_space>;   ///< One value per seed, [N].

  /// @throws std::invalid_argument on an empty or unbounded domain, or target masses that are
  /// not positive and finite, not one per seed, or not adding up to the domain's area
  OptimalTransport(positions_type positions, scalars_type target_masses,
                   std::vector<HalfSpace> boundaries, PowerDiagramOptions diagram_options = {},
                   OptimalTransportOptions options = {})
      : OptimalTransport(ExecutionSpace{}, positions, target_masses, std::move(boundaries),
                         diagram_options, std::move(options)) {}

  /// The same, with the kernels run on the execution space instance `space`.
  OptimalTransport(ExecutionSpace const& space, positions_type positions,
                   scalars_type target_masses, std::vector<HalfSpace> boundaries,
                   PowerDiagramOptions diagram_options = {}, OptimalTransportOptions options = {})
      : cells_(space, positions, std::move(boundaries), diagram_options), targets_(target_masses),
        options_(std::move(options)) {
    detail::validate_target_masses(space, cells_.ranks(), positions.extent(0), targets_,
                                   cells_.domain_area());
  }

  /// Solves from zero weights, or from `initial_weights` (one per seed).
  OptimalTransportResult<memory_space> solve(scalars_type initial_weights = {}) {
    return solve_optimal_transport(cells_, targets_, initial_weights, options_);
  }

  /// New positions for the same seeds and target masses (a time step of a Lagrangian
  /// scheme, a Lloyd iteration), for the next solve(), which is best given the last weights
  /// found: its first diagram builds its cells from the neighbours of the last diagram and
  /// certifies them (PowerDiagram::set_positions()), instead of searching every cell.
  /// @throws std::invalid_argument for another number of positions
  void set_positions(positions_type positions) { cells_.set_positions(positions); }

  /// The solver's options, which the next solve() uses.
  OptimalTransportOptions& options() { return options_; }
  /// The diagram of the last weights tried (after solve(): of the weights found).
  PowerDiagram<ExecutionSpace>& diagram() { return cells_.diagram(); }
  /// Area of the domain (the total of the target masses).
  double domain_area() const { return cells_.domain_area(); }

private:
  OneProcessCells<ExecutionSpace> cells_;
  Kokkos::View<double const*, memory_space> targets_;
  OptimalTransportOptions options_;
};

/// Semi-discrete optimal transport with the seeds spread over processes: every process passes
/// its block of the seeds and of their target masses (loom::spread), in any spatial
/// arrangement (the rows of a file, say), and gets back its block of the weights and measures.
///
/// The solve runs on spatial blocks (sdot::SpatialBlocks: each process the seeds of one region
/// of a bisection of the cloud, along the Z-order curve), where the preconditioner, which
/// works on each process's block, the Jacobian's halo, which holds the neighbours on other
/// processes, and memory accesses work best;
/// the targets and initial weights go there once, the results come back once. Every member
/// is collective, and every error is thrown on every process alike.
/// @code
/// loom::Ranks ranks = loom::MpiRanks(MPI_COMM_WORLD);
/// sdot::OptimalTransport ot(loom::spread(positions, ranks), loom::spread(masses, ranks),
///                           sdot::box_half_spaces({0, 0}, {1, 1}));
/// auto result = ot.solve(); // this process's block of the weights and measures
/// @endcode
template <class ExecutionSpace>
class OptimalTransport<ExecutionSpace, SpreadInput> {
public:
  using memory_space = typename ExecutionSpace::memory_space; ///< Where every View lives.
  using positions_type = Points<memory_space>;                ///< The seeds, [N, 2].
  using scalars_type = Kokkos::View<double*, memory_space>;   ///< One value per seed, [N].

  /// Collective. The ranks are those of the spread positions (boxes per process:
  /// loom::MpiRanks(comm, K)).
  /// @param space the execution space instance of the kernels
  /// @param positions this process's block of the seeds ([n, 2], any layout)
  /// @param target_masses this process's block of the target masses ([n])
  /// @param boundaries half-spaces a·x ≤ c whose intersection is the (bounded) domain
  /// @param diagram_options how the diagrams are computed (nb_boxes: 1, or the ranks' boxes
  ///        per process)
  /// @param options tolerances, limits and preconditioner of the solve
  /// @throws std::invalid_argument (on every process) on an empty or unbounded domain, on
  ///         nb_boxes, or on target masses that are not positive and finite, not one per seed,
  ///         or not adding up to the domain's area (named by their index in the concatenated
  ///         blocks)
  template <class V, class W>
  OptimalTransport(ExecutionSpace const& space, loom::Spread<V> const& positions,
                   loom::Spread<W> const& target_masses, std::vector<HalfSpace> boundaries,
                   PowerDiagramOptions diagram_options = {}, OptimalTransportOptions options = {})
      : space_(space), ranks_(positions.ranks()),
        blocks_(checked_blocks(
            space, ranks_,
            detail::in_points_layout(space, positions.value(), "sdot::OptimalTransport::positions"),
            target_masses.value(), boundaries, diagram_options)),
        cells_(space, ranks_, blocks_.spatial_positions(), std::move(boundaries), diagram_options),
        targets_(blocks_.to_spatial(target_masses.value())), options_(std::move(options)) {}

  /// The same, with the kernels run on a default-constructed execution space instance.
  template <class V, class W>
  OptimalTransport(loom::Spread<V> const& positions, loom::Spread<W> const& target_masses,
                   std::vector<HalfSpace> boundaries, PowerDiagramOptions diagram_options = {},
                   OptimalTransportOptions options = {})
      : OptimalTransport(ExecutionSpace{}, positions, target_masses, std::move(boundaries),
                         diagram_options, std::move(options)) {}

  /// Collective: solves from zero weights. The result holds this process's block of the
  /// weights and measures, in the order of its input rows.
  /// @throws EmptyCellError naming the seed by its index in the concatenated input blocks;
  ///         std::runtime_error when OptimalTransportOptions::max_newton or max_halvings is
  ///         exceeded (on every process)
  OptimalTransportResult<memory_space> solve() { return solve_spatial({}); }

  /// Collective: solves from `initial_weights` (this process's block, one per seed).
  template <class W>
  OptimalTransportResult<memory_space> solve(loom::Spread<W> const& initial_weights) {
    return solve_spatial(blocks_.to_spatial(initial_weights.value()));
  }

  /// The solver's options, which the next solve() uses.
  OptimalTransportOptions& options() { return options_; }
  /// Area of the domain (the total of the target masses).
  double domain_area() const { return cells_.domain_area(); }
  /// The ranks of the spread input.
  loom::Ranks const& ranks() const { return ranks_; }
  /// The plan between the input blocks and the spatial blocks the solve runs on.
  SpatialBlocks<ExecutionSpace> const& spatial_blocks() const { return blocks_; }

private:
  // The spatial blocks of `positions`, once the options and the target masses are checked on
  // the input rows (their errors name those rows).
  template <class Targets>
  static SpatialBlocks<ExecutionSpace>
  checked_blocks(ExecutionSpace const& space, loom::Ranks const& ranks, positions_type positions,
                 Targets const& targets, std::vector<HalfSpace> const& boundaries,
                 PowerDiagramOptions const& diagram_options) {
    detail::check_spread_boxes("sdot::OptimalTransport", diagram_options.nb_boxes,
                               ranks.local_count());
    detail::validate_target_masses(space, ranks, positions.extent(0), targets,
                                   domain_polygon(boundaries).area);
    return SpatialBlocks<ExecutionSpace>(space, ranks, positions);
  }

  OptimalTransportResult<memory_space>
  solve_spatial(Kokkos::View<double const*, memory_space> initial_weights) {
    OptimalTransportResult<memory_space> result;
    try {
      result = solve_optimal_transport(cells_, targets_, initial_weights, options_);
    } catch (EmptyCellError const& e) { // thrown on every process: named by its input row
      std::int64_t const row = blocks_.input_index(e.seed());
      throw EmptyCellError(row, detail::empty_cell_message(row));
    }
    result.weights = blocks_.to_input(result.weights);
    result.measures = blocks_.to_input(result.measures);
    return result;
  }

  ExecutionSpace space_;
  loom::Ranks ranks_;
  SpatialBlocks<ExecutionSpace> blocks_;
  SpreadCells<ExecutionSpace> cells_;                 ///< on the spatial blocks
  Kokkos::View<double const*, memory_space> targets_; ///< on the spatial blocks
  OptimalTransportOptions options_;
};

/// Spread input: OptimalTransport(loom::spread(positions, ranks), loom::spread(masses, ranks),
/// ...).
template <class V, class W>
OptimalTransport(loom::Spread<V>, loom::Spread<W>, std::vector<HalfSpace>, PowerDiagramOptions = {},
                 OptimalTransportOptions = {})
    -> OptimalTransport<typename V::execution_space, SpreadInput>;
/// Spread input, with the execution space instance first.
template <class ExecutionSpace, class V, class W>
OptimalTransport(ExecutionSpace, loom::Spread<V>, loom::Spread<W>, std::vector<HalfSpace>,
                 PowerDiagramOptions = {}, OptimalTransportOptions = {})
    -> OptimalTransport<ExecutionSpace, SpreadInput>;

#ifdef SDOT_EXPLICIT_INSTANTIATION
// Compiled in the sdot library (src/sdot/optimal_transport.cpp).
extern template OptimalTransportResult<Kokkos::DefaultExecutionSpace::memory_space>
solve_optimal_transport(OneProcessCells<Kokkos::DefaultExecutionSpace>&,
                        Kokkos::View<double const*, Kokkos::DefaultExecutionSpace::memory_space>,
                        Kokkos::View<double const*, Kokkos::DefaultExecutionSpace::memory_space>,
                        OptimalTransportOptions const&);
extern template OptimalTransportResult<Kokkos::DefaultExecutionSpace::memory_space>
solve_optimal_transport(SpreadCells<Kokkos::DefaultExecutionSpace>&,
                        Kokkos::View<double const*, Kokkos::DefaultExecutionSpace::memory_space>,
                        Kokkos::View<double const*, Kokkos::DefaultExecutionSpace::memory_space>,
                        OptimalTransportOptions const&);
#endif

} // namespace sdot

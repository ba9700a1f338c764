#pragma once
// Preconditioned conjugate gradient on a matrix whose rows are spread over processes
// (columns in extended numbering, see loom::Halo), with Kokkos-Kernels SpMV: Jacobi with
// fused vector updates, or any symmetric positive definite preconditioner with
// apply(space, r, z) (z = M⁻¹ r, this process's rows), e.g. AggregationMultigrid.

#include <loom/halo.hpp>
#include <sdot/base/kokkos_compat.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/base/views.hpp>
#include <sdot/transport/inverse_diagonal.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace sdot::detail {

/// No preconditioner object: Jacobi (the diagonal).
struct JacobiPreconditioner {
  bool project_constants = false;
  template <class ExecutionSpace, class R, class Z>
  void apply(ExecutionSpace const&, R const&, Z const&) const {}
};

/// v −= mean(v) over all processes (global_size rows in all).
template <class ExecutionSpace, class V>
void remove_mean(ExecutionSpace const& space, loom::Ranks const& ranks, V const& v,
                 double global_size) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = static_cast<int>(v.extent(0));
  double const local = sum(
      space, "sdot::cg::sum", n, KOKKOS_LAMBDA(int i) { return v(i); });
  double const mean = ranks.process_sum(local) / global_size;
  Kokkos::parallel_for(
      "sdot::cg::remove_mean", Policy(space, 0, n), KOKKOS_LAMBDA(int i) { v(i) -= mean; });
}

struct ConjugateGradientResult {
  int iterations = 0;
  double relative_residual = 0; ///< |r| / |b| at the end (Euclidean norms, global)
  bool converged = false;
};

/// y = A x for a KokkosSparse::CrsMatrix (Kokkos-Kernels' SpMV on `space`); other matrix types
/// of conjugate_gradient() have their own multiply().
template <class ExecutionSpace, class... P, class X, class Y>
void multiply(ExecutionSpace const& space, KokkosSparse::CrsMatrix<P...> const& matrix, X const& x,
              Y const& y) {
  sdot::compat::kernels_on(
      space, [&](auto const& s) { KokkosSparse::spmv(s, "N", 1.0, matrix, x, 0.0, y); },
      [&] { KokkosSparse::spmv("N", 1.0, matrix, x, 0.0, y); });
}

/// The vectors and the operations of one conjugate gradient solve (conjugate_gradient()): the
/// matrix product (with the halo's update), the global dot products, and the vector updates of
/// an iteration, each a kernel on `space`.
template <class ExecutionSpace, class Matrix>
struct ConjugateGradientSteps {
  using memory_space = typename ExecutionSpace::memory_space;
  using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, memory_space>;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;

  ExecutionSpace space;
  loom::Ranks ranks;
  Matrix matrix;
  loom::Halo<ExecutionSpace> const* halo;
  int n;
  Vector r, z, q, inverse_diagonal;
  Vector p_extended; ///< the direction, then its halo rows
  decltype(Kokkos::subview(std::declval<Vector>(), std::make_pair(0, 0))) p;

  ConjugateGradientSteps(ExecutionSpace const& space_, loom::Ranks ranks_, Matrix const& matrix_,
                         loom::Halo<ExecutionSpace> const& halo_, int n_)
      : space(space_), ranks(std::move(ranks_)), matrix(matrix_), halo(&halo_), n(n_),
        r(alloc("sdot::cg::r", n_)), z(alloc("sdot::cg::z", n_)), q(alloc("sdot::cg::q", n_)),
        inverse_diagonal(alloc("sdot::cg::inverse_diagonal", n_)),
        p_extended(alloc("sdot::cg::p", n_ + halo_.size())),
        p(Kokkos::subview(p_extended, std::make_pair(0, n_))) {}

  Vector alloc(char const* label, int size) const {
    return uninitialized_view<Vector>(space, label, size);
  }

  /// q = A p (the halo rows of p fetched first).
  void multiply_direction() {
    halo->update(space, p_extended);
    multiply(space, matrix, p_extended, q);
  }

  /// This process's part of u·v (sum(): the same bits at any number of threads).
  template <class U, class V>
  double dot(U const& u, V const& v) const {
    return sum(
        space, "sdot::cg::dot", n, KOKKOS_LAMBDA(int i) { return u(i) * v(i); });
  }

  /// x = s g (s = g·b / g·A g, or 0 without `scale_guess` or when g·A g is not positive; g:
  /// x as given), r = b − A x, z = D⁻¹ r.
  template <class Diagonal, class Rhs, class Solution>
  void start(Diagonal const& diagonal, Rhs const& b, Solution const& x, bool scale_guess) {
    double guess_scale = 0;
    if (scale_guess) {
      // q = A g, then s = g·b / g·A g.
      Kokkos::deep_copy(space, p, x);
      multiply_direction();
      auto const sums = ranks.process_sums<2>({dot(p, b), dot(p, q)});
      if (sums[1] > 0 && std::isfinite(sums[0] / sums[1]))
        guess_scale = sums[0] / sums[1];
    }
    auto const r = this->r, z = this->z, q = this->q, inverse_diagonal = this->inverse_diagonal;
    Kokkos::parallel_for(
        "sdot::cg::start", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
          if (guess_scale != 0) {
            x(i) = guess_scale * x(i);
            r(i) = b(i) - guess_scale * q(i);
          } else {
            x(i) = 0;
            r(i) = b(i);
          }
          inverse_diagonal(i) = inverse_of_diagonal(diagonal(i));
          z(i) = inverse_diagonal(i) * r(i);
        });
  }

  /// z = M⁻¹ r, as Π M⁻¹ Π when the preconditioner projects out the constants.
  template <class Preconditioner>
  void precondition(Preconditioner const& preconditioner, double global_size) {
    if (preconditioner.project_constants)
      remove_mean(space, ranks, r, global_size);
    preconditioner.apply(space, r, z);
    if (preconditioner.project_constants)
      remove_mean(space, ranks, z, global_size);
  }

  /// x += α p, r −= α q, z = D⁻¹ r: the global sums r·r and r·z.
  template <class Solution>
  std::array<double, 2> jacobi_update(double alpha, Solution const& x) {
    auto const p = this->p;
    auto const q = this->q, r = this->r, z = this->z, inverse_diagonal = this->inverse_diagonal;
    auto const local = sums<2>(
        space, "sdot::cg::update", n, KOKKOS_LAMBDA(int i) {
          x(i) += alpha * p(i);
          double const ri = r(i) - alpha * q(i);
          r(i) = ri;
          double const zi = inverse_diagonal(i) * ri;
          z(i) = zi;
          return Terms<2>{{ri * ri, ri * zi}};
        });
    return ranks.process_sums<2>({local[0], local[1]});
  }

  /// x += α p, r −= α q: the global sum r·r.
  template <class Solution>
  double update(double alpha, Solution const& x) {
    auto const p = this->p;
    auto const q = this->q, r = this->r;
    double const rr = sum(
        space, "sdot::cg::update_preconditioned", n, KOKKOS_LAMBDA(int i) {
          x(i) += alpha * p(i);
          double const ri = r(i) - alpha * q(i);
          r(i) = ri;
          return ri * ri;
        });
    return ranks.process_sum(rr);
  }

  /// Whether r_i ≤ bounds(i) on every row of every process (true without bounds). Collective
  /// when `residual_bounds` is given (on every process alike).
  template <class Bounds>
  bool within(Bounds const* residual_bounds) const {
    if (!residual_bounds)
      return true;
    auto const r = this->r;
    auto const bounds = *residual_bounds;
    int const first_above = first_failing(
        space, "sdot::cg::residual_above_bound", n,
        KOKKOS_LAMBDA(int i) { return r(i) <= bounds(i); });
    return ranks.process_max(first_above < n ? 1.0 : 0.0) == 0;
  }

  /// p = z + β p.
  void next_direction(double beta) {
    auto const p = this->p;
    auto const z = this->z;
    Kokkos::parallel_for(
        "sdot::cg::direction", Policy(space, 0, n),
        KOKKOS_LAMBDA(int i) { p(i) = z(i) + beta * p(i); });
  }
};

/// Collective: solves A x = b by conjugate gradient preconditioned by diag(A)^{-1} (or by
/// `preconditioner` when given), until |b − A x| ≤ tolerance |b| and, when `residual_bounds`
/// is given (this process's rows; on every process or none), (b − A x)_i ≤ residual_bounds(i)
/// on every row; or until `max_iterations`. It starts from x = 0, or, with `scale_guess`, from
/// s g where g is x as given (a guess of the solution's direction, such as the solution of a
/// nearby system) and s = g·b / g·A g, the multiple of g nearest the solution in A's norm (0
/// when g·A g is not positive).
///
/// A must be symmetric positive semi-definite with b in its range (for the Jacobian of the
/// measures: b orthogonal to the constants); x then has an arbitrary constant part.
/// `matrix` holds this process's rows, columns in extended numbering (own rows, then the
/// halo's): a KokkosSparse::CrsMatrix, or a type with its own multiply(space, matrix, x, y)
/// (SlicedLaplacian); x and b hold this process's rows. Dot products are sums of per-process
/// partials (sums(): on a host backend the same bits at any number of threads) added in
/// process order (identical bits on every process).
///
/// With `preconditioner->project_constants` (A's kernel is the constants: the Jacobian of the
/// measures), the preconditioner is applied as Π M⁻¹ Π, Π removing the mean: otherwise the
/// rounding-level mean of the residual, amplified by M⁻¹, makes x drift along the constants
/// and the residual blow up once it is small (seen at relative residuals ~1e-5).
template <class ExecutionSpace, class Matrix, class Diagonal, class Rhs, class Solution,
          class Preconditioner = JacobiPreconditioner,
          class Bounds = Kokkos::View<double const*, typename ExecutionSpace::memory_space>>
ConjugateGradientResult
conjugate_gradient(ExecutionSpace const& space, loom::Ranks const& ranks, Matrix const& matrix,
                   loom::Halo<ExecutionSpace> const& halo, Diagonal const& diagonal, Rhs const& b,
                   Solution const& x, double tolerance, int max_iterations,
                   Preconditioner const* preconditioner = nullptr, bool scale_guess = false,
                   Bounds const* residual_bounds = nullptr) {
  sdot::compat::ScopedRegion region("sdot::conjugate_gradient");
  int const n = static_cast<int>(b.extent(0));
  ConjugateGradientSteps<ExecutionSpace, Matrix> cg(space, ranks, matrix, halo, n);
  double const b_norm = std::sqrt(ranks.process_sum(cg.dot(b, b)));
  cg.start(diagonal, b, x, scale_guess);
  bool const project = preconditioner && preconditioner->project_constants;
  double const global_size = project ? ranks.process_sum(double(n)) : 0.0;
  if (preconditioner)
    cg.precondition(*preconditioner, global_size);
  Kokkos::deep_copy(space, cg.p, cg.z); // the first direction
  space.fence();

  ConjugateGradientResult result;
  auto const start = ranks.process_sums<2>({cg.dot(cg.r, cg.r), cg.dot(cg.r, cg.z)});
  double rz = start[1];
  if (b_norm == 0) {
    result.converged = true;
    return result;
  }
  result.relative_residual = std::sqrt(start[0]) / b_norm;
  // The bounds are tested once the norm is small enough: one reduction per iteration after.
  if (result.relative_residual <= tolerance && cg.within(residual_bounds)) {
    result.converged = true;
    return result;
  }
  while (result.iterations < max_iterations) {
    cg.multiply_direction();
    double const pq = ranks.process_sum(cg.dot(cg.p, cg.q));
    ++result.iterations;
    if (!(pq > 0))
      break; // p in the kernel (or rounding past it): nothing more to gain
    double const alpha = rz / pq;
    double new_rz = 0;
    if (!preconditioner) { // one pass: the update, z = D⁻¹ r, r·r and r·z
      auto const sums = cg.jacobi_update(alpha, x);
      result.relative_residual = std::sqrt(sums[0]) / b_norm;
      new_rz = sums[1];
    } else { // the update and r·r; then z = M⁻¹ r and r·z
      result.relative_residual = std::sqrt(cg.update(alpha, x)) / b_norm;
    }
    if (result.relative_residual <= tolerance && cg.within(residual_bounds)) {
      result.converged = true;
      break;
    }
    if (preconditioner) {
      cg.precondition(*preconditioner, global_size);
      new_rz = ranks.process_sum(cg.dot(cg.r, cg.z));
    }
    double const beta = new_rz / rz;
    rz = new_rz;
    cg.next_direction(beta);
  }
  return result;
}

} // namespace sdot::detail

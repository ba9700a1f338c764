// Device lambdas that nvcc accepts and refuses: the cases of check_device_lambdas.py. Each
// KOKKOS_LAMBDA line ends with the rule that nvcc breaks there, or "accepted" (or the line
// before it holds only that comment). The test
// device_lambda_rules runs the check on this file and compares; it is never compiled into a
// program.
#include <Kokkos_Core.hpp>

namespace cases {

using Space = Kokkos::DefaultExecutionSpace;

template <class Functor>
void run(Functor const& f) {
  Kokkos::parallel_for("case", Kokkos::RangePolicy<Space>(0, 1), f);
}

inline void free_function(Kokkos::View<int*> v) {
  run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // accepted
}

template <class T>
void function_template(Kokkos::View<T*> v) {
  run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // accepted
}

inline auto deduced(Kokkos::View<int*> v) {
  run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // deduced-return
  return 0;
}

template <class T>
auto deduced_template(Kokkos::View<T*> v) {
  run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // deduced-return
  return 0;
}

inline auto trailing(Kokkos::View<int*> v) -> int {
  run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // accepted
  return 0;
}

class Holder {
public:
  explicit Holder(Kokkos::View<int*> v) : v_(v) {
    run(KOKKOS_LAMBDA(int i) { v(i) = 1; }); // constructor
  }
  ~Holder() {
    auto v = v_;
    run(KOKKOS_LAMBDA(int i) { v(i) = 2; }); // constructor
  }
  void fill() {
    auto v = v_;
    run(KOKKOS_LAMBDA(int i) { v(i) = 3; }); // accepted
  }
  void fill_out_of_line();
  void fill_privately_out_of_line();

protected:
  void fill_protected() {
    auto v = v_;
    run(KOKKOS_LAMBDA(int i) { v(i) = 4; }); // access
  }

private:
  void fill_private() {
    auto v = v_;
    run(KOKKOS_LAMBDA(int i) { v(i) = 5; }); // access
  }
  void private_declared_only();
  struct Inner {
    void fill(Kokkos::View<int*> v) {
      run(KOKKOS_LAMBDA(int i) { v(i) = 6; }); // access
    }
  };
  Kokkos::View<int*> v_;
};

inline void Holder::fill_out_of_line() {
  auto v = v_;
  run(KOKKOS_LAMBDA(int i) { v(i) = 7; }); // accepted
}

inline void Holder::private_declared_only() {
  auto v = v_;
  run(KOKKOS_LAMBDA(int i) { v(i) = 8; }); // access
}

template <class T>
struct Template {
  void fill(Kokkos::View<T*> v) {
    run(KOKKOS_LAMBDA(int i) { v(i) = 9; }); // accepted
  }
  Template() {
    Kokkos::View<T*> v("v", 1);
    run(KOKKOS_LAMBDA(int i) { v(i) = 10; }); // constructor
  }
};

inline void in_local_class(Kokkos::View<int*> w) {
  struct Local {
    void fill(Kokkos::View<int*> v) {
      run(KOKKOS_LAMBDA(int i) { v(i) = 11; }); // local-class
    }
  };
  Local().fill(w);
}

inline void in_host_lambda(Kokkos::View<int*> w) {
  auto apply = [&](Kokkos::View<int*> v) {
    run(KOKKOS_LAMBDA(int i) { v(i) = 12; }); // accepted
  };
  apply(w);
}

inline void in_generic_lambda(Kokkos::View<int*> w) {
  auto apply = [&](auto v) {
    run(KOKKOS_LAMBDA(int i) { v(i) = 13; }); // nested
  };
  apply(w);
}

inline void nested_device(Kokkos::View<int*> v) {
  run(KOKKOS_LAMBDA(int i) { // accepted
    // nested
    auto inner = KOKKOS_LAMBDA(int j) {
      v(j) = 15;
    };
    inner(i);
  });
}

inline void generic(Kokkos::View<int*> v) {
  // generic
  auto f = KOKKOS_LAMBDA(auto i) {
    v(i) = 14;
  };
  f(0);
}

template <class V>
void first_capture_in_if_constexpr(V v) {
  run(KOKKOS_LAMBDA(int i) { // constexpr-if
    if constexpr (V::rank == 1)
      v(i) = 16;
  });
}

template <class V>
void captured_before_if_constexpr(V v) {
  run(KOKKOS_LAMBDA(int i) { // accepted
    auto const w = v;
    if constexpr (V::rank == 1)
      v(i) = 17;
    (void)w;
  });
}

template <class V>
void lambda_locals_in_if_constexpr(V v) {
  run(KOKKOS_LAMBDA(int i) { // accepted
    int k = i;
    if constexpr (V::rank == 1)
      k += 1;
    v(i) = k;
  });
}

template <class V>
void plain_if(V v) {
  run(KOKKOS_LAMBDA(int i) { // accepted
    if (V::rank == 1)
      v(i) = 18;
  });
}

} // namespace cases

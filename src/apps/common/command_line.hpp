#pragma once
// What the command-line programs (sdot-measures, sdot-ot) share: their main() around MPI (when
// sdot is built with it) and Kokkos, their ranks, the error reporting, and the parsing of
// option values.

#include <loom/error.hpp>
#include <loom/ranks.hpp>

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sdot::apps {

/// A mistake on the command line (unknown option, missing or bad value): the same on every
/// process, reported with exit status 2.
class UsageError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// The arguments after the program's name, a cursor over them, and the file names met.
class Arguments {
public:
  explicit Arguments(std::vector<std::string> args) : args_(std::move(args)) {}
  /// An argument that is not a known option: a file name, kept in files().
  /// @throws UsageError when it looks like an option ("-x", "--x")
  void take_file_name(std::string const& arg) {
    if (arg.size() > 1 && arg[0] == '-')
      throw UsageError("unknown option '" + arg + "'");
    files_.push_back(arg);
  }
  /// The file names taken, in their order on the command line.
  std::vector<std::string> const& files() const { return files_; }
  bool done() const { return next_ >= args_.size(); }
  std::string const& take() { return args_[next_++]; }
  /// The value of `option`, which must follow it.
  std::string const& value_of(std::string const& option) {
    if (done())
      throw UsageError("option " + option + " needs a value");
    return take();
  }

private:
  std::vector<std::string> args_;
  std::size_t next_ = 0;
  std::vector<std::string> files_;
};

/// `text` as an integer in [min, max], all of it.
/// @throws UsageError naming `option` and the text otherwise.
inline long long parse_integer(std::string const& text, std::string const& option, long long min,
                               long long max = LLONG_MAX) {
  char* end = nullptr;
  errno = 0;
  long long const value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max)
    throw UsageError("bad number '" + text + "' for " + option + " (an integer from " +
                     std::to_string(min) +
                     (max == LLONG_MAX ? " up" : " to " + std::to_string(max)) + " is expected)");
  return value;
}

/// `text` as an unsigned 64-bit integer, all of it.
inline unsigned long long parse_unsigned(std::string const& text, std::string const& option) {
  char* end = nullptr;
  errno = 0;
  unsigned long long const value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError("bad number '" + text + "' for " + option +
                     " (an unsigned 64-bit integer is expected)");
  return value;
}

/// `text` as a finite real number, all of it.
inline double parse_real(std::string const& text, std::string const& option) {
  char* end = nullptr;
  errno = 0;
  double const value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(value - value == 0))
    throw UsageError("bad number '" + text + "' for " + option +
                     " (a finite real number is expected)");
  return value;
}

/// Keeps the memory of freed buffers for the next ones: a computation allocates and releases
/// buffers of tens of megabytes phase after phase, and with glibc's defaults each is a fresh
/// mapping whose pages the kernel zeroes on first touch (sdot-measures, 1e6 seeds on 2
/// processes: 59 000 page faults per process instead of 36 000). The programs run one
/// computation and exit, so keeping the memory costs nothing; the library leaves this choice
/// to the programs that link it.
inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest: blocks up to 32 MiB from the heap
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  // never give the heap's top back
#endif
}

/// What --help adds to the usage of a program built without MPI.
inline char const* const one_process_note =
    "\nThis build has no MPI (SDOT_ENABLE_MPI=OFF): the program runs as one process, which\n"
    "reads and writes the whole files; --nb-boxes still splits the seeds into boxes.\n";

/// main() of a command-line program. Initialises MPI (when sdot is built with it), prints
/// `usage` (process 0) when the arguments hold --help or -h, else initialises Kokkos (which
/// takes its --kokkos-* arguments) and returns `body(arguments)`.
///
/// Errors are reported by process 0 on one line of stderr, "<name>: error: <message>", and
/// every process exits with the same status: 2 for a UsageError, 1 for a collective
/// loom::Error (every process threw it, see sdot::hdf5::agreed). Any other exception means
/// one process failed alone: it reports it and aborts the job (status 1 everywhere).
template <class Body>
int command_main(int argc, char* argv[], char const* name, char const* usage, Body&& body) {
  keep_freed_memory();
  int rank = 0;
#ifdef LOOM_ENABLE_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // The job ends on every process when one process fails alone.
  auto const abort_job = [] { MPI_Abort(MPI_COMM_WORLD, 1); };
#else
  auto const abort_job = [] {}; // one process: it returns status 1
#endif
  auto report = [&](std::string const& message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    std::fflush(stderr);
  };
  int status = 0;
  bool help = false;
  for (int i = 1; i < argc; ++i)
    help = help || std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h";
  if (help) {
    if (rank == 0) {
      std::fputs(usage, stdout);
#ifndef LOOM_ENABLE_MPI
      std::fputs(one_process_note, stdout);
#endif
    }
  } else {
    try {
      Kokkos::ScopeGuard kokkos(argc, argv);
      status = body(std::vector<std::string>(argv + 1, argv + argc));
    } catch (UsageError const& e) {
      if (rank == 0)
        report(std::string(e.what()) + " (see " + name + " --help)");
      status = 2;
    } catch (loom::Error const& e) {
      if (!e.collective()) {
        report("process " + std::to_string(rank) + ": " + e.what());
        abort_job();
      } else if (rank == 0) {
        report(e.what());
      }
      status = 1;
    } catch (std::exception const& e) {
      report("process " + std::to_string(rank) + ": " + e.what());
      abort_job();
      status = 1;
    }
  }
  std::fflush(stdout);
#ifdef LOOM_ENABLE_MPI
  MPI_Finalize();
#endif
  return status;
}

/// The two files of a command line, INPUT.h5 and OUTPUT.h5, in that order.
/// @throws UsageError (`expected`) unless `files` holds exactly two
inline std::pair<std::string, std::string> input_and_output(std::vector<std::string> const& files,
                                                            char const* expected) {
  if (files.size() != 2)
    throw UsageError(expected);
  return {files[0], files[1]};
}

/// The four values of `--box X0 Y0 X1 Y1` (after the option itself), into lo and hi.
/// @throws UsageError on a bad number or an empty box.
inline void parse_box(Arguments& a, std::array<double, 2>& lo, std::array<double, 2>& hi) {
  lo[0] = parse_real(a.value_of("--box"), "--box X0");
  lo[1] = parse_real(a.value_of("--box"), "--box Y0");
  hi[0] = parse_real(a.value_of("--box"), "--box X1");
  hi[1] = parse_real(a.value_of("--box"), "--box Y1");
  if (!(lo[0] < hi[0]) || !(lo[1] < hi[1]))
    throw UsageError("--box X0 Y0 X1 Y1 needs X0 < X1 and Y0 < Y1");
}

} // namespace sdot::apps

#pragma once
// Runs a command-line program of sdot as a separate process (directly, or under mpiexec when
// sdot is built with MPI: SDOT_MPIEXEC), with the environment of the test from before MPI_Init,
// and reads its report.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace sdot_test {

// ---- running the program ----------------------------------------------------------------------

struct Outcome {
  int status = -1; // exit status, or -1 when it did not exit normally
  std::string out, err;
};

inline std::string quote(std::string const& s) {
  return "'" + s + "'";
}

inline std::string read_text(std::string const& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory for one test, removed at the end.
class ScratchDirectory {
public:
  ScratchDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "sdot-measures-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("test: mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path_); }
  std::string const& path() const { return path_; }
  /// A new subdirectory.
  std::string sub(std::string const& name) const {
    std::filesystem::create_directory(path_ + "/" + name);
    return path_ + "/" + name;
  }
  std::string operator/(std::string const& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

// The environment of this test before MPI_Init (static initialisation comes first): the
// programs run here get it, without the variables that MPI_Init sets for this process (a
// singleton), which would make mpiexec and the program believe they belong to this job.
inline std::vector<std::string> const environment_before_mpi = [] {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    env.emplace_back(*e);
  return env;
}();

// One run of a program: its arguments, and the number of MPI processes (0: started directly,
// as a singleton, or as the one process of a build without MPI).
struct Job {
  std::string args;
  int processes = 0;
};

// `processes` MPI processes where sdot has MPI, else 0 (the program alone): for the runs whose
// checks hold for any number of processes. The runs that are about several processes are
// built with MPI only.
inline int processes_or_alone(int processes) {
#ifdef SDOT_MPIEXEC
  return processes;
#else
  (void)processes;
  return 0;
#endif
}

// Runs every job at once (the program's start-up mostly waits, so this is much faster than
// one after the other). Their stdout and stderr go through files in `scratch`.
inline std::vector<Outcome> run_all(std::string const& executable, std::vector<Job> const& jobs,
                                    ScratchDirectory const& scratch) {
  static int counter = 0; // distinct file names across calls
  std::vector<pid_t> pids;
  std::vector<std::string> outs, errs;
  for (auto const& job : jobs) {
    int const k = counter++;
    outs.push_back(scratch / ("stdout_" + std::to_string(k) + ".txt"));
    errs.push_back(scratch / ("stderr_" + std::to_string(k) + ".txt"));
#ifdef SDOT_MPIEXEC
    std::string const program = job.processes > 0
                                    ? std::string(SDOT_MPIEXEC) + " -n " +
                                          std::to_string(job.processes) + " " + quote(executable)
                                    : quote(executable);
#else
    if (job.processes > 0)
      throw std::logic_error("test: a run under mpiexec, but sdot is built without MPI");
    std::string const program = quote(executable);
#endif
    std::string command =
        program + " " + job.args + " >" + quote(outs.back()) + " 2>" + quote(errs.back());
    char sh[] = "/bin/sh", c[] = "-c";
    char* argv[] = {sh, c, command.data(), nullptr};
    pid_t pid = 0;
    std::vector<std::string> env_strings = environment_before_mpi;
    std::vector<char*> env;
    for (auto& e : env_strings)
      env.push_back(e.data());
    env.push_back(nullptr);
    if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, env.data()) != 0)
      throw std::runtime_error("test: cannot start " + command);
    pids.push_back(pid);
  }
  std::vector<Outcome> outcomes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    int wstatus = 0;
    waitpid(pids[i], &wstatus, 0);
    outcomes[i].status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    outcomes[i].out = read_text(outs[i]);
    outcomes[i].err = read_text(errs[i]);
    std::filesystem::remove(outs[i]);
    std::filesystem::remove(errs[i]);
  }
  return outcomes;
}

// ---- its report ------------------------------------------------------------------------------

// The report is one JSON object on one line.
inline void expect_one_json_line(Outcome const& o) {
  ASSERT_FALSE(o.out.empty()) << "stderr: " << o.err;
  EXPECT_EQ(o.out.front(), '{') << o.out;
  EXPECT_EQ(o.out.substr(o.out.size() - 2), "}\n") << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
}

// The number after "key": in the report (NaN when absent).
inline double json_number(std::string const& report, std::string const& key) {
  std::smatch m;
  if (std::regex_search(report, m, std::regex("\"" + key + "\":(-?[0-9][0-9.eE+-]*)")))
    return std::stod(m[1]);
  return std::nan("");
}

} // namespace sdot_test

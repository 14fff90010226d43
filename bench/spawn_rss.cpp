// The benchmarks' process starter (bench/process_run.hpp): runs `binary args...` as its child and
// writes the child's wall time, CPU time, peak RSS and exit status to descriptor FD, one line:
//   spawn_rss FD binary [args...]   ->   "<seconds> <cpu seconds> <max rss KiB> <wait status>\n"
// Why a process of its own: Linux counts into a child's peak RSS the resident set of the process it was
// forked from (the mm copied at fork, and kept across exec in the rusage's maximum), so a command forked
// from a benchmark that holds 500 MB showed a peak of 500 MB whatever it used. Started small, this
// process forks the command from a resident set of a few MB.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: spawn_rss FD binary [args...]\n");
    return 2;
  }
  const int report = std::atoi(argv[1]);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(report);
    execv(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return 1;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu =
      usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  char line[128];
  const int n = std::snprintf(line, sizeof line, "%.6f %.6f %ld %d\n", seconds, cpu, usage.ru_maxrss, status);
  return write(report, line, static_cast<size_t>(n)) == n ? 0 : 1;
}

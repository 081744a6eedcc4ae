// rss_probe [--as-mib N] <stdout-file> <program> [args…]: run the program with stdout to the file, wait
// for it and print "<exit status> <peak RSS in KiB>". --as-mib limits the program's address space
// (RLIMIT_AS) to make allocations fail, as under memory pressure. Why a helper: Linux keeps a process's ru_maxrss across
// execve, counting the memory of whatever ran before the exec. A child spawned straight from the test
// process would report the test's own peak; forked from this small program, it reports its own.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    long as_mib = 0;
    if (argc > 2 && std::strcmp(argv[1], "--as-mib") == 0) {
        as_mib = std::strtol(argv[2], nullptr, 10);
        argv += 2;
        argc -= 2;
    }
    if (argc < 3) {
        std::fputs("usage: rss_probe <stdout-file> <program> [args…]\n", stderr);
        return 2;
    }
    const pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        const int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
        if (as_mib > 0) {
            const rlim_t bytes = static_cast<rlim_t>(as_mib) << 20;
            const struct rlimit lim{bytes, bytes};
            if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(127);
        }
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status = 0;
    struct rusage ru {};
    while (wait4(pid, &status, 0, &ru) < 0) {
    }
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    std::printf("%d %ld\n", rc, ru.ru_maxrss);
    return 0;
}

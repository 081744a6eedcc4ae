#pragma once
// Running the C API's test programs (print_gguf's two builds, the examples) from the gtests: a command
// through /bin/sh with its standard output captured.
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace minfer::capi_test {

/// `s` quoted for /bin/sh: single quotes, with ' as '\''.
inline std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct run_result {
    int status = -1;  ///< the exit code; -1 when the program did not exit normally (a signal)
    std::string out;  ///< its standard output (standard error goes to the test's log)
};

inline run_result run(const std::string& command) {
    run_result r;
    FILE* p = popen(command.c_str(), "r");
    if (p == nullptr) return r;
    char buf[65536];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

}  // namespace minfer::capi_test

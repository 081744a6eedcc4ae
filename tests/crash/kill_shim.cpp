// kill_shim: an LD_PRELOAD library that kills its process with SIGKILL at the Nth call that changes
// a file (write, pwrite, fsync, fdatasync, rename*, link*, unlink*, ftruncate, copy_file_range), so a
// test can stop a command at every step it takes, not at whatever a timer happens to hit.
//   MINFER_KILL_AT=N     the call to stop at (1-based); unset or 0: count only
//   MINFER_KILL_MODE=before | torn
//       before: the call never happens; torn: a write or pwrite of more than one byte first writes
//       half of its bytes (a torn write, as a crash in the middle of one leaves), other calls happen
//   MINFER_KILL_COUNT=PATH   at exit, write the number of calls counted to PATH (how many points a
//       test must try)
//   MINFER_TRACE=PATH   append one line per call to PATH: the call's name and the files it names
//       (descriptors resolved through /proc/self/fd), so a test can check the ORDER of fsyncs,
//       renames and unlinks, which a kill test cannot see (a lost page cache needs a power cut)
// Written without <unistd.h> so that the declarations below are the only ones of these names.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

long kill_at() {
    static const long n = [] {
        const char* s = std::getenv("MINFER_KILL_AT");
        return s == nullptr ? 0L : std::strtol(s, nullptr, 10);
    }();
    return n;
}

bool torn() {
    static const bool t = [] {
        const char* s = std::getenv("MINFER_KILL_MODE");
        return s != nullptr && std::strcmp(s, "torn") == 0;
    }();
    return t;
}

long counter = 0;

void die() { ::raise(SIGKILL); }

template <class F>
F next(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

// true: the call at hand is the one to stop at.
bool at_kill_point() { return ++counter == kill_at() && kill_at() > 0; }

extern "C" long syscall(long number, ...) noexcept;

// The trace goes out through raw system calls: a write() here would be traced itself.
void raw_write(int fd, const char* s, std::size_t n) { (void)syscall(SYS_write, fd, s, n); }

int trace_fd() {
    static const int fd = [] {
        const char* p = std::getenv("MINFER_TRACE");
        return p == nullptr ? -1 : static_cast<int>(syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    }();
    return fd;
}

// "/dir/file" for a descriptor (AT_FDCWD: the working directory), as /proc/self/fd shows it.
void fd_path(int fd, char* out, std::size_t cap) {
    char link[64];
    if (fd == AT_FDCWD) std::snprintf(link, sizeof link, "/proc/self/cwd");
    else std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const long n = syscall(SYS_readlinkat, AT_FDCWD, link, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

// One line: "call path [path2]", names relative to a directory descriptor joined to its path.
void trace(const char* call, int fd, const char* name = nullptr, int fd2 = -1, const char* name2 = nullptr) {
    const int out = trace_fd();
    if (out < 0) return;
    char line[2048];
    char a[900], b[900];
    a[0] = b[0] = '\0';
    if (fd != -1 || name != nullptr) {
        if (name != nullptr && (name[0] == '/' || fd == -1)) std::snprintf(a, sizeof a, "%s", name);
        else {
            fd_path(fd, a, sizeof a);
            if (name != nullptr && name[0] != '\0') std::snprintf(a + std::strlen(a), sizeof a - std::strlen(a), "/%s", name);
        }
    }
    if (fd2 != -1 || name2 != nullptr) {
        if (name2 != nullptr && (name2[0] == '/' || fd2 == -1)) std::snprintf(b, sizeof b, "%s", name2);
        else {
            fd_path(fd2, b, sizeof b);
            if (name2 != nullptr && name2[0] != '\0') std::snprintf(b + std::strlen(b), sizeof b - std::strlen(b), "/%s", name2);
        }
    }
    const int n = std::snprintf(line, sizeof line, b[0] != '\0' ? "%s %s %s\n" : "%s %s\n", call, a, b);
    if (n > 0) raw_write(out, line, n < static_cast<int>(sizeof line) ? static_cast<std::size_t>(n) : sizeof line - 1);
}

struct count_writer {
    ~count_writer() {
        if (const char* p = std::getenv("MINFER_KILL_COUNT")) {
            if (std::FILE* f = std::fopen(p, "w")) {
                std::fprintf(f, "%ld\n", counter);
                std::fclose(f);
            }
        }
    }
} at_exit_count;

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t n) {
    static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
    trace("write", fd);  // every counted call has its line: line k is kill point k
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2);
        die();
    }
    return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
    trace("pwrite", fd);
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2, off);
        die();
    }
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
    trace("pwrite", fd);
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2, off);
        die();
    }
    return real(fd, buf, n, off);
}

ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t n, unsigned flags) {
    static auto real = next<ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned)>("copy_file_range");
    trace("copy_file_range", out);
    if (at_kill_point()) {
        if (torn() && n > 1) real(in, in_off, out, out_off, n / 2, flags);
        die();
    }
    return real(in, in_off, out, out_off, n, flags);
}

#define MINFER_SHIM(ret, name, params, args, traced)                        \
    ret name params {                                                       \
        static auto real = next<ret(*) params>(#name);                      \
        traced;                                                             \
        if (at_kill_point()) {                                              \
            if (torn()) (void)real args;                                    \
            die();                                                          \
        }                                                                   \
        return real args;                                                   \
    }

MINFER_SHIM(int, fsync, (int fd), (fd), trace("fsync", fd))
MINFER_SHIM(int, fdatasync, (int fd), (fd), trace("fdatasync", fd))
MINFER_SHIM(int, ftruncate, (int fd, off_t n), (fd, n), trace("ftruncate", fd))
MINFER_SHIM(int, ftruncate64, (int fd, off_t n), (fd, n), trace("ftruncate", fd))
MINFER_SHIM(int, rename, (const char* a, const char* b), (a, b), trace("rename", AT_FDCWD, a, AT_FDCWD, b))
MINFER_SHIM(int, renameat, (int da, const char* a, int db, const char* b), (da, a, db, b),
            trace("rename", da, a, db, b))
MINFER_SHIM(int, renameat2, (int da, const char* a, int db, const char* b, unsigned f), (da, a, db, b, f),
            trace("rename", da, a, db, b))
MINFER_SHIM(int, link, (const char* a, const char* b), (a, b), trace("link", AT_FDCWD, a, AT_FDCWD, b))
MINFER_SHIM(int, linkat, (int da, const char* a, int db, const char* b, int f), (da, a, db, b, f),
            trace("link", da, a, db, b))
MINFER_SHIM(int, unlink, (const char* a), (a), trace("unlink", AT_FDCWD, a))
MINFER_SHIM(int, unlinkat, (int d, const char* a, int f), (d, a, f), trace("unlink", d, a))

}  // extern "C"

// kill_shim: an LD_PRELOAD library that kills its process with SIGKILL at the Nth call that changes
// a file (write, pwrite, fsync, fdatasync, rename*, link*, unlink*, ftruncate, copy_file_range), so a
// test can stop a command at every step it takes, not at whatever a timer happens to hit.
//   MINFER_KILL_AT=N     the call to stop at (1-based); unset or 0: count only
//   MINFER_KILL_MODE=before | torn
//       before: the call never happens; torn: a write or pwrite of more than one byte first writes
//       half of its bytes (a torn write, as a crash in the middle of one leaves), other calls happen
//   MINFER_KILL_COUNT=PATH   at exit, write the number of calls counted to PATH (how many points a
//       test must try)
// Written without <unistd.h> so that the declarations below are the only ones of these names.
#include <dlfcn.h>
#include <signal.h>
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
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2);
        die();
    }
    return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2, off);
        die();
    }
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
    if (at_kill_point()) {
        if (torn() && n > 1) real(fd, buf, n / 2, off);
        die();
    }
    return real(fd, buf, n, off);
}

ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t n, unsigned flags) {
    static auto real = next<ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned)>("copy_file_range");
    if (at_kill_point()) {
        if (torn() && n > 1) real(in, in_off, out, out_off, n / 2, flags);
        die();
    }
    return real(in, in_off, out, out_off, n, flags);
}

#define MINFER_SHIM(ret, name, params, args)                                \
    ret name params {                                                       \
        static auto real = next<ret(*) params>(#name);                      \
        if (at_kill_point()) {                                              \
            if (torn()) (void)real args;                                    \
            die();                                                          \
        }                                                                   \
        return real args;                                                   \
    }

MINFER_SHIM(int, fsync, (int fd), (fd))
MINFER_SHIM(int, fdatasync, (int fd), (fd))
MINFER_SHIM(int, ftruncate, (int fd, off_t n), (fd, n))
MINFER_SHIM(int, ftruncate64, (int fd, off_t n), (fd, n))
MINFER_SHIM(int, rename, (const char* a, const char* b), (a, b))
MINFER_SHIM(int, renameat, (int da, const char* a, int db, const char* b), (da, a, db, b))
MINFER_SHIM(int, renameat2, (int da, const char* a, int db, const char* b, unsigned f), (da, a, db, b, f))
MINFER_SHIM(int, link, (const char* a, const char* b), (a, b))
MINFER_SHIM(int, linkat, (int da, const char* a, int db, const char* b, int f), (da, a, db, b, f))
MINFER_SHIM(int, unlink, (const char* a), (a))
MINFER_SHIM(int, unlinkat, (int d, const char* a, int f), (d, a, f))

}  // extern "C"

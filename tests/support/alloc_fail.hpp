#pragma once
// Test support: a global operator new that fails on demand, and the loop that proves a call copes
// with it. Include this header in exactly ONE translation unit of a test executable (it defines the
// replacement functions; the executable's other allocations, gtest's included, go through them).
//
// under_pressure(what, call) runs `call` (returning a gguf::errc) with the k-th allocation made
// during it failing, for k = 0, 1, 2, … until a run makes no failed allocation: that run must give
// ok (or the code asked for), every earlier one that or out_of_memory. The count is process-wide (threads the call starts are
// counted too), so whatever else allocates meanwhile (a server thread) must live in another process.
// A noexcept violation, or an exception escaping a thread, aborts the executable: the terminate
// handler first names the call and k.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include <gtest/gtest.h>

#include "minfer/gguf/error.hpp"

namespace minfer::test::alloc_fail {

inline std::atomic<long> fail_after{-1};  // allocations still allowed; -1: all
inline std::atomic<bool> failed_one{false};
inline const char* current_call = "";
inline std::atomic<long> current_k{-1};

inline void* allocate(std::size_t n) noexcept {
    long left = fail_after.load(std::memory_order_relaxed);
    while (left >= 0) {
        if (left == 0) {
            failed_one.store(true, std::memory_order_relaxed);
            return nullptr;
        }
        if (fail_after.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) break;
    }
    return std::malloc(n == 0 ? 1 : n);
}

struct terminate_reporter {
    terminate_reporter() {
        std::set_terminate([] {
            std::fprintf(stderr, "std::terminate inside %s with allocation %ld failing\n", current_call, current_k.load());
            std::abort();
        });
    }
};
inline terminate_reporter reporter;

/// See the header's comment. `want`: the outcome without a failed allocation (an error path's code:
/// then every run gives it or out_of_memory). `limit`: the most runs before the call is said to
/// allocate without end.
template <class Call>
void under_pressure(const char* what, Call call, minfer::gguf::errc want = minfer::gguf::errc::ok, long limit = 200000) {
    using minfer::gguf::errc;
    current_call = what;
    for (long k = 0; k < limit; ++k) {
        current_k = k;
        failed_one = false;
        fail_after = k;
        errc got = errc::ok;
        bool threw = false;
        try {
            got = call();
        } catch (...) {
            threw = true;
        }
        fail_after = -1;
        ASSERT_FALSE(threw) << what << " threw with allocation " << k << " failing";
        if (!failed_one) {
            EXPECT_EQ(got, want) << what << " without a failed allocation: " << minfer::gguf::to_string(got);
            return;
        }
        ASSERT_TRUE(got == want || got == errc::out_of_memory)
            << what << " with allocation " << k << " failing returned " << minfer::gguf::to_string(got);
    }
    FAIL() << what << " allocates without end";
}

}  // namespace minfer::test::alloc_fail

void* operator new(std::size_t n) {
    if (void* p = minfer::test::alloc_fail::allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = minfer::test::alloc_fail::allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return minfer::test::alloc_fail::allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return minfer::test::alloc_fail::allocate(n); }
// These deletes free what the operator news above took from malloc. GCC 12 at -O3 sees a delete
// expression inlined into free() and warns of a mismatch that is not there (the pairs are ours).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#pragma once
// result<T>: a value or an error, shaped like a subset of C++23 std::expected<T, error> so it can be
// swapped for it later. No exceptions: using value() on an error (or error() on a value) is a
// programming error, never something a file can cause: it prints the error's message to stderr and
// aborts, so the misuse is loud (the only output this library ever makes).
//
// On a temporary result, value(), operator* and error() return by value (moved out), not by
// reference: `const model& m = *model::open(p);` then binds to a moved-out model whose lifetime the
// reference extends, instead of dangling into a destroyed temporary.
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "minfer/gguf/error.hpp"

namespace minfer::gguf {

namespace detail {
/// Misuse of a result: print what was there and abort (out of line, cold).
[[noreturn]] void bad_result_access(const error* e) noexcept;

/// The one error a failed allocation of an error_box falls back to (code out_of_memory, no text):
/// static, never freed, shared, so building it cannot fail.
const error& out_of_memory_fallback() noexcept;

/// A failed result's error, on the heap: an error is a few hundred bytes (its strings, the subject's
/// inline buffer, the shape), and a result passes through every return of every call chain, while
/// errors are rare. Boxed, a result<void> is one pointer and a result<T> is T plus a pointer (LLVM's
/// Expected does the same). The box never throws: when the heap cannot take the error, it points at
/// out_of_memory_fallback() instead, which it does not own.
class error_box {
public:
    explicit error_box(error&& e) noexcept : p_(make(std::move(e))) {}
    error_box(const error_box& o) noexcept : p_(make_copy(*o.p_)) {}
    error_box(error_box&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    error_box& operator=(error_box o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~error_box() { release(); }

    const error& get() const noexcept { return *p_; }
    /// The error, moved out (the box keeps a valid, emptied error; the fallback, which has no text
    /// to allocate, is copied).
    error take() noexcept {
        if (p_ == &out_of_memory_fallback()) return *p_;
        return std::move(*p_);
    }

private:
    static error* make(error&& e) noexcept {
        error* p = new (std::nothrow) error(std::move(e));
        return p != nullptr ? p : const_cast<error*>(&out_of_memory_fallback());
    }
    static error* make_copy(const error& e) noexcept {
        if (&e == &out_of_memory_fallback()) return const_cast<error*>(&e);
        try {
            return make(error(e));  // copying the strings may throw bad_alloc
        } catch (...) {
            return const_cast<error*>(&out_of_memory_fallback());
        }
    }
    void release() noexcept {
        if (p_ != nullptr && p_ != &out_of_memory_fallback()) delete p_;
        p_ = nullptr;
    }
    error* p_;  // never null, except in a moved-from box
};
}  // namespace detail

/// Tag wrapper used to construct a failed result: `return unexpected(err);`.
struct unexpected {
    error err;
    explicit unexpected(error e) noexcept : err(std::move(e)) {}
};

template <class T>
class [[nodiscard]] result {
public:
    using value_type = T;

    result(T v) noexcept(std::is_nothrow_move_constructible_v<T>) : v_(std::in_place_index<0>, std::move(v)) {}
    result(unexpected u) noexcept : v_(std::in_place_index<1>, std::move(u.err)) {}

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    // value() of an error is a programming error, never something a file can cause: loud abort.
    T& value() & noexcept { check(); return *std::get_if<0>(&v_); }
    const T& value() const& noexcept { check(); return *std::get_if<0>(&v_); }
    T value() && noexcept(std::is_nothrow_move_constructible_v<T>) { check(); return std::move(*std::get_if<0>(&v_)); }

    T& operator*() & noexcept { return value(); }
    const T& operator*() const& noexcept { return value(); }
    T operator*() && noexcept(std::is_nothrow_move_constructible_v<T>) { return std::move(*this).value(); }
    T* operator->() & noexcept { return &value(); }
    const T* operator->() const& noexcept { return &value(); }
    // `open(path)->view()` would borrow from a temporary that dies at the end of the statement, so
    // -> on a temporary result is refused for owners (types that are not trivially copyable, such
    // as model and file_view). Views (array_view, string_view, kv pointers) stay usable.
    T* operator->() && noexcept requires std::is_trivially_copyable_v<T> { return &value(); }
    T* operator->() && requires(!std::is_trivially_copyable_v<T>) = delete;
    const T* operator->() const&& requires(!std::is_trivially_copyable_v<T>) = delete;

    const gguf::error& error() const& noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return std::get_if<1>(&v_)->get();
    }
    gguf::error error() && noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return std::get_if<1>(&v_)->take();
    }

    template <class U>
    T value_or(U&& fallback) const& { return has_value() ? value() : static_cast<T>(std::forward<U>(fallback)); }

private:
    void check() const noexcept {
        if (!has_value()) [[unlikely]]
            detail::bad_result_access(&std::get_if<1>(&v_)->get());
    }
    std::variant<T, detail::error_box> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(unexpected u) noexcept : err_(std::in_place, std::move(u.err)) {}
    [[nodiscard]] bool has_value() const noexcept { return !err_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    const gguf::error& error() const& noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return err_->get();
    }
    gguf::error error() && noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return err_->take();
    }

private:
    std::optional<detail::error_box> err_;
};

}  // namespace minfer::gguf

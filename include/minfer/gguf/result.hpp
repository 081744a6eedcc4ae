#pragma once
// result<T>: a value or an error, shaped like a subset of C++23 std::expected<T, error> so it can be
// swapped for it later. No exceptions: using value() on an error (or error() on a value) is a
// programming error, never something a file can cause: it prints the error's message to stderr and
// aborts, so the misuse is loud (the only output this library ever makes).
//
// On a temporary result, value(), operator* and error() return by value (moved out), not by
// reference: `const model& m = *model::open(p);` then binds to a moved-out model whose lifetime the
// reference extends, instead of dangling into a destroyed temporary.
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "minfer/gguf/error.hpp"

namespace minfer::gguf {

namespace detail {
/// Misuse of a result: print what was there and abort (out of line, cold).
[[noreturn]] void bad_result_access(const error* e) noexcept;
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
        return *std::get_if<1>(&v_);
    }
    gguf::error error() && noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return std::move(*std::get_if<1>(&v_));
    }

    template <class U>
    T value_or(U&& fallback) const& { return has_value() ? value() : static_cast<T>(std::forward<U>(fallback)); }

private:
    void check() const noexcept {
        if (!has_value()) [[unlikely]]
            detail::bad_result_access(std::get_if<1>(&v_));
    }
    std::variant<T, gguf::error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(unexpected u) noexcept : err_(std::move(u.err)) {}
    [[nodiscard]] bool has_value() const noexcept { return !err_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    const gguf::error& error() const& noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return *err_;
    }
    gguf::error error() && noexcept {
        if (has_value()) [[unlikely]]
            detail::bad_result_access(nullptr);
        return std::move(*err_);
    }

private:
    std::optional<gguf::error> err_;
};

}  // namespace minfer::gguf

#pragma once
// Dispatch on a GGUF value type to the C++ type that holds it, so printers write one generic lambda.
#include <cstdint>

#include "minfer/gguf/types.hpp"

namespace minfer::cli {

/// Call f(T{}) with the C++ type of a fixed-size value type (u8…f64, bool). Returns false for string
/// and array, which have no fixed type.
template <class F>
bool visit_fixed(gguf::value_type t, F&& f) {
    using vt = gguf::value_type;
    switch (t) {
        case vt::u8: f(std::uint8_t{}); return true;
        case vt::i8: f(std::int8_t{}); return true;
        case vt::u16: f(std::uint16_t{}); return true;
        case vt::i16: f(std::int16_t{}); return true;
        case vt::u32: f(std::uint32_t{}); return true;
        case vt::i32: f(std::int32_t{}); return true;
        case vt::f32: f(float{}); return true;
        case vt::boolean: f(bool{}); return true;
        case vt::u64: f(std::uint64_t{}); return true;
        case vt::i64: f(std::int64_t{}); return true;
        case vt::f64: f(double{}); return true;
        case vt::string:
        case vt::array: return false;
    }
    return false;
}

}  // namespace minfer::cli

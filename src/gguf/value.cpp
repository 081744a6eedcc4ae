#include <limits>
#include <new>

#include "minfer/gguf/value.hpp"

namespace minfer::gguf {
namespace {
error make_mismatch(value_type wanted, value_type found) {
    error e;
    e.code = errc::type_mismatch;
    e.where = section::access;
    e.expected = static_cast<std::uint64_t>(wanted);
    e.found = static_cast<std::uint64_t>(found);
    return e;
}
}  // namespace

error array_view::mismatch(value_type wanted) const noexcept {
    return make_mismatch(wanted, type_);
}

error array_view::out_of_range(std::uint64_t i) const noexcept {
    error e;
    e.code = errc::index_out_of_range;
    e.where = section::access;
    e.expected = count_;
    e.found = i;
    return e;
}

error array_view::item_out_of_range(std::uint64_t i) const noexcept {
    error e;
    e.code = errc::value_out_of_range;
    e.where = section::access;
    e.item = static_cast<std::int64_t>(i);
    return e;
}

result<std::string_view> array_view::string_at(std::uint64_t i) const noexcept {
    if (type_ != value_type::string) return unexpected(mismatch(value_type::string));
    if (i >= count_) return unexpected(out_of_range(i));
    auto it = strings().begin();
    for (std::uint64_t k = 0; k < i; ++k) ++it;
    return *it;
}

result<std::vector<std::string_view>> array_view::string_table() const noexcept {
    if (type_ != value_type::string) return unexpected(mismatch(value_type::string));
    try {
        std::vector<std::string_view> out;
        out.reserve(static_cast<std::size_t>(count_));
        for (std::string_view s : strings()) out.push_back(s);
        return out;
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("building a string table"));
    }
}

result<string_index> string_index::build(const array_view& a) noexcept {
    if (a.element_type() != value_type::string) return unexpected(a.mismatch(value_type::string));
    try {
        string_index idx;
        idx.bytes_ = a.raw();
        idx.ends_.reserve(static_cast<std::size_t>(a.size()));
        // The same clamped walk as string_range: every recorded end lies inside the range, and each
        // record's begin (the previous end + 8) is at most its end.
        const std::byte* base = a.raw().data();
        for (std::string_view s : a.strings()) {
            if (s.data() == nullptr) break;  // a length prefix cut by the range's end: no item there
            idx.ends_.push_back(static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(s.data()) - base) + s.size());
        }
        return idx;
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("building a string index"));
    }
}

error string_index::out_of_range(std::uint64_t i) const noexcept {
    error e;
    e.code = errc::index_out_of_range;
    e.where = section::access;
    e.expected = ends_.size();
    e.found = i;
    return e;
}

error kv::mismatch(value_type wanted) const noexcept {
    error e = make_mismatch(wanted, type);
    e.subject = key;  // a bounded copy into the error: no allocation
    e.offset = offset;
    return e;
}

error kv::out_of_range_value(std::uint64_t bits, std::uint64_t max) const noexcept {
    error e;
    e.code = errc::value_out_of_range;
    e.where = section::access;
    e.subject = key;
    e.offset = offset;
    e.expected = max;
    e.found = bits;
    return e;
}

result<std::int64_t> kv::as_i64() const noexcept {
    const std::uint32_t size = value_size(type);
    if (type == value_type::array || size == 0 || payload.size() < size) return unexpected(mismatch(value_type::i64));
    const std::byte* p = payload.data();
    switch (type) {
        case value_type::u8: return detail::load<std::uint8_t>(p);
        case value_type::i8: return detail::load<std::int8_t>(p);
        case value_type::u16: return detail::load<std::uint16_t>(p);
        case value_type::i16: return detail::load<std::int16_t>(p);
        case value_type::u32: return detail::load<std::uint32_t>(p);
        case value_type::i32: return detail::load<std::int32_t>(p);
        case value_type::i64: return detail::load<std::int64_t>(p);
        case value_type::u64: {
            const auto v = detail::load<std::uint64_t>(p);
            if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                return static_cast<std::int64_t>(v);
            break;
        }
        default: break;
    }
    return unexpected(mismatch(value_type::i64));
}

result<std::uint64_t> kv::as_u64() const noexcept {
    if (type == value_type::u64 && payload.size() >= 8) return detail::load<std::uint64_t>(payload.data());
    auto v = as_i64();
    if (!v || *v < 0) return unexpected(mismatch(value_type::u64));
    return static_cast<std::uint64_t>(*v);
}

}  // namespace minfer::gguf

// file_view::parse: the entry of the verifier (parser.hpp), its one failure path, and the
// accessors of a verified view.
#include <bit>
#include <new>

#include "../name_index_impl.hpp"
#include "parser.hpp"

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; a byte-swapping path is not written");

namespace minfer::gguf {

error key_not_found_error(std::string_view key) noexcept {
    error e;
    e.code = errc::key_not_found;
    e.where = section::access;
    e.subject = key;  // bounded inline copy: no allocation
    return e;
}

bool parser::fail(errc code, section where, std::uint64_t offset, std::uint64_t expected, std::uint64_t found) {
    err_.code = code;
    err_.where = where;
    err_.offset = offset;
    err_.expected = expected;
    err_.found = found;
    if (err_.subject.empty() && !about_.empty()) subject(about_);
    return false;
}

bool parser::duplicate(const detail::insert_window::duplicate& d, errc code, section where) {
    err_ = error{};
    err_.index = d.id;
    about_ = d.name;
    return fail(code, where, d.offset, d.first, d.id);
}

result<file_view> file_view::parse(std::span<const std::byte> bytes, const limits& caps) noexcept {
    try {
        return parser(bytes, caps).run();
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("indexing the file"));
    }
}

result<file_view> file_view::parse_head(std::span<const std::byte> head, std::uint64_t file_size,
                                        const limits& caps) noexcept {
    try {
        return parser(head, file_size, caps).run();
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("indexing the file"));
    }
}

const kv* file_view::find(std::string_view key) const noexcept {
    const std::int64_t i = kv_index_.find(key, [this](std::uint32_t k) { return kvs_[k].key; });
    return i < 0 ? nullptr : &kvs_[static_cast<std::size_t>(i)];
}

const tensor_info* file_view::find_tensor(std::string_view name) const noexcept {
    const std::int64_t i = tensor_index_.find(name, [this](std::uint32_t k) { return tensors_[k].name; });
    return i < 0 ? nullptr : &tensors_[static_cast<std::size_t>(i)];
}

result<std::string_view> file_view::string_item(const kv& array, std::uint64_t i) const noexcept {
    auto a = array.get<array_view>();
    if (!a) return unexpected(a.error());
    if (a->element_type() != value_type::string || i >= a->size() || i < string_mark_stride) return a->string_at(i);
    const auto at = reinterpret_cast<std::uintptr_t>(&array);
    const auto first = reinterpret_cast<std::uintptr_t>(kvs_.data());
    if (at < first || at >= first + kvs_.size() * sizeof(kv) || (at - first) % sizeof(kv) != 0) return a->string_at(i);
    const std::size_t index = (at - first) / sizeof(kv);
    const std::vector<std::uint64_t>* offsets = nullptr;
    for (const string_marks& m : string_marks_)  // one entry per long string array: two in a model
        if (m.kv == index) offsets = &m.offsets;
    const std::uint64_t mark = i / string_mark_stride;
    if (offsets == nullptr || mark > offsets->size()) return a->string_at(i);
    // The payload was verified by the parse: every length from a mark on lies inside it. The walk
    // still stops at its end (a kv changed by hand is answered with an empty view, not a bad read).
    const std::span<const std::byte> raw = a->raw();
    std::uint64_t p = (*offsets)[static_cast<std::size_t>(mark - 1)];
    for (std::uint64_t k = mark * string_mark_stride;; ++k) {
        if (p > raw.size() || raw.size() - p < 8) return std::string_view();
        const std::uint64_t n = detail::load<std::uint64_t>(raw.data() + p);
        if (n > raw.size() - p - 8) return std::string_view();
        if (k == i) return std::string_view(reinterpret_cast<const char*>(raw.data() + p + 8), static_cast<std::size_t>(n));
        p += 8 + n;
    }
}

}  // namespace minfer::gguf

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

}  // namespace minfer::gguf

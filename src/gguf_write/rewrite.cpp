// rewrite: a model's records with changes applied, and its tensors as file ranges, into a writer.
#include "minfer/gguf_write/rewrite.hpp"

#include <cstring>
#include <utility>

namespace minfer::gguf {
namespace {

template <class T>
std::vector<std::byte> le_bytes(T v) {
    std::vector<std::byte> out(sizeof v);
    std::memcpy(out.data(), &v, sizeof v);  // GGUF is little-endian, as is every host we build for
    return out;
}

}  // namespace

metadata_change metadata_change::erase(std::string key) { return {op::erase, std::move(key), value_type::u8, {}}; }
metadata_change metadata_change::erase_prefix(std::string prefix) {
    return {op::erase_prefix, std::move(prefix), value_type::u8, {}};
}
metadata_change metadata_change::set_encoded(std::string key, value_type type, std::vector<std::byte> value) {
    return {op::set, std::move(key), type, std::move(value)};
}
metadata_change metadata_change::set_u16(std::string key, std::uint16_t v) {
    return set_encoded(std::move(key), value_type::u16, le_bytes(v));
}
metadata_change metadata_change::set_i32(std::string key, std::int32_t v) {
    return set_encoded(std::move(key), value_type::i32, le_bytes(v));
}
metadata_change metadata_change::set_u32(std::string key, std::uint32_t v) {
    return set_encoded(std::move(key), value_type::u32, le_bytes(v));
}
metadata_change metadata_change::set_string(std::string key, std::string_view v) {
    std::vector<std::byte> e = le_bytes(static_cast<std::uint64_t>(v.size()));
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    e.insert(e.end(), p, p + v.size());
    return set_encoded(std::move(key), value_type::string, std::move(e));
}

result<writer> rewrite(const model& m, const model_source& src, std::span<const metadata_change> changes,
                       std::span<const tensor_ref> tensors) noexcept {
    try {
        writer w;
        for (const kv& record : m.metadata().metadata()) w.set(record);
        std::vector<std::string_view> added;  // keys set by earlier changes, for erase_prefix
        for (const metadata_change& c : changes) {
            switch (c.what) {
                case metadata_change::op::set:
                    w.set_encoded(c.key, c.type, c.value);
                    added.push_back(c.key);
                    break;
                case metadata_change::op::erase: w.erase(c.key); break;
                case metadata_change::op::erase_prefix:
                    for (const kv& record : m.metadata().metadata())
                        if (record.key.starts_with(c.key)) w.erase(record.key);
                    for (const std::string_view k : added)
                        if (k.starts_with(c.key)) w.erase(k);
                    break;
            }
        }
        for (const tensor_ref& t : tensors) {
            const tensor_info& info = *t.info;
            w.add_tensor(info.name, info.type, std::span(info.ne.data(), info.n_dims), src.tensor(t));
        }
        return w;
    } catch (...) {
        return unexpected(out_of_memory_error("planning the rewrite"));
    }
}

}  // namespace minfer::gguf

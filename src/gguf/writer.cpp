// writer: serialises metadata and tensors as GGUF v3. The layout rules are the loader's: the data
// section starts at the padded end of the tensor table, and each tensor sits at the running sum of
// padded sizes. Tensors are validated with the same check_shape() the parser uses.
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <unistd.h>
#include <atomic>
#include <unordered_map>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/rules.hpp"
#include "minfer/gguf/writer.hpp"

namespace minfer::gguf {
namespace {

template <class T>
void append(std::vector<std::byte>& out, T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof v);
}
void append_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
}
void append_string(std::vector<std::byte>& out, std::string_view s) {
    append<std::uint64_t>(out, s.size());
    append_bytes(out, s.data(), s.size());
}
template <class T>
std::vector<std::byte> scalar(value_type t, T v) {
    std::vector<std::byte> e;
    append<std::uint32_t>(e, static_cast<std::uint32_t>(t));
    append<T>(e, v);
    return e;
}

// Memory sink: holes become zeros.
struct memory_sink {
    std::vector<std::byte> out;
    bool write(const std::byte* p, std::size_t n) {
        out.insert(out.end(), p, p + n);
        return true;
    }
    bool hole(std::uint64_t n) {
        out.resize(out.size() + static_cast<std::size_t>(n));
        return true;
    }
    bool finish() { return true; }
};

// File sink: holes are seeks, so zero tensors cost no disk.
struct file_sink {
    int fd;
    std::uint64_t pos = 0;
    int err = 0;
    bool write(const std::byte* p, std::size_t n) {
        while (n > 0) {
            const ssize_t w = ::write(fd, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { err = errno; return false; }
            p += w;
            n -= static_cast<std::size_t>(w);
            pos += static_cast<std::uint64_t>(w);
        }
        return true;
    }
    bool hole(std::uint64_t n) {
        if (::lseek(fd, static_cast<off_t>(n), SEEK_CUR) < 0) { err = errno; return false; }
        pos += n;
        return true;
    }
    bool finish() {
        if (::ftruncate(fd, static_cast<off_t>(pos)) != 0) { err = errno; return false; }  // a trailing hole
        return true;
    }
};

error write_error(const std::string& path, const char* what, int err) {
    error e;
    e.code = errc::io_error;
    e.file = path;
    e.detail = what;
    e.sys_errno = err;
    return e;
}

}  // namespace

writer& writer::put(std::string_view key, std::vector<std::byte> encoded) {
    const auto [it, fresh] = key_index_.try_emplace(std::string(key), kvs_.size());
    if (!fresh) {
        kvs_[it->second].encoded = std::move(encoded);
        return *this;
    }
    kvs_.push_back({it->first, std::move(encoded)});
    return *this;
}

writer& writer::set_u8(std::string_view k, std::uint8_t v) { return put(k, scalar(value_type::u8, v)); }
writer& writer::set_i8(std::string_view k, std::int8_t v) { return put(k, scalar(value_type::i8, v)); }
writer& writer::set_u16(std::string_view k, std::uint16_t v) { return put(k, scalar(value_type::u16, v)); }
writer& writer::set_i16(std::string_view k, std::int16_t v) { return put(k, scalar(value_type::i16, v)); }
writer& writer::set_u32(std::string_view k, std::uint32_t v) { return put(k, scalar(value_type::u32, v)); }
writer& writer::set_i32(std::string_view k, std::int32_t v) { return put(k, scalar(value_type::i32, v)); }
writer& writer::set_f32(std::string_view k, float v) { return put(k, scalar(value_type::f32, v)); }
writer& writer::set_bool(std::string_view k, bool v) {
    return put(k, scalar(value_type::boolean, static_cast<std::uint8_t>(v ? 1 : 0)));
}
writer& writer::set_u64(std::string_view k, std::uint64_t v) { return put(k, scalar(value_type::u64, v)); }
writer& writer::set_i64(std::string_view k, std::int64_t v) { return put(k, scalar(value_type::i64, v)); }
writer& writer::set_f64(std::string_view k, double v) { return put(k, scalar(value_type::f64, v)); }

writer& writer::set_string(std::string_view k, std::string_view v) {
    std::vector<std::byte> e;
    append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::string));
    append_string(e, v);
    return put(k, std::move(e));
}

writer& writer::set_array(std::string_view k, value_type type, std::span<const std::byte> elements) {
    const std::uint32_t size = value_size(type);
    std::vector<std::byte> e;
    append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::array));
    append<std::uint32_t>(e, static_cast<std::uint32_t>(type));
    append<std::uint64_t>(e, size == 0 ? 0 : elements.size() / size);
    if (size != 0) append_bytes(e, elements.data(), elements.size() - elements.size() % size);
    return put(k, std::move(e));
}

writer& writer::set_strings(std::string_view k, std::span<const std::string_view> strings) {
    std::vector<std::byte> e;
    append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::array));
    append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::string));
    append<std::uint64_t>(e, strings.size());
    for (std::string_view s : strings) append_string(e, s);
    return put(k, std::move(e));
}

writer& writer::set_strings(std::string_view k, std::span<const std::string> strings) {
    std::vector<std::string_view> views(strings.begin(), strings.end());
    return set_strings(k, std::span<const std::string_view>(views));
}

writer& writer::erase(std::string_view k) {
    const auto it = key_index_.find(std::string(k));
    if (it == key_index_.end()) return *this;
    const std::size_t gone = it->second;
    kvs_.erase(kvs_.begin() + static_cast<std::ptrdiff_t>(gone));
    key_index_.erase(it);
    for (auto& entry : key_index_)
        if (entry.second > gone) --entry.second;  // the later keys moved up by one
    return *this;
}

writer& writer::add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                           std::span<const std::byte> data) {
    tensors_.push_back({std::string(name), type, {ne.begin(), ne.end()}, {data.begin(), data.end()}, false});
    return *this;
}

writer& writer::add_zero_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne) {
    tensors_.push_back({std::string(name), type, {ne.begin(), ne.end()}, {}, true});
    return *this;
}

template <class Sink>
result<void> writer::emit(Sink& sink) const {
    // Keys and array element types, checked as the loader will check them, so that the writer never
    // produces a file its own loader refuses.
    for (std::size_t i = 0; i < kvs_.size(); ++i) {
        const kv_record& r = kvs_[i];
        error e;
        e.where = section::metadata;
        e.index = static_cast<std::int64_t>(i);
        e.subject = r.key;
        if (r.key.empty()) {
            e.code = errc::empty_key;
            return unexpected(std::move(e));
        }
        if (const auto nul = r.key.find('\0'); nul != std::string::npos) {
            e.code = errc::nul_in_name;
            e.found = nul;
            return unexpected(std::move(e));
        }
        std::uint32_t tag = 0, elem = 0;
        std::memcpy(&tag, r.encoded.data(), 4);
        if (tag != static_cast<std::uint32_t>(value_type::array)) continue;
        std::memcpy(&elem, r.encoded.data() + 4, 4);
        if (elem == static_cast<std::uint32_t>(value_type::array)) {
            e.code = errc::nested_array;
            return unexpected(std::move(e));
        }
        if (elem >= value_type_count) {
            e.code = errc::bad_value_type;
            e.found = elem;
            e.detail = "array element type";
            return unexpected(std::move(e));
        }
    }

    // The alignment, checked as the loader will check it.
    std::uint64_t align = default_alignment;
    for (const kv_record& r : kvs_) {
        if (r.key != alignment_key) continue;
        std::uint32_t tag = 0;
        std::memcpy(&tag, r.encoded.data(), 4);
        error e;
        e.where = section::metadata;
        e.subject = r.key;
        if (tag != static_cast<std::uint32_t>(value_type::u32)) {
            e.code = errc::alignment_wrong_type;
            e.expected = static_cast<std::uint32_t>(value_type::u32);
            e.found = tag;
            return unexpected(std::move(e));
        }
        std::uint32_t a = 0;
        std::memcpy(&a, r.encoded.data() + 4, 4);
        if (a == 0 || (a & (a - 1)) != 0) {
            e.code = errc::bad_alignment;
            e.found = a;
            return unexpected(std::move(e));
        }
        align = a;
    }

    std::vector<std::byte> head;
    append<std::uint32_t>(head, 0x46554747u);
    append<std::uint32_t>(head, gguf_version);
    append<std::int64_t>(head, static_cast<std::int64_t>(tensors_.size()));
    append<std::int64_t>(head, static_cast<std::int64_t>(kvs_.size()));
    for (const kv_record& r : kvs_) {
        append_string(head, r.key);
        append_bytes(head, r.encoded.data(), r.encoded.size());
    }

    std::unordered_map<std::string_view, std::size_t> names;  // name -> first index
    std::vector<std::uint64_t> sizes;
    sizes.reserve(tensors_.size());
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const tensor_record& t = tensors_[i];
        error e;
        e.where = section::tensor_info;
        e.index = static_cast<std::int64_t>(i);
        e.subject = t.name;
        if (t.name.empty() || t.name.size() > max_name_bytes) {
            e.code = errc::bad_name_length;
            e.expected = max_name_bytes;
            e.found = t.name.size();
            return unexpected(std::move(e));
        }
        if (const auto nul = t.name.find('\0'); nul != std::string::npos) {
            e.code = errc::nul_in_name;
            e.found = nul;
            return unexpected(std::move(e));
        }
        if (const auto [it, fresh] = names.emplace(t.name, i); !fresh) {
            e.code = errc::duplicate_tensor;
            e.expected = it->second;
            e.found = i;
            return unexpected(std::move(e));
        }
        auto facts = check_shape(static_cast<std::uint32_t>(t.type), t.ne);
        if (!facts) {
            error se = std::move(facts).error();
            se.index = e.index;
            se.subject = t.name;
            return unexpected(std::move(se));
        }
        if (!t.zero && t.data.size() != facts->n_bytes) {
            e.code = errc::data_truncated;
            e.where = section::data;
            e.expected = facts->n_bytes;
            e.found = t.data.size();
            e.detail = "tensor bytes given to the writer";
            return unexpected(std::move(e));
        }
        append_string(head, t.name);
        append<std::uint32_t>(head, static_cast<std::uint32_t>(t.ne.size()));
        for (std::int64_t d : t.ne) append<std::int64_t>(head, d);
        append<std::uint32_t>(head, static_cast<std::uint32_t>(t.type));
        append<std::uint64_t>(head, offset);
        sizes.push_back(facts->n_bytes);
        offset += pad_to(facts->n_bytes, align);
    }
    if (!tensors_.empty()) head.resize(static_cast<std::size_t>(pad_to(head.size(), align)));

    if (!sink.write(head.data(), head.size())) return unexpected(error{});
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const tensor_record& t = tensors_[i];
        const bool ok = t.zero ? sink.hole(sizes[i]) : sink.write(t.data.data(), t.data.size());
        if (!ok || !sink.hole(pad_to(sizes[i], align) - sizes[i])) return unexpected(error{});
    }
    if (!sink.finish()) return unexpected(error{});
    return {};
}

result<std::vector<std::byte>> writer::to_bytes() const noexcept {
    try {
        memory_sink sink;
        auto r = emit(sink);
        if (!r) return unexpected(std::move(r).error());
        return std::move(sink.out);
    } catch (const std::bad_alloc&) {
        error e;
        e.code = errc::out_of_memory;
        e.detail = "serialising";
        return unexpected(std::move(e));
    }
}

result<void> writer::write(const std::filesystem::path& path) const noexcept {
    try {
        const std::string target = path.string();
        // A name of its own per writer, so two writers to one path never share a temporary.
        static std::atomic<unsigned> serial{0};
        const std::string tmp = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return unexpected(write_error(tmp, "create", errno));
        file_sink sink{fd};
        auto r = emit(sink);
        // The bytes reach the disk before the name does, so a crash leaves the old file or the new one.
        if (r && sink.err == 0 && ::fsync(fd) != 0) sink.err = errno;
        const int close_rc = ::close(fd);
        if (!r || sink.err != 0 || close_rc != 0) {
            ::unlink(tmp.c_str());
            if (!r && r.error().code != errc::ok) return unexpected(std::move(r).error());
            return unexpected(write_error(tmp, "write", sink.err != 0 ? sink.err : errno));
        }
        if (::rename(tmp.c_str(), target.c_str()) != 0) {
            const int err = errno;
            ::unlink(tmp.c_str());
            return unexpected(write_error(target, "rename into", err));
        }
        return {};
    } catch (const std::bad_alloc&) {
        error e;
        e.code = errc::out_of_memory;
        e.detail = "serialising";
        return unexpected(std::move(e));
    }
}

}  // namespace minfer::gguf

// writer: metadata encoded as it will be stored, tensors kept as sources. A write is: plan (every
// rule, every size; nothing created yet), open and check the sources (still nothing created), create
// the atomic_file, write the header, stream each tensor to its planned offset, set the file size
// (trailing holes), commit. Memory: the header plus one chunk buffer.
#include "minfer/gguf_write/writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "copy.hpp"
#include "errors.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/rules.hpp"

namespace minfer::gguf {
namespace {
using detail::io_error;
using detail::oom;

constexpr std::uint32_t gguf_magic = 0x46554747u;  // "GGUF" read as a little-endian u32
constexpr std::size_t min_chunk = 4096;

// resize + memcpy rather than insert(end, p, p + n): GCC 12 at -O3 with -fPIC reports a false
// -Wstringop-overflow on the inlined insert of a few bytes.
template <class T>
void append(std::vector<std::byte>& out, T v) {
    const std::size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(out.data() + at, &v, sizeof v);
}
void append_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
    if (n == 0) return;
    const std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
}
void append_string(std::vector<std::byte>& out, std::string_view s) {
    append<std::uint64_t>(out, s.size());
    append_bytes(out, s.data(), s.size());
}
template <class T>
std::vector<std::byte> scalar(T v) {
    std::vector<std::byte> e;
    append<T>(e, v);
    return e;
}

// The error of a failure while streaming tensor i: where in the output, which tensor.
error data_error(errc code, const plan& p, std::size_t i, std::uint64_t at) {
    error e;
    e.code = code;
    e.where = section::data;
    e.index = static_cast<std::int64_t>(i);
    e.subject = p.tensors()[i].name;
    e.offset = at;
    return e;
}

std::string source_name(const tensor_source& s) {
    return s.path().empty() ? "descriptor " + std::to_string(s.fd()) : s.path().string();
}

// The sources of one write, checked before the output exists: a path that cannot be opened or a
// range past the end of its file fails the write with the target untouched. A path is opened
// (again) only while its tensors are copied, and closed when the copy moves to another path: a
// model of 5,000 parts holds one descriptor at a time, not 5,000 (merge under a small ulimit -n).
// The file opened for the copy must be the one checked (same device and inode, same size), else
// the write fails with ESTALE.
class opened_sources {
public:
    opened_sources() = default;
    opened_sources(const opened_sources&) = delete;
    opened_sources& operator=(const opened_sources&) = delete;
    ~opened_sources() { close_current(); }

    template <class Records>
    result<void> open(const Records& tensors, const plan& p) {
        fds_.assign(tensors.size(), -1);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const tensor_source& s = tensors[i].source;
            if (s.what() != tensor_source::kind::file) continue;
            struct stat st {};
            if (!s.path().empty()) {
                auto [it, fresh] = by_path_.try_emplace(s.path().string());
                if (fresh) {
                    // Opened once here to check it can be (permissions, a directory), then closed.
                    const int fd = ::open(s.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
                    const int err = fd < 0 ? errno : (::fstat(fd, &st) != 0 ? errno : 0);
                    if (fd >= 0) ::close(fd);
                    if (err != 0) {
                        by_path_.erase(it);
                        error e = io_error(s.path().string(), fd < 0 ? "open the tensor source" : "stat the tensor source", err);
                        e.index = static_cast<std::int64_t>(i);
                        e.subject = p.tensors()[i].name;
                        return unexpected(std::move(e));
                    }
                    it->second = st;
                } else {
                    st = it->second;
                }
            } else {
                if (::fstat(s.fd(), &st) != 0) {
                    const int err = errno;  // before any allocation below
                    error e = io_error(source_name(s), "stat the tensor source", err);
                    e.index = static_cast<std::int64_t>(i);
                    e.subject = p.tensors()[i].name;
                    return unexpected(std::move(e));
                }
                fds_[i] = s.fd();
            }
            // A regular file's size is known now: a range past its end fails before anything is
            // written. (Other descriptors are checked as they are read.)
            std::uint64_t end = 0;
            if (S_ISREG(st.st_mode) && (__builtin_add_overflow(s.file_offset(), s.size(), &end) ||
                                        end > static_cast<std::uint64_t>(st.st_size))) {
                error e = data_error(errc::data_truncated, p, i, p.data_offset() + p.tensors()[i].offset);
                e.file = source_name(s);
                e.expected = end < s.file_offset() ? UINT64_MAX : end;
                e.found = static_cast<std::uint64_t>(st.st_size);
                e.detail = "tensor source file range";
                return unexpected(std::move(e));
            }
        }
        return {};
    }

    // The descriptor of tensor i's file source: the caller's, or its path opened now (the path
    // opened before is closed first).
    result<int> fd(const tensor_source& s, std::size_t i, const plan& p) {
        if (s.path().empty()) return fds_[i];
        const std::string path = s.path().string();
        if (current_fd_ >= 0 && current_path_ == path) return current_fd_;
        close_current();
        const int fd = ::open(s.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        auto fail = [&](const char* what, int err) {
            error e = io_error(path, what, err);
            e.index = static_cast<std::int64_t>(i);
            e.subject = p.tensors()[i].name;
            return unexpected(std::move(e));
        };
        if (fd < 0) return fail("open the tensor source", errno);
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            const int err = errno;
            ::close(fd);
            return fail("stat the tensor source", err);
        }
        const auto it = by_path_.find(path);
        if (it == by_path_.end() || it->second.st_dev != st.st_dev || it->second.st_ino != st.st_ino ||
            it->second.st_size != st.st_size) {
            ::close(fd);
            return fail("the file changed since it was opened", ESTALE);
        }
        current_fd_ = fd;
        current_path_ = path;
        return fd;
    }

private:
    void close_current() noexcept {
        if (current_fd_ >= 0) ::close(current_fd_);
        current_fd_ = -1;
    }
    std::vector<int> fds_;  // fds_[i]: the caller's descriptor of tensor i, -1 for a path or another kind
    std::map<std::string, struct stat> by_path_;  // each path's identity and size when checked
    int current_fd_ = -1;
    std::string current_path_;
};

bool needs_chunk(const std::vector<tensor_source::kind>& kinds) {
    return std::any_of(kinds.begin(), kinds.end(), [](tensor_source::kind k) {
        return k == tensor_source::kind::file || k == tensor_source::kind::callback;
    });
}

// Runs a callback source over [0, size) in pieces of at most chunk.size(), handing each piece to
// `sink(offset, bytes)`. Exceptions from the user's function become errors here.
template <class Buffer, class Sink>
result<void> run_callback(const tensor_source& s, const plan& p, std::size_t i, std::uint64_t out_at,
                          std::size_t chunk, Buffer&& buffer_for, Sink&& sink) {
    for (std::uint64_t done = 0; done < s.size();) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(s.size() - done, chunk));
        std::span<std::byte> buf = buffer_for(done, n);
        result<void> r = [&]() -> result<void> {
            try {
                return s.fill()(done, buf);
            } catch (const std::bad_alloc&) {
                return unexpected(oom("in a tensor source callback"));
            } catch (...) {
                error e;
                e.code = errc::io_error;
                e.detail = "a tensor source callback threw an exception";
                return unexpected(std::move(e));
            }
        }();
        if (!r) {
            error e = std::move(r).error();
            if (e.subject.empty()) {
                e.subject = p.tensors()[i].name;
                e.index = static_cast<std::int64_t>(i);
                e.where = section::data;
                e.offset = out_at + done;
            }
            return unexpected(std::move(e));
        }
        if (auto w = sink(done, buf); !w) return w;
        done += n;
    }
    return {};
}

}  // namespace

// ---- building ------------------------------------------------------------------------------

void writer::failed(const char* what) noexcept {
    if (deferred_) return;  // the first failure is the one to report
    // An error with no strings needs no allocation: this cannot throw.
    error e;
    e.code = errc::out_of_memory;
    deferred_.emplace(std::move(e));
    try {
        deferred_->detail = what;
    } catch (...) {
    }
}

writer& writer::put(std::string_view key, value_type type, std::vector<std::byte> value) noexcept {
    try {
        const auto [it, fresh] = key_index_.try_emplace(std::string(key), kvs_.size());
        if (!fresh) {
            kvs_[it->second].type = type;
            kvs_[it->second].value = std::move(value);
            return *this;
        }
        try {
            kvs_.push_back({it->first, type, std::move(value)});
        } catch (...) {
            key_index_.erase(it);  // keep the index and the records in step
            throw;
        }
    } catch (...) {
        failed("setting a metadata key");
    }
    return *this;
}

// Each setter encodes its value and hands it to put() through put_encoded(), which records an
// allocation failure while encoding as put() records its own.
#define MINFER_SETTER(name, T, tag)                                                             \
    writer& writer::name(std::string_view k, T v) noexcept {                                    \
        return put_encoded(k, value_type::tag, [&] { return scalar(v); });                      \
    }
MINFER_SETTER(set_u8, std::uint8_t, u8)
MINFER_SETTER(set_i8, std::int8_t, i8)
MINFER_SETTER(set_u16, std::uint16_t, u16)
MINFER_SETTER(set_i16, std::int16_t, i16)
MINFER_SETTER(set_u32, std::uint32_t, u32)
MINFER_SETTER(set_i32, std::int32_t, i32)
MINFER_SETTER(set_f32, float, f32)
MINFER_SETTER(set_u64, std::uint64_t, u64)
MINFER_SETTER(set_i64, std::int64_t, i64)
MINFER_SETTER(set_f64, double, f64)
#undef MINFER_SETTER

writer& writer::set_bool(std::string_view k, bool v) noexcept {
    return put_encoded(k, value_type::boolean, [&] { return scalar(static_cast<std::uint8_t>(v ? 1 : 0)); });
}

writer& writer::set_string(std::string_view k, std::string_view v) noexcept {
    return put_encoded(k, value_type::string, [&] {
        std::vector<std::byte> e;
        append_string(e, v);
        return e;
    });
}

void writer::failed(error e) noexcept {
    if (!deferred_) deferred_.emplace(std::move(e));
}

writer& writer::refuse_array(std::string_view k, value_type type, std::optional<value_type> given) noexcept {
    error e;
    e.code = errc::type_mismatch;
    e.where = section::metadata;
    e.subject = k;
    e.expected = static_cast<std::uint32_t>(type);
    // A C++ type with no GGUF tag is reported as the invalid tag 13 (one past the last).
    e.found = given ? static_cast<std::uint32_t>(*given) : 13;
    failed(std::move(e));
    return *this;
}

writer& writer::set_array(std::string_view k, value_type type, std::span<const std::byte> elements) noexcept {
    // value_size is 0 for string and array elements and for unknown tags: refused rather than
    // stored as an empty array (strings have set_strings; nested arrays are not GGUF).
    const std::uint32_t size = value_size(type);
    if (size == 0 || elements.size() % size != 0) {
        error e;
        e.where = section::metadata;
        e.subject = k;
        if (type == value_type::array) {
            e.code = errc::nested_array;
        } else if (size == 0) {
            e.code = errc::bad_value_type;
            e.found = static_cast<std::uint32_t>(type);
            if (type == value_type::string) e.detail = "set_array takes fixed-size elements; strings go through set_strings";
        } else {
            e.code = errc::buffer_size_mismatch;
            e.expected = size;
            e.found = elements.size();
            e.detail = "array elements";
        }
        failed(std::move(e));
        return *this;
    }
    return put_encoded(k, value_type::array, [&] {
        std::vector<std::byte> e;
        append<std::uint32_t>(e, static_cast<std::uint32_t>(type));
        append<std::uint64_t>(e, elements.size() / size);
        append_bytes(e, elements.data(), elements.size());
        return e;
    });
}

writer& writer::set_strings(std::string_view k, std::span<const std::string_view> strings) noexcept {
    return put_encoded(k, value_type::array, [&] {
        std::vector<std::byte> e;
        append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::string));
        append<std::uint64_t>(e, strings.size());
        for (std::string_view s : strings) append_string(e, s);
        return e;
    });
}

writer& writer::set_strings(std::string_view k, std::span<const std::string> strings) noexcept {
    return put_encoded(k, value_type::array, [&] {
        std::vector<std::byte> e;
        append<std::uint32_t>(e, static_cast<std::uint32_t>(value_type::string));
        append<std::uint64_t>(e, strings.size());
        for (const std::string& s : strings) append_string(e, s);
        return e;
    });
}

writer& writer::set_encoded(std::string_view key, value_type type, std::span<const std::byte> value) noexcept {
    return put_encoded(key, type, [&] { return std::vector<std::byte>(value.begin(), value.end()); });
}

writer& writer::set(const kv& record) noexcept {
    return put_encoded(record.key, record.type, [&] {
        std::vector<std::byte> e;
        if (record.type == value_type::string) {
            append<std::uint64_t>(e, record.payload.size());
        } else if (record.type == value_type::array) {
            append<std::uint32_t>(e, static_cast<std::uint32_t>(record.element_type));
            append<std::uint64_t>(e, record.count);
        }
        append_bytes(e, record.payload.data(), record.payload.size());
        return e;
    }, "copying a metadata key");
}

writer& writer::erase(std::string_view k) noexcept {
    try {
        const auto it = key_index_.find(std::string(k));
        if (it == key_index_.end()) return *this;
        const std::size_t gone = it->second;
        kvs_.erase(kvs_.begin() + static_cast<std::ptrdiff_t>(gone));
        key_index_.erase(it);
        for (auto& entry : key_index_)
            if (entry.second > gone) --entry.second;  // the later keys moved up by one
    } catch (...) {
        failed("erasing a metadata key");
    }
    return *this;
}

writer& writer::add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                           tensor_source source) noexcept {
    try {
        tensors_.push_back({std::string(name), type, {ne.begin(), ne.end()}, std::move(source)});
    } catch (...) {
        failed("adding a tensor");
    }
    return *this;
}

writer& writer::add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                           std::span<const std::byte> data) noexcept {
    try {
        return add_tensor(name, type, ne, tensor_source::own({data.begin(), data.end()}));
    } catch (...) {
        failed("adding a tensor");
        return *this;
    }
}

writer& writer::add_zero_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne) noexcept {
    // The size is the shape's, which the plan checks: an invalid shape is reported there.
    shape_facts f{};
    const std::uint64_t n = rules::shape(static_cast<std::uint32_t>(type), ne, f) ? f.n_bytes : 0;
    tensor_source s = tensor_source::zeros(n);
    try {
        tensors_.push_back({std::string(name), type, {ne.begin(), ne.end()}, std::move(s)});
    } catch (...) {
        failed("adding a tensor");
    }
    return *this;
}

// ---- planning ------------------------------------------------------------------------------

std::vector<kv_desc> writer::kv_descs() const {
    std::vector<kv_desc> d;
    d.reserve(kvs_.size());
    for (const kv_record& r : kvs_) d.push_back({r.key, r.type, r.value});
    return d;
}

result<plan> writer::make_plan() const noexcept {
    try {
        if (deferred_) return unexpected(*deferred_);
        const std::vector<kv_desc> kvs = kv_descs();
        std::vector<tensor_desc> ts;
        ts.reserve(tensors_.size());
        for (const tensor_record& t : tensors_) ts.push_back({t.name, t.type, t.ne, t.source.size()});
        return plan::make(kvs, ts, pad_without_tensors_);
    } catch (...) {
        return unexpected(oom("planning"));
    }
}

// ---- serialising ---------------------------------------------------------------------------

namespace {

// The bytes before the data section: header, metadata, tensor table, padding. Sized by the plan.
template <class Kvs, class Tensors>
std::vector<std::byte> encode_head(const plan& p, const Kvs& kvs, const Tensors& tensors) {
    std::vector<std::byte> head;
    head.reserve(static_cast<std::size_t>(p.data_offset()));
    append<std::uint32_t>(head, gguf_magic);
    append<std::uint32_t>(head, gguf_version);
    append<std::int64_t>(head, static_cast<std::int64_t>(tensors.size()));
    append<std::int64_t>(head, static_cast<std::int64_t>(kvs.size()));
    for (const auto& r : kvs) {
        append_string(head, r.key);
        append<std::uint32_t>(head, static_cast<std::uint32_t>(r.type));
        append_bytes(head, r.value.data(), r.value.size());
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const plan::tensor& t = p.tensors()[i];
        append_string(head, t.name);
        append<std::uint32_t>(head, t.n_dims);
        for (std::uint32_t d = 0; d < t.n_dims; ++d) append<std::int64_t>(head, t.ne[d]);
        append<std::uint32_t>(head, static_cast<std::uint32_t>(t.type));
        append<std::uint64_t>(head, t.offset);
    }
    head.resize(static_cast<std::size_t>(p.data_offset()));  // the padding: zeros
    return head;
}

std::size_t chunk_size(const write_options& o) { return std::max(o.chunk_bytes, min_chunk); }

// `found` bytes that must sit in one buffer (the header, or the whole file for to_bytes) but are
// more than any buffer can hold.
error too_large_for_memory(section where, std::uint64_t found, const char* what) {
    error e;
    e.code = errc::size_overflow;
    e.where = where;
    e.expected = static_cast<std::uint64_t>(PTRDIFF_MAX);
    e.found = found;
    e.detail = what;
    return e;
}

}  // namespace

result<void> writer::write(const std::filesystem::path& path, const write_options& options) const noexcept {
    auto written = write_uncommitted(path, options);
    if (!written) return unexpected(std::move(written).error());
    return written->commit();
}

result<atomic_file> writer::write_uncommitted(const std::filesystem::path& path, const write_options& options) const noexcept {
    try {
        auto planned = make_plan();
        if (!planned) return unexpected(std::move(planned).error());
        const plan& p = *planned;
        if (!rules::fits_in_memory(p.data_offset()))
            return unexpected(too_large_for_memory(section::metadata, p.data_offset(), "header and tensor table"));
        opened_sources sources;
        if (auto r = sources.open(tensors_, p); !r) return unexpected(std::move(r).error());
        const std::vector<std::byte> head = encode_head(p, kvs_, tensors_);

        std::vector<tensor_source::kind> kinds;
        kinds.reserve(tensors_.size());
        for (const tensor_record& t : tensors_) kinds.push_back(t.source.what());
        const std::size_t chunk = chunk_size(options);
        std::unique_ptr<std::byte[]> buffer;
        if (needs_chunk(kinds)) {
            buffer.reset(new (std::nothrow) std::byte[chunk]);
            if (!buffer) return unexpected(oom("allocating the copy buffer"));
        }

        auto out = atomic_file::create(path, options.file);
        if (!out) return unexpected(std::move(out).error());
        const int fd = out->fd();
        const std::string target = path.string();
        auto write_failed = [&](const detail::copy_status& s, std::size_t i, std::uint64_t at) {
            error e = io_error(target, "write", s.err);
            if (i < p.tensors().size()) {
                e.index = static_cast<std::int64_t>(i);
                e.subject = p.tensors()[i].name;
            }
            e.offset = at + s.done;
            return unexpected(std::move(e));
        };

        auto report = [&](std::uint64_t written) -> result<void> {
            if (!options.progress) return {};
            try {
                options.progress(written, p.file_size());
                return {};
            } catch (...) {
                return unexpected(io_error(target, "the progress callback threw an exception while writing", 0));
            }
        };
        if (const auto s = detail::write_all(fd, head, 0); !s.ok()) return write_failed(s, SIZE_MAX, 0);
        if (auto r = report(p.data_offset()); !r) return unexpected(std::move(r).error());
        bool kernel = options.kernel_copy;
        for (std::size_t i = 0; i < tensors_.size(); ++i) {
            const tensor_source& s = tensors_[i].source;
            const std::uint64_t at = p.data_offset() + p.tensors()[i].offset;
            switch (s.what()) {
                case tensor_source::kind::zeros: break;  // a hole: ftruncate below gives the size
                case tensor_source::kind::borrowed:
                case tensor_source::kind::owned:
                    if (const auto w = detail::write_all(fd, s.bytes(), at); !w.ok()) return write_failed(w, i, at);
                    detail::start_writeback(fd, at, s.size());
                    break;
                case tensor_source::kind::file: {
                    auto in = sources.fd(s, i, p);
                    if (!in) return unexpected(std::move(in).error());
                    const auto c = detail::copy_range(*in, s.file_offset(), fd, at, s.size(), kernel,
                                                      {buffer.get(), chunk});
                    if (c.ok()) break;
                    if (c.failed == detail::copy_status::what::write) return write_failed(c, i, at);
                    error e = data_error(c.failed == detail::copy_status::what::short_source ? errc::data_truncated
                                                                                           : errc::io_error,
                                         p, i, at + c.done);
                    e.file = source_name(s);
                    e.sys_errno = c.err;
                    e.expected = s.file_offset() + s.size();
                    e.found = s.file_offset() + c.done;
                    e.detail = c.failed == detail::copy_status::what::kernel_copy ? "copy_file_range to " + target
                                                                                  : "read the tensor source";
                    return unexpected(std::move(e));
                }
                case tensor_source::kind::callback: {
                    auto r = run_callback(
                        s, p, i, at, chunk, [&](std::uint64_t, std::size_t n) { return std::span(buffer.get(), n); },
                        [&](std::uint64_t done, std::span<std::byte> bytes) -> result<void> {
                            if (const auto w = detail::write_all(fd, bytes, at + done); !w.ok())
                                return write_failed(w, i, at + done);
                            detail::start_writeback(fd, at + done, bytes.size());
                            return {};
                        });
                    if (!r) return unexpected(std::move(r).error());
                    break;
                }
            }
            if (auto r = report(at + p.tensors()[i].padded_bytes); !r) return unexpected(std::move(r).error());
        }
        // The size the plan says: trailing zero tensors and the last padding become a hole.
        if (::ftruncate(fd, static_cast<off_t>(p.file_size())) != 0) {
            const int err = errno;
            return unexpected(io_error(target, "set the size of", err));
        }
        return std::move(*out);
    } catch (const std::bad_alloc&) {
        return unexpected(oom("writing"));
    } catch (...) {
        return unexpected(oom("writing"));
    }
}

result<std::vector<std::byte>> writer::head_bytes() const noexcept {
    try {
        auto planned = make_plan();
        if (!planned) return unexpected(std::move(planned).error());
        if (!rules::fits_in_memory(planned->data_offset()))
            return unexpected(
                too_large_for_memory(section::metadata, planned->data_offset(), "header and tensor table"));
        return encode_head(*planned, kvs_, tensors_);
    } catch (...) {  // std::bad_alloc, std::length_error
        return unexpected(oom("encoding the header"));
    }
}

result<std::vector<std::byte>> writer::to_bytes(const write_options& options) const noexcept {
    try {
        auto planned = make_plan();
        if (!planned) return unexpected(std::move(planned).error());
        const plan& p = *planned;
        if (!rules::fits_in_memory(p.file_size()))
            return unexpected(too_large_for_memory(section::data, p.file_size(), "the whole file in memory"));
        opened_sources sources;
        if (auto r = sources.open(tensors_, p); !r) return unexpected(std::move(r).error());
        std::vector<std::byte> out = encode_head(p, kvs_, tensors_);
        out.resize(static_cast<std::size_t>(p.file_size()));  // zeros: holes and padding
        const std::size_t chunk = chunk_size(options);
        for (std::size_t i = 0; i < tensors_.size(); ++i) {
            const tensor_source& s = tensors_[i].source;
            const std::uint64_t at = p.data_offset() + p.tensors()[i].offset;
            std::byte* dst = out.data() + at;
            switch (s.what()) {
                case tensor_source::kind::zeros: break;
                case tensor_source::kind::borrowed:
                case tensor_source::kind::owned:
                    if (!s.bytes().empty()) std::memcpy(dst, s.bytes().data(), s.bytes().size());
                    break;
                case tensor_source::kind::file: {
                    auto in = sources.fd(s, i, p);
                    if (!in) return unexpected(std::move(in).error());
                    const auto c = detail::read_all(*in, {dst, static_cast<std::size_t>(s.size())},
                                                    s.file_offset());
                    if (c.ok()) break;
                    error e = data_error(c.failed == detail::copy_status::what::short_source ? errc::data_truncated
                                                                                           : errc::io_error,
                                         p, i, at + c.done);
                    e.file = source_name(s);
                    e.sys_errno = c.err;
                    e.expected = s.file_offset() + s.size();
                    e.found = s.file_offset() + c.done;
                    e.detail = "read the tensor source";
                    return unexpected(std::move(e));
                }
                case tensor_source::kind::callback: {
                    auto r = run_callback(
                        s, p, i, at, chunk, [&](std::uint64_t done, std::size_t n) { return std::span(dst + done, n); },
                        [](std::uint64_t, std::span<std::byte>) -> result<void> { return {}; });
                    if (!r) return unexpected(std::move(r).error());
                    break;
                }
            }
        }
        return out;
    } catch (const std::bad_alloc&) {
        return unexpected(oom("serialising"));
    } catch (...) {  // std::length_error: a size no vector can hold
        return unexpected(oom("serialising"));
    }
}

}  // namespace minfer::gguf

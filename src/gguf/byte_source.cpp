// Byte sources (a mapped file, a buffer), the growing-head read that verifies any source, and the
// local file opener. The remote source lives in minfer::remote.
#include "minfer/gguf/byte_source.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace minfer::gguf {
namespace {

// A local file: mapped (or read) once, every prefix is a slice of it.
class file_source final : public byte_source {
public:
    explicit file_source(mapped_file f) noexcept : file_(std::move(f)) {}
    std::uint64_t size() const noexcept override { return file_.size(); }
    result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        return file_.bytes().first(static_cast<std::size_t>(std::min<std::uint64_t>(n, file_.size())));
    }
    mapped_file take() noexcept override { return std::move(file_); }
    bool whole() const noexcept override { return true; }

private:
    mapped_file file_;
};

// Bytes in memory, copied once into an owned buffer.
class buffer_source final : public byte_source {
public:
    buffer_source(std::unique_ptr<std::byte[]> b, std::size_t n) noexcept : bytes_(std::move(b)), size_(n) {}
    std::uint64_t size() const noexcept override { return size_; }
    result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        return std::span<const std::byte>(bytes_.get(), static_cast<std::size_t>(std::min<std::uint64_t>(n, size_)));
    }
    mapped_file take() noexcept override {
        const std::size_t n = size_;
        size_ = 0;
        return mapped_file::adopt(std::move(bytes_), n);
    }
    bool whole() const noexcept override { return true; }

private:
    std::unique_ptr<std::byte[]> bytes_;
    std::size_t size_;
};

error oom(const char* what) noexcept { return out_of_memory_error(what); }

// A location fetch_heads left alone after an earlier one failed.
error not_fetched() {
    error e;
    e.code = errc::io_error;
    e.detail = "not read: an earlier part of the set failed";
    return e;
}

}  // namespace

result<std::unique_ptr<byte_source>> open_file_source(const std::filesystem::path& path, load_mode mode) noexcept {
    auto f = mapped_file::open(path, mode);
    if (!f) return unexpected(std::move(f).error());
    try {
        return std::unique_ptr<byte_source>(std::make_unique<file_source>(std::move(*f)));
    } catch (const std::bad_alloc&) {
        return unexpected(oom("opening the file"));
    }
}

result<std::unique_ptr<byte_source>> make_buffer_source(std::span<const std::byte> bytes) noexcept {
    try {
        std::unique_ptr<std::byte[]> copy(new std::byte[bytes.empty() ? 1 : bytes.size()]);
        if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
        return std::unique_ptr<byte_source>(std::make_unique<buffer_source>(std::move(copy), bytes.size()));
    } catch (const std::bad_alloc&) {
        return unexpected(oom("copying the buffer"));
    }
}

result<fetched_head> fetch_head(byte_source& src, const head_options& options) noexcept {
    const std::uint64_t size = src.size();
    // A source with every byte at hand is parsed whole: no growing, no second parse.
    std::uint64_t n = src.whole() ? size : std::min(std::max<std::uint64_t>(options.first_read, 64), size);
    if (n > options.max_read) n = options.max_read;
    for (;;) {
        auto head = src.prefix(n);
        if (!head) return unexpected(std::move(head).error());
        if (head->size() != n) {  // a source must give what it was asked or fail; never loop on less
            error e;
            e.code = errc::transfer_failed;
            e.expected = n;
            e.found = head->size();
            e.detail = std::string("the source gave ") + std::to_string(head->size()) + " of " + std::to_string(n) + " bytes";
            return unexpected(std::move(e));
        }
        auto view = file_view::parse_head(*head, size, options.caps);
        if (view || view.error().code != errc::head_incomplete) {
            if (!view) return unexpected(std::move(view).error());
            fetched_head out;
            out.file_size = size;
            out.bytes = src.take();  // the same address: the view stays valid
            out.view = std::move(*view);
            return out;
        }
        // Grow at least twofold, so a head of H bytes takes O(log H) reads and O(H) parse work,
        // and never past what the file has or the budget allows.
        const std::uint64_t need = view.error().expected;
        if (need > options.max_read) {
            error e;
            e.code = errc::fetch_budget_exceeded;
            e.expected = options.max_read;
            e.found = need;
            e.offset = view.error().offset;
            return unexpected(std::move(e));
        }
        std::uint64_t grown = n > UINT64_MAX / 2 ? UINT64_MAX : 2 * n;
        if (options.max_growth > 0 && grown - n > options.max_growth) grown = n + options.max_growth;
        n = std::min({std::max(need, grown), size, options.max_read});
    }
}

std::vector<result<fetched_head>> source_opener::fetch_heads(std::span<const std::string> locations,
                                                             const head_options& options) noexcept {
    std::vector<result<fetched_head>> out;
    try {
        out.reserve(locations.size());
        // In order, stopping at the first failure: model::open reports the first failed part, and
        // a part 1 claiming 65,535 parts with none beside it costs one attempt, not 65,534.
        bool failed = false;
        for (const std::string& at : locations) {
            if (failed) {
                out.emplace_back(unexpected(not_fetched()));
                continue;
            }
            auto src = open(at);
            if (!src) {
                out.emplace_back(unexpected(std::move(src).error()));
                failed = true;
                continue;
            }
            out.push_back(fetch_head(**src, options));
            failed = !out.back().has_value();
        }
    } catch (const std::bad_alloc&) {
        out.clear();
        try {  // clear() kept the capacity reserved above, if the reserve got that far
            out.emplace_back(unexpected(oom("opening the parts")));
        } catch (...) {  // an empty answer: the caller reports the parts as unreadable
        }
    }
    return out;
}

std::string file_opener::file_name(const std::string& location) const {
    return std::filesystem::path(location).filename().string();
}

std::string file_opener::sibling(const std::string& location, const std::string& name) const {
    return (std::filesystem::path(location).parent_path() / name).string();
}

result<std::unique_ptr<byte_source>> file_opener::open(const std::string& location) noexcept {
    try {
        return open_file_source(std::filesystem::path(location), mode_);
    } catch (...) {  // the path's copy
        return unexpected(oom("opening a file"));
    }
}

}  // namespace minfer::gguf

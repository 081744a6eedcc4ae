// Heads of any bytes (file_view::parse_head, fetch_head): a head either gives the whole file's
// verdict — the same error in every field, or a view with the same facts — or asks for more bytes
// than it had (head_incomplete). A remote file's verdict rests on this. Shares fuzz_parse's corpus.
#include <algorithm>
#include <cstring>
#include <memory>

#include "fuzz_common.hpp"
#include "minfer/gguf/byte_source.hpp"

namespace {
using namespace minfer;

bool same(const gguf::error& a, const gguf::error& b) {
    return a.code == b.code && a.where == b.where && a.offset == b.offset && a.expected == b.expected &&
           a.found == b.found && a.index == b.index && a.item == b.item && a.subject == b.subject &&
           a.detail == b.detail && a.shape == b.shape;
}

bool same(const gguf::file_view& a, const gguf::file_view& b) {
    return a.version() == b.version() && a.alignment() == b.alignment() && a.data_offset() == b.data_offset() &&
           a.data_size() == b.data_size() && a.metadata().size() == b.metadata().size() &&
           a.tensors().size() == b.tensors().size() && a.file_size() == b.file_size();
}

void check_head(std::span<const std::byte> file, std::uint64_t L, const gguf::result<gguf::file_view>& whole) {
    auto h = gguf::file_view::parse_head(file.first(static_cast<std::size_t>(L)), file.size());
    if (!h && h.error().code == gguf::errc::head_incomplete) {
        fuzz::require(L < file.size() && h.error().expected > L && h.error().expected <= file.size() &&
                      h.error().found == L);
        return;
    }
    if (!whole) {
        fuzz::require(!h && same(whole.error(), h.error()));
        return;
    }
    fuzz::require(h.has_value() && same(*whole, *h));
    fuzz::consume(fuzz::touch_all(*h));  // every view of a head is in bounds of the head
}

// A source that copies each prefix into a fresh buffer, as a remote reader would.
class copy_source final : public gguf::byte_source {
public:
    explicit copy_source(std::span<const std::byte> f) : file_(f) {}
    std::uint64_t size() const noexcept override { return file_.size(); }
    gguf::result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        n = std::min<std::uint64_t>(n, file_.size());
        buf_.reset(new std::byte[n + 1]);
        if (n > 0) std::memcpy(buf_.get(), file_.data(), n);
        n_ = n;
        return std::span<const std::byte>(buf_.get(), n);
    }
    gguf::mapped_file take() noexcept override { return gguf::mapped_file::adopt(std::move(buf_), n_); }
    bool whole() const noexcept override { return false; }

private:
    std::span<const std::byte> file_;
    std::unique_ptr<std::byte[]> buf_;
    std::size_t n_ = 0;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = std::as_bytes(std::span(data, size));
    auto whole = gguf::file_view::parse(file);
    const std::uint64_t n = size;
    const std::uint64_t pick = size > 0 ? (static_cast<std::uint64_t>(data[size - 1]) * n) / 255 : 0;
    for (std::uint64_t L : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{24}, n / 3, n / 2, n - n / 8, pick,
                            n > 0 ? n - 1 : 0, n})
        check_head(file, std::min(L, n), whole);
    copy_source src(file);
    gguf::head_options o;
    o.first_read = 64;
    auto h = gguf::fetch_head(src, o);
    if (!whole) {
        fuzz::require(!h && same(whole.error(), h.error()));
    } else {
        fuzz::require(h.has_value() && same(*whole, h->view));
        fuzz::consume(fuzz::touch_all(h->view));
    }
    return 0;
}

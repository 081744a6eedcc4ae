#pragma once
// Test support: byte sources that behave like a remote file (not whole(): each prefix() "fetches"
// what is missing), counting what they hand out, and an opener over named in-memory files. Used to
// prove that a head gives the whole file's verdict (file_view::parse_head, fetch_head) without a
// network.
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "gguf_bytes.hpp"
#include "minfer/gguf/byte_source.hpp"

namespace minfer::test {

class growing_source final : public gguf::byte_source {
public:
    explicit growing_source(std::vector<std::byte> file, std::uint64_t short_by = 0)
        : file_(std::move(file)), short_by_(short_by) {}
    std::uint64_t size() const noexcept override { return file_.size(); }
    gguf::result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        ++calls;
        if (n > file_.size()) n = file_.size();
        if (n > have_) {
            fetched += n - have_;
            have_ = n;
        }
        // A fresh buffer each time, as a remote reader that reallocates: stale spans would be caught by ASan.
        const std::uint64_t give = n > short_by_ ? n - short_by_ : 0;
        buf_.reset(new std::byte[give == 0 ? 1 : give]);
        if (give > 0) std::memcpy(buf_.get(), file_.data(), give);
        given_ = give;
        largest = std::max(largest, n);
        return std::span<const std::byte>(buf_.get(), static_cast<std::size_t>(give));
    }
    gguf::mapped_file take() noexcept override { return gguf::mapped_file::adopt(std::move(buf_), given_); }
    bool whole() const noexcept override { return false; }

    int calls = 0;             ///< prefix() calls
    std::uint64_t fetched = 0; ///< bytes "fetched": each byte counted once
    std::uint64_t largest = 0; ///< the longest prefix asked

private:
    std::vector<std::byte> file_;
    std::uint64_t short_by_;  ///< give this many bytes fewer than asked (a broken source)
    std::uint64_t have_ = 0;
    std::unique_ptr<std::byte[]> buf_;
    std::uint64_t given_ = 0;
};

/// Named in-memory files behind "mem://dir/name" locations; absent names are ENOENT (or a given
/// error), like a file system or a server.
class memory_opener final : public gguf::source_opener {
public:
    std::map<std::string, std::vector<std::byte>> files;  ///< location -> bytes
    std::map<std::string, gguf::error> failures;          ///< location -> the error open() returns
    int opened = 0;

    std::string file_name(const std::string& location) const override {
        return location.substr(location.rfind('/') + 1);
    }
    std::string sibling(const std::string& location, const std::string& name) const override {
        return location.substr(0, location.rfind('/') + 1) + name;
    }
    gguf::result<std::unique_ptr<gguf::byte_source>> open(const std::string& location) noexcept override {
        ++opened;
        if (auto f = failures.find(location); f != failures.end()) return gguf::unexpected(f->second);
        auto it = files.find(location);
        if (it == files.end()) {
            gguf::error e;
            e.code = gguf::errc::io_error;
            e.sys_errno = ENOENT;
            e.file = location;
            e.detail = "open";
            return gguf::unexpected(std::move(e));
        }
        return std::unique_ptr<gguf::byte_source>(std::make_unique<growing_source>(it->second));
    }
};

// ---- the property: a head gives the whole file's verdict or asks for more ----------------------

// Every field an error carries, for an exact comparison.
inline ::testing::AssertionResult same_error(const gg::error& a, const gg::error& b) {
    if (a.code == b.code && a.where == b.where && a.offset == b.offset && a.expected == b.expected &&
        a.found == b.found && a.index == b.index && a.item == b.item && a.subject == b.subject &&
        a.detail == b.detail && a.shape == b.shape)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "whole file: " << describe(a) << "\nhead: " << describe(b);
}

inline ::testing::AssertionResult same_view(const gg::file_view& a, const gg::file_view& b) {
    if (a.version() != b.version() || a.alignment() != b.alignment() || a.data_offset() != b.data_offset() ||
        a.data_size() != b.data_size() || a.file_size() != b.file_size())
        return ::testing::AssertionFailure() << "format facts differ";
    if (a.metadata().size() != b.metadata().size()) return ::testing::AssertionFailure() << "KV counts differ";
    for (std::size_t i = 0; i < a.metadata().size(); ++i) {
        const gg::kv &x = a.metadata()[i], &y = b.metadata()[i];
        if (x.key != y.key || x.type != y.type || x.count != y.count || x.offset != y.offset ||
            !std::equal(x.payload.begin(), x.payload.end(), y.payload.begin(), y.payload.end()))
            return ::testing::AssertionFailure() << "KV " << i << " differs";
    }
    if (a.tensors().size() != b.tensors().size()) return ::testing::AssertionFailure() << "tensor counts differ";
    for (std::size_t i = 0; i < a.tensors().size(); ++i) {
        const gg::tensor_info &x = a.tensors()[i], &y = b.tensors()[i];
        if (x.name != y.name || x.type != y.type || x.ne != y.ne || x.offset != y.offset || x.n_bytes != y.n_bytes)
            return ::testing::AssertionFailure() << "tensor " << i << " differs";
    }
    return ::testing::AssertionSuccess();
}

// The head of `file` of length L against the whole file's parse.
inline void expect_head_agrees(const bytes& file, std::uint64_t L, const gg::result<gg::file_view>& whole) {
    SCOPED_TRACE(std::string("head of ") + std::to_string(L) + " of " + std::to_string(file.size()) + " bytes");
    const std::span<const std::byte> head = std::span(file).first(static_cast<std::size_t>(L));
    auto h = gg::file_view::parse_head(head, file.size());
    if (!h && h.error().code == gg::errc::head_incomplete) {
        ASSERT_LT(L, file.size()) << "a head that is the whole file is always decided";
        EXPECT_GT(h.error().expected, L) << "asks for more than it had";
        EXPECT_LE(h.error().expected, file.size()) << "never for more than the file has";
        EXPECT_EQ(h.error().found, L);
        return;
    }
    if (!whole) {
        ASSERT_FALSE(h.has_value()) << "the head parsed, the whole file did not: " << describe(whole.error());
        EXPECT_TRUE(same_error(whole.error(), h.error()));
        return;
    }
    ASSERT_TRUE(h.has_value()) << "the whole file parsed, the head did not: " << describe(h.error());
    EXPECT_TRUE(same_view(*whole, *h));
    EXPECT_EQ(h->complete(), L == file.size());
    EXPECT_LE(whole->data_offset(), std::max<std::uint64_t>(L, whole->data_offset()));
    for (const gg::tensor_info& t : h->tensors()) {
        const auto d = h->tensor_data(t);
        if (whole->data_offset() + t.offset + t.n_bytes <= L) {
            EXPECT_EQ(d.size(), t.n_bytes);
            EXPECT_EQ(d.data(), head.data() + whole->data_offset() + t.offset);
        } else {
            EXPECT_TRUE(d.empty()) << "tensor " << t.name << " outside the head has bytes";
        }
    }
}

}  // namespace minfer::test

#pragma once
// byte_source: where a GGUF file's bytes come from: a mapped local file, a buffer, or a remote
// reader (minfer::remote, its own target, so the loader stays free of network code). The parser
// only ever reads the file's head [0, data_offset); a source hands out a growing prefix, and
// fetch_head grows it until file_view::parse_head decides, so a remote file is verified from its
// head alone, with the verdict its whole local copy would get.
//
// source_opener names a model's files (the entry, and for a split set the parts beside it) and
// makes sources for them; model::open(source_opener&, …) runs the same set checks over any opener.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

class byte_source {
public:
    virtual ~byte_source() = default;
    /// The size of the whole file in bytes (a file's size, or the total of a server's Content-Range).
    virtual std::uint64_t size() const noexcept = 0;
    /// The first n bytes of the file (n ≤ size()), contiguous, reading (fetching) what is missing.
    /// The span is valid until the next prefix() or take(). @returns the source's I/O errors
    /// (io_error, http_status, range_ignored, bad_content_range, transfer_failed, fetch_budget_exceeded).
    virtual result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept = 0;
    /// The bytes read so far, as a mapped_file the model keeps (at the address prefix() gave last,
    /// so a view parsed from that span stays valid). The source is empty afterwards.
    virtual mapped_file take() noexcept = 0;
    /// Whether every prefix is already at hand (a mapping, a buffer): fetch_head then asks for the
    /// whole file at once instead of growing a head.
    virtual bool whole() const noexcept = 0;
};

/// A local file, mapped (or read, load_mode::read). @returns mapped_file::open's errors.
result<std::unique_ptr<byte_source>> open_file_source(const std::filesystem::path& path,
                                                      load_mode mode = load_mode::map) noexcept;
/// Bytes in memory (tests, embedded models). @returns out_of_memory.
result<std::unique_ptr<byte_source>> make_buffer_source(std::span<const std::byte> bytes) noexcept;

struct head_options {
    limits caps{};                           ///< the parse's caps
    std::uint64_t first_read = 256 * 1024;   ///< the first head asked of a growing source
    std::uint64_t max_read = UINT64_MAX;     ///< the most bytes one head may take (a fetch budget)
    /// The most bytes one step may add to a growing head (0: none; each step doubles the head).
    /// Bounds what is read past the head's end to this much, at the cost of more requests for a
    /// large head (assemble: 1 MiB, so a remote model costs its head plus the tensors taken plus
    /// less than 1 MiB).
    std::uint64_t max_growth = 0;
};

/// A file's verified head: the bytes read (the whole file for a whole() source), the file's size,
/// and the view parsed from those bytes (it points into `bytes`).
struct fetched_head {
    mapped_file bytes;
    std::uint64_t file_size = 0;
    file_view view;
};

/// Read the shortest head of `src` that decides the parse, growing it (at least doubling) from
/// first_read, then take the bytes. @returns the parse's error (the whole file's verdict), the
/// source's I/O error, or fetch_budget_exceeded when the head needs more than max_read bytes.
result<fetched_head> fetch_head(byte_source& src, const head_options& options) noexcept;

class source_opener {
public:
    virtual ~source_opener() = default;
    /// The file name at `location` (a path's last component, a URL's last path segment): split
    /// names are read from it.
    virtual std::string file_name(const std::string& location) const = 0;
    /// `location` with its file name replaced by `name`: where the other parts of a set are.
    virtual std::string sibling(const std::string& location, const std::string& name) const = 0;
    /// How to read heads from this opener's sources (the first read, a per-head cap), for a parse
    /// with `caps`. model::open asks once and uses it for every part. By default: head_options{caps}.
    virtual head_options head(const limits& caps) const {
        head_options o;
        o.caps = caps;
        return o;
    }
    /// A source for one location. A location that does not exist is io_error with sys_errno ENOENT
    /// (or http_status 404/410): for a part of a set, model::open reports it as split_part_missing.
    virtual result<std::unique_ptr<byte_source>> open(const std::string& location) noexcept = 0;
    /// The heads of several locations, in order; by default one after another (a remote opener
    /// fetches them in parallel). Each result carries its own error. After the first failure no
    /// further location is started (their results are io_error "not read"): the failures before
    /// it in order are real, so a set claiming 65,535 parts costs a few attempts, not 65,534.
    virtual std::vector<result<fetched_head>> fetch_heads(std::span<const std::string> locations,
                                                          const head_options& options) noexcept;
};

/// Local files: paths, mapped or read.
class file_opener final : public source_opener {
public:
    explicit file_opener(load_mode mode = load_mode::map) noexcept : mode_(mode) {}
    std::string file_name(const std::string& location) const override;
    std::string sibling(const std::string& location, const std::string& name) const override;
    result<std::unique_ptr<byte_source>> open(const std::string& location) noexcept override;

private:
    load_mode mode_;
};

}  // namespace minfer::gguf

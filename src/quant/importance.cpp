// The importance-matrix reader: llama-quantize's load_imatrix / load_legacy_imatrix /
// prepare_imatrix (tools/quantize/quantize.cpp), reproduced value for value, over a file read whole
// up to a cap. Both formats are first reduced to raw entries (a name, the sums as file bytes, and
// either per-matrix counts or one legacy call count); every structural check is made on all of
// them, as llama-quantize refuses a malformed file before it filters; then the filter runs, and only
// the entries kept are divided into weights (so an excluded entry costs no memory).
#include "minfer/quant/importance.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <utility>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"
#include "minfer/quant/errors.hpp"

namespace minfer::quant {
namespace {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

// The most read. llama-imatrix's GGUF files hold in_sum2, in_sum and stats per tensor: a model with
// hundreds of experts per layer (Kimi K2: 384 × 7168 sums for each of gate and up, in 60 layers)
// reaches a few GiB. Larger is refused before a byte is read.
constexpr std::uint64_t max_file_bytes = std::uint64_t{16} << 30;

// The most entries taken. A model has a few per layer and per expert tensor (Kimi K2, 61 layers, a
// few hundred); a file of many tiny entries would otherwise cost ten times its size in bookkeeping
// (a name and two containers per entry). With the cap, the reader's memory is at most about twice
// the file (the weights are as many floats as the file's sums) plus a bounded overhead.
constexpr std::uint64_t max_entries = std::uint64_t{1} << 16;

// llama_model_kv_override::val_str is char[128]: llama-quantize strncpy's 127 bytes into it, so its
// string keys stop at the first NUL and after 127 bytes.
std::string kv_text(std::string_view s) {
    s = s.substr(0, std::min(s.find('\0'), s.size()));
    return std::string(s.substr(0, std::min<std::size_t>(s.size(), 127)));
}

// One entry as stored, before filtering. sums are nval little-endian f32 at file offset
// sums_offset. GGUF: counts holds n_mat f32 (one per matrix, ne0 = nval / n_mat sums each);
// legacy: ncall divides every sum.
struct raw_entry {
    std::span<const std::byte> sums;
    std::uint64_t sums_offset = 0;
    std::span<const std::byte> counts;
    std::uint64_t n_mat = 1;
    bool legacy = false;
    std::int32_t ncall = 0;
};

float load_f32(const std::byte* p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

std::int32_t load_i32(const std::byte* p) {
    std::int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

error make_error(errc code, const std::string& file, std::uint64_t offset, std::string_view subject, std::string detail,
                 gguf::section where = gguf::section::data) {
    error e;
    e.code = code;
    e.where = where;
    e.file = file;
    e.offset = offset;
    e.subject = subject;
    e.detail = std::move(detail);
    return e;
}

struct parsed {
    std::map<std::string, raw_entry> entries;  // sorted, unique (a repeated legacy name: the last one)
    std::string dataset;
    bool has_dataset = false;
    std::int32_t chunks = 0;
};

// ---- the legacy binary format (llama-imatrix --output-format dat) ----------------------------------
//
//   i32 n_entries (>= 1)
//   n_entries × { i32 len, len bytes name, i32 ncall, i32 nval (>= 1), nval × f32 }
//   optionally: i32 chunk count, i32 dataset length, that many bytes  (anything after is ignored)
//
// llama-quantize reads it with an ifstream and trusts every length; here each is checked against
// the bytes left before it is used. Where llama-quantize would crash or read an uninitialised
// length (a negative length, a trailer cut inside its numbers or its name), this is an error.
class legacy_reader {
public:
    legacy_reader(std::span<const std::byte> b, const std::string& file) : b_(b), file_(file) {}

    result<parsed> read() {
        parsed out;
        if (auto r = need(4, [] { return std::string("the entry count"); }, {}); !r) return unexpected(r.error());
        const std::int32_t n_entries = i32();
        if (n_entries < 1)
            return unexpected(bad(0, {}, "the entry count is " + std::to_string(n_entries) + ", at least 1 is needed"));
        if (static_cast<std::uint64_t>(n_entries) > max_entries)
            return unexpected(bad(0, {}, "the entry count is " + std::to_string(n_entries) + ", more than the " +
                                             std::to_string(max_entries) + " this reader takes (a model has a few per layer)"));
        for (std::int32_t i = 0; i < n_entries; ++i) {
            // Descriptions are built only for an error: this loop may run 65536 times.
            auto which = [i] { return "entry " + std::to_string(i); };
            const std::uint64_t len_at = pos_;
            if (auto r = need(4, [&] { return "the name length of " + which(); }, {}); !r) return unexpected(r.error());
            const std::int32_t len = i32();
            if (len < 0)
                return unexpected(bad(len_at, {}, "the name length of " + which() + " is " + std::to_string(len)));
            if (auto r = need(static_cast<std::uint64_t>(len), [&] { return "the name of " + which(); }, {}); !r)
                return unexpected(r.error());
            // llama-quantize builds the name from a NUL-terminated buffer: it ends at the first NUL.
            std::string_view raw(reinterpret_cast<const char*>(b_.data() + pos_), static_cast<std::size_t>(len));
            std::string name(raw.substr(0, std::min(raw.find('\0'), raw.size())));
            pos_ += static_cast<std::uint64_t>(len);
            if (auto r = need(8, [] { return std::string("the call and value counts"); }, name); !r) return unexpected(r.error());
            raw_entry e;
            e.legacy = true;
            e.ncall = i32();
            const std::uint64_t nval_at = pos_;
            const std::int32_t nval = i32();
            if (nval < 1)
                return unexpected(bad(nval_at, name, "its value count is " + std::to_string(nval) + ", at least 1 is needed"));
            const std::uint64_t bytes = static_cast<std::uint64_t>(nval) * 4;
            if (auto r = need(bytes, [nval] { return "its " + std::to_string(nval) + " values"; }, name); !r)
                return unexpected(r.error());
            e.sums = b_.subspan(static_cast<std::size_t>(pos_), static_cast<std::size_t>(bytes));
            e.sums_offset = pos_;
            pos_ += bytes;
            // A name seen again replaces the earlier entry whole, as llama-quantize's map does.
            out.entries.insert_or_assign(std::move(name), e);
        }
        if (pos_ < b_.size()) {  // the trailer is optional, but once begun it must be whole
            if (auto r = need(4, [] { return std::string("the chunk count after the entries"); }, {}); !r)
                return unexpected(r.error());
            out.chunks = i32();
            const std::uint64_t len_at = pos_;
            if (auto r = need(4, [] { return std::string("the dataset name's length"); }, {}); !r) return unexpected(r.error());
            const std::int32_t len = i32();
            if (len < 0)
                return unexpected(bad(len_at, {}, "the dataset name's length is " + std::to_string(len)));
            if (auto r = need(static_cast<std::uint64_t>(len), [] { return std::string("the dataset name"); }, {}); !r)
                return unexpected(r.error());
            out.dataset = kv_text({reinterpret_cast<const char*>(b_.data() + pos_), static_cast<std::size_t>(len)});
            out.has_dataset = true;
        }
        return out;
    }

private:
    template <class Describe>
    result<void> need(std::uint64_t n, Describe&& what, std::string_view subject) const {
        const std::uint64_t left = b_.size() - pos_;
        if (n <= left) return {};
        error e = make_error(errc::truncated, file_, pos_, subject, what());
        e.expected = n;
        e.found = left;
        return unexpected(std::move(e));
    }
    error bad(std::uint64_t at, std::string_view subject, std::string detail) const {
        return make_error(quant::codes::bad_imatrix, file_, at, subject, std::move(detail));
    }
    std::int32_t i32() {
        const std::int32_t v = load_i32(b_.data() + pos_);
        pos_ += 4;
        return v;
    }

    std::span<const std::byte> b_;
    const std::string& file_;
    std::uint64_t pos_ = 0;
};

// ---- the GGUF format (llama-imatrix's default) ------------------------------------------------------
//
// Keys imatrix.datasets (strings), imatrix.chunk_count (u32), imatrix.chunk_size (u32), all three
// required; per entry NAME a tensor NAME.in_sum2 (f32, ne[0] sums × n_mat matrices) and NAME.counts
// (f32, n_mat: the tokens each matrix saw). Other tensors (NAME.in_sum, NAME.stats) are ignored.
// llama-quantize reads the sums and counts as float whatever their type and the counts up to
// in_sum2's ne[1] whatever their size: here both must be f32, in_sum2 at most 2-D and the counts
// exactly ne[1].
result<parsed> read_gguf(std::span<const std::byte> bytes, const std::string& file) {
    auto view = gguf::file_view::parse(bytes);
    if (!view) {
        error e = view.error();
        e.file = file;
        return unexpected(std::move(e));
    }
    // Errors about keys are in the metadata, about the pairing and shapes in the tensor table.
    auto bad = [&](std::uint64_t at, std::string_view subject, std::string detail,
                   gguf::section where = gguf::section::tensor_info) {
        return unexpected(make_error(quant::codes::bad_imatrix, file, at, subject, std::move(detail), where));
    };
    constexpr auto meta = gguf::section::metadata;
    if (view->tensors().empty()) return bad(0, {}, "it holds no tensors", gguf::section::header);

    parsed out;
    const gguf::kv* datasets = view->find("imatrix.datasets");
    const gguf::kv* chunk_count = view->find("imatrix.chunk_count");
    const gguf::kv* chunk_size = view->find("imatrix.chunk_size");
    for (auto [kv, key] : {std::pair{datasets, "imatrix.datasets"}, std::pair{chunk_count, "imatrix.chunk_count"},
                           std::pair{chunk_size, "imatrix.chunk_size"}})
        if (kv == nullptr)
            return bad(0, {}, std::string("the key ") + key +
                                  " is missing (llama-quantize needs imatrix.datasets, imatrix.chunk_count and "
                                  "imatrix.chunk_size)",
                       meta);
    // gguf_get_val_u32 asserts the type: anything else stops llama-quantize.
    for (const gguf::kv* kv : {chunk_count, chunk_size})
        if (!kv->get<std::uint32_t>())
            return bad(kv->offset, {}, "the key " + std::string(kv->key) + " is not a u32", meta);
    // gguf_get_arr_str asserts string items; a plain string counts as one (gguf_get_arr_n says 1).
    if (datasets->type == gguf::value_type::string) {
        out.dataset = kv_text(*datasets->get<std::string_view>());
        out.has_dataset = true;
    } else if (datasets->is_array() && datasets->element_type == gguf::value_type::string) {
        auto a = datasets->get<gguf::array_view>();
        if (!a) return bad(datasets->offset, {}, "the key imatrix.datasets cannot be read", meta);
        auto strings = a->strings();
        if (!strings.empty() && strings.begin() != strings.end()) {
            out.dataset = kv_text(*strings.begin());
            out.has_dataset = true;
        }
    } else {
        return bad(datasets->offset, {}, "the key imatrix.datasets is not a string array", meta);
    }
    // llama-quantize keeps the u32 in an int.
    out.chunks = static_cast<std::int32_t>(*chunk_count->get<std::uint32_t>());

    struct pair_of {
        const gguf::tensor_info* sums = nullptr;
        const gguf::tensor_info* counts = nullptr;
    };
    // Four tensors an entry at most (in_sum2, counts, and llama-imatrix's in_sum and stats).
    if (view->tensors().size() > 4 * max_entries)
        return bad(0, {}, std::to_string(view->tensors().size()) + " tensors, more than the " +
                              std::to_string(4 * max_entries) + " of the " + std::to_string(max_entries) +
                              " entries this reader takes (a model has a few per layer)");
    std::map<std::string_view, pair_of> pairs;
    constexpr std::string_view sums_suffix = ".in_sum2", counts_suffix = ".counts";
    for (const gguf::tensor_info& t : view->tensors()) {
        const std::string_view n = t.name;
        if (n.ends_with(sums_suffix))
            pairs[n.substr(0, n.size() - sums_suffix.size())].sums = &t;
        else if (n.ends_with(counts_suffix))
            pairs[n.substr(0, n.size() - counts_suffix.size())].counts = &t;
    }
    if (pairs.size() > max_entries)
        return bad(0, {}, std::to_string(pairs.size()) + " entries, more than the " + std::to_string(max_entries) +
                              " this reader takes (a model has a few per layer)", gguf::section::tensor_info);
    for (const auto& [name, p] : pairs) {
        if (p.sums == nullptr) return bad(p.counts->info_offset, name, "its in_sum2 tensor is missing");
        if (p.counts == nullptr) return bad(p.sums->info_offset, name, "its counts tensor is missing");
        for (const gguf::tensor_info* t : {p.sums, p.counts})
            if (t->type != gguf::tensor_type::f32)
                return bad(t->info_offset, name,
                           std::string(t->name) + " is " + std::string(gguf::to_string(t->type)) + ", f32 is needed");
        if (p.sums->ne[2] != 1 || p.sums->ne[3] != 1)
            return bad(p.sums->info_offset, name, "its in_sum2 tensor has more than 2 dimensions");
        if (p.sums->n_elements == 0) return bad(p.sums->info_offset, name, "its in_sum2 tensor is empty");
        const auto n_mat = static_cast<std::uint64_t>(p.sums->ne[1]);
        if (p.counts->n_elements != n_mat)
            return bad(p.counts->info_offset, name,
                       "its counts tensor has " + std::to_string(p.counts->n_elements) + " values for " +
                           std::to_string(n_mat) + " matrices");
        raw_entry e;
        e.sums = view->tensor_data(*p.sums);
        e.sums_offset = view->data_offset() + p.sums->offset;
        e.counts = view->tensor_data(*p.counts);
        e.n_mat = n_mat;
        out.entries.emplace(std::string(name), e);
    }
    return out;
}

bool kept(std::string_view name, const importance_filter& f) {
    auto contains = [&](const std::vector<std::string>& patterns) {
        return std::any_of(patterns.begin(), patterns.end(),
                           [&](const std::string& p) { return name.find(p) != std::string_view::npos; });
    };
    if (!f.include.empty() && !contains(f.include)) return false;
    return !contains(f.exclude);
}

// load_imatrix's division: GGUF, per matrix, sum / count, or 1 for a matrix that saw no token
// (count <= 0, or NaN); legacy, every sum / ncall when ncall > 0, else the sums as they are. The
// float operations are llama-quantize's (a float divided by a float, or by an int converted to
// float). A weight that is not finite would reach the quantizer's searches: refused.
result<std::vector<float>> weights(const std::string& name, const raw_entry& e, const std::string& file) {
    const std::size_t n = e.sums.size() / 4;
    std::vector<float> v(n);
    const std::size_t ne0 = n / static_cast<std::size_t>(e.n_mat);
    for (std::size_t i = 0; i < n; ++i) {
        const float sum = load_f32(e.sums.data() + 4 * i);
        if (e.legacy) {
            v[i] = e.ncall > 0 ? sum / static_cast<float>(e.ncall) : sum;
        } else {
            const float count = load_f32(e.counts.data() + 4 * (i / ne0));
            v[i] = count > 0.0f ? sum / count : 1.0f;
        }
        if (!std::isfinite(v[i]))
            return unexpected(make_error(quant::codes::bad_imatrix, file, e.sums_offset + 4 * i, name,
                                         "weight " + std::to_string(i) + " is not finite"));
    }
    return v;
}

result<importance_matrix> read(const std::filesystem::path& path, const importance_filter& filter) {
    const std::string file = path.string();
    // Mapped, not read: the file costs address space, not memory, and only the weights of the
    // entries kept are allocated (a few GiB of experts' sums, filtered to one layer, stay on disk).
    auto mapped = gguf::mapped_file::open(path);
    if (!mapped) return unexpected(mapped.error());
    const std::span<const std::byte> span = mapped->bytes();
    if (span.size() > max_file_bytes) {
        error e = make_error(errc::input_too_large, file, 0, {}, "an importance matrix", gguf::section::file);
        e.expected = max_file_bytes;
        e.found = span.size();
        return unexpected(std::move(e));
    }
    // llama-quantize tries the GGUF loader first and falls back to the legacy reader when it fails;
    // here the magic decides, so a damaged GGUF file is reported as one.
    const bool is_gguf = span.size() >= 4 && std::memcmp(span.data(), "GGUF", 4) == 0;
    auto p = is_gguf ? read_gguf(span, file) : legacy_reader(span, file).read();
    if (!p) return unexpected(p.error());

    importance_matrix m;
    m.file = kv_text(file);
    m.dataset = std::move(p->dataset);
    m.has_dataset = p->has_dataset;
    m.chunks_count = p->chunks;
    m.entries.reserve(p->entries.size());
    for (const auto& [name, e] : p->entries) {
        if (!kept(name, filter)) continue;
        auto v = weights(name, e, file);
        if (!v) return unexpected(v.error());
        m.entries.push_back({name, std::move(*v)});
    }
    return m;
}

}  // namespace

const importance_entry* importance_matrix::find(std::string_view tensor) const noexcept {
    auto it = std::lower_bound(entries.begin(), entries.end(), tensor,
                               [](const importance_entry& e, std::string_view n) { return std::string_view(e.name) < n; });
    return it != entries.end() && it->name == tensor ? &*it : nullptr;
}

result<importance_matrix> read_importance(const std::filesystem::path& path, const importance_filter& filter) noexcept {
    try {
        return read(path, filter);
    } catch (...) {  // std::bad_alloc, or std::length_error from a string or vector: memory either way
        return unexpected(gguf::out_of_memory_error("reading an importance matrix"));
    }
}

}  // namespace minfer::quant

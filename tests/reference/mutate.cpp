#include "mutate.hpp"

#include <cstring>
#include <iterator>
#include <sstream>

namespace minfer::reference {

std::string_view to_string(field_kind k) noexcept {
    switch (k) {
        case field_kind::magic: return "magic";
        case field_kind::version: return "version";
        case field_kind::count: return "count";
        case field_kind::length: return "length";
        case field_kind::value_type: return "value type";
        case field_kind::array_count: return "array count";
        case field_kind::n_dims: return "n_dims";
        case field_kind::dim: return "dim";
        case field_kind::tensor_type: return "tensor type";
        case field_kind::tensor_offset: return "tensor offset";
        case field_kind::bytes: return "bytes";
        case field_kind::payload: return "payload";
        case field_kind::boolean: return "bool";
    }
    return "?";
}

namespace {

class walker {
public:
    walker(const std::vector<std::byte>& b, field_map& m) : b_(b), m_(m) {}

    template <class T>
    T take(field_kind k) {
        T v{};
        std::memcpy(&v, b_.data() + at_, sizeof v);
        m_.fields.push_back({at_, sizeof(T), k});
        at_ += sizeof v;
        return v;
    }
    void skip(std::uint64_t n, field_kind k) {
        if (n > 0) m_.fields.push_back({at_, static_cast<std::uint32_t>(n), k});
        at_ += n;
    }
    void string() { skip(take<std::uint64_t>(field_kind::length), field_kind::bytes); }
    std::uint64_t at() const { return at_; }

private:
    const std::vector<std::byte>& b_;
    field_map& m_;
    std::uint64_t at_ = 0;
};

constexpr std::uint32_t fixed_size(std::uint32_t t) {
    constexpr std::uint32_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < 13 ? sizes[t] : 0;
}

std::uint64_t below(std::mt19937_64& rng, std::uint64_t n) { return n == 0 ? 0 : rng() % n; }

}  // namespace

field_map map_fields(const std::vector<std::byte>& file, std::uint32_t alignment) {
    field_map m;
    walker w(file, m);
    w.take<std::uint32_t>(field_kind::magic);
    w.take<std::uint32_t>(field_kind::version);
    const auto n_tensors = w.take<std::uint64_t>(field_kind::count);
    const auto n_kv = w.take<std::uint64_t>(field_kind::count);
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        w.string();
        std::uint32_t t = w.take<std::uint32_t>(field_kind::value_type);
        std::uint64_t n = 1;
        if (t == 9) {
            t = w.take<std::uint32_t>(field_kind::value_type);
            n = w.take<std::uint64_t>(field_kind::array_count);
        }
        for (std::uint64_t k = 0; k < n; ++k) {
            if (t == 8) {
                w.string();
            } else {
                w.skip(fixed_size(t), t == 7 ? field_kind::boolean : field_kind::payload);
            }
        }
    }
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        w.string();
        const auto n_dims = w.take<std::uint32_t>(field_kind::n_dims);
        for (std::uint32_t d = 0; d < n_dims; ++d) w.take<std::int64_t>(field_kind::dim);
        w.take<std::uint32_t>(field_kind::tensor_type);
        w.take<std::uint64_t>(field_kind::tensor_offset);
    }
    m.table_end = w.at();
    m.data_offset = n_tensors > 0 ? (m.table_end + alignment - 1) / alignment * alignment : m.table_end;
    return m;
}

namespace {

// How often each kind of field is picked for a bit flip or byte overwrite.
unsigned weight(field_kind k) {
    switch (k) {
        case field_kind::length: return 8;
        case field_kind::count: return 6;
        case field_kind::array_count: return 6;
        case field_kind::value_type: return 6;
        case field_kind::n_dims: return 5;
        case field_kind::dim: return 6;
        case field_kind::tensor_type: return 6;
        case field_kind::tensor_offset: return 6;
        case field_kind::version: return 2;
        case field_kind::magic: return 1;
        case field_kind::boolean: return 3;
        case field_kind::bytes: return 2;
        case field_kind::payload: return 1;
    }
    return 1;
}

const field* pick_field(std::mt19937_64& rng, const field_map& m, bool wide_only) {
    unsigned total = 0;
    for (const field& f : m.fields)
        if (!wide_only || f.size == 8) total += weight(f.kind);
    if (total == 0) return nullptr;
    auto r = static_cast<unsigned>(below(rng, total));
    for (const field& f : m.fields) {
        if (wide_only && f.size != 8) continue;
        const unsigned wgt = weight(f.kind);
        if (r < wgt) return &f;
        r -= wgt;
    }
    return nullptr;
}

// A position in [0, data offset): inside a weighted field, or anywhere in the region.
std::uint64_t pick_position(std::mt19937_64& rng, const field_map& m, std::uint64_t size, std::string& what) {
    const std::uint64_t region = m.data_offset < size ? m.data_offset : size;
    if (below(rng, 10) < 7) {
        if (const field* f = pick_field(rng, m, false)) {
            what = std::string(to_string(f->kind));
            return f->offset + below(rng, f->size);
        }
    }
    what = "anywhere";
    return below(rng, region == 0 ? 1 : region);
}

std::string show_u64(std::uint64_t v) {
    switch (v) {
        case 1ull << 62: return "2^62";
        case (1ull << 63) - 1: return "2^63-1";
        case 1ull << 63: return "2^63";
        case ~0ull: return "2^64-1";
        default: return std::to_string(v);
    }
}

void apply_one(std::mt19937_64& rng, std::vector<std::byte>& b, const field_map& m, std::ostringstream& how) {
    if (b.empty()) {
        how << "(empty)";
        return;
    }
    const auto kind = below(rng, 100);
    std::string what;
    if (kind < 25) {
        const std::uint64_t p = pick_position(rng, m, b.size(), what);
        if (p >= b.size()) return;
        const auto bit = static_cast<unsigned>(below(rng, 8));
        b[p] ^= static_cast<std::byte>(1u << bit);
        how << "flip bit " << bit << " at " << p << " (" << what << ")";
    } else if (kind < 50) {
        const std::uint64_t p = pick_position(rng, m, b.size(), what);
        if (p >= b.size()) return;
        static constexpr unsigned special[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xff, 0x20, 0x40};
        const unsigned v = below(rng, 2) == 0 ? static_cast<unsigned>(below(rng, 256)) : special[below(rng, std::size(special))];
        b[p] = static_cast<std::byte>(v);
        how << "byte at " << p << " (" << what << ") := 0x" << std::hex << v << std::dec;
    } else if (kind < 68) {
        std::uint64_t n;
        if (below(rng, 10) < 7 || m.data_offset >= b.size()) {
            n = below(rng, (m.data_offset < b.size() ? m.data_offset : b.size()) + 1);
        } else {
            n = m.data_offset + below(rng, b.size() - m.data_offset);
        }
        b.resize(static_cast<std::size_t>(n));
        how << "truncate to " << n;
    } else if (kind < 88) {
        const field* f = pick_field(rng, m, true);
        if (f == nullptr || f->offset + 8 > b.size()) return;
        std::uint64_t old = 0;
        std::memcpy(&old, b.data() + f->offset, 8);
        const std::uint64_t values[] = {0, 1, 1ull << 62, (1ull << 63) - 1, 1ull << 63, ~0ull, old + 1, old - 1, old * 2, old + 32};
        const std::uint64_t v = values[below(rng, std::size(values))];
        std::memcpy(b.data() + f->offset, &v, 8);
        how << "u64 at " << f->offset << " (" << to_string(f->kind) << ") := " << show_u64(v);
    } else {
        std::vector<const field*> narrow;
        for (const field& f : m.fields)
            if (f.size == 4 && f.kind != field_kind::payload) narrow.push_back(&f);
        if (narrow.empty()) return;
        const field* f = narrow[below(rng, narrow.size())];
        if (f->offset + 4 > b.size()) return;
        const std::uint32_t values[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 31, 39, 40, 41, 42, 43, 0xffffffffu,
                                        0x80000000u, static_cast<std::uint32_t>(below(rng, 64))};
        const std::uint32_t v = values[below(rng, std::size(values))];
        std::memcpy(b.data() + f->offset, &v, 4);
        how << "u32 at " << f->offset << " (" << to_string(f->kind) << ") := " << v;
    }
}

}  // namespace

mutant mutate(std::mt19937_64& rng, const std::vector<std::byte>& file, const field_map& map) {
    mutant m;
    m.bytes = file;
    std::ostringstream how;
    const auto r = below(rng, 100);
    const int n = r < 85 ? 1 : r < 97 ? 2 : 3;
    for (int i = 0; i < n; ++i) {
        if (i > 0) how << "; ";
        apply_one(rng, m.bytes, map, how);
    }
    m.how = how.str();
    return m;
}

}  // namespace minfer::reference

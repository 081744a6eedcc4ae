#include "snapshot.hpp"

#include <cstdio>
#include <sstream>

#include "minfer/gguf/error.hpp"

namespace minfer::reference {

namespace gg = minfer::gguf;

snapshot snapshot_of(const gg::file_view& v) {
    snapshot s;
    s.version = v.version();
    s.alignment = v.alignment();
    s.data_offset = v.data_offset();
    for (const gg::kv& e : v.metadata()) {
        kv_entry k;
        k.key = std::string(e.key);
        k.v.type = static_cast<std::uint32_t>(e.type);
        k.v.elem = static_cast<std::uint32_t>(e.element_type);
        k.v.count = e.count;
        if (e.element_type == gg::value_type::string) {
            if (e.is_array()) {
                const gg::array_view arr = *e.get<gg::array_view>();
                for (std::string_view str : arr.strings()) k.v.strings.emplace_back(str);
            } else {
                k.v.strings.emplace_back(*e.get<std::string_view>());
            }
        } else {
            k.v.fixed.assign(e.payload.begin(), e.payload.end());
        }
        s.kvs.push_back(std::move(k));
    }
    for (const gg::tensor_info& t : v.tensors()) {
        tensor_entry te;
        te.name = std::string(t.name);
        te.type = static_cast<std::uint32_t>(t.type);
        te.ne = t.ne;
        te.nb = t.nb;
        te.offset = t.offset;
        te.size = t.n_bytes;
        s.tensors.push_back(std::move(te));
    }
    return s;
}

namespace {
void cut(std::string& str, bool& had) {
    const auto p = str.find('\0');
    if (p != std::string::npos) {
        str.resize(p);
        had = true;
    }
}
}  // namespace

snapshot as_c_strings(snapshot s, bool* had_nul) {
    bool had = false;
    for (kv_entry& k : s.kvs) {
        cut(k.key, had);
        for (std::string& str : k.v.strings) cut(str, had);
    }
    for (tensor_entry& t : s.tensors) cut(t.name, had);
    if (had_nul != nullptr) *had_nul = had;
    return s;
}

std::string show(std::string_view raw) { return gg::escape(raw); }

namespace {
std::string hex_of(const std::vector<std::byte>& b) {
    std::string out;
    char buf[4];
    for (std::size_t i = 0; i < b.size() && i < 64; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b[i]));
        out += buf;
    }
    if (b.size() > 64) out += "…";
    return out;
}

std::string show_value(const value& v) {
    std::ostringstream o;
    o << "type " << v.type << " elem " << v.elem << " count " << v.count;
    if (!v.fixed.empty()) o << " bytes " << hex_of(v.fixed);
    for (std::size_t i = 0; i < v.strings.size() && i < 4; ++i) o << " '" << show(v.strings[i]) << "'";
    return o.str();
}
}  // namespace

std::string diff(const snapshot& a, const snapshot& b, std::string_view na, std::string_view nb) {
    std::ostringstream o;
    auto field = [&](const char* what, auto x, auto y) {
        if (x != y) o << what << ": " << na << " " << x << ", " << nb << " " << y << "\n";
    };
    field("version", a.version, b.version);
    field("alignment", a.alignment, b.alignment);
    field("data offset", a.data_offset, b.data_offset);
    field("n_kv", a.kvs.size(), b.kvs.size());
    for (std::size_t i = 0; i < a.kvs.size() && i < b.kvs.size(); ++i) {
        const kv_entry& x = a.kvs[i];
        const kv_entry& y = b.kvs[i];
        if (x.key != y.key)
            o << "kv " << i << " key: " << na << " '" << show(x.key) << "', " << nb << " '" << show(y.key) << "'\n";
        if (x.v != y.v)
            o << "kv " << i << " '" << show(x.key) << "' value: " << na << " {" << show_value(x.v) << "}, " << nb << " {"
              << show_value(y.v) << "}\n";
    }
    field("n_tensors", a.tensors.size(), b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size() && i < b.tensors.size(); ++i) {
        const tensor_entry& x = a.tensors[i];
        const tensor_entry& y = b.tensors[i];
        const std::string at = "tensor " + std::to_string(i) + " '" + show(x.name) + "' ";
        if (x.name != y.name) o << at << "name: " << nb << " '" << show(y.name) << "'\n";
        if (x.type != y.type) o << at << "type: " << na << " " << x.type << ", " << nb << " " << y.type << "\n";
        for (std::size_t d = 0; d < 4; ++d) {
            if (x.ne[d] != y.ne[d]) o << at << "ne[" << d << "]: " << na << " " << x.ne[d] << ", " << nb << " " << y.ne[d] << "\n";
            if (x.nb && y.nb && (*x.nb)[d] != (*y.nb)[d])
                o << at << "nb[" << d << "]: " << na << " " << (*x.nb)[d] << ", " << nb << " " << (*y.nb)[d] << "\n";
        }
        if (x.offset != y.offset) o << at << "offset: " << na << " " << x.offset << ", " << nb << " " << y.offset << "\n";
        if (x.size != y.size) o << at << "size: " << na << " " << x.size << ", " << nb << " " << y.size << "\n";
    }
    return o.str();
}

std::string hex_dump(std::span<const std::byte> bytes, std::size_t limit) {
    std::string out;
    char buf[32];
    const std::size_t n = bytes.size() < limit ? bytes.size() : limit;
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 32 == 0) {
            std::snprintf(buf, sizeof buf, "%s%04zx:", i == 0 ? "" : "\n", i);
            out += buf;
        }
        std::snprintf(buf, sizeof buf, " %02x", static_cast<unsigned>(bytes[i]));
        out += buf;
    }
    if (bytes.size() > n) out += "\n… (" + std::to_string(bytes.size()) + " bytes in all)";
    return out;
}

std::string hex(std::span<const std::byte> bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    static constexpr char digits[] = "0123456789abcdef";
    for (std::byte b : bytes) {
        out += digits[static_cast<unsigned>(b) >> 4];
        out += digits[static_cast<unsigned>(b) & 15u];
    }
    return out;
}

}  // namespace minfer::reference

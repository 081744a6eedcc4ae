// Drive the typed getters with choices taken from the input's first bytes: every getter must return
// a value or an error, never abort, whatever type or index it is asked for.
#include <algorithm>
#include <cstring>

#include "fuzz_common.hpp"

namespace {
using namespace minfer;

template <class T>
void try_get(const gguf::kv& e) {
    auto r = e.get<T>();
    fuzz::require(r.has_value() || r.error().code == gguf::errc::type_mismatch);
}

template <class T>
void try_at(const gguf::array_view& a, std::uint64_t i) {
    auto r = a.at<T>(i);
    if (!r) fuzz::require(r.error().code == gguf::errc::type_mismatch || r.error().code == gguf::errc::index_out_of_range);
}

void drive(const gguf::file_view& v, std::uint8_t op, std::uint64_t arg) {
    if (v.metadata().empty()) return;
    const gguf::kv& e = v.metadata()[arg % v.metadata().size()];
    switch (op % 16) {
        case 0: try_get<std::uint8_t>(e); break;
        case 1: try_get<std::int16_t>(e); break;
        case 2: try_get<std::uint32_t>(e); break;
        case 3: try_get<std::int32_t>(e); break;
        case 4: try_get<float>(e); break;
        case 5: try_get<bool>(e); break;
        case 6: try_get<std::uint64_t>(e); break;
        case 7: try_get<double>(e); break;
        case 8: try_get<std::string_view>(e); break;
        case 9: { auto x = e.as_i64(); auto y = e.as_u64(); (void)x; (void)y; break; }
        case 10: {
            auto a = e.get<gguf::array_view>();
            if (a) { try_at<std::uint32_t>(*a, arg >> 8); try_at<std::int32_t>(*a, arg >> 16); try_at<float>(*a, 0); }
            break;
        }
        case 11: {
            auto a = e.get<gguf::array_view>();
            if (a) { auto s = a->string_at(a->size() == 0 ? 0 : (arg >> 8) % a->size()); (void)s; }
            break;
        }
        case 12: {
            auto a = e.get<gguf::array_view>();
            if (a) { auto t = a->string_table(); if (t) fuzz::require(t->size() == a->size()); }
            break;
        }
        case 13: { auto r = v.get<std::uint32_t>(e.key); fuzz::require(r.has_value() == (e.type == gguf::value_type::u32)); break; }
        case 14: { auto r = v.get<std::uint32_t>("no.such.key"); fuzz::require(!r || v.find("no.such.key") != nullptr); break; }
        default: {
            if (!v.tensors().empty()) {
                const auto& t = v.tensors()[arg % v.tensors().size()];
                fuzz::require(v.find_tensor(t.name) == &t);
            }
            break;
        }
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The first 16 bytes choose operations; the rest is the file.
    const std::size_t n_ops = std::min<std::size_t>(size, 16);
    auto v = gguf::file_view::parse(std::as_bytes(std::span(data + n_ops, size - n_ops)));
    if (!v) return 0;
    for (std::size_t i = 0; i + 1 < n_ops; i += 2) {
        std::uint64_t arg = 0;
        std::memcpy(&arg, data + i, std::min<std::size_t>(8, n_ops - i));
        drive(*v, data[i], arg ^ data[i + 1]);
    }
    return 0;
}

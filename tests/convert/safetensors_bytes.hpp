#pragma once
// Safetensors files written by the tests themselves, byte by byte (no numpy, no Python): a header
// text given as is (for the malformed ones), or a builder that lays tensors out back to back as the
// format's writer does (header padded with spaces to a multiple of 8, data in the order added).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf_bytes.hpp"

namespace minfer::test {

/// The 8-byte little-endian length, the header text, then `data`.
inline bytes safetensors_file_bytes(std::string_view header, std::span<const std::byte> data = {},
                                    std::uint64_t declared_length = ~std::uint64_t{0}) {
    const std::uint64_t n = declared_length == ~std::uint64_t{0} ? header.size() : declared_length;
    bytes out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xFFu));
    for (char c : header) out.push_back(static_cast<std::byte>(c));
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

inline bytes filler(std::size_t n, std::uint8_t seed = 1) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((seed + 7 * i) & 0xFFu);
    return b;
}

/// Tensors laid out back to back, each with recognizable bytes.
class safetensors_builder {
public:
    safetensors_builder& add(std::string name, std::string dtype, std::vector<std::uint64_t> shape, std::size_t elem_bytes) {
        std::uint64_t n = elem_bytes;
        for (std::uint64_t d : shape) n *= d;
        const std::uint64_t begin = data_.size();
        const bytes b = filler(static_cast<std::size_t>(n), static_cast<std::uint8_t>(entries_.size() + 1));
        data_.insert(data_.end(), b.begin(), b.end());
        entries_.push_back(entry{std::move(name), std::move(dtype), std::move(shape), begin, data_.size()});
        return *this;
    }
    safetensors_builder& metadata(std::string key, std::string value) {
        metadata_.emplace_back(std::move(key), std::move(value));
        return *this;
    }

    std::string header() const {
        std::string h = "{";
        bool first = true;
        if (!metadata_.empty()) {
            h += "\"__metadata__\":{";
            for (std::size_t i = 0; i < metadata_.size(); ++i) {
                if (i > 0) h += ",";
                h += "\"" + metadata_[i].first + "\":\"" + metadata_[i].second + "\"";
            }
            h += "}";
            first = false;
        }
        for (const entry& e : entries_) {
            if (!first) h += ",";
            first = false;
            h += "\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
            for (std::size_t i = 0; i < e.shape.size(); ++i) h += (i > 0 ? "," : "") + std::to_string(e.shape[i]);
            h += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
        }
        h += "}";
        while ((8 + h.size()) % 8 != 0) h += ' ';  // the reference writer's padding
        return h;
    }
    const bytes& data() const { return data_; }
    bytes file() const { return safetensors_file_bytes(header(), data_); }

private:
    struct entry {
        std::string name, dtype;
        std::vector<std::uint64_t> shape;
        std::uint64_t begin, end;
    };
    std::vector<entry> entries_;
    std::vector<std::pair<std::string, std::string>> metadata_;
    bytes data_;
};

}  // namespace minfer::test

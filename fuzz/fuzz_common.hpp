#pragma once
// Shared by the fuzz targets: touch every view of a verified file, so that ASan proves the
// "verified once, then in bounds" property of file_view.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unistd.h>

#include "minfer/gguf/file_view.hpp"

namespace minfer::fuzz {

// Crash loudly (the fuzzer records it) when an invariant of a successful parse does not hold.
inline void require(bool ok) {
    if (!ok) std::abort();
}

inline std::uint64_t byte_sum(std::byte a, std::byte b) {
    return static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b);
}

// The input written to `name` in this process's own folder (in /dev/shm when there is one: no disk
// write per run), for the targets whose library reads files. Empty when it cannot be written.
inline std::filesystem::path input_file(std::string_view target, std::string_view name, const std::uint8_t* data, std::size_t size) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path base = fs::exists("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path(ec);
    const fs::path dir = base / ("minfer-fuzz-" + std::string(target) + "-" + std::to_string(::getpid()));
    fs::create_directories(dir, ec);
    const fs::path file = dir / name;
    std::FILE* f = std::fopen(file.c_str(), "wb");
    if (f == nullptr) return {};
    const bool ok = std::fwrite(data, 1, size, f) == size;
    return std::fclose(f) == 0 && ok ? file : fs::path();
}

// Keeps the reads from being optimised away.
inline void consume(std::uint64_t v) {
    static volatile std::uint64_t sink = 0;
    sink = sink + v;
}

inline std::uint64_t touch_value(const gguf::kv& e) {
    using gguf::value_type;
    std::uint64_t sink = 0;
    if (!e.payload.empty()) sink += byte_sum(e.payload.front(), e.payload.back());
    if (e.type == value_type::string) {
        auto s = e.get<std::string_view>();
        require(s.has_value());
        sink += s->size();
        return sink;
    }
    if (!e.is_array()) return sink;
    auto a = e.get<gguf::array_view>();
    require(a.has_value() && a->size() == e.count);
    if (a->element_type() == value_type::string) {
        std::uint64_t n = 0;
        for (std::string_view s : a->strings()) {
            if (!s.empty()) sink += static_cast<unsigned char>(s.front()) + 0u + static_cast<unsigned char>(s.back());
            ++n;
        }
        require(n == a->size());
        return sink;
    }
    require(a->raw().size() == a->size() * gguf::value_size(a->element_type()));
    return sink;
}

inline std::uint64_t touch_all(const gguf::file_view& v) {
    std::uint64_t sink = v.version() + v.alignment();
    // (a head from parse_head may end before the table's padding: the file, not the head, holds it)
    require(v.bytes().size() <= v.file_size() && (v.data_offset() <= v.file_size() || v.tensors().empty()));
    for (const gguf::kv& e : v.metadata()) {
        sink += touch_value(e);
        require(v.find(e.key) == &e);
    }
    for (const gguf::tensor_info& t : v.tensors()) {
        require(v.find_tensor(t.name) == &t);
        auto bytes = v.tensor_data(t);
        // A view of a head (parse_head) holds no bytes for a tensor the head does not reach.
        const bool in_head = v.data_offset() + t.offset + t.n_bytes <= v.bytes().size();
        require(bytes.size() == (v.complete() || in_head ? t.n_bytes : 0));
        require(bytes.empty() || (bytes.data() >= v.bytes().data() &&
                                  bytes.data() + bytes.size() <= v.bytes().data() + v.bytes().size()));
        if (!bytes.empty()) sink += byte_sum(bytes.front(), bytes.back());
    }
    return sink;
}

}  // namespace minfer::fuzz

// Open a split set made from the input: the input is cut on "\n~~\n" into up to 5 buffers, written
// as m-0000k-of-0000N.gguf in a private directory, and opened through part 1.
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "fuzz_common.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/split.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    static const std::filesystem::path dir = [] {
        std::filesystem::path base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
        auto d = base / ("minfer-fuzz-split-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (parts.size() < 4) {
        const std::size_t cut = in.find("\n~~\n", start);
        if (cut == std::string_view::npos) break;
        parts.push_back(in.substr(start, cut - start));
        start = cut + 4;
    }
    parts.push_back(in.substr(start));
    const auto n = static_cast<std::uint32_t>(parts.size());
    for (const auto& e : std::filesystem::directory_iterator(dir)) std::filesystem::remove(e.path());
    for (std::uint32_t i = 0; i < n; ++i) {
        // An input may leave a part out on purpose: "\n~~\n" alone followed by "MISSING".
        if (parts[i] == "MISSING") continue;
        const auto p = dir / gguf::split_file_name("m", i, n);
        std::FILE* f = std::fopen(p.c_str(), "wb");
        if (f == nullptr) return 0;
        std::fwrite(parts[i].data(), 1, parts[i].size(), f);
        std::fclose(f);
    }
    auto m = gguf::model::open(dir / gguf::split_file_name("m", 0, n));
    if (!m) {
        fuzz::require(!m.error().message().empty());
        return 0;
    }
    for (const auto& p : m->parts()) fuzz::consume(fuzz::touch_all(p.view));
    for (const auto& t : m->tensors()) {
        fuzz::require(m->find_tensor(t.info->name) == &t);
        fuzz::require(m->tensor_data(t).size() == t.info->n_bytes);
    }
    return 0;
}

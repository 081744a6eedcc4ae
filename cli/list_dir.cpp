// `minfer info <directory>`: list the model files in it, a split set as one entry, and exit with the
// usage code since nothing was chosen.
#include <algorithm>
#include <map>
#include <new>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "info.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/split.hpp"

namespace minfer::cli {
namespace {

struct candidate {
    std::string name;             ///< file name; for a split set, part 1's name
    std::uint32_t n_parts = 1;    ///< parts the set's names call for
    std::uint32_t n_present = 0;  ///< parts found in the directory
    std::uint64_t bytes = 0;      ///< sum of the sizes of the parts found
    bool split = false;
};

bool ends_with_gguf(const std::string& name) {
    constexpr std::string_view ext = ".gguf";
    return name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
}

double mb(std::uint64_t n) { return static_cast<double>(n) / 1048576.0; }

}  // namespace

int list_directory(const std::filesystem::path& dir, const info_options& opt, out_buffer& out) {
    namespace fs = std::filesystem;
    std::map<std::string, candidate> found;  // by displayed name: sorted
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        fmt::print(stderr, "Error: cannot read directory '{}': {}\n", gguf::escape(dir.string()), ec.message());
        return exit_io;
    }
    for (const fs::directory_iterator end; it != end; it.increment(ec)) {
        if (ec) break;
        std::error_code fec;
        if (!it->is_regular_file(fec)) continue;  // follows symlinks; skips directories named *.gguf
        const std::string name = it->path().filename().string();
        if (!ends_with_gguf(name)) continue;
        const std::uint64_t size = it->file_size(fec);
        const auto split = gguf::split_file_info(name);
        const std::string shown = split ? gguf::split_file_name(split->prefix, 0, split->count) : name;
        candidate& c = found[shown];
        c.name = shown;
        c.split = split.has_value();
        c.n_parts = split ? split->count : 1;
        c.n_present += 1;
        c.bytes += fec ? 0 : size;
    }
    if (ec) {
        fmt::print(stderr, "Error: cannot read directory '{}': {}\n", gguf::escape(dir.string()), ec.message());
        return exit_io;
    }

    if (opt.json) {
        using json = nlohmann::ordered_json;
        json doc = json::object();
        doc["directory"] = json_string(dir.string());
        json list = json::array();
        for (const auto& [shown, c] : found) {
            json j = json::object();
            j["name"] = json_string(c.name);
            j["path"] = json_string((dir / c.name).string());
            j["n_parts"] = c.n_parts;
            j["n_parts_present"] = c.n_present;
            j["bytes"] = c.bytes;
            list.push_back(std::move(j));
        }
        doc["candidates"] = std::move(list);
        out.write(doc.dump(2, ' ', false, json::error_handler_t::replace));
        out.write("\n");
    } else {
        const std::string d = gguf::escape(dir.string());
        if (found.empty()) {
            out.print("{} is a directory with no .gguf files\n", d);
        } else {
            std::size_t name_w = 0;
            for (const auto& [shown, c] : found) name_w = std::max(name_w, gguf::escape(c.name).size());
            out.print("{} is a directory; GGUF models in it ({}):\n", d, found.size());
            for (const auto& [shown, c] : found) {
                std::string parts;
                if (c.split) {
                    parts = c.n_present == c.n_parts ? fmt::format("{} parts", c.n_parts)
                                                     : fmt::format("{} of {} parts present", c.n_present, c.n_parts);
                }
                out.print("  {:<{}}  {:>12} bytes ({:.1f} MB)", gguf::escape(c.name), name_w, c.bytes, mb(c.bytes));
                if (parts.empty()) {
                    out.write("\n");
                } else {
                    out.print("  {}\n", parts);
                }
            }
        }
    }
    out.flush();
    fmt::print(stderr, "Error: '{}' is a directory; choose a model file: minfer info <file>\n",
               gguf::escape(dir.string()));
    return exit_usage;
}

}  // namespace minfer::cli

// `minfer info <directory>`: the model files in it, each with the library's verdict, and the usage
// exit code since nothing was chosen. Only files that exist are named. Each candidate is opened with
// gguf::model::open, which decides what a model is (a single file, or a split set with all its
// parts); the parts it opened are not listed again. File names are used only to group the files of a
// split set whose part 1 fails to open, so that its later parts do not each appear as an error.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "../common/display_width.hpp"
#include "../common/exit_codes.hpp"
#include "../common/sigbus_guard.hpp"
#include "../common/sizes.hpp"
#include "json_writer.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/text.hpp"
#include "printers.hpp"

namespace minfer::cli {
namespace {

struct candidate {
    std::string name;              ///< file name (part 1's for a set)
    std::uint32_t n_parts = 1;     ///< parts the model has (when it opened) or its names call for
    std::uint32_t n_present = 1;   ///< parts found in the directory
    std::uint64_t bytes = 0;       ///< sum of the sizes of the files it covers
    bool ok = false;
    std::string code;              ///< the error code when !ok
    std::string message;           ///< the error message when !ok
};

bool ends_with_gguf(const std::string& name) {
    constexpr std::string_view ext = ".gguf";
    return name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
}

}  // namespace

int list_directory(const std::filesystem::path& dir, const info_options& opt, out_buffer& out) {
    namespace fs = std::filesystem;
    std::map<std::string, std::uint64_t> files;  // name -> size, sorted by name
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
        std::error_code fec;
        if (!it->is_regular_file(fec)) continue;  // follows symlinks; skips directories named *.gguf
        const std::string name = it->path().filename().string();
        if (!ends_with_gguf(name)) continue;
        const std::uint64_t size = it->file_size(fec);
        files[name] = fec ? 0 : size;
    }
    if (ec) {
        fmt::print(stderr, "Error: cannot read directory '{}': {}\n", gguf::escape(dir.string()), ec.message());
        return exit_io;
    }

    // Open every file once; remember which files each opened model covers.
    std::set<std::string> covered;
    std::vector<candidate> found;
    std::vector<candidate> later_parts;  // files refused as a later part: listed only if nothing covers them
    for (const auto& [name, size] : files) {
        if (covered.count(name) != 0) continue;
        candidate c;
        c.name = name;
        c.bytes = size;
        gguf::open_options oo;
        oo.mode = opt.no_mmap ? gguf::load_mode::read : gguf::load_mode::map;
        sigbus_guard_file((dir / name).string());
        auto m = gguf::model::open(dir / name, oo);
        if (m) {
            c.ok = true;
            c.n_parts = static_cast<std::uint32_t>(m->parts().size());
            c.n_present = c.n_parts;
            c.bytes = m->file_bytes();
            for (const gguf::model_part& p : m->parts()) covered.insert(p.path.filename().string());
        } else {
            c.code = std::string(gguf::to_string(m.error().code));
            c.message = m.error().message();
            const auto split = gguf::split_file_info(name);
            if (m.error().code == gguf::errc::split_not_first) {
                later_parts.push_back(std::move(c));
                continue;
            }
            if (split && split->index == 0) {
                // A broken set: count and cover the parts that exist, by their names.
                c.n_parts = split->count;
                c.n_present = 1;
                for (std::uint32_t i = 1; i < split->count; ++i) {
                    const std::string part = gguf::split_file_name(split->prefix, i, split->count);
                    auto f = files.find(part);
                    if (f == files.end()) continue;
                    ++c.n_present;
                    c.bytes += f->second;
                    covered.insert(part);
                }
            }
        }
        found.push_back(std::move(c));
    }
    for (candidate& c : later_parts)
        if (covered.count(c.name) == 0) found.push_back(std::move(c));
    std::sort(found.begin(), found.end(), [](const candidate& a, const candidate& b) { return a.name < b.name; });

    if (opt.json) {
        json_writer w(out);
        w.begin_object();
        string_member(w, "directory", dir.string());
        w.key("candidates");
        w.begin_array();
        for (const candidate& c : found) {
            w.begin_object(true);
            string_member(w, "name", c.name);
            string_member(w, "path", (dir / c.name).string());
            w.key("valid");
            w.boolean(c.ok);
            w.key("error");
            if (c.ok) {
                w.null();
            } else {
                w.string(c.code);
            }
            w.key("n_parts");
            w.number(static_cast<std::uint64_t>(c.n_parts));
            w.key("n_parts_present");
            w.number(static_cast<std::uint64_t>(c.n_present));
            w.key("bytes");
            w.number(c.bytes);
            if (!c.ok) {
                string_member(w, "message", c.message);  // escaped by the library: valid UTF-8
            }
            w.end_object();
        }
        w.end_array();
        w.end_object();
        w.finish();
    } else {
        const std::string d = gguf::escape(dir.string());
        if (found.empty()) {
            out.print("{} is a directory with no .gguf files\n", d);
        } else {
            std::size_t name_w = 0, bytes_w = 0, mib_w = 0;
            for (const candidate& c : found) {
                name_w = std::max(name_w, display_width(gguf::escape(c.name)));
                bytes_w = std::max(bytes_w, fmt::formatted_size("{}", c.bytes));
                mib_w = std::max(mib_w, mib_text(c.bytes).size());
            }
            out.print("{} is a directory; GGUF files in it ({}):\n", d, found.size());
            for (const candidate& c : found) {
                std::string line = fmt::format("  {}  {:>{}} bytes ({})", pad_right(gguf::escape(c.name), name_w),
                                               c.bytes, bytes_w, mib_text(c.bytes));
                line.append(mib_w - mib_text(c.bytes).size(), ' ');
                if (c.ok) {
                    line += "  ok";
                    if (c.n_parts > 1) line += fmt::format(", {} parts", c.n_parts);
                } else {
                    line += "  error: " + c.code;
                    if (c.n_parts > 1) line += fmt::format(", {} of {} parts present", c.n_present, c.n_parts);
                }
                line += '\n';
                out.write(line);
            }
        }
    }
    out.flush();
    fmt::print(stderr, "Error: '{}' is a directory; choose a model file: minfer info <file>\n",
               gguf::escape(dir.string()));
    return exit_usage;
}

}  // namespace minfer::cli

// `minfer tensor MODEL NAME`: one tensor's layout (type, shape, strides, offsets, bytes) and its
// values: the first values of some rows, statistics over all of them (--stats), or all of them as raw
// f32 (--dump). Values are converted with minfer::quant in bounded chunks (minfer/quant/value_stream.hpp),
// so a tensor of any size costs a few MiB of memory.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "../common/number_check.hpp"
#include "../common/plural.hpp"
#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "../common/progress.hpp"
#include "../common/quote.hpp"
#include "../common/run_printing.hpp"
#include "../common/sizes.hpp"
#include "../common/suggest.hpp"
#include "../common/isa_warning.hpp"
#include "minfer/compare/value_stats.hpp"
#include "minfer/quant/value_stream.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"

namespace minfer::cli {
namespace {

struct tensor_cli_options {
    std::string model;
    std::string name;
    std::string rows;  ///< --rows A:B (half-open), A:, :B or A
    std::size_t head = 8;
    bool stats = false;
    std::string dump;  ///< --dump FILE, "-" for stdout
    bool force = false;
    bool json = false;
    bool no_mmap = false;
    CLI::Option* rows_opt = nullptr;
    CLI::Option* head_opt = nullptr;
};

tensor_cli_options opt;  // filled by CLI11 during parsing, read by tensor_run()

constexpr std::uint64_t default_rows = 4;


// The facts of a tensor every output shows.
struct layout {
    const gguf::tensor_info* info;
    std::uint32_t part;      // 0-based
    std::uint32_t n_parts;
    std::string part_file;
    std::uint64_t absolute;  // offset of the first byte in its file
    std::uint32_t dims;      // dimensions shown: n_dims, at least 1
    std::uint64_t row_size;  // ne[0]
    std::uint64_t n_rows;    // ne[1] * ne[2] * ne[3] (0 when the tensor is empty)
};

layout layout_of(const gguf::model& m, const gguf::tensor_ref& t) {
    const gguf::model_part& p = m.parts()[t.part];
    layout l{};
    l.info = t.info;
    l.part = t.part;
    l.n_parts = static_cast<std::uint32_t>(m.parts().size());
    l.part_file = p.path.string();
    l.absolute = p.view.data_offset() + t.info->offset;
    l.dims = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, t.info->n_dims));
    l.row_size = static_cast<std::uint64_t>(t.info->ne[0]);
    l.n_rows = l.row_size == 0 ? 0 : t.info->n_elements / l.row_size;
    return l;
}

template <class T>
std::string list_text(const T& v, std::uint32_t n) {
    std::string s = "[";
    for (std::uint32_t i = 0; i < n; ++i) s += fmt::format("{}{}", i == 0 ? "" : ", ", v[i]);
    return s + "]";
}

// Row r's index over dimensions 1..dims-1, ggml order: "[:, 3, 1]" (":" stands for the row's ne[0]).
std::string row_label(const layout& l, std::uint64_t r) {
    std::string s = "[:";
    for (std::uint32_t d = 1; d < l.dims; ++d) {
        const auto ne = static_cast<std::uint64_t>(l.info->ne[d]);
        s += fmt::format(", {}", ne == 0 ? 0 : r % ne);
        r = ne == 0 ? 0 : r / ne;
    }
    return s + "]";
}

// A flat element index as its multi-dimensional index: "[5, 1]".
std::string element_label(const layout& l, std::uint64_t i) {
    std::string s = "[";
    for (std::uint32_t d = 0; d < l.dims; ++d) {
        const auto ne = static_cast<std::uint64_t>(l.info->ne[d]);
        s += fmt::format("{}{}", d == 0 ? "" : ", ", ne == 0 ? 0 : i % ne);
        i = ne == 0 ? 0 : i / ne;
    }
    return s + "]";
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    std::uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

struct row_range {
    std::uint64_t first = 0, end = 0;
};

// --rows against the tensor: A:B half-open, A: to the end, :B from 0, A alone one row. B past the
// end is cut to the end (as a slice is); A past the end, or A >= B, is a usage error.
std::optional<row_range> parse_rows(const std::string& text, std::uint64_t n_rows, std::string& why) {
    row_range r{0, std::min<std::uint64_t>(default_rows, n_rows)};
    if (opt.rows_opt == nullptr || opt.rows_opt->count() == 0) return r;
    const auto colon = text.find(':');
    std::optional<std::uint64_t> a, b;
    if (colon == std::string::npos) {
        a = parse_u64(text);
        if (a && *a < UINT64_MAX) b = *a + 1;
    } else {
        a = colon == 0 ? std::optional<std::uint64_t>(0) : parse_u64(std::string_view(text).substr(0, colon));
        b = colon + 1 == text.size() ? std::optional<std::uint64_t>(n_rows)
                                     : parse_u64(std::string_view(text).substr(colon + 1));
    }
    if (!a || !b) {
        why = fmt::format("--rows {}: expected A:B, A:, :B or A (row numbers, B excluded)", gguf::escape(text));
        return std::nullopt;
    }
    if (*a >= *b) {
        why = fmt::format("--rows {}: the range is empty (A must be less than B)", gguf::escape(text));
        return std::nullopt;
    }
    if (*a >= n_rows) {
        why = fmt::format("--rows {}: the tensor has {} (0:{})", gguf::escape(text), plural(n_rows, "row", "rows"), n_rows);
        return std::nullopt;
    }
    r.first = *a;
    r.end = std::min(*b, n_rows);
    return r;
}

// The first `shown` values of row r, converted from whole blocks, a chunk at a time (a row wider
// than a chunk stays bounded too). Rows are read and printed one by one, so --rows 0: --head 0 on a
// large tensor holds one row, never the tensor.
gguf::result<void> read_row(const gguf::model& m, const gguf::tensor_ref& t, const layout& l, std::uint64_t r,
                            std::uint64_t shown, std::vector<float>& values) {
    const gguf::type_traits* tt = gguf::traits(t.info->type);
    const std::uint64_t block = tt != nullptr && tt->block_elems > 0 ? tt->block_elems : 1;
    const std::uint64_t converted = std::min(l.row_size, (shown + block - 1) / block * block);
    const auto bytes = m.tensor_data(t);
    values.clear();
    std::vector<float> buf;
    for (std::uint64_t done = 0; done < converted;) {
        const std::uint64_t n = std::min<std::uint64_t>(converted - done, quant::chunk_values);
        buf.resize(static_cast<std::size_t>(n));
        if (auto ok = quant::dequantize_range(t.info->type, bytes, r * l.row_size + done, buf); !ok) return ok;
        const std::uint64_t keep = std::min(n, shown - std::min(shown, done));
        values.insert(values.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(keep));
        done += n;
    }
    return {};
}

// The values of the whole tensor, once: statistics and/or the raw dump, whichever was asked.
struct full_pass {
    compare::value_stats stats;
    std::uint64_t dumped = 0;
};

bool write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// f32 little-endian whatever the host: the file format the dump promises.
// The bytes to write: the values themselves on a little-endian host (no copy), else swapped into `bits`.
std::string_view little_endian_bytes(std::span<const float> v, std::vector<std::uint32_t>& bits) {
    if constexpr (std::endian::native == std::endian::little) {
        return {reinterpret_cast<const char*>(v.data()), v.size() * 4};
    } else {
        bits.resize(v.size());
        std::memcpy(bits.data(), v.data(), v.size() * 4);
        for (auto& b : bits) b = (b >> 24) | ((b >> 8) & 0xff00u) | ((b << 8) & 0xff0000u) | (b << 24);
        return {reinterpret_cast<const char*>(bits.data()), bits.size() * 4};
    }
}

struct dump_target {
    std::optional<gguf::atomic_file> file;  // a file; none: stdout through `out`
};

// One streamed pass. Errors: a conversion error (returned), or a failed write (io_error).
gguf::result<full_pass> run_pass(const gguf::model& m, const gguf::tensor_ref& t, bool stats, dump_target* dump,
                                 out_buffer& out) {
    full_pass pass;
    std::vector<float> buf;
    std::vector<std::uint32_t> le;
    const auto bytes = m.tensor_data(t);
    const std::uint64_t total = t.info->n_bytes;
    progress bar(std::string(stats ? "stats " : "dump ").append(gguf::escape(t.info->name)), false);
    gguf::error write_error;
    auto r = quant::stream_values(t.info->type, bytes, t.info->n_elements, buf, [&](std::uint64_t first, std::span<const float> v) {
        if (stats) pass.stats.add(v, first);
        if (dump != nullptr) {
            const std::string_view raw = little_endian_bytes(v, le);
            if (dump->file) {
                if (!write_all(dump->file->fd(), raw.data(), raw.size())) {
                    write_error.code = gguf::errc::io_error;
                    write_error.sys_errno = errno;
                    write_error.file = dump->file->target().string();
                    write_error.detail = "write the values";  // io_error says "cannot <detail>"
                    return false;
                }
            } else if (!out.write_through(raw)) {
                return false;  // stdout is gone (a closed pipe): the caller sees out.ok() false
            }
            pass.dumped += v.size();
        }
        bar.update(quant::bytes_for(t.info->type, first + v.size()), total);
        return true;
    }, quant::stream_options{0, m.parts()[t.part].file.mapped()});
    if (!r) return gguf::unexpected(r.error());
    if (write_error.code != gguf::errc::ok) return gguf::unexpected(write_error);
    return pass;
}

std::string type_line(const gguf::tensor_info& i) {
    return fmt::format("{} (id {})", gguf::to_string(i.type), static_cast<std::uint32_t>(i.type));
}

std::string offset_line(const layout& l) {
    std::string s = fmt::format("{} in the data section; absolute {} in {}", l.info->offset, l.absolute,
                                gguf::escape(l.part_file));
    if (l.n_parts > 1) s += fmt::format(" (part {} of {})", l.part + 1, l.n_parts);
    return s;
}

std::string value_line(const std::vector<float>& v, std::uint64_t row_size) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s.append(i == 0 ? "" : " ").append(float_text(v[i]));
    if (v.size() < row_size) s += v.empty() ? "…" : " …";
    return s;
}


void print_text_header(const layout& l, out_buffer& out) {
    const gguf::tensor_info& i = *l.info;
    out.print("tensor    {}\n", gguf::escape(i.name));
    out.print("type      {}\n", type_line(i));
    out.print("shape     {}  (ne, ggml order: ne[0] varies fastest)\n", list_text(i.ne, l.dims));
    out.print("strides   {}  (nb, bytes)\n", list_text(i.nb, l.dims));
    out.print("offset    {}\n", offset_line(l));
    out.print("bytes     {} ({})\n", i.n_bytes, mib_text(i.n_bytes));
    out.print("elements  {}\n", i.n_elements);
    out.print("rows      {} of {}\n", l.n_rows, plural(l.row_size, "value", "values"));
}

void print_text_stats(const layout& l, const compare::value_stats& s, out_buffer& out) {
    out.print("stats over {}\n", plural(s.count(), "value", "values"));
    const bool any = s.finite() > 0;
    auto f = [any](auto v) { return any ? float_text(v) : std::string("-"); };
    out.print("  min       {}\n", f(s.min()));
    out.print("  max       {}\n", f(s.max()));
    out.print("  mean      {}\n", f(s.mean()));
    out.print("  std       {}\n", f(s.stddev()));
    out.print("  max |x|   {}\n", f(s.max_abs()));
    out.print("  zeros     {}\n", s.zeros());
    if (s.nans() > 0) {
        out.print("  nan       {} (first at index {} = {})\n", s.nans(), s.first_nan(), element_label(l, s.first_nan()));
    } else {
        out.print("  nan       0\n");
    }
    out.print("  inf       {}\n", s.infs());
}

void json_header(json_writer& w, const layout& l) {
    const gguf::tensor_info& i = *l.info;
    string_member(w, "name", i.name);
    w.key("type");
    w.string(gguf::to_string(i.type));
    w.key("type_id");
    w.number(static_cast<std::uint64_t>(i.type));
    w.key("n_dims");
    w.number(static_cast<std::uint64_t>(i.n_dims));
    w.key("shape");
    w.begin_array(true);
    for (std::uint32_t d = 0; d < l.dims; ++d) w.number(static_cast<std::int64_t>(i.ne[d]));
    w.end_array();
    w.key("strides");
    w.begin_array(true);
    for (std::uint32_t d = 0; d < l.dims; ++d) w.number(static_cast<std::uint64_t>(i.nb[d]));
    w.end_array();
    w.key("offset");
    w.number(i.offset);
    w.key("absolute_offset");
    w.number(l.absolute);
    w.key("part");
    w.number(static_cast<std::uint64_t>(l.part + 1));
    w.key("parts");
    w.number(static_cast<std::uint64_t>(l.n_parts));
    string_member(w, "part_file", l.part_file);
    w.key("bytes");
    w.number(i.n_bytes);
    w.key("elements");
    w.number(i.n_elements);
    w.key("row_size");
    w.number(l.row_size);
    w.key("rows");
    w.number(l.n_rows);
}

void json_float_or_null(json_writer& w, bool any, double v) {
    if (any) {
        w.number(v);
    } else {
        w.null();
    }
}

void json_stats(json_writer& w, const compare::value_stats& s) {
    const bool any = s.finite() > 0;
    w.key("stats");
    w.begin_object();
    w.key("count");
    w.number(s.count());
    w.key("finite");
    w.number(s.finite());
    w.key("min");
    if (any) w.number(s.min()); else w.null();
    w.key("max");
    if (any) w.number(s.max()); else w.null();
    w.key("mean");
    json_float_or_null(w, any, s.mean());
    w.key("std");
    json_float_or_null(w, any, s.stddev());
    w.key("max_abs");
    if (any) w.number(s.max_abs()); else w.null();
    w.key("zeros");
    w.number(s.zeros());
    w.key("nan");
    w.number(s.nans());
    w.key("first_nan_index");
    if (s.nans() > 0) w.number(s.first_nan()); else w.null();
    w.key("inf");
    w.number(s.infs());
    w.end_object();
}

void json_row(json_writer& w, const layout& l, std::uint64_t r, const std::vector<float>& values) {
    w.begin_object(true);
    w.key("row");
    w.number(r);
    w.key("index");  // dimensions 1.. of the row, as row_label shows them
    w.begin_array(true);
    std::uint64_t rest = r;
    for (std::uint32_t d = 1; d < l.dims; ++d) {
        const auto ne = static_cast<std::uint64_t>(l.info->ne[d]);
        w.number(ne == 0 ? 0 : rest % ne);
        rest = ne == 0 ? 0 : rest / ne;
    }
    w.end_array();
    w.key("values");
    w.begin_array(true);
    for (float v : values) w.number(v);
    w.end_array();
    w.end_object();
}

int not_found(const gguf::model& m) {
    gguf::error e;
    e.code = gguf::errc::tensor_not_found;
    e.where = gguf::section::access;  // a lookup, not a byte of the file
    e.subject = opt.name;
    e.file = opt.model;
    fmt::print(stderr, "Error: {}\n", e.message());
    std::vector<std::string_view> names;
    names.reserve(m.tensors().size());
    for (const gguf::tensor_ref& t : m.tensors()) names.push_back(t.info->name);
    const auto close = close_names(opt.name, names);
    if (!close.empty()) {
        std::string list;
        for (std::string_view n : close) list.append(list.empty() ? "" : ", ").append(quoted(n));
        fmt::print(stderr, "Did you mean: {}?\n", list);
    }
    return exit_parse;
}

// --dump FILE: refuse to write over an input part (never) or an existing file (without --force).
gguf::result<gguf::atomic_file> open_dump(const gguf::model& m, int& usage) {
    usage = exit_ok;
    if (const auto part = toolbox::part_of(m, opt.dump)) {
        usage = usage_error(fmt::format("{} is part {} of the model; --dump never writes over its input",
                                        gguf::escape(opt.dump), *part + 1));
        return gguf::unexpected(gguf::error{});
    }
    // The dump is a new file put in place by a rename (atomic_file), like every output: a device, FIFO
    // or directory there (/dev/null, as root) is never replaced, not even with --force; a link's target
    // is (docs/CLI.md "Output files"). Standard output (-) is the way into a pipe, a FIFO or a device.
    if (auto checked = gguf::check_output_path(opt.dump, opt.force); !checked) {
        if (gguf::is_output_exists(checked.error())) {
            usage = usage_error(gguf::escape(opt.dump) + " already exists (use --force to replace it)");
            return gguf::unexpected(gguf::error{});
        }
        if (checked.error().code == gguf::write_codes::output_not_regular) {
            usage = usage_error(checked.error().message());
            fmt::print(stderr, "To write into a pipe, a FIFO or a device: --dump - and redirect standard output\n");
            return gguf::unexpected(gguf::error{});
        }
        return gguf::unexpected(std::move(checked).error());
    }
    gguf::atomic_file_options fo;
    fo.replace_existing = opt.force;
    return gguf::atomic_file::create(opt.dump, fo);
}

int run(out_buffer& out) {
    const bool dump_stdout = opt.dump == "-";
    if (dump_stdout && (opt.json || opt.stats || (opt.rows_opt != nullptr && opt.rows_opt->count() > 0) ||
                        (opt.head_opt != nullptr && opt.head_opt->count() > 0)))
        return usage_error("--dump - writes only the values to standard output: it cannot be combined with --json, "
                           "--stats, --rows or --head");

    auto m = open_model(opt.model, opt.no_mmap);
    if (!m) return report_error(m.error());
    const gguf::tensor_ref* t = m->find_tensor(opt.name);
    if (t == nullptr) return not_found(*m);
    const layout l = layout_of(*m, *t);
    std::string why;
    const auto rows = parse_rows(opt.rows, l.n_rows, why);
    if (!rows && l.n_rows > 0) return usage_error(why);
    const row_range shown = rows.value_or(row_range{});

    const bool convertible = quant::can_dequantize(t->info->type);
    std::optional<gguf::atomic_file> dump_file;
    if (!opt.dump.empty() && !dump_stdout && convertible) {
        int usage = exit_ok;
        auto f = open_dump(*m, usage);
        if (usage != exit_ok) return usage;
        if (!f) return report_error(f.error());
        dump_file.emplace(std::move(*f));
    }

    if (dump_stdout) {
        if (!convertible) {
            fmt::print(stderr, "Error: {}\n", quant::type_not_convertible_error(*t->info).message());
            return exit_parse;
        }
        dump_target target;
        auto pass = run_pass(*m, *t, false, &target, out);
        if (!pass) return report_error(pass.error());
        return exit_ok;
    }

    // Header, then the rows as they are read, then the full pass (stats and/or dump) and its lines.
    const std::uint64_t per_row = opt.head == 0 ? l.row_size : std::min<std::uint64_t>(opt.head, l.row_size);
    std::optional<gguf::error> value_error;
    if (!convertible) value_error = quant::type_not_convertible_error(*t->info);
    std::optional<json_writer> jw;
    if (opt.json) {
        jw.emplace(out);
        jw->begin_object();
        string_member(*jw, "file", opt.model);
        json_header(*jw, l);
    } else {
        print_text_header(l, out);
    }

    if (!value_error) {
        if (jw) {
            jw->key("values");
            jw->begin_object();
            jw->key("rows");
            jw->begin_array(true);
            jw->number(shown.first);
            jw->number(shown.end);
            jw->end_array();
            jw->key("per_row");
            jw->number(per_row);
            jw->key("data");
            jw->begin_array();
        } else {
            out.print("values    rows {}:{} of {}, first {} of {} per row\n", shown.first, shown.end, l.n_rows, per_row,
                      l.row_size);
        }
        std::size_t width = 0;  // labels aligned: the widest of the rows shown
        if (!jw)
            for (std::uint64_t r = shown.first; r < shown.end; ++r) width = std::max(width, row_label(l, r).size());
        std::vector<float> row;
        for (std::uint64_t r = shown.first; r < shown.end; ++r) {
            if (auto ok = read_row(*m, *t, l, r, per_row, row); !ok) {
                value_error = ok.error();
                break;
            }
            if (jw) {
                json_row(*jw, l, r, row);
            } else {
                out.print("  {:<{}}  {}\n", row_label(l, r), width, value_line(row, l.row_size));
            }
        }
        if (jw) {
            jw->end_array();
            jw->end_object();
        }
    }

    std::optional<full_pass> pass;
    if (!value_error && (opt.stats || dump_file)) {
        dump_target target;
        target.file = std::move(dump_file);
        dump_file.reset();
        auto r = run_pass(*m, *t, opt.stats, target.file ? &target : nullptr, out);
        if (!r) {
            if (r.error().code == gguf::errc::io_error) {
                out.flush();
                return report_error(r.error());
            }
            value_error = r.error();
        } else {
            if (target.file) {
                if (auto c = target.file->commit(); !c) {
                    out.flush();
                    return report_error(c.error());
                }
            }
            pass = std::move(*r);
        }
    }

    if (jw) {
        if (pass && opt.stats) json_stats(*jw, pass->stats);
        if (pass && !opt.dump.empty()) {
            jw->key("dump");
            jw->begin_object(true);
            string_member(*jw, "file", opt.dump);
            jw->key("values");
            jw->number(pass->dumped);
            jw->key("bytes");
            jw->number(pass->dumped * 4);
            jw->end_object();
        }
        if (value_error) {
            if (!convertible) {
                jw->key("values");
                jw->null();
            }
            jw->key("error");
            jw->begin_object();
            jw->key("code");
            jw->string(gguf::to_string(value_error->code));
            jw->key("message");
            jw->string(json_text(value_error->message()));
            jw->end_object();
        }
        jw->end_object();
        jw->finish();
    } else {
        if (pass && opt.stats) print_text_stats(l, pass->stats, out);
        if (pass && !opt.dump.empty())
            out.print("Wrote {}: {} as little-endian f32, {} bytes\n", gguf::escape(opt.dump),
                      plural(pass->dumped, "value", "values"), pass->dumped * 4);
    }
    if (value_error) {
        out.flush();
        fmt::print(stderr, "Error: values: {}\n", value_error->message());
        return exit_parse;
    }
    return exit_ok;
}

}  // namespace

void tensor_add_options(CLI::App& sub) {
    sub.add_option("model", opt.model, "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set")
        ->required();
    sub.add_option("name", opt.name, "The tensor's name (a misspelled name gets close names suggested)")->required();
    opt.rows_opt = sub.add_option("--rows", opt.rows,
                                  "Rows to print, A:B half-open (also A:, :B, or one row A); a row is ne[0] values, "
                                  "rows count over ne[1]*ne[2]*ne[3] (default 0:4)");
    opt.head_opt = sub.add_option("--head", opt.head, "Values printed per row (default 8; 0: the whole row)")
                       ->check(whole_number(0, std::numeric_limits<std::uint32_t>::max()));
    sub.add_flag("--stats", opt.stats,
                 "Min, max, mean, standard deviation, max |x|, zeros, NaN (first index) and Inf over all values, "
                 "in one streaming pass");
    sub.add_option("--dump", opt.dump,
                   "Write all values as raw little-endian f32 in ggml element order (n_elements x 4 bytes) to FILE "
                   "(atomically), or to standard output with -");
    sub.add_flag("-f,--force", opt.force, "With --dump FILE: replace FILE if it exists (a regular file, or a link's target; never a file of the model, a FIFO, device or directory: use --dump - for those)");
    sub.add_flag("--json", opt.json, "Print one JSON document with the same facts");
    sub.add_flag("--no-mmap", opt.no_mmap, "Read the file into memory instead of mapping it");
    sub.footer(
        "Exit codes:\n"
        "  0  success\n"
        "  1  the file is not a valid GGUF model; no tensor of that name (close names are suggested); the\n"
        "     tensor's type cannot be converted to f32 (q8_1, i64: the layout is still printed)\n"
        "  2  usage error (bad option, --rows outside the tensor, --dump FILE exists without --force or is not a regular file)\n"
        "  3  I/O error: a file cannot be read or the dump cannot be written, out of memory\n");
}

int tensor_run() {
    warn_about_isa_choice();
    return run_printing(run);
}

}  // namespace minfer::cli

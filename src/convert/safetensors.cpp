// safetensors_file: the header read from nlohmann's events straight into the tensor table (no DOM: a
// header may be 100 MB), every entry checked as it closes, then the coverage of the data section.
#include "minfer/convert/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_set>

#include "json_events.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/json_value.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::convert {

namespace {


std::string range_text(std::uint64_t begin, std::uint64_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

std::string shape_text(dtype t, const std::vector<std::int64_t>& shape) {
    std::string s(to_string(t));
    s += " [";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(shape[i]);
    }
    s += ']';
    return s;
}

}  // namespace

// The header's events, turned into safetensors_file's table. Levels: 1 the root object, 2 a tensor
// entry (or __metadata__), 3 a shape or data_offsets array.
class safetensors_parser {
public:
    safetensors_parser(safetensors_file& out, std::uint64_t data_size, gguf::error& error)
        : out_(out), data_size_(data_size), error_(error) {}

    bool on_begin_object(std::uint64_t at) {
        if (level_ == 0) return enter();
        if (level_ == 1) {
            if (in_metadata_key_) {
                in_metadata_ = true;
                return enter();
            }
            entry_ = open_entry{};
            entry_.begin = at;
            field_ = field::none;
            return enter();
        }
        return not_expected(at, json_kind::object);
    }
    bool on_end_object(std::uint64_t /*at*/) {
        --level_;
        if (level_ == 1) {
            if (in_metadata_) {
                in_metadata_ = false;
                in_metadata_key_ = false;
                return true;
            }
            return close_entry();
        }
        return true;  // the root
    }
    bool on_begin_array(std::uint64_t at) {
        if (level_ == 2 && !in_metadata_ && (field_ == field::shape || field_ == field::data_offsets)) {
            if (field_ == field::shape) {
                entry_.shape_at = at;
                entry_.has_shape = true;
            } else {
                entry_.offsets_at = at;
                entry_.has_offsets = true;
                entry_.n_offsets = 0;
            }
            return enter();
        }
        return not_expected(at, json_kind::array);
    }
    bool on_end_array(std::uint64_t /*at*/) {
        --level_;
        if (field_ == field::data_offsets && entry_.n_offsets != 2)
            return fail(entry_.offsets_at, "data_offsets holds " + std::to_string(entry_.n_offsets) +
                                               " numbers, not 2 (begin and end)",
                        2, entry_.n_offsets);
        return true;
    }
    bool on_key(std::string& key, std::uint64_t at) {
        if (level_ == 1) {
            name_ = std::move(key);
            name_at_ = at;
            in_metadata_key_ = name_ == "__metadata__";
            if (!names_.insert(name_).second) return fail(at, "the name appears twice in the header");
            if (!in_metadata_key_ && name_.find('\0') != std::string::npos)
                return fail(at, "the name holds a NUL byte at position " + std::to_string(name_.find('\0')) +
                                    ", so C readers would see another name");
            return true;
        }
        if (in_metadata_) {
            if (out_.metadata_.contains(key)) return fail(at, "__metadata__ holds the key " + detail::in_quotes(key) + " twice");
            metadata_key_ = std::move(key);
            return true;
        }
        // level 2: a tensor entry's field
        if (key == "dtype") field_ = field::dtype;
        else if (key == "shape") field_ = field::shape;
        else if (key == "data_offsets") field_ = field::data_offsets;
        else
            return fail(at, "unknown field " + detail::in_quotes(key) + " (a tensor entry has dtype, shape and data_offsets)");
        const bool seen = field_ == field::dtype ? entry_.has_dtype
                          : field_ == field::shape ? entry_.has_shape
                                                   : entry_.has_offsets;
        if (seen) return fail(at, "the field " + detail::in_quotes(key) + " appears twice");
        return true;
    }
    bool on_string(std::string& s, std::uint64_t at) {
        if (in_metadata_ && level_ == 2) {
            out_.metadata_.emplace(std::move(metadata_key_), std::move(s));
            return true;
        }
        if (level_ == 2 && field_ == field::dtype) {
            const std::optional<dtype> t = dtype_from_name(s);
            if (!t)
                return fail(at, "unknown dtype " + detail::in_quotes(s) +
                                    " (the format's: BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, "
                                    "C64, F8_E4M3, F8_E5M2, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, F4, F6_E2M3, F6_E3M2)");
            entry_.type = *t;
            entry_.has_dtype = true;
            return true;
        }
        return not_expected(at, json_kind::string);
    }
    bool on_unsigned(std::uint64_t v, std::uint64_t at) {
        if (level_ != 3) return not_expected(at, json_kind::number);
        if (field_ == field::shape) {
            if (entry_.shape.size() == safetensors_max_dims)
                return fail(entry_.shape_at, "the shape has more than " + std::to_string(safetensors_max_dims) +
                                                 " dimensions");
            if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                return fail(at, "dimension " + std::to_string(v) + " does not fit a signed 64-bit integer");
            entry_.shape.push_back(static_cast<std::int64_t>(v));
            return true;
        }
        if (entry_.n_offsets < 2) entry_.offsets[entry_.n_offsets] = v;
        ++entry_.n_offsets;
        if (entry_.n_offsets > 2) return fail(entry_.offsets_at, "data_offsets holds more than 2 numbers (begin and end)", 2, entry_.n_offsets);
        return true;
    }
    bool on_signed(std::int64_t v, std::uint64_t at) {
        if (v == 0) return on_unsigned(0, at);  // "-0"
        if (level_ != 3) return not_expected(at, json_kind::number);
        return fail(at, std::string(field_ == field::shape ? "a dimension" : "an offset") + " is negative: " +
                            std::to_string(v));
    }
    bool on_float(double /*v*/, std::uint64_t at) {
        if (level_ != 3) return not_expected(at, json_kind::number);
        return fail(at, std::string(field_ == field::shape ? "a dimension" : "an offset") +
                            " is not an integer (a fraction, an exponent, or beyond 64 bits)");
    }
    bool on_bool(bool /*v*/, std::uint64_t at) { return not_expected(at, json_kind::boolean); }
    bool on_null(std::uint64_t at) { return not_expected(at, json_kind::null); }

    /// After a complete parse: the data section covered exactly, and the indexes.
    bool finish() {
        const std::vector<tensor_entry>& t = out_.tensors_;
        std::vector<std::uint32_t>& order = out_.by_offset_;
        order.resize(t.size());
        for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            if (t[a].data_begin != t[b].data_begin) return t[a].data_begin < t[b].data_begin;
            if (t[a].data_end != t[b].data_end) return t[a].data_end < t[b].data_end;
            return a < b;
        });
        // The reference's Metadata::validate: in offset order, each tensor starts where the previous ended.
        std::uint64_t covered = 0;
        const tensor_entry* previous = nullptr;
        for (std::uint32_t i : order) {
            const tensor_entry& e = t[i];
            name_ = e.name;
            if (e.data_begin > covered)
                return fail(offsets_at_[i],
                            "bytes " + range_text(covered, e.data_begin) +
                                " of the data section belong to no tensor (a hole before data_offsets " +
                                range_text(e.data_begin, e.data_end) + ")",
                            covered, e.data_begin);
            if (e.data_begin < covered)
                return fail(offsets_at_[i],
                            "data_offsets " + range_text(e.data_begin, e.data_end) + " overlap tensor " +
                                detail::in_quotes(previous->name) + " " + range_text(previous->data_begin, previous->data_end),
                            covered, e.data_begin);
            covered = e.data_end;
            previous = &e;
        }
        if (covered != data_size_) {  // the reference's MetadataIncompleteBuffer
            fail(0, std::to_string(data_size_ - covered) + " bytes at the end of the data section belong to no tensor",
                 covered, data_size_);
            error_.where = gguf::section::data;
            error_.offset = out_.data_offset() + covered;  // the first byte no tensor holds
            error_.subject.clear();
            return false;
        }
        std::vector<std::uint32_t>& names = out_.by_name_;
        names = order;
        std::sort(names.begin(), names.end(), [&](std::uint32_t a, std::uint32_t b) { return t[a].name < t[b].name; });
        return true;
    }

private:
    enum class field : std::uint8_t { none, dtype, shape, data_offsets };

    struct open_entry {
        std::uint64_t begin = 0;  // the entry's '{'
        bool has_dtype = false, has_shape = false, has_offsets = false;
        convert::dtype type = convert::dtype::f32;
        std::vector<std::int64_t> shape;
        std::uint64_t offsets[2] = {0, 0};
        std::uint64_t n_offsets = 0;
        std::uint64_t shape_at = 0, offsets_at = 0;  // where the arrays start
    };

    bool enter() {
        ++level_;
        return true;
    }

    // `at` is relative to the header text (which starts at byte 8); the error's offset is absolute. A
    // failure about a tensor is in the tensor table, one about the header's shape or __metadata__ in
    // the header.
    bool fail(std::uint64_t at, std::string detail, std::uint64_t expected = 0, std::uint64_t found = 0) {
        error_.code = codes::bad_safetensors;
        error_.where = !name_.empty() && !in_metadata_key_ ? gguf::section::tensor_info : gguf::section::header;
        error_.offset = 8 + at;
        error_.subject = name_;
        error_.detail = std::move(detail);
        error_.expected = expected;
        error_.found = found;
        return false;
    }

    bool not_expected(std::uint64_t at, json_kind found) {
        const std::string what(describe(found));
        if (level_ == 0) return fail(at, "the header is " + what + ", not a JSON object");
        if (level_ == 1) {
            return fail(at, "the value is " + what + (in_metadata_key_ ? ", not an object of strings" : ", not a tensor entry (an object)"));
        }
        if (in_metadata_) return fail(at, "__metadata__ value " + detail::in_quotes(metadata_key_) + " is " + what + ", not a string");
        if (level_ == 2) {
            switch (field_) {
                case field::dtype: return fail(at, "dtype is " + what + ", not a string");
                case field::shape: return fail(at, "shape is " + what + ", not an array of integers");
                case field::data_offsets: return fail(at, "data_offsets is " + what + ", not an array of two integers");
                case field::none: break;
            }
        }
        return fail(at, std::string(field_ == field::shape ? "a dimension" : "an offset") + " is " + what +
                            ", not a non-negative integer");
    }

    bool close_entry() {
        open_entry& e = entry_;
        if (!e.has_dtype || !e.has_shape || !e.has_offsets) {
            const char* missing = !e.has_dtype ? "dtype" : !e.has_shape ? "shape" : "data_offsets";
            return fail(e.begin, std::string("the tensor entry has no ") + missing);
        }
        const std::uint64_t begin = e.offsets[0];
        const std::uint64_t end = e.offsets[1];
        if (end < begin) return fail(e.offsets_at, "data_offsets " + range_text(begin, end) + " end before they begin", begin, end);
        if (end > data_size_)
            return fail(e.offsets_at,
                        "data_offsets " + range_text(begin, end) + " end past the data section (" +
                            std::to_string(data_size_) + " bytes)",
                        data_size_, end);
        // elements × bits / 8, every step checked: the reference refuses an overflow too
        std::uint64_t elements = 1;
        for (std::int64_t d : e.shape) {
            const auto u = static_cast<std::uint64_t>(d);
            if (u != 0 && elements > std::numeric_limits<std::uint64_t>::max() / u)
                return fail(e.shape_at, "the element count of " + shape_text(e.type, e.shape) + " overflows 64 bits");
            elements *= u;
        }
        const std::uint64_t bits_per = bit_size(e.type);
        if (elements > std::numeric_limits<std::uint64_t>::max() / bits_per)
            return fail(e.shape_at, "the bit size of " + shape_text(e.type, e.shape) + " overflows 64 bits");
        const std::uint64_t bits = elements * bits_per;
        if (bits % 8 != 0)
            return fail(e.shape_at, shape_text(e.type, e.shape) + " is " + std::to_string(bits) + " bits, not whole bytes");
        if (bits / 8 != end - begin)
            return fail(e.offsets_at,
                        shape_text(e.type, e.shape) + " is " + std::to_string(bits / 8) + " bytes, but data_offsets " +
                            range_text(begin, end) + " hold " + std::to_string(end - begin),
                        bits / 8, end - begin);
        if (out_.tensors_.size() >= std::numeric_limits<std::uint32_t>::max())
            return fail(e.begin, "more tensors than this reader indexes");
        tensor_entry& t = out_.tensors_.emplace_back();
        t.name = std::move(name_);
        t.dtype = e.type;
        t.shape = std::move(e.shape);
        t.n_elements = elements;
        t.data_begin = begin;
        t.data_end = end;
        t.file_begin = out_.data_offset() + begin;
        t.file_end = out_.data_offset() + end;
        t.header_offset = 8 + name_at_;
        offsets_at_.push_back(e.offsets_at);
        name_.clear();
        return true;
    }

    safetensors_file& out_;
    std::uint64_t data_size_;
    gguf::error& error_;
    int level_ = 0;
    field field_ = field::none;
    std::string name_;            // the tensor (level 1 key) being read
    std::uint64_t name_at_ = 0;
    bool in_metadata_key_ = false;
    bool in_metadata_ = false;
    std::string metadata_key_;
    open_entry entry_;
    std::unordered_set<std::string> names_;
    std::vector<std::uint64_t> offsets_at_;  // each tensor's data_offsets value (relative), for coverage errors
};

namespace {

gguf::error header_error(std::string_view name, std::uint64_t offset, std::string detail, std::uint64_t expected,
                         std::uint64_t found) {
    gguf::error e;
    e.code = codes::bad_safetensors;
    e.where = gguf::section::header;
    e.file = std::string(name);
    e.offset = offset;
    e.detail = std::move(detail);
    e.expected = expected;
    e.found = found;
    return e;
}

}  // namespace

gguf::result<safetensors_file> safetensors_file::open(const std::filesystem::path& path, gguf::load_mode mode) noexcept {
    auto bytes = gguf::mapped_file::open(path, mode);
    if (!bytes) return gguf::unexpected(std::move(bytes).error());
    try {
        return read(std::move(*bytes), path.string());
    } catch (...) {  // path.string() may allocate
        return gguf::unexpected(gguf::out_of_memory_error("opening a safetensors file"));
    }
}

gguf::result<safetensors_file> safetensors_file::read(gguf::mapped_file bytes, std::string name) noexcept {
    try {
        safetensors_file f;
        f.file_ = std::move(bytes);
        f.path_ = std::move(name);
        const std::span<const std::byte> all = f.file_.bytes();
        const std::uint64_t size = all.size();
        if (size < 8)
            return gguf::unexpected(header_error(f.path_, 0,
                                                 "the file is " + std::to_string(size) +
                                                     " bytes, shorter than the 8-byte header length",
                                                 8, size));
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<std::uint8_t>(all[static_cast<std::size_t>(i)]);
        if (n > safetensors_max_header_bytes)
            return gguf::unexpected(header_error(f.path_, 0,
                                                 "header length " + std::to_string(n) +
                                                     " is above the format's limit of 100000000 bytes",
                                                 safetensors_max_header_bytes, n));
        if (n > size - 8)
            return gguf::unexpected(header_error(f.path_, 0,
                                                 "header length " + std::to_string(n) + " is past the end of the file (" +
                                                     std::to_string(size - 8) + " bytes follow it)",
                                                 size - 8, n));
        if (n == 0)
            return gguf::unexpected(header_error(f.path_, 0, "header length 0: the header is empty, not a JSON object", 2, 0));
        f.header_size_ = n;

        gguf::error error;
        safetensors_parser parser(f, size - 8 - n, error);
        detail::json_failure failure;
        const std::string_view text(reinterpret_cast<const char*>(all.data()) + 8, static_cast<std::size_t>(n));
        // root, entry, array, and one more so that the parser (not the depth cap) says what nests too deep
        if (!detail::parse_json_events(text, parser, 4, failure)) {
            if (failure.out_of_memory) return gguf::unexpected(gguf::out_of_memory_error("reading a safetensors header"));
            if (error.code == gguf::errc::ok)  // a syntax error (the parser records its own)
                error = header_error(f.path_, 8 + failure.offset, "the header is not valid JSON: " + failure.detail, 0, 0);
            error.file = f.path_;
            return gguf::unexpected(std::move(error));
        }
        if (!parser.finish()) {
            error.file = f.path_;
            return gguf::unexpected(std::move(error));
        }
        return f;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("reading a safetensors header"));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading a safetensors header"));
    }
}

const tensor_entry* safetensors_file::find(std::string_view name) const noexcept {
    const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                                     [&](std::uint32_t i, std::string_view n) { return std::string_view(tensors_[i].name) < n; });
    if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
    return &tensors_[*it];
}

std::span<const std::byte> safetensors_file::tensor_data(const tensor_entry& t) const& noexcept {
    if (tensors_.empty() || &t < tensors_.data() || &t >= tensors_.data() + tensors_.size()) return {};
    return file_.bytes().subspan(static_cast<std::size_t>(t.file_begin), static_cast<std::size_t>(t.n_bytes()));
}

gguf::result<void> safetensors_file::check_convertible() const noexcept {
    for (const tensor_entry& t : tensors_)
        if (gguf::result<void> r = check_convertible(t); !r) return r;
    return {};
}

gguf::result<void> safetensors_file::check_convertible(const tensor_entry& t) const noexcept {
    if (is_convertible(t.dtype)) return {};
    try {
        gguf::error e;
        e.code = codes::unsupported_dtype;
        e.where = gguf::section::tensor_info;
        e.file = path_;
        e.offset = t.header_offset;
        e.subject = t.name;
        e.found = static_cast<std::uint64_t>(t.dtype);
        e.detail = "dtype " + std::string(to_string(t.dtype)) + " is not converted (supported: " +
                   std::string(convertible_dtype_names()) + ")";
        return gguf::unexpected(std::move(e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reporting an unsupported dtype"));
    }
}

}  // namespace minfer::convert

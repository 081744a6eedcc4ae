// Error text. Descriptions keep the wording of the seed (and of ggml's gguf.cpp) where one exists.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf {
namespace {

// The loader's codes by number; an empty entry is a number whose code moved to its library's header.
constexpr std::array<std::string_view, 70> code_names{
    "ok", "io_error", "out_of_memory", "truncated", "bad_magic", "bad_version", "byte_swapped",
    "version_unsupported", "version_too_new", "negative_count", "count_too_large", "empty_key", "duplicate_key",
    "bad_value_type", "nested_array", "string_too_long", "string_exceeds_file", "array_too_long",
    "array_exceeds_file", "bad_bool", "alignment_wrong_type", "bad_alignment", "bad_name_length",
    "duplicate_tensor", "bad_n_dims", "bad_dim", "shape_overflow", "bad_tensor_type", "removed_tensor_type",
    "not_block_multiple", "size_overflow", "offset_mismatch", "data_size_overflow", "data_truncated",
    "split_not_first", "split_no_mismatch", "split_count_mismatch", "split_part_missing",
    "split_tensor_count_mismatch", "split_duplicate_tensor", "split_bad_key", "key_not_found", "type_mismatch",
    "tensor_not_found", "index_out_of_range", "nul_in_name", "value_out_of_range", "split_arch_mismatch",
    "split_bad_name", "bad_value_text", {}, {}, {}, {}, {}, {}, "buffer_size_mismatch", {}, {}, {},
    "head_incomplete", "fetch_budget_exceeded", "http_status", {}, {}, "transfer_failed", "bad_hyperparameter",
    "model_incomplete", {}, "input_too_large"};
static_assert(code_names.size() == static_cast<std::size_t>(last_code) + 1);

// The registered library domains, by id (slot 0, the loader's, stays empty). Constant-initialized,
// so registration from other TUs' static initializers cannot run before it exists.
std::array<std::atomic<const error_domain*>, 256> registered_domains{};

constexpr std::array<std::string_view, 7> section_names{"file", "header", "metadata", "tensor_info", "data", "split",
                                                        "access"};

std::string num(std::uint64_t v) { return std::to_string(v); }
std::string snum(std::uint64_t v) { return std::to_string(static_cast<std::int64_t>(v)); }

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict on `"(" + std::string`.
std::string shape_text(const std::array<std::int64_t, 4>& s) {
    std::string out(1, '(');
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(s[i]);
    }
    out += ')';
    return out;
}

std::string quoted(std::string_view raw) {
    std::string out(1, '\'');
    out += escape(raw);
    out += '\'';
    return out;
}

std::string vt_name(std::uint64_t t) {
    return t < value_type_count ? std::string(to_string(static_cast<value_type>(t))) : "type " + num(t);
}

}  // namespace

error out_of_memory_error(std::string_view what) noexcept {
    error e;
    e.code = errc::out_of_memory;
    try {
        e.detail = what;
    } catch (...) {  // no memory for the text either: the code says enough
    }
    return e;
}

void register_error_domain(const error_domain& domain) noexcept {
    if (domain.id != domains::loader) registered_domains[domain.id].store(&domain, std::memory_order_release);
}

const error_domain* find_error_domain(std::uint8_t id) noexcept {
    return registered_domains[id].load(std::memory_order_acquire);
}

std::string_view to_string(errc code) noexcept {
    const std::uint8_t domain = domain_of(code);
    std::string_view name;
    if (domain == domains::loader) {
        const auto i = static_cast<std::size_t>(code);
        if (i < code_names.size()) name = code_names[i];
    } else if (const error_domain* d = find_error_domain(domain); d != nullptr && d->name != nullptr) {
        name = d->name(number_in_domain(code));
    }
    return name.empty() ? std::string_view("unknown") : name;
}

std::string_view to_string(section where) noexcept {
    const auto i = static_cast<std::size_t>(where);
    return i < section_names.size() ? section_names[i] : std::string_view("unknown");
}

std::string error::description() const { return describe(false); }

std::string error::describe(bool path_said) const {
    const std::string s = quoted(subject);
    // A part named in a split message: "this part" when message() has said its path already.
    const std::string who = path_said || file.empty() ? std::string("this part") : "split " + quoted(file);
    switch (code) {
        case errc::ok: return "no error";
        case errc::io_error: {
            // The path is said once: message() prefixes `file`; a description alone names it here.
            const std::string where_ = !subject.empty() ? " " + s : (!file.empty() && !path_said ? " " + quoted(file) : "");
            if (sys_errno == 0 && !detail.empty()) return "cannot read" + where_ + ": " + detail;  // not an OS failure
            return "cannot " + (detail.empty() ? std::string("open") : detail) + where_ + ": " +
                   std::error_code(sys_errno, std::generic_category()).message();
        }
        case errc::out_of_memory: return "out of memory" + (detail.empty() ? std::string() : " while " + detail);
        case errc::truncated:
            return "file ends while reading " + detail + ": needs " + num(expected) + " bytes, " + num(found) + " left";
        case errc::bad_magic: {
            std::string m;
            for (int i = 0; i < 4; ++i) m += static_cast<char>((found >> (8 * i)) & 0xFF);
            return "invalid magic characters: '" + escape(m) + "', expected 'GGUF'";
        }
        case errc::bad_version: return "bad GGUF version: " + num(found);
        case errc::byte_swapped:
            return "this GGUF file version " + num(found) +
                   " is extremely large, is there a mismatch between the host and model endianness?";
        case errc::version_unsupported: return "GGUFv1 is no longer supported, please use a more up-to-date version";
        case errc::version_too_new:
            return "this GGUF file is version " + num(found) + " but this software only supports up to version " +
                   num(expected);
        case errc::negative_count: return escape(subject) + " is negative: " + snum(found);
        case errc::count_too_large:
            return escape(subject) + " = " + num(found) + " is more than the rest of the file can hold (at most " +
                   num(expected) + ")";
        case errc::empty_key: return "key of KV " + std::to_string(index) + " is empty";
        case errc::duplicate_key:
            return "duplicate key " + s + " for KV " + num(expected) + " and " + num(found);
        case errc::bad_value_type:
            return "key " + s + " has invalid GGUF type " + num(found) + (detail.empty() ? "" : " (" + detail + ")");
        case errc::nested_array: return "key " + s + " is an array of arrays, which GGUF does not support";
        case errc::string_too_long:
            return "string length " + num(found) + " exceeds maximum " + num(expected) + string_context();
        case errc::string_exceeds_file:
            return "string length " + num(found) + " exceeds remaining file size " + num(expected) + " bytes" +
                   string_context();
        case errc::array_too_long:
            return "key " + s + ": array of " + num(found) + " elements exceeds maximum " + num(expected);
        case errc::array_exceeds_file:
            return "key " + s + ": array of " + num(found) + " " + detail + " elements exceeds remaining file size " +
                   num(expected) + " bytes";
        case errc::bad_bool: return "key " + s + ": bool value " + num(found) + " is neither 0 nor 1";
        case errc::alignment_wrong_type:
            return "general.alignment has type " + vt_name(found) + ", expected u32";
        case errc::bad_alignment: return "general.alignment must be a non-zero power of two, found " + num(found);
        case errc::bad_name_length:
            if (found == 0) return "tensor " + std::to_string(index) + " has an empty name";
            return "tensor name " + s + " is " + num(found) + " bytes, more than the maximum " + num(expected);
        case errc::duplicate_tensor:
            return "duplicate tensor name " + s + " for tensors " + num(expected) + " and " + num(found);
        case errc::bad_n_dims:
            return "tensor " + s + " has invalid number of dimensions: " + num(found) + " > " + num(expected);
        case errc::bad_dim:
            return "tensor " + s + " has invalid number of elements: " + snum(found) + " in dimension " + num(expected) +
                   (detail.empty() ? std::string() : ": " + detail);
        case errc::shape_overflow:
            return "tensor " + s + " with shape " + shape_text(shape) + " has more than INT64_MAX elements";
        case errc::bad_tensor_type: return "tensor " + s + " has invalid ggml type " + num(found);
        case errc::removed_tensor_type: {
            const type_traits* t = traits(static_cast<std::uint32_t>(found));
            return "tensor " + s + " has type " + num(found) + " (" + std::string(t ? t->name : "unknown") +
                   "), which ggml no longer supports in files; re-convert it as " +
                   std::string(t ? t->replaced_by : "a current type");
        }
        case errc::not_block_multiple:
            return "tensor " + s + " of type " + detail + " has " + num(found) +
                   " elements per row, not a multiple of block size (" + num(expected) + ")";
        case errc::size_overflow:
            return "tensor " + s + " with shape " + shape_text(shape) + " has a size in bytes > 18446744073709551615";
        case errc::offset_mismatch:
            return "tensor " + s + " has offset " + num(found) + ", expected " + num(expected);
        case errc::data_size_overflow:
            return "tensor " + s + " size overflow, cannot accumulate size " + num(expected) + " + " + num(found);
        case errc::data_truncated:
            return "tensor " + s + " needs the file to hold " + num(expected) + " bytes, but it has " + num(found) + ": " +
                   num(expected - found) + " bytes missing (truncated download?)";
        case errc::split_not_first:  // offset 0: decided from the name alone, no key was read
            return who +
                   (offset != 0 ? " has split.no=" + num(found) + ", expected 0"
                                : " is named as part " + num(found + 1) + ", not part 1") +
                   (detail.empty() ? "" : "; open part 1, '" + escape(detail) + "'");
        case errc::split_no_mismatch:
            return who + " has split.no=" + num(found) + ", expected " + num(expected);
        case errc::split_count_mismatch:
            return who + " has split.count=" + num(found) + ", expected " + num(expected) +
                   (detail.empty() ? "" : " " + detail);
        case errc::split_part_missing:
            return (path_said || file.empty() ? std::string("this split part") : "split part " + quoted(file)) + " is missing: " +
                   (sys_errno != 0 ? std::error_code(sys_errno, std::generic_category()).message()
                                   : detail.empty() ? std::string("not found") : detail);
        case errc::split_tensor_count_mismatch:
            return "split.tensors.count=" + num(expected) + " but the " + num(n_parts) + " parts hold " + num(found) +
                   " tensors";
        case errc::split_duplicate_tensor:
            return "tensor " + s + " appears in part " + num(expected) + " and part " + num(found);
        case errc::split_bad_key: return "key " + s + " " + detail;
        case errc::split_arch_mismatch: return "key " + s + " " + detail;
        case errc::split_bad_name:
            return "split.count=" + num(expected) + " and split.no=0 make this part 1 of a set, but its name is not " +
                   (detail.empty() ? std::string("of the form <name>-00001-of-NNNNN.gguf") : quoted(detail)) +
                   ", so the other parts cannot be found";
        case errc::bad_value_text:
            return (subject.empty() ? std::string("value") : "the value for key " + s) + " is not valid: " + detail;
        case errc::buffer_size_mismatch:
            return (detail.empty() ? std::string("buffer size") : detail) + ": " + num(found) + " given, " +
                   num(expected) + " needed";
        case errc::input_too_large:
            return (path_said || file.empty() ? std::string("it") : quoted(file)) + " has more than " + num(expected) +
                   " bytes, the most read" + (detail.empty() ? std::string() : " for " + detail);
        case errc::head_incomplete:
            return "the first " + num(found) + " bytes do not decide the parse; at least " + num(expected) +
                   " are needed";
        case errc::fetch_budget_exceeded:
            if (!detail.empty())  // a command's whole fetch (assemble: the heads and the tensors it takes)
                return "the fetch needs " + num(found) + " bytes, more than the fetch budget of " + num(expected) + " (" + detail +
                       "; raise it with --max-fetch)";
            return "the metadata and tensor table need at least " + num(found) + " bytes, more than the fetch budget of " +
                   num(expected) + " (raise it with --max-fetch)";
        case errc::http_status:
            return "the server answered HTTP " + num(found) + (detail.empty() ? std::string() : " (" + detail + ")");
        case errc::transfer_failed:
            return "the transfer failed" + (detail.empty() ? std::string() : ": " + detail);
        case errc::bad_hyperparameter:
            return detail.empty() ? "key " + s + " holds a value llama.cpp cannot use" : detail;
        case errc::model_incomplete:
            return "only the first " + num(found) + " of the file's " + num(expected) +
                   " bytes are held (a model opened from its head, such as a remote one): its tensor bytes are not "
                   "there; download the file first";
        case errc::key_not_found: return "key " + s + " not found";
        case errc::type_mismatch:
            return (subject.empty() ? std::string("value") : "key " + s) + " has type " + vt_name(found) + ", expected " +
                   vt_name(expected);
        case errc::tensor_not_found: return "tensor " + s + " not found";
        case errc::nul_in_name:
            return std::string(where == section::tensor_info ? "tensor name " : "key ") + s +
                   " holds a NUL byte at position " + num(found) + ", so C readers would see another name";
        case errc::value_out_of_range:
            return (subject.empty() ? std::string("value") : "key " + s) +
                   (item >= 0 ? " item " + std::to_string(item) : std::string()) +
                   (item >= 0 ? std::string(" does not fit the type asked for")
                              : " = " + num(found) + " (as stored bits) does not fit the type asked for (at most " +
                                    num(expected) + ")");
        case errc::index_out_of_range:
            return "index " + num(found) + " is out of range for an array of " + num(expected) + " elements";
        default: break;  // a library's code (or a number no one has)
    }
    // A library's code: described by its domain when the domain has it (names it).
    if (const error_domain* d = find_error_domain(domain_of(code));
        d != nullptr && d->describe != nullptr && d->name != nullptr && !d->name(number_in_domain(code)).empty())
        return d->describe(*this, path_said);
    return "unknown error";
}

// Which string: "(item 2 of 'tokenizer.ggml.tokens')", "(key of KV 3)", "(string value of 'k')".
std::string error::string_context() const {
    std::string what = item >= 0 ? "item " + std::to_string(item) : detail;
    if (!subject.empty()) return " (" + what + " of " + quoted(subject) + ")";
    if (index < 0) return what.empty() ? std::string() : " (" + what + ")";
    return " (" + what + " of " + (where == section::tensor_info ? "tensor " : "KV ") + std::to_string(index) + ")";
}

namespace detail {
const error& out_of_memory_fallback() noexcept {
    // Built on first use without allocating (its strings stay empty), so it cannot fail itself.
    static const error fallback = [] {
        error e;
        e.code = errc::out_of_memory;
        return e;
    }();
    return fallback;
}

void bad_result_access(const error* e) noexcept {
    // A programming error in the caller, never caused by a file: say what was there, then abort.
    if (e == nullptr) {
        std::fputs("minfer: error() called on a result that holds a value\n", stderr);
    } else {
        try {
            const std::string m = e->message();
            std::fprintf(stderr, "minfer: value of a failed result used; the error was: %s\n", m.c_str());
        } catch (...) {
            std::fprintf(stderr, "minfer: value of a failed result used; the error was [%.*s]\n",
                         static_cast<int>(to_string(e->code).size()), to_string(e->code).data());
        }
    }
    std::fflush(stderr);
    std::abort();
}
}  // namespace detail

std::string error::message() const {
    std::string m = escape(file);
    if (n_parts > 0) m += " (part " + num(part) + " of " + num(n_parts) + ")";
    if (!m.empty()) m += ": ";
    if (where == section::split && offset == 0) {
        m += "split: ";  // about a part as a whole, not a byte in it
    } else if (where != section::file && where != section::access) {
        m += std::string(to_string(where)) + " at byte " + num(offset) + ": ";
    }
    m += describe(true);
    m += " [";
    m += to_string(code);
    m += "]";
    return m;
}

}  // namespace minfer::gguf

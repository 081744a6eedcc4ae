// The command line's texts of `minfer quantize` and minfer.quantize(): TYPE through
// quant::parse_file_type and --override-kv through toolbox::parse_kv_override, on arbitrary text.
// A refusal is bad_value_text with a reason; an acceptance must be what the text says, recounted
// here without the parsers' code: a TYPE is a listed name in any case (which reads back as itself)
// or the decimal number of a file type, never COPY by number; an override's key is the text before
// the first '=' (1..127 bytes, no NUL anywhere), its kind the prefix after it, its value what
// strtoll / strtod / the literal text give for the rest. A broken promise traps.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/quantize.hpp"

namespace {

namespace q = minfer::quant;
using minfer::gguf::errc;
using minfer::toolbox::kv_override;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_quantize_args: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

std::string upper(std::string_view s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

// The text as a whole decimal number (digits only, leading zeros allowed), or -1 (also when too
// large for any file type).
long long whole_number(std::string_view s) {
    if (s.empty()) return -1;
    while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
    if (s.size() > 18) return -1;
    long long v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

void check_file_type(std::string_view text) {
    auto ft = q::parse_file_type(text);
    if (!ft) {
        require(ft.error().code == errc::bad_value_text && !ft.error().detail.empty(),
                "a TYPE refusal without a reason");
        return;
    }
    bool listed = false;
    for (const q::file_type_name& n : q::file_type_names())
        listed = listed || (n.name == ft->name && n.ftype == ft->ftype && n.copy == ft->copy);
    require(listed, "a TYPE that is not listed");
    const long long number = whole_number(text);
    const bool by_name = upper(text) == ft->name;
    const bool by_number = number == static_cast<long long>(static_cast<std::uint32_t>(ft->ftype)) && !ft->copy &&
                           ft->name == q::to_string(ft->ftype);
    require(by_name || by_number, "a TYPE that is neither its name nor its number");
    auto again = q::parse_file_type(ft->name);
    require(again && again->name == ft->name && again->ftype == ft->ftype && again->copy == ft->copy,
            "a TYPE name that does not read back as itself");
}

void check_override(std::string_view text) {
    auto o = minfer::toolbox::parse_kv_override(text);
    if (!o) {
        const auto& e = o.error();
        // (the subject keeps the text's first max_subject_bytes bytes)
        require(e.code == errc::bad_value_text && !e.detail.empty() &&
                    e.subject == text.substr(0, minfer::gguf::max_subject_bytes),
                "an override refusal without a reason or the text");
        return;
    }
    const std::size_t eq = text.find('=');
    require(eq != std::string_view::npos && o->key == text.substr(0, eq), "the key is not the text before '='");
    require(!o->key.empty() && o->key.size() <= 127, "a key of 0 or more than 127 bytes");
    require(text.find('\0') == std::string_view::npos, "a NUL accepted");
    const std::string_view rest = text.substr(eq + 1);
    auto after = [&](std::string_view prefix) {
        require(rest.starts_with(prefix), "the kind is not the prefix after '='");
        std::string v(rest.substr(prefix.size()));
        return v;
    };
    switch (o->type) {
        case kv_override::kind::int_: {
            std::string v = after("int:");
            require(!v.empty() && !std::isspace(static_cast<unsigned char>(v[0])), "an empty or spaced int");
            errno = 0;
            char* end = nullptr;
            const long long x = std::strtoll(v.c_str(), &end, 10);
            require(errno == 0 && end == v.c_str() + v.size() && x == o->int_value,
                    "an int that strtoll reads otherwise");
            break;
        }
        case kv_override::kind::float_: {
            std::string v = after("float:");
            require(!v.empty() && !std::isspace(static_cast<unsigned char>(v[0])), "an empty or spaced float");
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            require(end == v.c_str() + v.size(), "a float that strtod does not read whole");
            require(x == o->float_value || (std::isnan(x) && std::isnan(o->float_value)),
                    "a float that strtod reads otherwise");
            break;
        }
        case kv_override::kind::bool_: {
            const std::string v = after("bool:");
            require(v == (o->bool_value ? "true" : "false"), "a bool that is not its word");
            break;
        }
        case kv_override::kind::str: {
            const std::string v = after("str:");
            require(v == o->str_value && v.size() <= 127, "a string that is not the rest, or over 127 bytes");
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_file_type(text);
    check_override(text);
    return 0;
}

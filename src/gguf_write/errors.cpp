// The writing library's error codes: names and descriptions (moved out of the loader's error.cpp).
// The numbers are the low bytes of write_codes:: in minfer/gguf_write/errors.hpp; names never change (JSON, Python).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/gguf_write/errors.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::gguf {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 6> names{
    "token_not_found",
    "no_room_in_place",
    "journal_present",
    "journal_invalid",
    "too_many_parts",
    "output_not_regular"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

std::string num(std::uint64_t v) { return std::to_string(v); }
std::string quoted(std::string_view raw) {
    std::string out(1, '\'');
    out += gguf::escape(raw);
    out += '\'';
    return out;
}

std::string describe(const gguf::error& e, bool path_said) {
    const std::string s = quoted(e.subject);
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(write_codes::token_not_found):
            return e.found != 0 || e.detail.empty()
                       ? "token id " + num(e.found) + " is outside the vocabulary of " + num(e.expected) + " tokens"
                       : "no token of the vocabulary is " + e.detail;
        case gguf::number_in_domain(write_codes::no_room_in_place):
            return "the new metadata and tensor table need " + num(e.found) + " bytes but only " + num(e.expected) +
                   " fit before the tensor data: " + num(e.found - e.expected) +
                   " bytes missing (write a new file with -o instead)";
        case gguf::number_in_domain(write_codes::journal_present):
            return "an interrupted in-place edit left its undo journal " + (e.file.empty() ? std::string() : quoted(e.file)) +
                   "; run 'minfer edit --recover' on the model first";
        case gguf::number_in_domain(write_codes::journal_invalid): {
            // What to do: the journal cannot restore anything, so the model is as the interruption
            // left it; once it is checked, the journal only blocks every edit and can go.
            constexpr std::string_view suffix = ".minfer-undo";
            const std::string model = e.file.size() > suffix.size() && e.file.ends_with(suffix)
                                          ? quoted(e.file.substr(0, e.file.size() - suffix.size()))
                                          : std::string("MODEL");
            return "undo journal " + (e.file.empty() ? std::string() : quoted(e.file) + " ") + "cannot be used: " + e.detail +
                   ". The model was not touched: check it (minfer verify " + model +
                   "); if it is sound, remove the journal (minfer edit --discard-journal " + model +
                   ", or edit_discard_journal in Python), otherwise restore the model from a copy";
        }
        case gguf::number_in_domain(write_codes::too_many_parts):
            return "the split needs " + num(e.found) + " parts but split.count (u16) can count at most " + num(e.expected);
        case gguf::number_in_domain(write_codes::output_not_regular):
            return "cannot write the output" + (path_said || e.file.empty() ? std::string() : " " + quoted(e.file)) + ": " +
                   (e.detail.empty() ? std::string("it") : e.detail) +
                   ", not a regular file: an output only ever creates a file or replaces a regular one";
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{gguf::domains::gguf_write, "gguf_write", &name, &describe};

}  // namespace

const gguf::error_domain& write_errors_domain() noexcept { return domain; }

}  // namespace minfer::gguf

// The Content-Range parser reads a header straight from a server: any bytes go in. Whatever it
// accepts must keep its promises (FIRST ≤ LAST < TOTAL, or "*/TOTAL"), and print back to text that
// parses to the same range: the numbers it read are the numbers that were there. A broken promise traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/remote/content_range.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto r = minfer::remote::parse_content_range(text);
    if (!r) return 0;
    if (r->unsatisfied) {
        if (r->first != 0 || r->last != 0) __builtin_trap();
    } else if (r->first > r->last || r->last >= r->total) {
        __builtin_trap();
    }
    const std::string again = "bytes " + (r->unsatisfied ? std::string("*") : std::to_string(r->first) + "-" + std::to_string(r->last)) +
                              "/" + std::to_string(r->total);
    const auto r2 = minfer::remote::parse_content_range(again);
    if (!r2 || r2->unsatisfied != r->unsatisfied || r2->first != r->first || r2->last != r->last || r2->total != r->total)
        __builtin_trap();
    // every accepted text has the unit, a space, and digits, '-', '*', '/' and blanks only after it
    std::string_view t = text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    if (t.size() < 6) __builtin_trap();
    for (char c : t.substr(6))
        if (!((c >= '0' && c <= '9') || c == '-' || c == '*' || c == '/' || c == ' ' || c == '\t')) __builtin_trap();
    return 0;
}

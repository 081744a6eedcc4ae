// convert::model_card_metadata on arbitrary bytes (a README.md: its YAML front matter read as the reference's
// safe_load types it, then the general.* keys of the card). A refusal is bad_model_card (or out_of_memory);
// an acceptance gives only general.* keys, each once, string keys never empty, counts matching their
// entries. A broken promise traps.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/model_metadata.hpp"

namespace {

namespace cv = minfer::convert;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_model_card: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto keys = cv::model_card_metadata(text, "README.md");
    if (!keys) {
        const auto code = keys.error().code;
        require(code == cv::codes::bad_model_card || code == minfer::gguf::errc::out_of_memory, "an unexpected code");
        require(!keys.error().detail.empty(), "a refusal says why");
        return 0;
    }
    std::set<std::string> seen;
    for (const cv::vocab_key& k : *keys) {
        require(k.name.starts_with("general."), "a general.* key");
        require(seen.insert(k.name).second, "each key once");
        if (const auto* s = std::get_if<std::string>(&k.value)) require(!s->empty(), "no empty string is written");
        if (const auto* v = std::get_if<std::vector<std::string>>(&k.value)) require(!v->empty(), "no empty array");
        if (const auto* v = std::get_if<std::vector<std::int32_t>>(&k.value)) require(!v->empty(), "no empty array");
        if (k.name.ends_with(".count")) require(std::holds_alternative<std::uint32_t>(k.value), "a count is a u32");
    }
    return 0;
}

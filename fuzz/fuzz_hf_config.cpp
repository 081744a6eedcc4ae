// convert::parse_hf_config on arbitrary text. A refusal is bad_model_config or unsupported_architecture
// (or out_of_memory) at an offset inside the text; an acceptance must hold the header's promises (a
// supported architecture, counts within their ranges, heads divisible by the KV heads, the expert
// fields of a mixture of experts), and every value of the kept document must be reachable through
// json_value without failing, each at an offset inside the text, no deeper than the cap. A broken
// promise traps.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/hf_config.hpp"

namespace {

namespace cv = minfer::convert;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_hf_config: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

volatile std::uint64_t sink = 0;

// Every value below `v`, with the accessors a converter calls.
std::uint64_t walk(const cv::json_value& v, std::size_t size, int depth) {
    require(depth <= 64, "depth");
    require(v.present(), "a reached value is present");
    require(v.offset() < size, "offset inside the text");
    std::uint64_t values = 1;
    switch (v.kind()) {
        case cv::json_kind::object:
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::string_view key = v.key_at(i);
                require(v.member(key).offset() == v.at(i).offset(), "member finds the key (keys are unique)");
                values += walk(v.at(i), size, depth + 1);
            }
            break;
        case cv::json_kind::array:
            for (std::size_t i = 0; i < v.size(); ++i) values += walk(v.at(i), size, depth + 1);
            require(!v.at(v.size()).present(), "past the end is absent");
            break;
        case cv::json_kind::number:
            require(v.as_double().has_value(), "a number has a double");
            require(std::isfinite(*v.as_double()), "numbers are finite");
            if (v.as_int() && v.as_uint()) require(static_cast<std::uint64_t>(*v.as_int()) == *v.as_uint(), "int and uint agree");
            break;
        case cv::json_kind::string: sink = sink + v.as_string()->size(); break;
        case cv::json_kind::boolean: require(v.as_bool().has_value(), "a boolean"); break;
        case cv::json_kind::null: require(v.is_none() && !v.as_string(), "null"); break;
        case cv::json_kind::absent: fail("absent inside the document");
    }
    return values;
}

void check_accepted(const cv::hf_config& c, std::size_t size) {
    require(cv::architecture_from_hf_name(c.architecture_name) == c.arch, "architecture");
    require(c.num_hidden_layers > 0 && c.vocab_size > 0 && c.hidden_size > 0 && c.intermediate_size > 0 &&
                c.num_attention_heads > 0 && c.max_position_embeddings > 0,
            "required counts");
    require(std::isfinite(c.rms_norm_eps) && c.rms_norm_eps > 0, "epsilon");
    require(c.kv_heads() > 0 && c.num_attention_heads % c.kv_heads() == 0, "heads");
    require(c.head_size() > 0, "head size");
    if (!c.head_dim) require(c.hidden_size % c.num_attention_heads == 0, "hidden size divisible");
    if (c.rope_theta) require(std::isfinite(*c.rope_theta) && *c.rope_theta > 0, "rope theta");
    if (cv::is_moe(c.arch)) {
        require(c.num_experts && c.num_experts_per_tok && c.moe_intermediate_size, "expert fields");
        require(*c.num_experts_per_tok >= 1 && *c.num_experts_per_tok <= *c.num_experts, "experts used");
    }
    for (std::uint32_t layer : c.mlp_only_layers) require(layer < c.num_hidden_layers, "mlp_only_layers");
    for (const cv::special_token_id* t : {&c.bos_token_id, &c.eos_token_id, &c.pad_token_id, &c.unk_token_id})
        for (std::int64_t id : t->ids) require(id >= 0, "token ids");
    require(c.raw().kind() == cv::json_kind::object, "the document is an object");
    sink = sink + walk(c.raw(), size, 1);
    const cv::json_value rope = c.rope_parameters();
    require(!rope.present() || rope.kind() == cv::json_kind::object, "rope parameters");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto c = cv::parse_hf_config(text, "config.json");
    if (c) {
        check_accepted(*c, size);
        return 0;
    }
    const minfer::gguf::error& e = c.error();
    require(e.code == cv::codes::bad_model_config || e.code == cv::codes::unsupported_architecture ||
                e.code == minfer::gguf::errc::out_of_memory,
            "error code");
    require(e.offset <= size, "error offset inside the text");
    require(!e.message().empty(), "message");
    return 0;
}

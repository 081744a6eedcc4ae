// minfer::toolbox's assembly config: mergekit's YAML merge configuration, parsed and validated
// (include/minfer/toolbox/assemble_config.hpp). mergekit's own example configs parse to the
// structures they describe, their JSON forms to the same; parameters evaluate to the values worked
// out by hand from mergekit's rules; every refusal names its code, key path and byte; hostile text
// (deep nesting, alias bombs, huge lists and text) is refused quickly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/toolbox/assemble_config.hpp"
#include "minfer/toolbox/exit_code.hpp"

namespace {

namespace tb = minfer::toolbox;
using minfer::gguf::errc;
using tb::codes::bad_config;
using tb::codes::unsupported_config;

// ---- mergekit's examples (https://github.com/arcee-ai/mergekit at a6e4028), verbatim ----

// examples/linear.yml
constexpr std::string_view linear_yml = R"(models:
  - model: psmathur/orca_mini_v3_13b
    parameters:
      weight: 1.0
  - model: WizardLM/WizardLM-13B-V1.2
    parameters:
      weight: 0.3
  - model: garage-bAInd/Platypus2-13B
    parameters:
      weight: 0.5
merge_method: linear
dtype: float16
)";

// examples/ties.yml
constexpr std::string_view ties_yml = R"(models:
  - model: psmathur/orca_mini_v3_13b
    parameters:
      density: [1, 0.7, 0.1] # density gradient
      weight: 1.0
  - model: garage-bAInd/Platypus2-13B
    parameters:
      density: 0.5
      weight: [0, 0.3, 0.7, 1] # weight gradient
  - model: WizardLM/WizardMath-13B-V1.0
    parameters:
      density: 0.33
      weight:
        - filter: mlp
          value: 0.5
        - value: 0
merge_method: ties
base_model: TheBloke/Llama-2-13B-fp16
parameters:
  normalize: true
  int8_mask: true
dtype: float16
)";

// examples/bio-merge.yml
constexpr std::string_view bio_merge_yml = R"(models:
  - model: mistralai/Mistral-7B-Instruct-v0.2
    parameters:
      density: 0.5
      weight: 0.5
  - model: BioMistral/BioMistral-7B
    parameters:
      density: 0.5
      weight: 0.5
merge_method: ties
base_model: mistralai/Mistral-7B-v0.1
parameters:
  normalize: false
  int8_mask: true
dtype: float16
)";

// examples/gradient-slerp.yml
constexpr std::string_view gradient_slerp_yml = R"(slices:
  - sources:
      - model: psmathur/orca_mini_v3_13b
        layer_range: [0, 40]
      - model: garage-bAInd/Platypus2-13B
        layer_range: [0, 40]
# or, the equivalent models: syntax:
# models:
#   - model: psmathur/orca_mini_v3_13b
#   - model: garage-bAInd/Platypus2-13B
merge_method: slerp
base_model: psmathur/orca_mini_v3_13b
parameters:
  t:
    - filter: self_attn
      value: [0, 0.5, 0.3, 0.7, 1]
    - filter: mlp
      value: [1, 0.5, 0.7, 0.3, 0]
    - value: 0.5 # fallback for rest of tensors
dtype: float16
)";

// examples/orcamini-platy-44layer.yml
constexpr std::string_view orcamini_platy_yml = R"(slices:
  - sources:
    - model: psmathur/orca_mini_v3_13b
      layer_range: [0, 24]
  - sources:
    - model: garage-bAInd/Platypus2-13B
      layer_range: [20, 40]
merge_method: passthrough
dtype: float16
)";

// task_arithmetic has no example in examples/: the configuration of tests/test_basic_merges.py
// test_task_arithmetic_merge (two_model_config: weights 0.6 and 0.4, base_model, dtype bfloat16), with
// lambda as docs/merge_methods.md describes it.
constexpr std::string_view task_arithmetic_yml = R"(merge_method: task_arithmetic
base_model: model_c
models:
  - model: model_a
    parameters:
      weight: 0.6
  - model: model_b
    parameters:
      weight: 0.4
parameters:
  lambda: 0.8
dtype: bfloat16
)";

// The same configurations as JSON (what Python's json.dumps writes of the dicts).
constexpr std::string_view linear_json =
    R"({"models": [{"model": "psmathur/orca_mini_v3_13b", "parameters": {"weight": 1.0}}, {"model": "WizardLM/WizardLM-13B-V1.2", "parameters": {"weight": 0.3}}, {"model": "garage-bAInd/Platypus2-13B", "parameters": {"weight": 0.5}}], "merge_method": "linear", "dtype": "float16"})";
constexpr std::string_view ties_json =
    R"({"models": [{"model": "psmathur/orca_mini_v3_13b", "parameters": {"density": [1, 0.7, 0.1], "weight": 1.0}}, {"model": "garage-bAInd/Platypus2-13B", "parameters": {"density": 0.5, "weight": [0, 0.3, 0.7, 1]}}, {"model": "WizardLM/WizardMath-13B-V1.0", "parameters": {"density": 0.33, "weight": [{"filter": "mlp", "value": 0.5}, {"value": 0}]}}], "merge_method": "ties", "base_model": "TheBloke/Llama-2-13B-fp16", "parameters": {"normalize": true, "int8_mask": true}, "dtype": "float16"})";
constexpr std::string_view bio_merge_json =
    R"({"models": [{"model": "mistralai/Mistral-7B-Instruct-v0.2", "parameters": {"density": 0.5, "weight": 0.5}}, {"model": "BioMistral/BioMistral-7B", "parameters": {"density": 0.5, "weight": 0.5}}], "merge_method": "ties", "base_model": "mistralai/Mistral-7B-v0.1", "parameters": {"normalize": false, "int8_mask": true}, "dtype": "float16"})";
constexpr std::string_view gradient_slerp_json =
    R"({"slices": [{"sources": [{"model": "psmathur/orca_mini_v3_13b", "layer_range": [0, 40]}, {"model": "garage-bAInd/Platypus2-13B", "layer_range": [0, 40]}]}], "merge_method": "slerp", "base_model": "psmathur/orca_mini_v3_13b", "parameters": {"t": [{"filter": "self_attn", "value": [0, 0.5, 0.3, 0.7, 1]}, {"filter": "mlp", "value": [1, 0.5, 0.7, 0.3, 0]}, {"value": 0.5}]}, "dtype": "float16"})";
constexpr std::string_view orcamini_platy_json =
    R"({"slices": [{"sources": [{"model": "psmathur/orca_mini_v3_13b", "layer_range": [0, 24]}]}, {"sources": [{"model": "garage-bAInd/Platypus2-13B", "layer_range": [20, 40]}]}], "merge_method": "passthrough", "dtype": "float16"})";
constexpr std::string_view task_arithmetic_json =
    R"({"merge_method": "task_arithmetic", "base_model": "model_c", "models": [{"model": "model_a", "parameters": {"weight": 0.6}}, {"model": "model_b", "parameters": {"weight": 0.4}}], "parameters": {"lambda": 0.8}, "dtype": "bfloat16"})";

tb::assemble_config parse_ok(std::string_view text) {
    auto r = tb::parse_assemble_config(text, "config.yml");
    EXPECT_TRUE(r) << (r ? std::string() : r.error().message()) << "\n" << text;
    return r ? *std::move(r) : tb::assemble_config{};
}

// Everything a config says, as text (its offsets apart): two configs that say the same compare equal.
std::string numbers(const tb::scalar_or_gradient& v) {
    std::string s = v.gradient ? "[" : "";
    for (std::size_t i = 0; i < v.numbers.size(); ++i) s += (i ? "," : "") + std::to_string(v.numbers[i]);
    return s + (v.gradient ? "]" : "");
}
std::string summary(const tb::parameter_map& pm) {
    std::string s = "{";
    for (const tb::parameter_setting& p : pm.settings) {
        s += p.name + "=";
        if (p.conditions.empty()) s += numbers(p.value);
        for (const tb::parameter_condition& c : p.conditions) s += "(" + c.filter.value_or("*none*") + ":" + numbers(c.value) + ")";
        s += ";";
    }
    return s + "}";
}
std::string summary(const tb::assemble_config& c) {
    std::string s = std::string(tb::to_string(c.method));
    s += " base=" + (c.base_model ? c.base_model->text : "-");
    for (const tb::input_model& m : c.models) s += " model(" + m.model.text + summary(m.parameters) + ")";
    for (const tb::output_slice& sl : c.slices) {
        s += " slice(";
        for (const tb::slice_source& src : sl.sources)
            s += src.model.text + "[" + std::to_string(src.first) + "," + std::to_string(src.end) + ")" + summary(src.parameters);
        s += (sl.base_model ? " base=" + sl.base_model->text : "") + summary(sl.parameters) + ")";
    }
    s += " params" + summary(c.parameters);
    s += " dtype=" + std::string(c.dtype ? tb::to_string(*c.dtype) : "-");
    s += " out_dtype=" + std::string(c.out_dtype ? tb::to_string(*c.out_dtype) : "-");
    s += c.tokenizer == tb::tokenizer_choice::base ? " tokenizer=base" : " tokenizer=donor";
    s += " name=" + c.name;
    for (const tb::tensor_rule& r : c.tensors) s += " rule(" + r.pattern + "->" + r.model.text + ")";
    return s;
}

std::uint64_t at(std::string_view text, std::string_view needle, std::size_t nth = 0) {
    std::size_t p = text.find(needle);
    while (nth-- > 0 && p != std::string_view::npos) p = text.find(needle, p + 1);
    EXPECT_NE(p, std::string_view::npos) << needle;
    return p;
}

// ---- the examples ----

TEST(AssembleConfigExamples, Linear) {
    const tb::assemble_config c = parse_ok(linear_yml);
    EXPECT_EQ(c.method, tb::merge_method::linear);
    EXPECT_FALSE(c.base_model);
    ASSERT_EQ(c.models.size(), 3u);
    EXPECT_EQ(c.models[1].model.text, "WizardLM/WizardLM-13B-V1.2");
    EXPECT_EQ(c.models[1].model.offset, at(linear_yml, "WizardLM/"));
    ASSERT_NE(c.models[2].parameters.find("weight"), nullptr);
    EXPECT_EQ(c.models[2].parameters.find("weight")->value.numbers, std::vector<double>{0.5});
    EXPECT_FALSE(c.models[2].parameters.find("weight")->value.gradient);
    EXPECT_TRUE(c.slices.empty());
    EXPECT_EQ(c.dtype, tb::config_dtype::float16);
    EXPECT_FALSE(c.out_dtype);
    EXPECT_EQ(c.tokenizer, tb::tokenizer_choice::donor);
    EXPECT_EQ(c.file, "config.yml");
    EXPECT_EQ(tb::donor_model(c).text, "psmathur/orca_mini_v3_13b");  // no base_model: the first model
    EXPECT_EQ(summary(c),
              "linear base=- model(psmathur/orca_mini_v3_13b{weight=1.000000;}) model(WizardLM/WizardLM-13B-V1.2{weight=0.300000;}) "
              "model(garage-bAInd/Platypus2-13B{weight=0.500000;}) params{} dtype=float16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, Ties) {
    const tb::assemble_config c = parse_ok(ties_yml);
    EXPECT_EQ(c.method, tb::merge_method::ties);
    ASSERT_TRUE(c.base_model);
    EXPECT_EQ(c.base_model->text, "TheBloke/Llama-2-13B-fp16");
    EXPECT_EQ(tb::donor_model(c).text, "TheBloke/Llama-2-13B-fp16");
    ASSERT_EQ(c.models.size(), 3u);
    const tb::parameter_setting* density = c.models[0].parameters.find("density");
    ASSERT_NE(density, nullptr);
    EXPECT_TRUE(density->value.gradient);
    EXPECT_EQ(density->value.numbers, (std::vector<double>{1, 0.7, 0.1}));
    const tb::parameter_setting* weight = c.models[2].parameters.find("weight");
    ASSERT_NE(weight, nullptr);
    ASSERT_EQ(weight->conditions.size(), 2u);
    EXPECT_EQ(weight->conditions[0].filter, "mlp");
    EXPECT_EQ(weight->conditions[0].value.numbers, std::vector<double>{0.5});
    EXPECT_FALSE(weight->conditions[1].filter);
    EXPECT_EQ(weight->conditions[1].offset, at(ties_yml, "value: 0\n"));  // a block map starts at its first key
    // booleans are 1 and 0, as pydantic makes them of a float setting
    EXPECT_EQ(c.parameters.find("normalize")->value.numbers, std::vector<double>{1});
    EXPECT_EQ(c.parameters.find("int8_mask")->value.numbers, std::vector<double>{1});
    EXPECT_EQ(summary(c),
              "ties base=TheBloke/Llama-2-13B-fp16 model(psmathur/orca_mini_v3_13b{density=[1.000000,0.700000,0.100000];weight=1.000000;}) "
              "model(garage-bAInd/Platypus2-13B{density=0.500000;weight=[0.000000,0.300000,0.700000,1.000000];}) "
              "model(WizardLM/WizardMath-13B-V1.0{density=0.330000;weight=(mlp:0.500000)(*none*:0.000000);}) "
              "params{normalize=1.000000;int8_mask=1.000000;} dtype=float16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, BioMerge) {
    const tb::assemble_config c = parse_ok(bio_merge_yml);
    EXPECT_EQ(c.method, tb::merge_method::ties);
    EXPECT_EQ(c.parameters.find("normalize")->value.numbers, std::vector<double>{0});
    EXPECT_EQ(summary(c),
              "ties base=mistralai/Mistral-7B-v0.1 model(mistralai/Mistral-7B-Instruct-v0.2{density=0.500000;weight=0.500000;}) "
              "model(BioMistral/BioMistral-7B{density=0.500000;weight=0.500000;}) params{normalize=0.000000;int8_mask=1.000000;} "
              "dtype=float16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, GradientSlerp) {
    const tb::assemble_config c = parse_ok(gradient_slerp_yml);
    EXPECT_EQ(c.method, tb::merge_method::slerp);
    ASSERT_EQ(c.slices.size(), 1u);
    ASSERT_EQ(c.slices[0].sources.size(), 2u);
    EXPECT_EQ(c.slices[0].sources[1].first, 0u);
    EXPECT_EQ(c.slices[0].sources[1].end, 40u);
    EXPECT_EQ(c.slices[0].layers(), 40u);
    EXPECT_EQ(c.slices[0].sources[1].offset, at(gradient_slerp_yml, "model: garage"));
    const tb::parameter_setting* t = c.parameters.find("t");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->offset, at(gradient_slerp_yml, "- filter: self_attn"));
    EXPECT_EQ(summary(c),
              "slerp base=psmathur/orca_mini_v3_13b slice(psmathur/orca_mini_v3_13b[0,40){}garage-bAInd/Platypus2-13B[0,40){}{}) "
              "params{t=(self_attn:[0.000000,0.500000,0.300000,0.700000,1.000000])(mlp:[1.000000,0.500000,0.700000,0.300000,0.000000])"
              "(*none*:0.500000);} dtype=float16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, PassthroughFrankenmerge) {
    const tb::assemble_config c = parse_ok(orcamini_platy_yml);
    EXPECT_EQ(c.method, tb::merge_method::passthrough);
    ASSERT_EQ(c.slices.size(), 2u);
    EXPECT_EQ(c.slices[1].sources[0].first, 20u);
    EXPECT_EQ(c.slices[1].layers(), 20u);
    EXPECT_EQ(tb::donor_model(c).text, "psmathur/orca_mini_v3_13b");  // the first slice's first source
    EXPECT_EQ(summary(c),
              "passthrough base=- slice(psmathur/orca_mini_v3_13b[0,24){}{}) slice(garage-bAInd/Platypus2-13B[20,40){}{}) params{} "
              "dtype=float16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, TaskArithmetic) {
    const tb::assemble_config c = parse_ok(task_arithmetic_yml);
    EXPECT_EQ(c.method, tb::merge_method::task_arithmetic);
    EXPECT_EQ(c.dtype, tb::config_dtype::bfloat16);
    EXPECT_EQ(summary(c),
              "task_arithmetic base=model_c model(model_a{weight=0.600000;}) model(model_b{weight=0.400000;}) params{lambda=0.800000;} "
              "dtype=bfloat16 out_dtype=- tokenizer=donor name=");
}

TEST(AssembleConfigExamples, JsonParsesTheSame) {
    const std::pair<std::string_view, std::string_view> pairs[] = {
        {linear_yml, linear_json},           {ties_yml, ties_json},
        {bio_merge_yml, bio_merge_json},     {gradient_slerp_yml, gradient_slerp_json},
        {orcamini_platy_yml, orcamini_platy_json}, {task_arithmetic_yml, task_arithmetic_json}};
    for (const auto& [yml, json] : pairs) {
        const std::string a = summary(parse_ok(yml)), b = summary(parse_ok(json));
        EXPECT_EQ(a, b);
        EXPECT_FALSE(a.empty());
    }
    // JSON's offsets are bytes too: the second model's text starts after its quote
    const tb::assemble_config c = parse_ok(linear_json);
    EXPECT_EQ(c.models[1].model.offset, at(linear_json, "\"WizardLM/"));
}

TEST(AssembleConfigExamples, PassthroughOfOneModelAndItsScale) {
    // tests/test_basic_merges.py test_passthrough_scale: models: with one model, a conditional scale
    const tb::assemble_config c = parse_ok(
        "merge_method: passthrough\nmodels:\n  - model: model_a\n    parameters:\n      scale:\n"
        "        - filter: o_proj\n          value: 0\n        - value: 1\n");
    tb::tensor_site site{"blk.2.attn_output.weight", {}, "llama", 0, 2, 4};
    EXPECT_EQ(tb::parameter_value(c, "scale", site, 0), 0.0);  // o_proj: mergekit's name of attn_output
    site.name = "blk.2.attn_q.weight";
    EXPECT_EQ(tb::parameter_value(c, "scale", site, 0), 1.0);
}

// ---- parameter_value, against values worked out from mergekit's rules ----

TEST(AssembleConfigParameters, GradientSlerpAtFirstMiddleAndLastLayer) {
    const tb::assemble_config c = parse_ok(gradient_slerp_yml);
    // One slice of 40 layers: the position of layer i is t = i / 39 (plan.py plan_slice); a gradient of
    // 5 numbers at t: scaled = 4t, i0 = int(scaled), frac = scaled - i0, value = (1-frac)·g[i0] + frac·g[i0+1].
    auto t_of = [&](std::string_view name, std::uint32_t layer, std::string_view arch = "llama") {
        return tb::parameter_value(c, "t", tb::tensor_site{name, {}, arch, 0, layer, 40});
    };
    // layer 0: t = 0 -> g[0]: self_attn 0, mlp 1
    EXPECT_EQ(t_of("blk.0.attn_q.weight", 0), 0.0);
    EXPECT_EQ(t_of("blk.0.ffn_up.weight", 0), 1.0);
    // layer 39: t = 1 -> g[4]: self_attn 1, mlp 0
    EXPECT_EQ(t_of("blk.39.attn_k.weight", 39), 1.0);
    EXPECT_EQ(t_of("blk.39.ffn_down.weight", 39), 0.0);
    // layer 13: t = 1/3, scaled = 4/3, i0 = 1, frac = 1/3: self_attn (2/3)·0.5 + (1/3)·0.3 = 13/30,
    // mlp (2/3)·0.5 + (1/3)·0.7 = 17/30 (and bit for bit what mergekit's Python computes)
    EXPECT_DOUBLE_EQ(*t_of("blk.13.attn_v.weight", 13), 13.0 / 30);
    EXPECT_EQ(*t_of("blk.13.attn_v.weight", 13), 0.43333333333333335);
    EXPECT_DOUBLE_EQ(*t_of("blk.13.ffn_gate.weight", 13), 17.0 / 30);
    EXPECT_EQ(*t_of("blk.13.ffn_gate.weight", 13), 0.5666666666666667);
    // layer 20: t = 20/39, scaled = 80/39, i0 = 2, frac = 2/39: self_attn 0.3 + (2/39)·0.4, mlp 0.7 - (2/39)·0.4
    EXPECT_DOUBLE_EQ(*t_of("blk.20.attn_output.weight", 20), 0.3 + 0.8 / 39);
    EXPECT_EQ(*t_of("blk.20.attn_output.weight", 20), 0.32051282051282043);
    EXPECT_DOUBLE_EQ(*t_of("blk.20.ffn_up.weight", 20), 0.7 - 0.8 / 39);
    // neither filter (the norms: input_layernorm, post_attention_layernorm): the fallback
    EXPECT_EQ(t_of("blk.20.attn_norm.weight", 20), 0.5);
    EXPECT_EQ(t_of("blk.20.ffn_norm.weight", 20), 0.5);
    // outside the layers the position is 0, and model.embed_tokens / lm_head match neither filter
    EXPECT_EQ(tb::parameter_value(c, "t", tb::tensor_site{"token_embd.weight", {}, "llama", 0, std::nullopt, 40}), 0.5);
    EXPECT_EQ(tb::parameter_value(c, "t", tb::tensor_site{"output.weight", {}, "llama", 0, std::nullopt, 40}), 0.5);
    // Without the architecture only the GGUF name is searched: "self_attn" and "mlp" are not in it
    EXPECT_EQ(t_of("blk.13.attn_v.weight", 13, {}), 0.5);
    EXPECT_EQ(t_of("blk.13.ffn_up.weight", 13, {}), 0.5);
}

TEST(AssembleConfigParameters, GradientPositions) {
    const tb::assemble_config c = parse_ok("merge_method: slerp\nbase_model: a\nmodels: [{model: b}]\nparameters: {t: [0, 0.3, 0.7, 1]}\n");
    auto t_at = [&](std::optional<std::uint32_t> layer, std::uint32_t layers) {
        return tb::parameter_value(c, "t", tb::tensor_site{"x", {}, {}, 0, layer, layers});
    };
    // 5 layers: t = i/4; scaled = 3t
    EXPECT_EQ(t_at(0, 5), 0.0);
    EXPECT_DOUBLE_EQ(*t_at(1, 5), 0.225);  // scaled 0.75: 0.25·0 + 0.75·0.3
    EXPECT_EQ(*t_at(1, 5), 0.22499999999999998);
    EXPECT_DOUBLE_EQ(*t_at(2, 5), 0.5);  // scaled 1.5: 0.5·0.3 + 0.5·0.7
    EXPECT_EQ(t_at(4, 5), 1.0);
    // a slice of one layer: t = 1 (plan_slice), the last number
    EXPECT_EQ(t_at(0, 1), 1.0);
    // outside the layers: t = 0 (plan_module), the first number
    EXPECT_EQ(t_at(std::nullopt, 5), 0.0);
    // out of range
    EXPECT_FALSE(t_at(5, 5));
    EXPECT_FALSE(t_at(0, 0));
}

TEST(AssembleConfigParameters, TiesExamplePerModel) {
    const tb::assemble_config c = parse_ok(ties_yml);
    // a 40-layer model (models: is one slice of every layer)
    auto value = [&](std::string_view p, std::size_t model, std::string_view name, std::optional<std::uint32_t> layer) {
        return tb::parameter_value(c, p, tb::tensor_site{name, {}, "llama", 0, layer, 40}, model);
    };
    // model 0: density [1, 0.7, 0.1]; at layer 20 scaled = 40/39, frac = 1/39: (38/39)·0.7 + (1/39)·0.1
    EXPECT_EQ(value("density", 0, "blk.0.attn_q.weight", 0), 1.0);
    EXPECT_DOUBLE_EQ(*value("density", 0, "blk.20.attn_q.weight", 20), (38 * 0.7 + 0.1) / 39);
    EXPECT_EQ(*value("density", 0, "blk.20.attn_q.weight", 20), 0.6846153846153846);
    EXPECT_DOUBLE_EQ(*value("density", 0, "blk.39.attn_q.weight", 39), 0.1);
    EXPECT_EQ(value("weight", 0, "blk.5.ffn_up.weight", 5), 1.0);
    // model 1: weight [0, 0.3, 0.7, 1]; at layer 10 scaled = 30/39, frac = 10/13: (10/13)·0.3
    EXPECT_DOUBLE_EQ(*value("weight", 1, "blk.10.attn_q.weight", 10), 3.0 / 13);
    EXPECT_EQ(*value("weight", 1, "blk.10.attn_q.weight", 10), 0.23076923076923073);
    EXPECT_EQ(value("density", 1, "blk.10.attn_q.weight", 10), 0.5);
    // model 2: weight 0.5 for mlp tensors (mergekit's names), else 0
    EXPECT_EQ(value("weight", 2, "blk.10.ffn_down.weight", 10), 0.5);
    EXPECT_EQ(value("weight", 2, "blk.10.attn_q.weight", 10), 0.0);
    EXPECT_EQ(value("weight", 2, "token_embd.weight", std::nullopt), 0.0);
    // the merge's parameters (no model): the config's
    EXPECT_EQ(tb::parameter_value(c, "normalize", tb::tensor_site{"blk.1.attn_q.weight", {}, "llama", 0, 1, 40}), 1.0);
    EXPECT_EQ(tb::parameter_value(c, "int8_mask", tb::tensor_site{"blk.1.attn_q.weight", {}, "llama", 0, 1, 40}), 1.0);
    // unset: nullopt, the default is the caller's
    EXPECT_FALSE(tb::parameter_value(c, "lambda", tb::tensor_site{"blk.1.attn_q.weight", {}, "llama", 0, 1, 40}));
    EXPECT_EQ(tb::find_method_parameter(tb::merge_method::ties, "lambda")->default_value, 1.0);
    // the base model mergekit adds (no source): no per-model value
    EXPECT_FALSE(tb::parameter_value(c, "weight", tb::tensor_site{"blk.1.attn_q.weight", {}, "llama", 0, 1, 40}));
    // a model index out of range
    EXPECT_FALSE(value("weight", 3, "blk.1.attn_q.weight", 1));
}

TEST(AssembleConfigParameters, ModelOverSliceOverGlobal) {
    const std::string_view text = R"(merge_method: linear
slices:
  - sources:
      - model: a
        layer_range: [0, 4]
        parameters: {weight: 0.9}
      - model: b
        layer_range: [4, 8]
    parameters:
      weight: [{filter: attn_q, value: 0.7}]
  - sources:
      - model: a
        layer_range: [4, 6]
      - model: b
        layer_range: [0, 2]
parameters:
  weight: 0.3
  normalize: [{filter: ffn, value: 0}]
)";
    const tb::assemble_config c = parse_ok(text);
    const tb::tensor_site q{"blk.1.attn_q.weight", "blk.5.attn_q.weight", {}, 0, 1, 4};
    const tb::tensor_site k{"blk.1.attn_k.weight", "blk.5.attn_k.weight", {}, 0, 1, 4};
    EXPECT_EQ(tb::parameter_value(c, "weight", q, 0), 0.9);  // the source's own
    EXPECT_EQ(tb::parameter_value(c, "weight", q, 1), 0.7);  // the slice's (its filter matches)
    EXPECT_EQ(tb::parameter_value(c, "weight", k, 1), 0.3);  // the slice's filter does not: the config's
    const tb::tensor_site second{"blk.5.attn_q.weight", "blk.1.attn_q.weight", {}, 1, 1, 2};
    EXPECT_EQ(tb::parameter_value(c, "weight", second, 0), 0.3);
    EXPECT_FALSE(tb::parameter_value(c, "weight", second, 2));                            // no source 2
    EXPECT_FALSE(tb::parameter_value(c, "weight", tb::tensor_site{"x", {}, {}, 2, 0, 2}, 0));  // no slice 2
    // a conditional list that matches nothing yields nothing at its level: unset here
    EXPECT_EQ(tb::parameter_value(c, "normalize", tb::tensor_site{"blk.1.ffn_up.weight", {}, {}, 0, 1, 4}), 0.0);
    EXPECT_FALSE(tb::parameter_value(c, "normalize", q));
}

TEST(AssembleConfigParameters, PerModelValuesUseTheSourceName) {
    // plan_tensor evaluates a model's parameters for its input tensor (the source's layer index), the
    // merge's for the output tensor
    const tb::assemble_config c = parse_ok(R"(merge_method: linear
slices:
  - sources:
      - {model: a, layer_range: [3, 4], parameters: {weight: [{filter: blk.3., value: 2}, {value: 1}]}}
parameters:
  normalize: [{filter: blk.3., value: 0}, {value: 1}]
)");
    const tb::tensor_site site{"blk.0.attn_q.weight", "blk.3.attn_q.weight", {}, 0, 0, 1};
    EXPECT_EQ(tb::parameter_value(c, "weight", site, 0), 2.0);
    EXPECT_EQ(tb::parameter_value(c, "normalize", site), 1.0);
}

TEST(AssembleConfigParameters, FilterRules) {
    // config.py evaluate_setting: no filter and "*" match everything, "" is in every non-empty name
    const tb::assemble_config c = parse_ok(R"(merge_method: slerp
base_model: a
models: [{model: b}]
parameters:
  t:
    - filter: "*"
      value: 0.25
)");
    EXPECT_EQ(tb::parameter_value(c, "t", tb::tensor_site{"anything", {}, {}, 0, 0, 1}), 0.25);
    const tb::assemble_config e = parse_ok(
        "merge_method: slerp\nbase_model: a\nmodels: [{model: b}]\nparameters:\n  t: [{filter: '', value: 0.75}]\n");
    EXPECT_EQ(tb::parameter_value(e, "t", tb::tensor_site{"anything", {}, {}, 0, 0, 1}), 0.75);
    EXPECT_FALSE(tb::parameter_value(e, "t", tb::tensor_site{"", {}, {}, 0, 0, 1}));  // an empty name matches no filter
    // the first matching entry wins, its value evaluated at the tensor's position
    const tb::assemble_config f = parse_ok(R"(merge_method: slerp
base_model: a
models: [{model: b}]
parameters:
  t:
    - {filter: attn, value: [0, 1]}
    - {filter: attn_q, value: 0.5}
    - {value: 0.1}
)");
    EXPECT_DOUBLE_EQ(*tb::parameter_value(f, "t", tb::tensor_site{"blk.1.attn_q.weight", {}, {}, 0, 1, 3}), 0.5);
    EXPECT_EQ(tb::parameter_value(f, "t", tb::tensor_site{"blk.2.attn_q.weight", {}, {}, 0, 2, 3}), 1.0);
    EXPECT_EQ(tb::parameter_value(f, "t", tb::tensor_site{"blk.2.ffn_up.weight", {}, {}, 0, 2, 3}), 0.1);
}

TEST(AssembleConfigParameters, MergekitNames) {
    const std::pair<std::string_view, std::string_view> llama[] = {
        {"token_embd.weight", "model.embed_tokens.weight"},
        {"output_norm.weight", "model.norm.weight"},
        {"output.weight", "lm_head.weight"},
        {"blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"},
        {"blk.12.attn_q.weight", "model.layers.12.self_attn.q_proj.weight"},
        {"blk.12.attn_q.bias", "model.layers.12.self_attn.q_proj.bias"},
        {"blk.12.attn_k.weight", "model.layers.12.self_attn.k_proj.weight"},
        {"blk.12.attn_v.weight", "model.layers.12.self_attn.v_proj.weight"},
        {"blk.12.attn_output.weight", "model.layers.12.self_attn.o_proj.weight"},
        {"blk.12.ffn_norm.weight", "model.layers.12.post_attention_layernorm.weight"},
        {"blk.12.ffn_gate.weight", "model.layers.12.mlp.gate_proj.weight"},
        {"blk.12.ffn_up.weight", "model.layers.12.mlp.up_proj.weight"},
        {"blk.127.ffn_down.weight", "model.layers.127.mlp.down_proj.weight"},
        {"rope_freqs.weight", ""},
        {"blk.1.ffn_up_exps.weight", ""},
        {"blk.x.attn_q.weight", ""},
        {"blk.1.attn_q", ""},
        {"blk.1.attn_q.scale", ""},
    };
    for (const auto& [gguf, hf] : llama) EXPECT_EQ(tb::mergekit_tensor_name("llama", gguf), hf) << gguf;
    EXPECT_EQ(tb::mergekit_tensor_name("qwen3", "blk.3.attn_k_norm.weight"), "model.layers.3.self_attn.k_norm.weight");
    EXPECT_EQ(tb::mergekit_tensor_name("gemma2", "blk.3.ffn_norm.weight"), "model.layers.3.pre_feedforward_layernorm.weight");
    EXPECT_EQ(tb::mergekit_tensor_name("gemma3", "blk.3.post_attention_norm.weight"), "model.layers.3.post_attention_layernorm.weight");
    EXPECT_EQ(tb::mergekit_tensor_name("olmo2", "blk.3.post_ffw_norm.weight"), "model.layers.3.post_feedforward_layernorm.weight");
    EXPECT_EQ(tb::mergekit_tensor_name("gemma", "blk.3.ffn_norm.weight"), "model.layers.3.post_attention_layernorm.weight");
    EXPECT_EQ(tb::mergekit_tensor_name("llama", "blk.3.post_ffw_norm.weight"), "");
    EXPECT_EQ(tb::mergekit_tensor_name("gpt2", "blk.3.attn_q.weight"), "");
    EXPECT_EQ(tb::mergekit_tensor_name({}, "blk.3.attn_q.weight"), "");
}

TEST(AssembleConfigParameters, MethodTables) {
    // MergeMethod.parameters() / tensor_parameters() of each method
    auto names = [](tb::merge_method m) {
        std::string s;
        for (const tb::method_parameter& p : tb::method_parameters(m))
            s += std::string(p.name) + (p.per_model ? "/m" : "") + (p.required ? "/r" : "") +
                 (p.default_value ? "=" + std::to_string(*p.default_value) : "") + " ";
        return s;
    };
    EXPECT_EQ(names(tb::merge_method::linear), "weight/m/r normalize=1.000000 ");
    EXPECT_EQ(names(tb::merge_method::slerp), "t/r ");
    EXPECT_EQ(names(tb::merge_method::passthrough), "scale/m ");
    EXPECT_EQ(names(tb::merge_method::task_arithmetic),
              "weight/m/r density/m=1.000000 int8_mask=0.000000 normalize=0.000000 rescale=0.000000 lambda=1.000000 ");
    EXPECT_EQ(names(tb::merge_method::ties),
              "weight/m/r density/m=1.000000 int8_mask=0.000000 normalize=1.000000 rescale=0.000000 lambda=1.000000 ");
    EXPECT_EQ(tb::find_method_parameter(tb::merge_method::slerp, "weight"), nullptr);
    EXPECT_EQ(tb::to_string(tb::merge_method::task_arithmetic), "task_arithmetic");
}

// ---- what else is accepted ----

TEST(AssembleConfigAccepted, KeysAndForms) {
    const std::string_view text = R"(# every key
name: stage-one
merge_method: linear
base_model: {model: {path: "other+extra.gguf", revision: null}, lora: null}
models:
  - model: hf://org/repo/model-00001-of-00002.gguf
    parameters: {weight: "0.25"}
  - model: 'https://example.com/m.gguf'
    parameters: {weight: 7.5e-1}
  - model: ./local.gguf
    parameters: {weight: .5}
  - model: {model: {path: "other+extra.gguf"}}
    parameters: {weight: yes}
parameters: {normalize: off}
dtype: torch.bfloat16
out_dtype: float32
tokenizer_source: base
chat_template: ""
tensors:
  - name: ^output\.weight$
    model: ./local.gguf
  - {name: "blk\\.(1[0-9])\\.ffn_.*", model: "https://example.com/m.gguf"}
)";
    const tb::assemble_config c = parse_ok(text);
    EXPECT_EQ(c.name, "stage-one");
    ASSERT_TRUE(c.base_model);
    EXPECT_EQ(c.base_model->text, "other+extra.gguf");  // the map form is never split at '+'
    EXPECT_EQ(c.base_model->offset, at(text, "\"other+extra"));
    ASSERT_EQ(c.models.size(), 4u);
    EXPECT_EQ(c.models[0].parameters.find("weight")->value.numbers, std::vector<double>{0.25});
    EXPECT_EQ(c.models[1].model.text, "https://example.com/m.gguf");
    EXPECT_EQ(c.models[1].parameters.find("weight")->value.numbers, std::vector<double>{0.75});
    EXPECT_EQ(c.models[2].parameters.find("weight")->value.numbers, std::vector<double>{0.5});
    EXPECT_EQ(c.models[3].model.text, "other+extra.gguf");
    EXPECT_EQ(c.models[3].parameters.find("weight")->value.numbers, std::vector<double>{1});
    EXPECT_EQ(c.parameters.find("normalize")->value.numbers, std::vector<double>{0});
    EXPECT_EQ(c.dtype, tb::config_dtype::bfloat16);
    EXPECT_EQ(c.out_dtype, tb::config_dtype::float32);
    EXPECT_EQ(c.tokenizer, tb::tokenizer_choice::base);
    ASSERT_EQ(c.tensors.size(), 2u);
    EXPECT_EQ(c.tensors[0].pattern, "^output\\.weight$");
    EXPECT_EQ(c.tensors[1].model.text, "https://example.com/m.gguf");
    auto rule = [&](std::string_view name) {
        auto r = tb::find_tensor_rule(c, name);
        EXPECT_TRUE(r);
        return r && *r != nullptr ? static_cast<int>(*r - c.tensors.data()) : -1;
    };
    EXPECT_EQ(rule("output.weight"), 0);
    EXPECT_EQ(rule("blk.12.ffn_up.weight"), 1);
    EXPECT_EQ(rule("blk.2.ffn_up.weight"), -1);
    EXPECT_EQ(rule("output_norm.weight"), -1);
    EXPECT_EQ(tb::donor_model(c).text, "other+extra.gguf");
}

TEST(AssembleConfigAccepted, TokenizerForms) {
    const std::string head = "merge_method: linear\nbase_model: b\nmodels: [{model: a, parameters: {weight: 1}}, {model: b, parameters: {weight: 1}}]\n";
    EXPECT_EQ(parse_ok(head).tokenizer, tb::tokenizer_choice::donor);
    EXPECT_EQ(parse_ok(head + "tokenizer_source: null\n").tokenizer, tb::tokenizer_choice::donor);
    EXPECT_EQ(parse_ok(head + "tokenizer_source: b\n").tokenizer, tb::tokenizer_choice::base);  // the base model, named
    EXPECT_EQ(parse_ok(head + "tokenizer: {source: base}\n").tokenizer, tb::tokenizer_choice::base);
    EXPECT_EQ(parse_ok(head + "tokenizer: {source: base, tokens: {}, pad_to_multiple_of: null}\n").tokenizer,
              tb::tokenizer_choice::base);
    EXPECT_EQ(parse_ok(head + "chat_template: null\n").tokenizer, tb::tokenizer_choice::donor);
}

TEST(AssembleConfigAccepted, EmptyListsCountAsAbsentAndNullsAsUnset) {
    // config.py validate_inputs counts truthiness: an empty models: beside slices: is no models
    const tb::assemble_config c = parse_ok(
        "merge_method: passthrough\nmodels: []\nslices: [{sources: [{model: a, layer_range: [0, 1]}]}]\nparameters: null\n"
        "base_model: null\ndtype: null\ntensors: []\n");
    EXPECT_TRUE(c.models.empty());
    EXPECT_EQ(c.slices.size(), 1u);
    EXPECT_FALSE(c.dtype);
}

TEST(AssembleConfigAccepted, SlerpPassesASliceOfOneSourceThrough) {
    // SlerpTask.execute returns the one tensor of a slice of one source, whatever the base model
    const tb::assemble_config c = parse_ok(R"(merge_method: slerp
base_model: a
slices:
  - sources: [{model: a, layer_range: [0, 16]}, {model: b, layer_range: [0, 16]}]
  - sources: [{model: b, layer_range: [16, 32]}]
parameters: {t: 0.5}
)");
    EXPECT_EQ(c.slices.size(), 2u);
}

TEST(AssembleConfigAccepted, SliceBaseModels) {
    const tb::assemble_config c = parse_ok(R"(merge_method: ties
slices:
  - sources:
      - {model: a, layer_range: [0, 2], parameters: {weight: 1}}
      - {model: b, layer_range: [0, 2]}
    base_model: b
  - sources:
      - {model: c, layer_range: [2, 4]}
      - {model: a, layer_range: [2, 4]}
    base_model: c
    parameters: {weight: 0.5, density: 0.5}
)");
    ASSERT_EQ(c.slices.size(), 2u);
    EXPECT_EQ(c.slices[1].base_model->text, "c");
    EXPECT_EQ(c.slices[1].parameters.find("density")->value.numbers, std::vector<double>{0.5});
}

TEST(AssembleConfigAccepted, ABomIsSkippedAndOffsetsStayBytes) {
    const std::string text = "\xEF\xBB\xBFmerge_method: nope\n";
    auto r = tb::parse_assemble_config(text);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().offset, at(text, "nope"));
    const std::string utf8 = "name: \"\xC3\xA9t\xC3\xA9\"\nmerge_method: nope\n";
    auto u = tb::parse_assemble_config(utf8);
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().offset, at(utf8, "nope"));
}

// ---- refusals: the smallest input for each, its code, key path and byte ----

struct refusal_case {
    const char* what;
    std::string text;
    errc code;
    std::string subject;
    std::string offset_of;  // the text the offset points at ("" = 0)
    std::string says;       // a part of the detail
    std::size_t nth = 0;    // which occurrence of offset_of
};

const std::string ok_models = "models: [{model: a, parameters: {weight: 1}}]\n";

std::vector<refusal_case> refusal_cases() {
    return {
        // YAML itself
        {"not YAML", "merge_method: a: b\n", bad_config, "merge_method", ": b", "not valid YAML: illegal map value (line 1, column 16)"},
        {"empty", "", bad_config, "", "", "empty"},
        {"a list at the top", "- linear\n", bad_config, "", "", "expected a map"},
        {"a duplicate key", "merge_method: linear\nmerge_method: ties\n", bad_config, "merge_method", "merge_method", "twice", 1},
        {"an anchor", "merge_method: &m linear\n", unsupported_config, "merge_method", "&m", "anchors"},
        {"an alias", "a: b\nmerge_method: *m\n", bad_config, "merge_method", "*m", ""},
        {"a tag", "merge_method: !!str linear\n", unsupported_config, "merge_method", "!!str", "tags"},
        {"two documents", "merge_method: linear\n---\nmerge_method: ties\n", unsupported_config, "", "---", "second YAML document"},
        {"a NUL", std::string("merge_method: li\0near\n", 21), bad_config, "", std::string(1, '\0'), "control character U+0000"},
        {"invalid UTF-8", "merge_method: \xC3\x28\n", bad_config, "", "\xC3", "not UTF-8"},
        {"a C1 control", "name: \xC2\x9B\n", bad_config, "", "\xC2\x9B", "U+009B"},
        {"a collection as a key", "{[a]: b}\n", bad_config, "", "[a]", "a key must be text"},
        // the top level
        {"no merge_method", ok_models, bad_config, "merge_method", "", "expected merge_method"},
        {"an unknown key", "merge_method: linear\n" + ok_models + "input_model_parameters: {}\n", unsupported_config,
         "input_model_parameters", "input_model_parameters", "unknown key; the keys are: merge_method"},
        {"modules", "merge_method: linear\nmodules: {}\n", unsupported_config, "modules", "modules", "not supported"},
        {"an unimplemented method", "merge_method: dare_ties\n" + ok_models, unsupported_config, "merge_method", "dare_ties",
         "dare_ties is not implemented; supported: passthrough, linear, slerp, task_arithmetic, ties"},
        {"an unknown method", "merge_method: Linear\n" + ok_models, bad_config, "merge_method", "Linear", "no merge method 'Linear'"},
        {"a method that is a number", "merge_method: 1\n" + ok_models, bad_config, "merge_method", "1", "quote it"},
        {"neither models nor slices", "merge_method: linear\n", bad_config, "models", "", "found neither"},
        {"both models and slices", "merge_method: linear\n" + ok_models + "slices: [{sources: [{model: a, layer_range: [0, 1]}]}]\n",
         bad_config, "slices", "", "exactly one"},
        {"models not a list", "merge_method: linear\nmodels: a\n", bad_config, "models", "a\n", "a list of models"},
        {"a model entry that is text", "merge_method: linear\nmodels: [a]\n", bad_config, "models[0]", "a]", "a map {model"},
        {"a model entry without model", "merge_method: linear\nmodels: [{parameters: {weight: 1}}]\n", bad_config, "models[0].model",
         "{parameters", "expected model"},
        {"an unknown key of a model", "merge_method: linear\nmodels: [{model: a, weights: 1}]\n", unsupported_config,
         "models[0].weights", "weights", "the keys are: model, parameters"},
        // model sources
        {"an empty model", "merge_method: linear\nmodels: [{model: '', parameters: {weight: 1}}]\n", bad_config, "models[0].model",
         "''", "empty"},
        {"a null model", "merge_method: linear\nmodels: [{model: null}]\n", bad_config, "models[0].model", "null", "found nothing"},
        {"a LoRA", "merge_method: linear\nmodels: [{model: a+lora, parameters: {weight: 1}}]\n", unsupported_config,
         "models[0].model", "a+lora", "LoRA"},
        {"two '+'", "merge_method: linear\nmodels: [{model: a+b+c}]\n", bad_config, "models[0].model", "a+b+c", "more than one '+'"},
        {"a LoRA in the map form", "merge_method: linear\nmodels: [{model: {model: a, lora: b}}]\n", unsupported_config,
         "models[0].model.lora", "lora", "LoRA"},
        {"a revision", "merge_method: linear\nmodels: [{model: {model: {path: a, revision: main}}}]\n", unsupported_config,
         "models[0].model.model.revision", "revision", "hf://OWNER/REPO/FILE@REV"},
        {"override_architecture", "merge_method: linear\nmodels: [{model: {model: a, override_architecture: X}}]\n",
         unsupported_config, "models[0].model.override_architecture", "override_architecture", "not supported"},
        {"a model reference map without model", "merge_method: linear\nmodels: [{model: {lora: null}}]\n", bad_config,
         "models[0].model.model", "{lora", "expected the model's path"},
        {"a model twice", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 1}}, {model: a, parameters: {weight: 1}}]\n",
         bad_config, "models[1].model", "a, parameters", "listed twice", 1},
        // slices
        {"a slice without sources", "merge_method: passthrough\nslices: [{parameters: {}}]\n", bad_config, "slices[0].sources",
         "{parameters", "expected sources"},
        {"no source", "merge_method: passthrough\nslices: [{sources: []}]\n", bad_config, "slices[0].sources", "[]", "at least one"},
        {"a source without layer_range", "merge_method: passthrough\nslices: [{sources: [{model: a}]}]\n", bad_config,
         "slices[0].sources[0].layer_range", "{model", "expected layer_range"},
        {"a reversed layer_range", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [4, 2]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range", "[4, 2]", "expected [first, end) with first < end, found [4, 2]"},
        {"an empty layer_range", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [3, 3]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range", "[3, 3]", "first < end"},
        {"three numbers", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 1, 2]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range", "[0, 1, 2]", "a list of 3 items"},
        {"a negative layer", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [-1, 2]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range[0]", "-1", ">= 0"},
        {"a fractional layer", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 2.5]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range[1]", "2.5", "whole number"},
        {"an octal layer", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 010]}]}]\n", bad_config,
         "slices[0].sources[0].layer_range[1]", "010", "octal"},
        {"a layer past the cap", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 65537]}]}]\n",
         bad_config, "slices[0].sources[0].layer_range", "[0, 65537]", "65536"},
        {"a huge layer", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 99999999999999999999]}]}]\n",
         bad_config, "slices[0].sources[0].layer_range[1]", "999", "at most 65536"},
        {"sources of different lengths",
         "merge_method: linear\nslices: [{sources: [{model: a, layer_range: [0, 2]}, {model: b, layer_range: [0, 3]}]}]\n"
         "parameters: {weight: 1}\n",
         bad_config, "slices[0].sources[1].layer_range", "{model: b", "same number of layers"},
        {"a source twice in a slice",
         "merge_method: linear\nslices: [{sources: [{model: a, layer_range: [0, 2]}, {model: a, layer_range: [2, 4]}]}]\n"
         "parameters: {weight: 1}\n",
         bad_config, "slices[0].sources[1].model", "a, layer_range: [2", "twice"},
        {"residual_weight", "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 1]}], residual_weight: 1}]\n",
         unsupported_config, "slices[0].residual_weight", "residual_weight", "no method reads it"},
        {"an unknown key of a source",
         "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 1], layers: 1}]}]\n", unsupported_config,
         "slices[0].sources[0].layers", "layers:", "model, layer_range, parameters"},
        // parameters
        {"parameters not a map", "merge_method: linear\n" + ok_models + "parameters: [1]\n", bad_config, "parameters", "[1]",
         "a map of parameters"},
        {"a parameter the method does not read", "merge_method: slerp\nbase_model: a\nmodels: [{model: b, parameters: {weight: 1}}]\n"
         "parameters: {t: 0.5}\n",
         unsupported_config, "models[0].parameters.weight", "1}}", "'weight' is not a parameter of slerp (mergekit would ignore it); slerp reads: t"},
        {"a merge parameter under a model", "merge_method: slerp\nbase_model: a\nmodels: [{model: b, parameters: {t: 0.5}}]\n",
         bad_config, "models[0].parameters.t", "0.5", "parameter of the merge"},
        {"a weight that is text", "merge_method: linear\nmodels: [{model: a, parameters: {weight: heavy}}]\n", bad_config,
         "models[0].parameters.weight", "heavy", "expected a number, found the text 'heavy'"},
        {"a quoted boolean", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 'true'}}]\n", bad_config,
         "models[0].parameters.weight", "'true'", "expected a number"},
        {"infinity", "merge_method: linear\nmodels: [{model: a, parameters: {weight: -.inf}}]\n", bad_config,
         "models[0].parameters.weight", "-.inf", "finite"},
        {"NaN", "merge_method: linear\nmodels: [{model: a, parameters: {weight: .NaN}}]\n", bad_config, "models[0].parameters.weight",
         ".NaN", "finite"},
        {"out of range", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 1e400}}]\n", bad_config,
         "models[0].parameters.weight", "1e400", "finite"},
        {"hexadecimal", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 0x1}}]\n", bad_config,
         "models[0].parameters.weight", "0x1", "plain decimal"},
        {"sexagesimal", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 1:30}}]\n", bad_config,
         "models[0].parameters.weight", "1:30", "plain decimal"},
        {"an octal weight", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 010}}]\n", bad_config,
         "models[0].parameters.weight", "010", "octal"},
        {"no value", "merge_method: linear\nmodels: [{model: a, parameters: {weight: }}]\n", bad_config,
         "models[0].parameters.weight", "}}", "found nothing"},
        {"an empty gradient", "merge_method: linear\nmodels: [{model: a, parameters: {weight: []}}]\n", bad_config,
         "models[0].parameters.weight", "[]", "empty list"},
        {"a gradient of lists", "merge_method: linear\nmodels: [{model: a, parameters: {weight: [[1]]}}]\n", bad_config,
         "models[0].parameters.weight[0]", "[1]", "a number of the gradient"},
        {"a bare condition", "merge_method: linear\nmodels: [{model: a, parameters: {weight: {filter: mlp, value: 1}}}]\n",
         bad_config, "models[0].parameters.weight", "{filter", "Unexpected setting value"},
        {"a condition without value", "merge_method: linear\nmodels: [{model: a, parameters: {weight: [{filter: mlp}]}}]\n",
         bad_config, "models[0].parameters.weight[0].value", "{filter", "expected a value"},
        {"a condition with another key", "merge_method: linear\nmodels: [{model: a, parameters: {weight: [{value: 1, when: x}]}}]\n",
         unsupported_config, "models[0].parameters.weight[0].when", "when", "filter, value"},
        {"a mixed list", "merge_method: linear\nmodels: [{model: a, parameters: {weight: [{value: 1}, 2]}}]\n", bad_config,
         "models[0].parameters.weight[1]", "2]", "{filter, value} entry"},
        {"a filter that is a number", "merge_method: linear\nmodels: [{model: a, parameters: {weight: [{filter: 5, value: 1}]}}]\n",
         bad_config, "models[0].parameters.weight[0].filter", "5,", "quote it"},
        {"a missing weight", "merge_method: linear\nmodels: [{model: a, parameters: {weight: 1}}, {model: b}]\n", bad_config,
         "models[1].parameters.weight", "{model: b", "linear needs weight for 'b'"},
        {"linear's base without weight", "merge_method: linear\nbase_model: c\n" + ok_models, bad_config, "parameters.weight", "c\n",
         "adds it to the inputs without parameters"},
        {"slerp without t", "merge_method: slerp\nbase_model: a\nmodels: [{model: b}]\n", bad_config, "parameters.t", "", "slerp needs t"},
        {"slerp without t in a slice",
         "merge_method: slerp\nbase_model: a\nslices: [{sources: [{model: a, layer_range: [0, 1]}, {model: b, layer_range: [0, 1]}]}]\n",
         bad_config, "slices[0].parameters.t", "{sources", "every slice's"},
        {"slerp without base_model", "merge_method: slerp\nmodels: [{model: a}, {model: b}]\nparameters: {t: 0.5}\n", bad_config,
         "base_model", "", "slerp needs base_model"},
        {"slerp of three", "merge_method: slerp\nbase_model: c\nmodels: [{model: a}, {model: b}]\nparameters: {t: 0.5}\n", bad_config,
         "models", "", "between two models"},
        {"a base outside the slice",
         "merge_method: slerp\nbase_model: c\nslices: [{sources: [{model: a, layer_range: [0, 1]}, {model: b, layer_range: [0, 1]}]}]\n"
         "parameters: {t: 0.5}\n",
         bad_config, "slices[0].sources", "{sources", "must be one of the slice's sources"},
        {"a base outside a slice of one source",
         "merge_method: task_arithmetic\nbase_model: c\nslices: [{sources: [{model: a, layer_range: [0, 1]}]}]\n"
         "parameters: {weight: 1}\n",
         bad_config, "slices[0].sources", "{sources", "must be one of the slice's sources"},
        {"ties without base_model", "merge_method: ties\n" + ok_models, bad_config, "base_model", "", "ties needs base_model"},
        {"a slice without a base model", "merge_method: task_arithmetic\nslices: [{sources: [{model: a, layer_range: [0, 1]}]}]\n",
         bad_config, "slices[0].base_model", "{sources", "needs a base model"},
        {"a zero density", "merge_method: ties\nbase_model: b\nmodels: [{model: a, parameters: {weight: 1, density: [0.5, 0]}}]\n",
         bad_config, "models[0].parameters.density", "[0.5, 0]", "density > 0, found 0"},
        {"passthrough of two models", "merge_method: passthrough\nmodels: [{model: a}, {model: b}]\n", bad_config, "models", "",
         "passthrough takes one model"},
        {"passthrough of two sources",
         "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 1]}, {model: b, layer_range: [0, 1]}]}]\n",
         bad_config, "slices[0]", "{sources", "one source per slice"},
        // dtype, tokenizer, chat template, name, tensors
        {"a dtype mergekit does not know", "merge_method: linear\n" + ok_models + "dtype: fp16\n", bad_config, "dtype", "fp16",
         "bfloat16, float16 or float32"},
        {"int64", "merge_method: linear\n" + ok_models + "out_dtype: int64\n", unsupported_config, "out_dtype", "int64", "int64"},
        {"union", "merge_method: linear\n" + ok_models + "tokenizer_source: union\n", unsupported_config, "tokenizer_source", "union",
         "union"},
        {"another model's tokenizer", "merge_method: linear\n" + ok_models + "tokenizer_source: a\n", unsupported_config,
         "tokenizer_source", "a\n", "another model's tokenizer"},
        {"tokenizer without source", "merge_method: linear\n" + ok_models + "tokenizer: {}\n", unsupported_config, "tokenizer.source",
         "{}", "source: union"},
        {"tokens", "merge_method: linear\n" + ok_models + "tokenizer: {source: base, tokens: {x: {source: a}}}\n", unsupported_config,
         "tokenizer.tokens", "{x:", "tokens"},
        {"pad_to_multiple_of", "merge_method: linear\n" + ok_models + "tokenizer: {source: base, pad_to_multiple_of: 64}\n",
         unsupported_config, "tokenizer.pad_to_multiple_of", "64", "padding"},
        {"both tokenizer keys", "merge_method: linear\n" + ok_models + "tokenizer_source: base\ntokenizer: {source: base}\n",
         bad_config, "tokenizer", "{source", "both"},
        {"a chat template", "merge_method: linear\n" + ok_models + "chat_template: chatml\n", unsupported_config, "chat_template",
         "chatml", "chat template"},
        {"a name that is a map", "merge_method: linear\n" + ok_models + "name: {a: b}\n", bad_config, "name", "{a: b}", "name"},
        {"a rule without name", "merge_method: linear\n" + ok_models + "tensors: [{model: a}]\n", bad_config, "tensors[0].name",
         "{model: a}", "expected name"},
        {"a rule without model", "merge_method: linear\n" + ok_models + "tensors: [{name: x}]\n", bad_config, "tensors[0].model",
         "{name", "expected model"},
        {"a bad regex", "merge_method: linear\n" + ok_models + "tensors: [{name: 'blk.(', model: a}]\n", bad_config, "tensors[0].name",
         "'blk.('", "not a valid ECMAScript regular expression"},
        {"an empty regex", "merge_method: linear\n" + ok_models + "tensors: [{name: '', model: a}]\n", bad_config, "tensors[0].name",
         "''", "empty"},
        {"a back-reference", "merge_method: linear\n" + ok_models + "tensors: [{name: '(a)\\1', model: a}]\n", unsupported_config,
         "tensors[0].name", "'(a)", "back-references"},
        {"a regex too long", "merge_method: linear\n" + ok_models + "tensors: [{name: " + std::string(513, 'a') + ", model: a}]\n",
         bad_config, "tensors[0].name", "aaa", "at most 512 bytes"},
        {"a regex too deep", "merge_method: linear\n" + ok_models + "tensors: [{name: '" + std::string(17, '(') + std::string(17, ')') +
         "', model: a}]\n", bad_config, "tensors[0].name", "'(((", "16 levels"},
        {"a regex too large", "merge_method: linear\n" + ok_models + "tensors: [{name: '(a{100}){100}', model: a}]\n", bad_config,
         "tensors[0].name", "'(a{", "too large"},
        {"an unknown key of a rule", "merge_method: linear\n" + ok_models + "tensors: [{name: x, model: a, from: b}]\n",
         unsupported_config, "tensors[0].from", "from", "name, model"},
    };
}

TEST(AssembleConfigRefusals, EachNamesCodeSubjectAndByte) {
    for (const refusal_case& rc : refusal_cases()) {
        SCOPED_TRACE(rc.what);
        auto r = tb::parse_assemble_config(rc.text, "cfg.yml");
        ASSERT_FALSE(r) << rc.text;
        const minfer::gguf::error& e = r.error();
        EXPECT_EQ(e.code, rc.code) << e.message();
        EXPECT_EQ(e.subject.view(), rc.subject) << e.message();
        const std::uint64_t want = rc.offset_of.empty() ? 0 : at(rc.text, rc.offset_of, rc.nth);
        EXPECT_EQ(e.offset, want) << e.message() << "\n" << rc.text;
        EXPECT_NE(e.detail.find(rc.says), std::string::npos) << e.detail;
        EXPECT_FALSE(e.detail.empty());
        EXPECT_EQ(e.file, "cfg.yml");
        // the message names the key path and what is wrong; the CLI exits 2 for both codes
        const std::string m = e.message();
        EXPECT_NE(m.find("cfg.yml: "), std::string::npos) << m;
        if (!rc.subject.empty()) {
            EXPECT_NE(m.find(rc.subject + ": "), std::string::npos) << m;
        }
        EXPECT_NE(m.find(e.detail), std::string::npos) << m;
        EXPECT_EQ(tb::exit_code_for(e.code), 2);
    }
}

TEST(AssembleConfigRefusals, OffsetsStayInsideTheText) {
    // yaml-cpp marks an escape cut by the end one byte past it (found by fuzz_assemble_config)
    for (std::string_view text : {std::string_view("\"\\"), std::string_view(" \"\\\n\\")}) {
        auto r = tb::parse_assemble_config(text);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, bad_config);
        EXPECT_EQ(r.error().offset, text.size()) << r.error().message();
    }
}

TEST(AssembleConfigRefusals, MessagesReadAsTheyAreDocumented) {
    auto r = tb::parse_assemble_config("merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [4, 2]}]}]\n", "c.yml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(),
              "c.yml: the config is not valid: slices[0].sources[0].layer_range: expected [first, end) with first < end, found [4, 2] "
              "[bad_config]");
    auto u = tb::parse_assemble_config("merge_method: dare_ties\n" + ok_models, "c.yml");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().message(),
              "c.yml: the config asks for what is not supported: merge_method: dare_ties is not implemented; supported: passthrough, "
              "linear, slerp, task_arithmetic, ties [unsupported_config]");
}

TEST(AssembleConfigRefusals, EveryOtherMergekitMethodIsUnsupported) {
    for (const char* m : {"nuslerp", "model_stock", "arcee_fusion", "karcher", "dare_ties", "dare_linear", "breadcrumbs",
                          "breadcrumbs_ties", "della", "della_linear", "multislerp", "nearswap", "ram", "ramplus_tl", "sce"}) {
        auto r = tb::parse_assemble_config(std::string("merge_method: ") + m + "\n" + ok_models);
        ASSERT_FALSE(r) << m;
        EXPECT_EQ(r.error().code, unsupported_config) << m;
    }
}

// ---- the caps: refused quickly, nothing crashes ----

using clock_type = std::chrono::steady_clock;

void refused_quickly(const std::string& text, errc code, std::string_view says) {
    const auto t0 = clock_type::now();
    auto r = tb::parse_assemble_config(text);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, code) << r.error().message();
    EXPECT_NE(r.error().detail.find(says), std::string::npos) << r.error().detail;
    EXPECT_LT(ms, 2000) << says;
}

TEST(AssembleConfigCaps, DeepFlowNesting) {
    // 200000 brackets: refused by the pre-scan at the 33rd, before yaml-cpp queues their tokens
    const std::string text = std::string(200000, '[');
    refused_quickly(text, bad_config, "deeper than 32 levels");
    EXPECT_EQ(tb::parse_assemble_config(text).error().offset, 32u);
    refused_quickly("a: " + std::string(100000, '{'), bad_config, "deeper than 32 levels");
    // 32 levels are read (then refused for what they are)
    auto r = tb::parse_assemble_config(std::string(32, '[') + std::string(32, ']'));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().detail.find("expected a map"), std::string::npos) << r.error().detail;
}

TEST(AssembleConfigCaps, DeepBlockNesting) {
    std::string indented;
    for (int i = 0; i < 700; ++i) indented += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";  // under the size cap
    refused_quickly(indented, bad_config, "deeper than 32 levels");
    std::string dashes;  // "- - - - x": a list in a list in a list ...
    for (int i = 0; i < 60000; ++i) dashes += "- ";
    refused_quickly(dashes + "x\n", bad_config, "deeper than 32 levels");
    // quoted brackets are text: a 100000-bracket filter is read (and refused for its length later, not its depth)
    const std::string quoted = "merge_method: linear\nmodels: [{model: a, parameters: {weight: [{filter: '" +
                               std::string(100000, '[') + "', value: 1}]}}]\n";
    auto q = tb::parse_assemble_config(quoted);
    EXPECT_TRUE(q) << q.error().message();
}

TEST(AssembleConfigCaps, AliasBombs) {
    // billion laughs: nine references per level, nine levels
    std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'j'; ++c) {
        const char p = static_cast<char>(c - 1);
        bomb += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + p;
        bomb += "]\n";
    }
    refused_quickly(bomb, unsupported_config, "anchors");
    refused_quickly("merge_method: linear\nmodels: *m\n", bad_config, "");  // an alias of nothing: yaml-cpp's own error
}

TEST(AssembleConfigCaps, HugeListsMapsAndDocuments) {
    std::string list = "merge_method: linear\nmodels: [";
    for (int i = 0; i < 5000; ++i) list += "{model: m" + std::to_string(i) + ", parameters: {weight: 1}},";
    list += "]\n";
    refused_quickly(list, bad_config, "more than 4096 items in one list");
    std::string gradient = "merge_method: linear\nmodels: [{model: a, parameters: {weight: [";
    for (int i = 0; i < 5000; ++i) gradient += "1,";
    refused_quickly(gradient + "]}}]\n", bad_config, "more than 4096 items");
    std::string map = "{";
    for (int i = 0; i < 5000; ++i) map += "k" + std::to_string(i) + ": 1,";
    refused_quickly(map + "}", bad_config, "more than 4096 entries in one map");
    // 20 lists of 4000 numbers: every list within its cap, the document over the node cap
    std::string nodes = "[";
    for (int l = 0; l < 20; ++l) {
        nodes += "[";
        for (int i = 0; i < 4000; ++i) nodes += "1,";
        nodes += "],";
    }
    refused_quickly(nodes + "]", bad_config, "more than 65536 YAML nodes");
    // 4096 slices are read
    std::string slices = "merge_method: passthrough\nslices:\n";
    for (int i = 0; i < 4096; ++i) slices += "  - sources: [{model: a, layer_range: [" + std::to_string(i) + ", " + std::to_string(i + 1) + "]}]\n";
    EXPECT_TRUE(tb::parse_assemble_config(slices));
}

TEST(AssembleConfigCaps, HugeText) {
    std::string text = "merge_method: linear\n# " + std::string(tb::max_config_bytes, 'x') + "\n";
    const auto t0 = clock_type::now();
    auto r = tb::parse_assemble_config(text, "big.yml");
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count(), 2000);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::input_too_large);
    EXPECT_EQ(r.error().expected, tb::max_config_bytes);
    EXPECT_EQ(r.error().found, text.size());
    EXPECT_EQ(r.error().file, "big.yml");
    // exactly at the cap it is read
    std::string at_cap = "merge_method: passthrough\nslices: [{sources: [{model: a, layer_range: [0, 1]}]}]\n#";
    at_cap.resize(tb::max_config_bytes, 'x');
    EXPECT_TRUE(tb::parse_assemble_config(at_cap));
}

// ---- files ----

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "minfer-config-XXXXXX").string();
        path = ::mkdtemp(tmpl.data());
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

TEST(AssembleConfigFiles, ReadCapped) {
    temp_dir d;
    const auto file = d.path / "merge.yml";
    std::ofstream(file) << ties_yml;
    auto r = tb::read_assemble_config(file);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->file, file.string());
    EXPECT_EQ(summary(*r), summary(parse_ok(ties_yml)));

    std::ofstream(d.path / "bad.yml") << "merge_method: linear\nmodels: [{model: a}]\n";
    auto b = tb::read_assemble_config(d.path / "bad.yml");
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().file, (d.path / "bad.yml").string());
    EXPECT_NE(b.error().message().find((d.path / "bad.yml").string() + ": the config is not valid: models[0].parameters.weight"),
              std::string::npos)
        << b.error().message();

    auto missing = tb::read_assemble_config(d.path / "none.yml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, errc::io_error);

    std::ofstream(d.path / "big.yml") << std::string(tb::max_config_bytes + 1, '#');
    auto big = tb::read_assemble_config(d.path / "big.yml");
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code, errc::input_too_large);
    EXPECT_EQ(big.error().expected, tb::max_config_bytes);
    EXPECT_EQ(big.error().detail, "an assembly config");

    auto dir = tb::read_assemble_config(d.path);
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().code, errc::io_error);
}

}  // namespace

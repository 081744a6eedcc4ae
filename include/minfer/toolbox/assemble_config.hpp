#pragma once
// The configuration of `minfer assemble CONFIG.yaml -o OUT`: mergekit's YAML merge configuration
// (https://github.com/arcee-ai/mergekit, read at commit a6e4028), parsed into a validated structure,
// so that a mergekit user's config works unchanged on GGUF files. JSON text is YAML too and parses the
// same (Python passes a dict as JSON). docs/ASSEMBLE_CONFIG.md is the user's reference; this header
// states the rules with the mergekit file and function each comes from.
//
// Reading (src/toolbox/assemble_config_yaml.cpp): the text is untrusted (configs are shared on the
// Hub). It is capped (max_config_bytes), must be UTF-8 of the characters PyYAML reads
// (mergekit/scripts/run_yaml.py loads it with yaml.safe_load, whose reader refuses other control
// characters), and goes through yaml-cpp's event parser into a bounded tree: at most max_depth
// levels (refused on the event that opens the next level, before yaml-cpp descends into it; flow
// brackets are counted by a pre-scan before yaml-cpp sees the text at all, because its scanner
// queues every token of an open flow collection, a few hundred bytes per bracket), at most max_nodes
// nodes and max_items items in any one list or map; anchors, aliases (exponential expansion),
// explicit tags, several documents (`---`: mergekit-multi's format) and duplicate keys (PyYAML keeps
// the last silently) are refused. Nothing here throws, aborts or prints: every function is noexcept
// and every failure is a gguf::error (toolbox::codes::bad_config or unsupported_config; see below).
//
// Scalars are read as PyYAML (YAML 1.1) resolves them and pydantic (lax mode) converts them, and
// where the two could disagree with a plain reading the text is refused rather than guessed:
//   - numbers: decimal only (JSON's and YAML 1.2's syntax, plus PyYAML's ".5", "5." and an exponent
//     without a sign): an integer with a leading zero (PyYAML: octal), 0x/0b/0o, sexagesimal (1:30)
//     and '_' separators are refused; so are inf and nan (mergekit takes them; a merge cannot use
//     them) and values beyond a double. A number in quotes is taken as pydantic takes it ("0.5").
//   - booleans: PyYAML's words unquoted (true/false, yes/no, on/off in three cases) are 1 and 0,
//     as pydantic makes them of a float setting (`normalize: true` is 1).
//   - strings (model, merge_method, filter, dtype, ...): a plain scalar PyYAML reads as a number,
//     a boolean or a date is refused (pydantic does not make a str of it); quote it.
//
// Errors. bad_config: not YAML, or a value of the wrong kind or range, a missing key, a combination
// mergekit refuses or fails on. unsupported_config: a method, key or value mergekit has and minfer
// does not implement, and any key mergekit does not have (pydantic ignores unknown keys; minfer never
// ignores a key); the detail lists what is supported. Every error: file = the config's path (when
// given), offset = the byte where the offending node starts in the text (yaml-cpp's Mark), subject =
// its key path (`slices[0].sources[1].layer_range`; empty for what is refused before the text is
// parsed: a character, the flow nesting), detail = what was expected and what was found.
// A text over max_config_bytes is input_too_large (expected = the cap, found = its size), as
// read_capped reports a file over it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/toolbox/errors.hpp"

namespace minfer::toolbox {

// ---- caps (a real config is a few KiB, a dozen levels deep; docs/ASSEMBLE_CONFIG.md "Caps") ----

/// The most bytes of config text read (a file through gguf::read_capped; text given directly is held
/// to the same cap). 256 KiB is a per-layer slice list of a 500-layer model with parameters on every
/// source. yaml-cpp holds an open flow collection's tokens until it closes (~280 bytes per byte of
/// text), so this also bounds the parser's memory: under 80 MiB for any text at the cap.
inline constexpr std::uint64_t max_config_bytes = std::uint64_t{256} << 10;
/// The deepest nesting of lists and maps (the top map is level 1); mergekit's deepest construct, a
/// conditional gradient in a slice source's parameters, is level 9.
inline constexpr std::uint32_t max_config_depth = 32;
/// The most nodes (scalars, lists, maps) in the document.
inline constexpr std::uint32_t max_config_nodes = 65536;
/// The most items of any one list (models, slices, sources, a gradient, a conditional list, tensors)
/// and the most entries of any one map.
inline constexpr std::uint32_t max_config_items = 4096;
/// The largest layer index a layer_range may name (its end is at most this).
inline constexpr std::uint32_t max_config_layer = 65536;
/// A `tensors:` regex: at most this many bytes, this many levels of ( and [, and an NFA of about
/// this many states (a {n,m} multiplies what it repeats). libstdc++'s regex compiles by recursive
/// descent and matches by recursion along the automaton: both are bounded by these.
inline constexpr std::uint32_t max_regex_bytes = 512;
inline constexpr std::uint32_t max_regex_depth = 16;
inline constexpr std::uint32_t max_regex_states = 4096;

// ---- the structure ----

/// The merge methods minfer implements, by mergekit's names (mergekit/merge_methods/registry.py
/// STATIC_MERGE_METHODS). Every other method mergekit registers (nuslerp, multislerp, karcher,
/// model_stock, arcee_fusion, nearswap, sce, ram, ramplus_tl, dare_ties, dare_linear, breadcrumbs,
/// breadcrumbs_ties, della, della_linear) is unsupported_config; a name mergekit does not have is
/// bad_config.
enum class merge_method : std::uint8_t { passthrough, linear, slerp, task_arithmetic, ties };
std::string_view to_string(merge_method m) noexcept;

/// dtype and out_dtype as mergekit's common.py dtype_from_name reads them ("torch." prefix allowed):
/// bfloat16, float16, float32; its int64 is unsupported_config (no merge writes integer weights),
/// any other name bad_config. dtype is the type mergekit computes in (io/tasks.py GatherTensors
/// casts every input to it); out_dtype the type it writes (plan.py SaveTensor; without it, the
/// computed type).
enum class config_dtype : std::uint8_t { float32, float16, bfloat16 };
std::string_view to_string(config_dtype d) noexcept;

/// Where the output's tokenizer comes from. mergekit (merge.py run_merge, tokenizer/build.py):
/// without tokenizer_source and tokenizer it copies the donor model's tokenizer files as they are
/// (donor: base_model, else a referenced model); `tokenizer_source: base` (or `tokenizer: {source:
/// base}`, or the base model named as the source) builds the base model's tokenizer and moves every
/// other model's embedding rows to the base vocabulary by token (tokenizer/embed.py), which is the
/// identity when the vocabularies are the same. Only these two keep the base model's tokenizer;
/// "union", another model's tokenizer, added `tokens` and `pad_to_multiple_of` are unsupported_config.
enum class tokenizer_choice : std::uint8_t {
    donor,  ///< no tokenizer_source, no tokenizer: the donor's (donor_model()) tokenizer as it is
    base,   ///< tokenizer_source: base: the base model's vocabulary; other models' embeddings by token
};

/// One number or a gradient (mergekit config.py ScalarOrGradient = Union[float, List[float]]).
struct scalar_or_gradient {
    std::vector<double> numbers;  ///< one (a scalar) or more (a gradient); finite
    bool gradient = false;        ///< written as a list (a list of one number evaluates as the number)
};

/// One entry of a conditional list (config.py ConditionalParameter): a value for the tensors whose
/// name contains `filter`; an entry without filter (or with "*") applies to every tensor.
struct parameter_condition {
    std::optional<std::string> filter;
    scalar_or_gradient value;
    std::uint64_t offset = 0;  ///< the entry's byte in the text
};

/// A parameter's setting (config.py ParameterSetting): a number, a gradient, or a conditional list.
/// mergekit's schema also takes a single {filter, value} map, but evaluate_setting fails on it
/// ("Unexpected setting value"): it is refused (bad_config: write a list of one entry).
struct parameter_setting {
    std::string name;                              ///< "weight", "density", "t", ...
    scalar_or_gradient value;                      ///< when `conditions` is empty
    std::vector<parameter_condition> conditions;  ///< a conditional list: non-empty
    std::uint64_t offset = 0;                      ///< the value's byte in the text
};
/// A `parameters:` map in text order (names unique). find() is nullptr when the name is absent.
struct parameter_map {
    std::vector<parameter_setting> settings;
    [[nodiscard]] const parameter_setting* find(std::string_view name) const noexcept;
};

/// A model as the config names it: a local path, part 1 of a split set, an http(s):// or hf:// URL,
/// kept as written (the assembler resolves it). mergekit's common.py ModelReference: "a+b" is model a
/// with LoRA b (unsupported_config), more than one '+' does not parse (bad_config), so a path with
/// '+' in it is written in the map form {model: {path: "a+b.gguf"}}, which is never split. The map
/// form's lora and override_architecture are unsupported_config, and so is a `revision` (write the
/// revision in the source: hf://OWNER/REPO/FILE@REV). Empty text and a NUL byte are bad_config.
/// Two sources are the same model when their texts are equal (mergekit compares ModelReference).
struct model_source {
    std::string text;
    std::uint64_t offset = 0;
};

/// `models:` entry (config.py InputModelDefinition).
struct input_model {
    model_source model;
    parameter_map parameters;  ///< per-model parameters (weight, density, scale)
    std::uint64_t offset = 0;
};

/// A slice's source (config.py InputSliceDefinition): layers [first, end) of `model`.
struct slice_source {
    model_source model;
    std::uint32_t first = 0;  ///< layer_range[0]
    std::uint32_t end = 0;    ///< layer_range[1], first < end <= max_config_layer
    parameter_map parameters;
    std::uint64_t offset = 0;
};

/// `slices:` entry (config.py OutputSliceDefinition): end - first layers of the output, each merged
/// from the same layer offset of every source (plan.py plan_slice). Its sources all have the same
/// number of layers. base_model overrides the config's for the slice's tensors (config.py
/// ConfigReader.base_model). residual_weight (declared, never used by mergekit) is unsupported_config.
struct output_slice {
    std::vector<slice_source> sources;  ///< non-empty
    std::optional<model_source> base_model;
    parameter_map parameters;
    std::uint64_t offset = 0;
    [[nodiscard]] std::uint32_t layers() const noexcept { return sources.empty() ? 0 : sources[0].end - sources[0].first; }
};

/// minfer's extension `tensors:`: take the whole tensor whose output name the regex finds (ECMAScript,
/// searched as std::regex_search does) from `model`, instead of merging it. The first rule that
/// matches a name applies (find_tensor_rule). Validated at parse time: the regex compiles, within the
/// regex caps, without back-references (\1..\9: they force a backtracking search).
struct tensor_rule {
    std::string pattern;
    model_source model;
    std::regex regex;  ///< compiled ECMAScript | __polynomial (libstdc++'s non-backtracking search)
    std::uint64_t offset = 0;
};

struct assemble_config {
    std::string file;  ///< the config's path as given (for the assembler's errors); may be empty
    merge_method method = merge_method::passthrough;
    std::optional<model_source> base_model;
    /// Exactly one of models and slices is non-empty (config.py MergeConfiguration.validate_inputs;
    /// an empty list counts as absent, as its truthiness does there).
    std::vector<input_model> models;
    std::vector<output_slice> slices;
    parameter_map parameters;  ///< the config's `parameters:` (the lowest precedence)
    std::optional<config_dtype> dtype;
    std::optional<config_dtype> out_dtype;
    tokenizer_choice tokenizer = tokenizer_choice::donor;
    std::string name;  ///< mergekit-multi's `name:` of a stage, recorded (one document only)
    std::vector<tensor_rule> tensors;
};

// ---- reading ----

/// Parse and validate a config's text. `file` names it in errors and in the result.
gguf::result<assemble_config> parse_assemble_config(std::string_view text, std::string_view file = {}) noexcept;
/// Read `path` (gguf::read_capped, max_config_bytes: input_too_large past it, detail "an assembly
/// config") and parse it.
gguf::result<assemble_config> read_assemble_config(const std::filesystem::path& path) noexcept;

// ---- the methods' parameters ----

/// A parameter a method reads (its MergeMethod.parameters() and tensor_parameters()).
struct method_parameter {
    std::string_view name;
    bool per_model = false;  ///< a tensor parameter: read per model (config.py ConfigReader.parameter
                             ///< with model=...); otherwise read once per tensor, for the merge
    bool required = false;   ///< per model: for every model but the base (plan.py plan_tensor:
                             ///< `p.required and not is_base`); linear needs it for the base too
                             ///< (its task multiplies every input by its weight)
    std::optional<double> default_value;  ///< when unset (booleans as 1 and 0)
};
/// linear: weight (per model, required), normalize (1). slerp: t (required). passthrough: scale (per
/// model, no default: the tensor as it is). task_arithmetic and ties
/// (generalized_task_arithmetic.py): weight (per model, required), density (per model, 1), int8_mask
/// (0), normalize (0 for task_arithmetic, 1 for ties), rescale (0), lambda (1).
std::span<const method_parameter> method_parameters(merge_method m) noexcept;
/// The parameter `name` of method `m`, or nullptr.
const method_parameter* find_method_parameter(merge_method m, std::string_view name) noexcept;

// Validation at parse time, per method (what mergekit states or fails on; the assembler checks what
// needs the models):
//   - a parameter the method does not read is unsupported_config (mergekit ignores it); a parameter
//     of the merge (t, normalize, lambda, int8_mask, rescale) under a model or a slice source is
//     bad_config (ConfigReader.parameter reads them with model=None: mergekit never sees it there);
//   - a required parameter must be set at some level for every input that needs it (a conditional
//     list may still leave a tensor without a value: parameter_value() is nullopt, the assembler's
//     error);
//   - slerp, task_arithmetic, ties need a base model (the config's or, for slices, each slice's); for
//     slices, each slice's sources must include it (get_task_vectors reads tensors[base_model];
//     SlerpTask: "Base model not in input tensors", except for a slice of one source, which it passes
//     through); models: adds it when absent (plan.py normalize_config);
//   - slerp merges two inputs (or passes one through): at most 2 per slice, base included;
//   - passthrough takes one input per slice (PassthroughMergeTask: "exactly one tensor"): slices of
//     one source each, or `models:` of one model (with the base model, if given, being that model);
//   - ties: every density is > 0 (sparsify.py magnitude asserts it keeps at least one value);
//   - a model twice in `models:` or in one slice's sources is bad_config (plan.py GatherTensors keys
//     the inputs by model: one of the two would be lost);
//   - a slice's sources cover the same number of layers (plan_slice: "All inputs to a slice must
//     contain the same number of layers").

// ---- evaluating a parameter for a tensor ----

/// Where a tensor is, as mergekit's planner sees it (plan.py).
struct tensor_site {
    /// The tensor's name in the output (GGUF: "blk.12.attn_q.weight"). Merge-level parameters (no
    /// source) are evaluated for it (plan_tensor: cfg_reader.for_tensor(weight.name)).
    std::string_view name;
    /// Its name in the source model, whose layer index can differ (slices); per-model parameters are
    /// evaluated for it (plan_tensor: for_tensor(weight_in.name)). Empty: the same as `name`.
    std::string_view source_name;
    /// general.architecture of the models, so that a filter written for mergekit's Hugging Face names
    /// ("self_attn", "mlp") matches too (mergekit_tensor_name). Empty: GGUF names only.
    std::string_view architecture;
    /// The slice the tensor belongs to (0 with models:). A tensor before the layers (token_embd) takes
    /// the first slice, one after them (output_norm, output) the last (plan.py plan_module: pre_weights
    /// with slices[0], post_weights with slices[-1]).
    std::size_t slice = 0;
    /// The layer's offset within its slice (0 = the slice's first layer; with models:, the layer index),
    /// none for a tensor outside the layers (then the gradient position is 0: plan_module's t=0).
    std::optional<std::uint32_t> layer;
    /// The number of layers of the slice (with models:, of the model). The gradient position is
    /// layer / (slice_layers - 1), or 1 for a slice of one layer (plan_slice).
    std::uint32_t slice_layers = 0;
};

/// The value of parameter `parameter` for a tensor, evaluated as mergekit does (config.py
/// ConfigReader.parameter and evaluate_setting), or nullopt when no level sets it (defaults are the
/// caller's: method_parameters()). `source` is the input the value is for: an index into
/// config.models, or into config.slices[site.slice].sources; nullopt for a merge-level parameter
/// (t, normalize, ...) and for the base model that mergekit adds to `models:` when it is not listed.
/// Levels, the first that yields a value wins: the source's parameters, the slice's, the config's.
/// At each level: a number is itself; a gradient g of n numbers at position t (see tensor_site) is
/// (1 - f)·g[i] + f·g[min(n-1, i+1)] with i = floor(t·(n-1)), f = t·(n-1) - i; a conditional list
/// yields the first entry whose filter is absent, "*", or a substring of the tensor's name (the GGUF
/// name or mergekit's name of it), evaluated in turn, and nothing when none matches (the next level
/// is asked). nullopt also for a slice, source or layer out of range.
std::optional<double> parameter_value(const assemble_config& config, std::string_view parameter, const tensor_site& site,
                                      std::optional<std::size_t> source = std::nullopt) noexcept;

/// The name mergekit gives a GGUF tensor (its architecture definitions in mergekit/_data/architectures/
/// and llama.cpp's convert mapping), for the architectures whose definitions share the Llama layout:
/// llama (Llama and Mistral models), qwen2, qwen3, granite, gemma, gemma2, gemma3, olmo2. E.g.
/// "blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj.weight", "token_embd.weight" ->
/// "model.embed_tokens.weight", "output.weight" -> "lm_head.weight"; ffn_norm is gemma2/gemma3's
/// pre_feedforward_layernorm and the others' post_attention_layernorm. Empty for another
/// architecture or a tensor without a counterpart (rope_freqs, experts).
std::string mergekit_tensor_name(std::string_view architecture, std::string_view gguf_name) noexcept;

/// The first `tensors:` rule whose regex is found in `output_name`, or nullptr when none is.
/// Errors: out_of_memory (the search allocates its state).
gguf::result<const tensor_rule*> find_tensor_rule(const assemble_config& config, std::string_view output_name) noexcept;

/// The model whose tokenizer and metadata the output keeps: base_model, else the first model named
/// (models[0], or the first source of the first slice). mergekit (merge.py _get_donor_model) takes
/// base_model or referenced_models()[0], the first of a Python set (an order that is not the text's).
const model_source& donor_model(const assemble_config& config) noexcept;

}  // namespace minfer::toolbox

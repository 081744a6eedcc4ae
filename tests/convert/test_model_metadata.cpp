// convert::general_metadata and gguf-py's naming functions against what convert_hf_to_gguf.py writes:
// tests/convert/data/metadata_expected.json, recorded by make_metadata_expected.py from the reference's own
// conversions of small directories (model cards, generation configs, folder names, _name_or_path) and from
// its own functions (size_label, get_model_id_components, id_to_title, naming_convention,
// fill_templated_filename). No expected value here is computed by this library. With MINFER_CONVERT_MODELS
// and MINFER_CONVERT_REF_OUT, the nine test checkpoints' general.* keys against the reference's outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/model_metadata.hpp"
#include "minfer/gguf/model.hpp"
#include "scratch_dir.hpp"

namespace {

namespace cv = minfer::convert;
namespace gg = minfer::gguf;
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path data_dir = MINFER_CONVERT_TEST_DATA;

const json& expected() {
    static const json j = [] {
        std::ifstream in(data_dir / "metadata_expected.json", std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return json::parse(ss.str());
    }();
    return j;
}

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

std::optional<std::string> opt(const json& v) {
    if (v.is_null()) return std::nullopt;
    return v.get<std::string>();
}

std::string describe(const cv::vocab_value& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return "string '" + *s + "'";
    if (const auto* u = std::get_if<std::uint32_t>(&v)) return "u32 " + std::to_string(*u);
    if (const auto* i = std::get_if<std::int32_t>(&v)) return "i32 " + std::to_string(*i);
    if (const auto* f = std::get_if<float>(&v)) return "f32 " + std::to_string(*f);
    if (std::holds_alternative<std::vector<std::string>>(v)) return "[string]";
    if (std::holds_alternative<std::vector<std::int32_t>>(v)) return "[i32]";
    return "other";
}

// One key as the reference recorded it ({"key", "type", "value"}) against ours.
void expect_key(const json& want, const cv::vocab_key& got, const std::string& where) {
    SCOPED_TRACE(where + " " + want["key"].get<std::string>());
    ASSERT_EQ(got.name, want["key"].get<std::string>());
    const std::string type = want["type"];
    if (type == "string") {
        const auto* s = std::get_if<std::string>(&got.value);
        ASSERT_NE(s, nullptr) << describe(got.value);
        EXPECT_EQ(*s, want["value"].get<std::string>());
    } else if (type == "u32") {
        const auto* u = std::get_if<std::uint32_t>(&got.value);
        ASSERT_NE(u, nullptr) << describe(got.value);
        EXPECT_EQ(*u, want["value"].get<std::uint32_t>());
    } else if (type == "i32") {
        const auto* i = std::get_if<std::int32_t>(&got.value);
        ASSERT_NE(i, nullptr) << describe(got.value);
        EXPECT_EQ(*i, want["value"].get<std::int32_t>());
    } else if (type == "f32") {
        const auto* f = std::get_if<float>(&got.value);
        ASSERT_NE(f, nullptr) << describe(got.value);
        EXPECT_EQ(*f, static_cast<float>(want["value"].get<double>()));
    } else if (type == "[string]") {
        const auto* v = std::get_if<std::vector<std::string>>(&got.value);
        ASSERT_NE(v, nullptr) << describe(got.value);
        EXPECT_EQ(*v, want["value"].get<std::vector<std::string>>());
    } else if (type == "[i32]") {
        const auto* v = std::get_if<std::vector<std::int32_t>>(&got.value);
        ASSERT_NE(v, nullptr) << describe(got.value);
        EXPECT_EQ(*v, want["value"].get<std::vector<std::int32_t>>());
    } else {
        FAIL() << "a type the test does not know: " << type;
    }
}

cv::parameter_counts counts_of(const json& c) {
    cv::parameter_counts p;
    p.total = c["total"];
    p.shared = c["shared"];
    p.expert = c["expert"];
    p.expert_count = c["expert_count"];
    return p;
}

// Each directory the reference converted, rebuilt here: the same folder name, config.json, README.md and
// generation_config.json; our keys against the reference's, in order, type by type.
TEST(ModelMetadata, EqualsTheReferenceOnEachRecordedDirectory) {
    const json& cases = expected()["conversions"];
    ASSERT_GT(cases.size(), 40u);
    minfer::test_support::temp_dir tmp("model_metadata");
    for (const json& c : cases) {
        const std::string id = c["id"];
        SCOPED_TRACE(id);
        const fs::path dir = tmp.path() / id / c["dir_name"].get<std::string>();
        fs::create_directories(dir);
        write_file(dir / "config.json", c["config"]);
        if (!c["readme"].is_null()) write_file(dir / "README.md", c["readme"]);
        if (!c["generation_config"].is_null()) write_file(dir / "generation_config.json", c["generation_config"]);
        auto cfg = cv::read_hf_config(dir / "config.json");
        ASSERT_TRUE(cfg) << cfg.error().message();
        cv::metadata_options options;
        options.model_name = opt(c["model_name"]);
        // a refused case has no output to count: the base checkpoint's counts (they do not change a refusal)
        cv::parameter_counts counts;
        for (const json& other : cases)
            if (other["ok"] && other["base"] == c["base"]) {
                counts = counts_of(other["counts"]);
                break;
            }
        if (c["ok"]) counts = counts_of(c["counts"]);
        auto keys = cv::general_metadata(dir, *cfg, counts, options);
        if (!c["ok"]) {
            ASSERT_FALSE(keys) << "the reference failed: " << c["error"].get<std::string>();
            EXPECT_EQ(keys.error().code, cv::codes::bad_model_card) << keys.error().message();
            continue;
        }
        ASSERT_TRUE(keys) << keys.error().message();
        const json& want = c["keys"];
        for (std::size_t i = 0; i < std::min(want.size(), keys->size()); ++i) expect_key(want[i], (*keys)[i], id);
        ASSERT_EQ(keys->size(), want.size());
    }
}

TEST(ModelMetadata, SizeLabelIsTheReferences) {
    for (const json& s : expected()["size_labels"]) {
        if (s["total"].get<std::int64_t>() < 0) continue;  // a LoRA's negative count: not converted here
        cv::parameter_counts p = counts_of(s);
        EXPECT_EQ(cv::size_label(p), s["label"].get<std::string>()) << s.dump();
    }
}

TEST(ModelMetadata, ModelIdComponentsAreTheReferences) {
    for (const json& m : expected()["model_ids"]) {
        const cv::model_id_components c = cv::get_model_id_components(m["id"].get<std::string>(), m["total"].get<std::int64_t>());
        const json& w = m["components"];
        SCOPED_TRACE(m.dump());
        EXPECT_EQ(c.full_name, opt(w[0]));
        EXPECT_EQ(c.organization, opt(w[1]));
        EXPECT_EQ(c.basename, opt(w[2]));
        EXPECT_EQ(c.finetune, opt(w[3]));
        EXPECT_EQ(c.version, opt(w[4]));
        EXPECT_EQ(c.size_label, opt(w[5]));
    }
}

TEST(ModelMetadata, IdToTitleIsTheReferences) {
    for (const json& t : expected()["titles"])
        EXPECT_EQ(cv::id_to_title(t["text"].get<std::string>()), t["title"].get<std::string>()) << t.dump();
}

TEST(ModelMetadata, NamingConventionIsTheReferences) {
    for (const json& n : expected()["naming"]) {
        const json& a = n["args"];
        EXPECT_EQ(cv::naming_convention(opt(a[0]), opt(a[1]), opt(a[2]), opt(a[3]), opt(a[4]), opt(a[5]), opt(a[6])),
                  n["name"].get<std::string>())
            << n.dump();
    }
    for (const json& t : expected()["templated"]) {
        auto r = cv::fill_templated_filename(t["filename"].get<std::string>(), opt(t["output_type"]));
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(*r, t["result"].get<std::string>()) << t.dump();
    }
}

// Python's str.format fails on these: refused.
TEST(ModelMetadata, TemplatedFilenameRefusesWhatFormatRefuses) {
    for (const char* bad : {"x-{other}.gguf", "x-}.gguf", "x-{.gguf", "{}{}.gguf", "{}{0}.gguf", "{ftype:>9}.gguf"}) {
        auto r = cv::fill_templated_filename(bad, std::string("F16"));
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, cv::codes::bad_model_card);
    }
    auto ok = cv::fill_templated_filename("{{ftype}}-{ftype}", std::string("F16"));
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, "{ftype}-f16");
}

// ---- failure paths, each with the smallest input that trips it ----

gg::error card_error(std::string_view text) {
    auto r = cv::model_card_metadata(text, "README.md");
    EXPECT_FALSE(r) << "accepted: " << text;
    return r ? gg::error{} : r.error();
}

TEST(ModelMetadata, MalformedFrontMatterIsRefused) {
    const gg::error e = card_error("---\na: [b\n");
    EXPECT_EQ(e.code, cv::codes::bad_model_card);
    EXPECT_EQ(e.file, "README.md");
    EXPECT_NE(e.detail.find("YAML"), std::string::npos) << e.message();
    EXPECT_EQ(card_error("---\n[a]: b\n").code, cv::codes::bad_model_card);         // an unhashable key
    EXPECT_EQ(card_error("---\na: 2024-13-01\n").code, cv::codes::bad_model_card);  // no such date
    EXPECT_EQ(card_error("---\na: \x01\n").code, cv::codes::bad_model_card);        // a control character
    EXPECT_EQ(card_error("---\na: b\n...\nc: d\n").code, cv::codes::bad_model_card);  // a second document
    EXPECT_EQ(card_error("---\na: &x b\n").code, cv::codes::bad_model_card);        // an anchor (not read here)
    EXPECT_EQ(card_error("---\na: !!int 3\n").code, cv::codes::bad_model_card);     // a tag (not read here)
    EXPECT_EQ(card_error("---\nname: 3\n").code, cv::codes::bad_model_card);        // a number as a string key
    EXPECT_EQ(card_error("---\nlicense: [1]\n").code, cv::codes::bad_model_card);   // join of a non-string
    EXPECT_EQ(card_error("---\ntags: [1.5]\n").code, cv::codes::bad_model_card);    // f32 arrays: not here
    EXPECT_EQ(card_error("---\ntags: [a, 1]\n").code, cv::codes::bad_model_card);   // mixed
    EXPECT_EQ(card_error("---\ntags: [3000000000]\n").code, cv::codes::bad_model_card);  // beyond i32
    std::string deep = "---\na: ";
    for (int i = 0; i < 40; ++i) deep += '[';
    EXPECT_EQ(card_error(deep).code, cv::codes::bad_model_card);  // nesting cap
}

TEST(ModelMetadata, WhatTheReferenceIgnoresIsIgnored) {
    for (const char* ok : {"", "no front matter", "---", "---\n---\n", "---\n- a\n---\n", "---\njust text\n---\n", "# x\n---\na: [\n"}) {
        auto r = cv::model_card_metadata(ok, "README.md");
        ASSERT_TRUE(r) << ok << ": " << r.error().message();
        EXPECT_TRUE(r->empty()) << ok;
    }
    // YAML 1.1's booleans, the Norway hack, tabs as spaces
    auto r = cv::model_card_metadata("---\nlanguage:\n- no\n- fr\nlicense:\t'yes'\n", "README.md");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ(std::get<std::string>((*r)[0].value), "yes");
    EXPECT_EQ(std::get<std::vector<std::string>>((*r)[1].value), (std::vector<std::string>{"no", "fr"}));
}

fs::path tiny_dir(const minfer::test_support::temp_dir& tmp, const std::string& name) {
    const fs::path dir = tmp.path() / name;
    fs::create_directories(dir);
    const json& first = expected()["conversions"][0];
    write_file(dir / "config.json", first["config"]);
    return dir;
}

gg::error metadata_error(const fs::path& dir) {
    auto cfg = cv::read_hf_config(dir / "config.json");
    EXPECT_TRUE(cfg);
    auto r = cv::general_metadata(dir, *cfg, cv::parameter_counts{1000, 1000, 0, 0}, {});
    EXPECT_FALSE(r);
    return r ? gg::error{} : r.error();
}

TEST(ModelMetadata, FileFailures) {
    minfer::test_support::temp_dir tmp("model_metadata_fail");
    {  // README.md not UTF-8
        const fs::path dir = tiny_dir(tmp, "a");
        write_file(dir / "README.md", "---\na: \xff\n");
        const gg::error e = metadata_error(dir);
        EXPECT_EQ(e.code, cv::codes::bad_model_card);
        EXPECT_EQ(e.offset, 7u);
        EXPECT_EQ(e.file, (dir / "README.md").string());
    }
    {  // README.md beyond the cap
        const fs::path dir = tiny_dir(tmp, "b");
        write_file(dir / "README.md", std::string(cv::model_card_max_bytes + 1, 'x'));
        const gg::error e = metadata_error(dir);
        EXPECT_EQ(e.code, cv::codes::bad_model_card);
        EXPECT_EQ(e.where, gg::section::file);
    }
    {  // generation_config.json not UTF-8 (the reference's UnicodeDecodeError is not caught)
        const fs::path dir = tiny_dir(tmp, "c");
        write_file(dir / "generation_config.json", "{\"a\": \"\xff\"}");
        EXPECT_EQ(metadata_error(dir).code, cv::codes::bad_model_card);
    }
    {  // generation_config.json beyond the cap
        const fs::path dir = tiny_dir(tmp, "d");
        write_file(dir / "generation_config.json", std::string(cv::model_card_max_bytes + 1, ' '));
        EXPECT_EQ(metadata_error(dir).code, cv::codes::bad_model_card);
    }
    {  // a sampling integer beyond 32 bits
        const fs::path dir = tiny_dir(tmp, "e");
        write_file(dir / "generation_config.json", "{\"top_k\": 2147483648}");
        const gg::error e = metadata_error(dir);
        EXPECT_EQ(e.code, cv::codes::bad_model_card);
        EXPECT_EQ(e.subject.view(), "top_k");
        EXPECT_EQ(e.offset, 10u);
    }
    {  // a sampling float beyond f32
        const fs::path dir = tiny_dir(tmp, "f");
        write_file(dir / "generation_config.json", "{\"temperature\": 1e39}");
        EXPECT_EQ(metadata_error(dir).code, cv::codes::bad_model_card);
    }
}

// A directory named "." has no name: the reference writes no general.name then (add_string of "").
TEST(ModelMetadata, PathNameAsPython) {
    minfer::test_support::temp_dir tmp("model_metadata_path");
    const fs::path dir = tiny_dir(tmp, "Some-Model-7B");
    auto cfg = cv::read_hf_config(dir / "config.json");
    ASSERT_TRUE(cfg);
    auto r = cv::general_metadata(dir / "." / "", *cfg, cv::parameter_counts{1000, 1000, 0, 0}, {});
    ASSERT_TRUE(r) << r.error().message();
    const cv::vocab_key* name = cv::find_key(*r, "general.name");
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(std::get<std::string>(name->value), "Some Model 7B");
}

// ---- the nine checkpoints against the reference's outputs ----

struct reference_env {
    fs::path models, outputs;
};

std::optional<reference_env> reference() {
    const char* models = std::getenv("MINFER_CONVERT_MODELS");
    const char* outputs = std::getenv("MINFER_CONVERT_REF_OUT");
    if (models == nullptr || outputs == nullptr || *models == '\0' || *outputs == '\0') return std::nullopt;
    return reference_env{models, outputs};
}

constexpr const char* skip_reason =
    "MINFER_CONVERT_MODELS and MINFER_CONVERT_REF_OUT are not both set: the general.* keys are not compared with "
    "convert_hf_to_gguf.py's outputs (MINFER_CONVERT_MODELS: build/convert-models from tests/convert/make_models.py; "
    "MINFER_CONVERT_REF_OUT: a folder of <model>.gguf made by build/convert-ref/run_convert.py <models>/<model> "
    "--outfile <folder>/<model>.gguf --outtype f32 --model-name 'minfer convert test')";

TEST(ModelMetadataReference, EqualsTheReferenceConvertersOutput) {
    const auto env = reference();
    if (!env) GTEST_SKIP() << skip_reason;
    for (const char* model : {"Tiny-Llama-3-BPE-Instruct", "Tiny-Llama-3.2-BPE", "Tiny-Llama-SPM", "Tiny-Llama-SPM-Sharded",
                              "Tiny-Mistral-v0.3-SPM", "Tiny-Qwen2.5-Instruct", "Tiny-Qwen3", "Tiny-Qwen3-BF16", "Tiny-Qwen3-MoE"}) {
        SCOPED_TRACE(model);
        const fs::path dir = env->models / model;
        auto cfg = cv::read_hf_config(dir / "config.json");
        ASSERT_TRUE(cfg) << cfg.error().message();
        auto ref = gg::model::open(env->outputs / (std::string(model) + ".gguf"));
        ASSERT_TRUE(ref) << ref.error().message();
        cv::parameter_counts counts;
        for (const gg::tensor_ref& t : ref->tensors()) {
            counts.total += t.info->n_elements;
            if (t.info->name.find("_exps") != std::string_view::npos) counts.expert += t.info->n_elements;
        }
        counts.shared = counts.total - counts.expert;
        const std::string arch(cv::gguf_name(cfg->arch));
        std::vector<const gg::kv*> want;
        for (const gg::kv& k : ref->metadata().metadata()) {
            if (!k.key.starts_with("general.")) break;
            want.push_back(&k);
        }
        for (const gg::kv& k : ref->metadata().metadata())
            if (k.key == arch + ".expert_count") counts.expert_count = *k.get<std::uint32_t>();
        cv::metadata_options options;
        options.model_name = "minfer convert test";
        auto keys = cv::general_metadata(dir, *cfg, counts, options);
        ASSERT_TRUE(keys) << keys.error().message();
        ASSERT_EQ(keys->size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            const gg::kv& r = *want[i];
            const cv::vocab_key& k = (*keys)[i];
            SCOPED_TRACE(k.name);
            ASSERT_EQ(r.key, k.name);
            if (const auto* s = std::get_if<std::string>(&k.value)) {
                ASSERT_EQ(r.type, gg::value_type::string);
                EXPECT_EQ(*r.get<std::string_view>(), *s);
            } else if (const auto* u = std::get_if<std::uint32_t>(&k.value)) {
                ASSERT_EQ(r.type, gg::value_type::u32);
                EXPECT_EQ(*r.get<std::uint32_t>(), *u);
            } else if (const auto* i32 = std::get_if<std::int32_t>(&k.value)) {
                ASSERT_EQ(r.type, gg::value_type::i32);
                EXPECT_EQ(*r.get<std::int32_t>(), *i32);
            } else if (const auto* f = std::get_if<float>(&k.value)) {
                ASSERT_EQ(r.type, gg::value_type::f32);
                EXPECT_EQ(*r.get<float>(), *f);
            } else if (const auto* v = std::get_if<std::vector<std::string>>(&k.value)) {
                ASSERT_EQ(r.type, gg::value_type::array);
                const gg::array_view arr = *r.get<gg::array_view>();
                ASSERT_EQ(arr.element_type(), gg::value_type::string);
                std::vector<std::string> got;
                for (std::string_view item : arr.strings()) got.emplace_back(item);
                EXPECT_EQ(got, *v);
            } else {
                FAIL() << "a value type the reference does not write here";
            }
        }
    }
}

}  // namespace

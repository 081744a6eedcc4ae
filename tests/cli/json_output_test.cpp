// `minfer info --json`: the document parses and holds every item, strings that are not UTF-8 stay
// distinct and carry their bytes, --no-arrays/--no-tensors, and memory that does not grow with arrays.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_support.hpp"

namespace minfer_cli_test {

TEST(CliJson, ParsesAndHoldsEverything) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", "--json", f.model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["file"], f.model.string());
    EXPECT_EQ(j["file_bytes"], fs::file_size(f.model));
    ASSERT_EQ(j["parts"].size(), 1u);
    EXPECT_EQ(j["parts"][0]["version"], 3);
    EXPECT_EQ(j["parts"][0]["alignment"], 32);
    EXPECT_EQ(j["parts"][0]["data_offset"], m->metadata().data_offset());
    EXPECT_EQ(j["parts"][0]["n_kv"], 18);
    EXPECT_EQ(j["parts"][0]["n_tensors"], 4);

    const json& md = j["metadata"];
    ASSERT_EQ(md.size(), 18u);
    EXPECT_EQ(md.begin().key(), "general.architecture");  // file order kept
    EXPECT_EQ(md["t.u8"]["type"], "u8");
    EXPECT_EQ(md["t.u8"]["value"], 200);
    EXPECT_EQ(md["t.i16"]["value"], -30000);
    EXPECT_EQ(md["t.u64"]["value"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(md["t.i64"]["value"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(md["t.f32"]["value"].get<float>(), 0.1f);
    EXPECT_EQ(md["t.f64"]["value"].get<double>(), 3.141592653589793);
    EXPECT_EQ(md["t.bool"]["value"], true);
    EXPECT_EQ(md["t.str"]["value"], "say \"hi\"");
    EXPECT_EQ(md["t.long"]["value"], long_string);  // never cut in JSON

    const json& tok = md["t.tokens"];
    EXPECT_EQ(tok["type"], "array");
    EXPECT_EQ(tok["element_type"], "string");
    EXPECT_EQ(tok["count"], 20);
    ASSERT_EQ(tok["items"].size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(tok["items"][i], f.tokens[i]);
    ASSERT_EQ(md["t.nums"]["items"].size(), 10u);
    EXPECT_EQ(md["t.nums"]["items"][9], 10);

    // The control character is valid UTF-8: kept (as \u001b in the JSON text); invalid bytes become \xNN.
    ASSERT_TRUE(md.contains(bad_key));
    EXPECT_EQ(md[bad_key]["value"], 7);
    EXPECT_NE(r.out.find("bad\\u001bkey"), std::string::npos);
    EXPECT_EQ(md["t.bad_utf8"]["value"], "abc\\xFF\\xFE");
    EXPECT_EQ(md["t.bad_utf8"]["invalid_utf8"], true);

    const json& ts = j["tensors"];
    ASSERT_EQ(ts.size(), 4u);
    const std::array<std::uint64_t, 4> rel{0, 64, 96, 192};
    const std::array<const char*, 4> types{"f32", "f16", "q8_0", "q4_0"};
    const std::array<std::uint32_t, 4> ids{0, 1, 8, 2};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(ts[i]["offset"], rel[i]) << i;
        EXPECT_EQ(ts[i]["absolute_offset"], m->metadata().data_offset() + rel[i]) << i;
        EXPECT_EQ(ts[i]["type"], types[i]);
        EXPECT_EQ(ts[i]["type_id"], ids[i]);
        EXPECT_EQ(ts[i]["part"], 1);
    }
    EXPECT_EQ(ts[0]["name"], "a.weight");
    EXPECT_EQ(ts[0]["shape"], json::array({4, 3}));
    EXPECT_EQ(ts[0]["nb"], json::array({4, 16, 48, 48}));
    EXPECT_EQ(ts[0]["n_elements"], 12);
    EXPECT_EQ(ts[2]["n_bytes"], 68);
    EXPECT_EQ(j["totals"]["n_parameters"], 148);
    EXPECT_EQ(j["totals"]["n_bytes"], 168);
    EXPECT_NEAR(j["totals"]["bits_per_weight"].get<double>(), 168.0 * 8 / 148, 1e-9);
}

TEST(CliJson, BigVocabularyDumpsEveryItem) {
    const auto r = run({"info", "--json", vocab_path().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    const json& items = j["metadata"]["tokenizer.ggml.tokens"]["items"];
    ASSERT_EQ(items.size(), big_vocab);
    EXPECT_EQ(items[0], "w0");
    EXPECT_EQ(items[100], "\xc4\xa0the");
    EXPECT_EQ(items[101], "\\xFF");
    EXPECT_EQ(items[big_vocab - 1], "w" + std::to_string(big_vocab - 1));
    EXPECT_EQ(j["metadata"]["tokenizer.ggml.tokens"]["invalid_utf8_items"], json::array({101}));

    // The text view shows a preview; --full every item.
    const auto t = run({"info", vocab_path().string()});
    ASSERT_EQ(t.rc, 0);
    EXPECT_TRUE(has_squeezed_line(t.out, "tokenizer.ggml.tokens [string x 150000] \"w0\", \"w1\", \"w2\", \"w3\", "
                                         "\"w4\", \"w5\", \"w6\", \"w7\", …"));
    const auto full = run({"info", "--full", vocab_path().string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_line(full.out, "      [149999] \"w149999\""));
    EXPECT_TRUE(has_line(full.out, "      [101] \"\\xFF\""));
}

TEST(CliJson, SplitPartsAndOffsets) {
    const auto& f = fx();
    auto m = gguf::model::open(f.split1);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", "--json", f.split1.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["parts"].size(), 3u);
    ASSERT_EQ(j["tensors"].size(), 3u);
    for (std::uint32_t p = 0; p < 3; ++p) {
        EXPECT_EQ(j["parts"][p]["path"], m->parts()[p].path.string());
        EXPECT_EQ(j["tensors"][p]["part"], p + 1);
        EXPECT_EQ(j["tensors"][p]["absolute_offset"], m->parts()[p].view.data_offset());
    }
}

TEST(CliJson, KeysThatCollidedStayDistinct) {
    const auto r = run({"info", "--json", text_model().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    const json& md = j["metadata"];
    auto m = gguf::model::open(text_model());
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(md.size(), m->metadata().metadata().size()) << "an entry was lost";
    // The valid key is itself; the invalid one is flagged and carries its bytes.
    ASSERT_TRUE(md.contains("k\\xFF"));
    EXPECT_EQ(md["k\\xFF"]["value"], 2);
    EXPECT_FALSE(md["k\\xFF"].contains("key_invalid_utf8"));
    std::map<std::string, int> by_hex;
    for (const auto& [name, v] : md.items()) {
        if (v.contains("key_hex")) {
            EXPECT_EQ(v["key_invalid_utf8"], true) << name;
            by_hex[v["key_hex"].get<std::string>()] = v["value"].get<int>();
        }
    }
    EXPECT_EQ(by_hex["6bff"], 1);
    EXPECT_EQ(by_hex["fffe"], 3);
    EXPECT_EQ(by_hex["5c784646fe"], 4);
    EXPECT_EQ(by_hex.size(), 3u);
    // The invalid string value keeps its text and gains its bytes.
    EXPECT_EQ(md["t.raw"]["value"], "line1\nline2\t\\xFF");
    EXPECT_EQ(md.at("t.raw").value("value_hex", std::string()), "6c696e65310a6c696e653209ff");
    EXPECT_EQ(md.at("t.raw").value("invalid_utf8", false), true);
}

TEST(CliJson, InvalidItemsCarryTheirBytes) {
    const auto r = run({"info", "--json", vocab_path().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["metadata"]["tokenizer.ggml.tokens"].value("invalid_utf8_items_hex", json::array()),
              json::array({"ff"}));
}

TEST(CliJson, NoArraysAndNoTensors) {
    const auto r = run({"info", "--json", "--no-arrays", "--no-tensors", fx().model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["metadata"]["t.tokens"]["count"], 20);
    EXPECT_FALSE(j["metadata"]["t.tokens"].contains("items"));
    EXPECT_FALSE(j["metadata"]["t.nums"].contains("items"));
    EXPECT_FALSE(j.contains("tensors"));
    EXPECT_EQ(j["totals"]["n_tensors"], 4);

    const auto t = run({"info", "--no-arrays", "--no-tensors", fx().model.string()});
    ASSERT_EQ(t.rc, 0);
    EXPECT_TRUE(has_squeezed_line(t.out, "t.tokens [string x 20]")) << t.out;
    EXPECT_TRUE(has_squeezed_line(t.out, "t.nums [u32 x 10]"));
    EXPECT_EQ(t.out.find("a.weight"), std::string::npos);
    EXPECT_NE(t.out.find("total: 4 tensors"), std::string::npos);
}

// A valid 20 MB file with one 2*10^7-item u8 array: --json streams, so its peak memory is text mode's
// plus a constant (the old DOM took over 1 GB), and every item is written.
TEST(CliJson, BigArrayStreamsInConstantMemory) {
    const fs::path p = temp_root() / "bigarray.gguf";
    constexpr std::size_t n = 20000000;
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        std::vector<std::uint8_t> big(n);
        for (std::size_t i = 0; i < n; ++i) big[i] = static_cast<std::uint8_t>(i * 7);
        w.set_array("big.u8", gguf::value_type::u8, std::span<const std::uint8_t>(big));
        must_write(w, p);
    }
    const fs::path out = temp_root() / "bigarray.json";
    const peak text = measure({"info", "--full", p.string()}, "/dev/null");
    ASSERT_EQ(text.rc, 0);
    const peak js = measure({"info", "--json", p.string()}, out);
    ASSERT_EQ(js.rc, 0);
    EXPECT_LE(js.rss_kib, text.rss_kib + 16 * 1024)
        << "--json peak RSS " << js.rss_kib << " KiB vs --full " << text.rss_kib << " KiB";
    std::printf("peak RSS: --full %ld KiB, --json %ld KiB\n", text.rss_kib, js.rss_kib);
    // Every item: the items line holds n numbers (n - 1 separators), in order.
    const std::string doc = slurp(out);
    const std::size_t at = doc.find("\"items\": [");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = doc.find(']', at);
    ASSERT_NE(end, std::string::npos);
    const std::string_view items(doc.data() + at + 10, end - at - 10);
    EXPECT_EQ(static_cast<std::size_t>(std::count(items.begin(), items.end(), ',')), n - 1);
    EXPECT_EQ(items.substr(0, 12), "0, 7, 14, 21");
    fs::remove(out);
    fs::remove(p);
}

}  // namespace minfer_cli_test

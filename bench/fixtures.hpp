#pragma once
// Benchmark fixtures: GGUF files shaped like real models, written with minfer::gguf::writer into a
// scratch directory when the benchmark starts (never committed). Tensor data is written as holes,
// so a 428 MB fixture costs a few MB of disk. Everything is deterministic: the same call writes the
// same bytes on every machine.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace minfer::bench {

/// A written fixture: what to open, and what a correct loader must report for it.
struct fixture {
    std::string name;                          ///< short id used in benchmark names ("qwen", "qwen_split", …)
    std::filesystem::path entry;               ///< the path to open (part 1 for a split set)
    std::vector<std::filesystem::path> parts;  ///< every file, in part order
    std::uint64_t n_kv = 0;                    ///< metadata entries of part 1
    std::uint64_t n_tensors = 0;               ///< tensors over all parts
    std::uint64_t file_bytes = 0;              ///< sum of the part sizes
    std::vector<std::string> tensor_names;     ///< every tensor name, in file order over all parts
};

/// Shape of a Qwen2-architecture fixture. The defaults are Qwen2.5-0.5B-Instruct Q4_0.
struct qwen_options {
    std::uint32_t vocab = 151936;         ///< tokenizer.ggml.tokens entries (and token_embd rows)
    std::uint32_t merges = 151387;        ///< tokenizer.ggml.merges entries
    std::uint32_t blocks = 24;
    /// Size the chat template / merges so that the metadata ends at byte 5,931,189 and the data
    /// section starts at 5,947,744, as in the real file (only meaningful for the default shape).
    bool match_reference_layout = true;
    std::uint32_t split_parts = 1;        ///< 1: one file; N > 1: a split set of N parts
};

/// Layout facts of the real Qwen2.5-0.5B-Instruct Q4_0 file (seed doc 02, §2.1).
inline constexpr std::uint64_t qwen_reference_metadata_end = 5'931'189;
inline constexpr std::uint64_t qwen_reference_data_offset = 5'947'744;
inline constexpr std::uint64_t qwen_reference_file_bytes = 428'730'208;

/// (a)/(b)/(c): a Qwen2-shaped model. `stem` is the file name without ".gguf"; for a split set the
/// parts are named with minfer::gguf::split_file_name(stem, i, n). Throws std::runtime_error.
fixture write_qwen(const std::filesystem::path& dir, const std::string& name, const std::string& stem,
                   const qwen_options& options = {});

/// (d): a file with `n` small F32 tensors and a handful of KVs (stress for the tensor table/index).
fixture write_many_tensors(const std::filesystem::path& dir, const std::string& name, std::uint32_t n);

/// (e): a file with `n` u32 KVs and no tensors (stress for the metadata index).
fixture write_many_kvs(const std::filesystem::path& dir, const std::string& name, std::uint32_t n);

/// The fixtures a run uses: (a) and (b) always, (c)–(e) when `large` is set.
std::vector<fixture> write_all(const std::filesystem::path& dir, bool large);

/// A fresh scratch directory under $TMPDIR (or /tmp). Throws std::runtime_error.
std::filesystem::path make_scratch_dir();

}  // namespace minfer::bench

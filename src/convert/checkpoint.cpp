// checkpoint: a directory's shards found as convert_hf_to_gguf.py finds them, then checked against
// its index (or against one another).
#include "minfer/convert/checkpoint.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "json_events.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/json_value.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::convert {

namespace {


struct checkpoint_failure {
    gguf::error e;
};

[[noreturn]] void fail(gguf::errc code, gguf::section where, std::string file, std::uint64_t offset,
                       std::string_view subject, std::string detail, int sys_errno = 0) {
    checkpoint_failure f;
    f.e.code = code;
    f.e.where = where;
    f.e.file = std::move(file);
    f.e.offset = offset;
    f.e.subject = subject;
    f.e.detail = std::move(detail);
    f.e.sys_errno = sys_errno;
    throw f;
}

// ---- model.safetensors.index.json: {"metadata": {...}, "weight_map": {"tensor": "shard file", ...}} ----

struct index_entry {
    std::string tensor;
    std::uint32_t shard = 0;
    std::uint64_t key_at = 0;    // absolute offsets in the index file
    std::uint64_t value_at = 0;
};

struct index_shard {
    std::string name;
    std::uint64_t first_named_at = 0;  // the first weight_map value naming it
};

struct checkpoint_index {
    std::vector<index_entry> entries;  // the weight_map, in the file's order
    std::vector<index_shard> shards;   // in the order first named
};

// Whether a shard name from the index is a bare file name of the directory.
bool bare_file_name(std::string_view name) {
    if (name.empty() || name == "." || name == "..") return false;
    return name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

// Events of the index: the root object's weight_map is read; any other member (metadata) is skipped
// whatever it holds. Levels: 1 the root, 2 inside a root member's value.
class index_reader {
public:
    index_reader(checkpoint_index& out, const std::string& file) : out_(out), file_(file) {}

    bool on_begin_object(std::uint64_t at) {
        if (level_ == 0) {
            ++level_;
            return true;
        }
        if (level_ == 1 && member_ == "weight_map") {
            in_weight_map_ = true;
            weight_map_seen_ = true;
            weight_map_at_ = at;
        } else if (level_ == 2 && in_weight_map_) {
            return not_a_name(at, json_kind::object);
        }
        ++level_;
        return true;
    }
    bool on_end_object(std::uint64_t /*at*/) {
        --level_;
        if (level_ == 1) in_weight_map_ = false;
        return true;
    }
    bool on_begin_array(std::uint64_t at) {
        if (level_ == 0) return root_not_object(at, json_kind::array);
        if (level_ == 2 && in_weight_map_) return not_a_name(at, json_kind::array);
        if (level_ == 1 && member_ == "weight_map") return weight_map_not_object(at, json_kind::array);
        ++level_;
        return true;
    }
    bool on_end_array(std::uint64_t /*at*/) {
        --level_;
        return true;
    }
    bool on_key(std::string& key, std::uint64_t at) {
        if (level_ == 1) {
            if (!root_keys_.insert(key).second) return failed(at, "", "the key " + detail::in_quotes(key) + " appears twice");
            member_ = std::move(key);
            return true;
        }
        if (level_ == 2 && in_weight_map_) {
            if (names_.contains(key)) return failed(at, key, "the tensor appears twice in weight_map");
            tensor_ = std::move(key);
            tensor_at_ = at;
        }
        return true;
    }
    bool on_string(std::string& s, std::uint64_t at) {
        if (level_ == 0) return root_not_object(at, json_kind::string);
        if (level_ == 1 && member_ == "weight_map") return weight_map_not_object(at, json_kind::string);
        if (level_ != 2 || !in_weight_map_) return true;
        if (!bare_file_name(s))
            return failed(at, tensor_,
                          "the shard " + detail::in_quotes(s) +
                              " is not a file name in the checkpoint's directory (a '/', '\\' or NUL, or '.' or '..')");
        auto [it, added] = shard_ids_.try_emplace(s, static_cast<std::uint32_t>(out_.shards.size()));
        if (added) out_.shards.push_back(index_shard{s, at});
        names_.insert(tensor_);
        out_.entries.push_back(index_entry{std::move(tensor_), it->second, tensor_at_, at});
        return true;
    }
    bool on_unsigned(std::uint64_t, std::uint64_t at) { return scalar(at, json_kind::number); }
    bool on_signed(std::int64_t, std::uint64_t at) { return scalar(at, json_kind::number); }
    bool on_float(double, std::uint64_t at) { return scalar(at, json_kind::number); }
    bool on_bool(bool, std::uint64_t at) { return scalar(at, json_kind::boolean); }
    bool on_null(std::uint64_t at) { return scalar(at, json_kind::null); }

    bool weight_map_seen() const { return weight_map_seen_; }
    std::uint64_t weight_map_at() const { return weight_map_at_; }
    const gguf::error& error() const { return error_; }

private:
    bool scalar(std::uint64_t at, json_kind kind) {
        if (level_ == 0) return root_not_object(at, kind);
        if (level_ == 1 && member_ == "weight_map") return weight_map_not_object(at, kind);
        if (level_ == 2 && in_weight_map_) return not_a_name(at, kind);
        return true;
    }
    bool failed(std::uint64_t at, std::string_view subject, std::string detail) {
        error_.code = codes::bad_checkpoint_index;
        error_.where = gguf::section::metadata;
        error_.file = file_;
        error_.offset = at;
        error_.subject = subject;
        error_.detail = std::move(detail);
        return false;
    }
    bool root_not_object(std::uint64_t at, json_kind kind) {
        return failed(at, "", "the index is " + std::string(describe(kind)) + ", not a JSON object");
    }
    bool weight_map_not_object(std::uint64_t at, json_kind kind) {
        return failed(at, "weight_map", std::string(describe(kind)) + "; expected an object of tensor → shard file name");
    }
    bool not_a_name(std::uint64_t at, json_kind kind) {
        return failed(at, tensor_, "the shard is " + std::string(describe(kind)) + ", not a file name");
    }

    checkpoint_index& out_;
    const std::string& file_;
    gguf::error error_;
    int level_ = 0;
    std::string member_;                 // the root member being read
    bool in_weight_map_ = false;
    bool weight_map_seen_ = false;
    std::uint64_t weight_map_at_ = 0;
    std::string tensor_;
    std::uint64_t tensor_at_ = 0;
    std::unordered_set<std::string> root_keys_;
    std::unordered_set<std::string> names_;
    std::unordered_map<std::string, std::uint32_t> shard_ids_;
};

checkpoint_index read_index(const std::filesystem::path& path, gguf::load_mode mode) {
    const std::string file = path.string();
    auto bytes = gguf::mapped_file::open(path, mode);
    if (!bytes) throw checkpoint_failure{std::move(bytes).error()};
    if (bytes->size() > checkpoint_index_max_bytes) {
        checkpoint_failure f;
        f.e.code = codes::bad_checkpoint_index;
        f.e.file = file;
        f.e.expected = checkpoint_index_max_bytes;
        f.e.found = bytes->size();
        f.e.detail = "larger than " + std::to_string(checkpoint_index_max_bytes) + " bytes";
        throw f;
    }
    checkpoint_index index;
    index_reader reader(index, file);
    detail::json_failure failure;
    const std::span<const std::byte> all = bytes->bytes();
    const std::string_view text(reinterpret_cast<const char*>(all.data()), all.size());
    if (!detail::parse_json_events(text, reader, 64, failure)) {
        if (failure.out_of_memory) throw std::bad_alloc();
        if (reader.error().code != gguf::errc::ok) throw checkpoint_failure{reader.error()};
        fail(codes::bad_checkpoint_index, gguf::section::metadata, file, failure.offset, "",
             "not valid JSON: " + failure.detail);
    }
    if (!reader.weight_map_seen())
        fail(codes::bad_checkpoint_index, gguf::section::metadata, file, 0, "weight_map",
             "absent; expected an object of tensor → shard file name");
    if (index.entries.empty())  // nothing to convert: the reference would open no shard and fail later
        fail(codes::bad_checkpoint_index, gguf::section::metadata, file, reader.weight_map_at(), "weight_map",
             "empty: the index names no tensor");
    return index;
}

// ---- the directory ----

// Names of the directory's entries that start with `prefix` and end with `suffix`, sorted
// (get_model_part_names). With opendir/readdir: libstdc++'s non-throwing directory_iterator allocates
// inside noexcept functions, so a failed allocation there would be std::terminate.
std::vector<std::string> part_names(const std::filesystem::path& directory, std::string_view prefix,
                                    std::string_view suffix) {
    std::vector<std::string> names;
    const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), &::closedir);
    if (!dir) fail(gguf::errc::io_error, gguf::section::file, directory.string(), 0, "", std::strerror(errno), errno);
    for (;;) {
        errno = 0;
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            if (errno != 0)
                fail(gguf::errc::io_error, gguf::section::file, directory.string(), 0, "", std::strerror(errno), errno);
            break;
        }
        const std::string_view name(entry->d_name);
        if (name.size() >= prefix.size() + suffix.size() && name.starts_with(prefix) && name.ends_with(suffix))
            names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// stat (following links): 0 for a regular file, else the errno (or -1: exists, not a regular file).
int regular_file(const std::filesystem::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return errno;
    return S_ISREG(st.st_mode) ? 0 : -1;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

bool directory_exists(const std::filesystem::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

safetensors_file open_shard(const std::filesystem::path& path, gguf::load_mode mode) {
    auto shard = safetensors_file::open(path, mode);
    if (!shard) throw checkpoint_failure{std::move(shard).error()};
    return std::move(*shard);
}

}  // namespace

class checkpoint_loader {
public:
    static checkpoint load(const std::filesystem::path& directory, gguf::load_mode mode) {
        checkpoint c;
        c.directory_ = directory;
        if (const int e = regular_file(directory); e > 0)
            fail(gguf::errc::io_error, gguf::section::file, directory.string(), 0, "", std::strerror(e), e);
        if (!directory_exists(directory))
            fail(gguf::errc::io_error, gguf::section::file, directory.string(), 0, "",
                 "not a directory (a checkpoint is a directory holding config.json and the weights)", ENOTDIR);
        const std::filesystem::path index_path = directory / checkpoint_index_name;
        if (regular_file(index_path) == 0) {
            c.indexed_ = true;
            load_indexed(c, index_path, mode);
        } else {
            load_found(c, mode);
        }
        index_by_name(c);
        return c;
    }

private:
    static void load_indexed(checkpoint& c, const std::filesystem::path& index_path, gguf::load_mode mode) {
        const checkpoint_index index = read_index(index_path, mode);
        const std::string index_file = index_path.string();
        // the shards by name, as the reference sorts them; every one a regular file before any is opened
        std::vector<std::uint32_t> order(index.shards.size());
        for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return index.shards[a].name < index.shards[b].name; });
        for (std::uint32_t i : order) {
            const index_shard& s = index.shards[i];
            const int e = regular_file(c.directory_ / s.name);
            if (e == ENOENT)
                fail(codes::bad_checkpoint_index, gguf::section::split, index_file, s.first_named_at, s.name,
                     "the shard is missing from the directory", e);
            if (e < 0)
                fail(codes::bad_checkpoint_index, gguf::section::split, index_file, s.first_named_at, s.name,
                     "the shard is not a regular file");
        }
        std::vector<std::uint32_t> position(index.shards.size());  // index shard id → position in c.shards_
        c.shards_.reserve(order.size());
        for (std::uint32_t i : order) {
            position[i] = static_cast<std::uint32_t>(c.shards_.size());
            c.shards_.push_back(open_shard(c.directory_ / index.shards[i].name, mode));
        }
        // every tensor of the map in the shard it names
        std::unordered_map<std::string_view, std::uint32_t> shard_of;  // tensor → position of its shard
        shard_of.reserve(index.entries.size());
        for (const index_entry& e : index.entries) {
            const std::uint32_t at = position[e.shard];
            if (c.shards_[at].find(e.tensor) == nullptr)
                fail(codes::bad_checkpoint_index, gguf::section::split, index_file, e.value_at, e.tensor,
                     "the index puts the tensor in " + detail::in_quotes(index.shards[e.shard].name) + ", which does not hold it");
            shard_of.emplace(e.tensor, at);
        }
        // every tensor of a shard in the map, under that shard
        for (std::uint32_t s = 0; s < c.shards_.size(); ++s) {
            const safetensors_file& shard = c.shards_[s];
            for (std::uint32_t i : shard.by_name()) {
                const tensor_entry& t = shard.tensors()[i];
                const auto it = shard_of.find(t.name);
                if (it == shard_of.end())
                    fail(codes::bad_checkpoint_index, gguf::section::split, shard.path(), t.header_offset, t.name,
                         "the shard holds a tensor the index does not list");
                if (it->second != s)
                    fail(codes::bad_checkpoint_index, gguf::section::split, shard.path(), t.header_offset, t.name,
                         "the tensor is in two shards: this one, and " +
                             detail::in_quotes(file_name(c.shards_[it->second].path())) + " where the index puts it");
                c.tensors_.push_back(checkpoint_tensor{&t, s});
            }
        }
    }

    static void load_found(checkpoint& c, gguf::load_mode mode) {
        const std::vector<std::string> names = part_names(c.directory_, "model", ".safetensors");
        if (names.empty()) {
            const std::vector<std::string> pickles = part_names(c.directory_, "pytorch_model", ".bin");
            fail(codes::no_weights, gguf::section::file, c.directory_.string(), 0, "",
                 pickles.empty()
                     ? "no model*.safetensors and no " + std::string(checkpoint_index_name) + " in the directory"
                     : "only PyTorch pickles (" + pickles.front() +
                           (pickles.size() > 1 ? ", …" : "") +
                           "), which are never read: loading a pickle runs code; convert them to safetensors first");
        }
        c.shards_.reserve(names.size());
        for (const std::string& name : names) c.shards_.push_back(open_shard(c.directory_ / name, mode));
        std::unordered_map<std::string_view, std::uint32_t> shard_of;
        for (std::uint32_t s = 0; s < c.shards_.size(); ++s) {
            const safetensors_file& shard = c.shards_[s];
            for (std::uint32_t i : shard.by_name()) {
                const tensor_entry& t = shard.tensors()[i];
                const auto [it, added] = shard_of.emplace(t.name, s);
                if (!added)
                    fail(codes::bad_checkpoint_index, gguf::section::split, shard.path(), t.header_offset, t.name,
                         "the tensor is in two shards: this one and " + detail::in_quotes(names[it->second]));
                c.tensors_.push_back(checkpoint_tensor{&t, s});
            }
        }
    }

    static void index_by_name(checkpoint& c) {
        c.by_name_.resize(c.tensors_.size());
        for (std::uint32_t i = 0; i < c.by_name_.size(); ++i) c.by_name_[i] = i;
        std::sort(c.by_name_.begin(), c.by_name_.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return c.tensors_[a].name() < c.tensors_[b].name(); });
    }
};

gguf::result<checkpoint> checkpoint::open(const std::filesystem::path& directory, gguf::load_mode mode) noexcept {
    try {
        return checkpoint_loader::load(directory, mode);
    } catch (checkpoint_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {  // std::bad_alloc, or a filesystem exception with no memory to report it
        return gguf::unexpected(gguf::out_of_memory_error("opening a checkpoint"));
    }
}

gguf::result<std::vector<std::string>> checkpoint_shard_names(const std::filesystem::path& index_path) noexcept {
    try {
        checkpoint_index index = read_index(index_path, gguf::load_mode::read);
        std::vector<std::string> names;
        names.reserve(index.shards.size());
        for (index_shard& s : index.shards) names.push_back(std::move(s.name));
        std::sort(names.begin(), names.end());
        return names;
    } catch (checkpoint_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading a checkpoint's index"));
    }
}

const checkpoint_tensor* checkpoint::find(std::string_view name) const noexcept {
    const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                                     [&](std::uint32_t i, std::string_view n) { return tensors_[i].name() < n; });
    if (it == by_name_.end() || tensors_[*it].name() != name) return nullptr;
    return &tensors_[*it];
}

std::span<const std::byte> checkpoint::tensor_data(const checkpoint_tensor& t) const& noexcept {
    if (t.shard >= shards_.size() || t.entry == nullptr) return {};
    return shards_[t.shard].tensor_data(*t.entry);
}

gguf::result<void> checkpoint::check_convertible() const noexcept {
    for (const checkpoint_tensor& t : tensors_)
        if (gguf::result<void> r = shards_[t.shard].check_convertible(*t.entry); !r) return r;
    return {};
}

}  // namespace minfer::convert

// A checkpoint given by URL, read through a spool directory (remote_checkpoint.hpp).
#include "remote_checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "minfer/toolbox/errors.hpp"
#include "model_keys.hpp"

#ifdef MINFER_TOOLBOX_REMOTE
#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/checkpoint.hpp"
#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/safetensors.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "minfer/convert/spm_vocab.hpp"
#include "minfer/remote/http_source.hpp"
#include "minfer/remote/url.hpp"
#endif

namespace minfer::toolbox::detail {

#ifdef MINFER_TOOLBOX_REMOTE

namespace {

namespace cv = minfer::convert;

constexpr double default_timeout_s = 60;
constexpr std::uint64_t small_first_read = 256 * 1024;  // most small files in one request
constexpr std::uint64_t max_request = 16u << 20;        // a tensor range is fetched 16 MiB a request at most

// The files convert_hf_to_gguf.py (and so minfer::convert) may read besides the shards, with the cap
// its reader has. A cap of 0: only whether the file exists is read (tekken.json).
struct small_file {
    const char* name;
    std::uint64_t cap;
};
constexpr small_file small_files[] = {
    {"config.json", cv::hf_config_max_bytes},
    {"model.safetensors.index.json", cv::checkpoint_index_max_bytes},
    {"tokenizer.json", cv::tokenizer_json_max_bytes},
    {"tokenizer.model", cv::sentencepiece_model_max_bytes},
    {"tokenizer_config.json", cv::tokenizer_file_max_bytes},
    {"special_tokens_map.json", cv::tokenizer_file_max_bytes},
    {"added_tokens.json", cv::tokenizer_file_max_bytes},
    {"chat_template.jinja", cv::tokenizer_file_max_bytes},
    {"chat_template.json", cv::tokenizer_file_max_bytes},
    {"generation_config.json", cv::tokenizer_file_max_bytes},
    {"README.md", std::uint64_t{16} << 20},
    {"tekken.json", 0},
};

gguf::error io_failure(const std::filesystem::path& file, int err, const std::string& what) {
    gguf::error e;
    e.code = gguf::errc::io_error;
    e.file = file.string();
    e.sys_errno = err;
    e.detail = what + ": " + std::strerror(err);
    return e;
}

bool absent(const gguf::error& e) { return e.code == gguf::errc::http_status && (e.found == 404 || e.found == 410); }

gguf::result<void> write_all(int fd, std::uint64_t at, std::span<const std::byte> bytes, const std::filesystem::path& file) {
    while (!bytes.empty()) {
        const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at));
        if (n < 0) {
            if (errno == EINTR) continue;
            return gguf::unexpected(io_failure(file, errno, "writing the spool (the checkpoint's bytes fetched)"));
        }
        bytes = bytes.subspan(static_cast<std::size_t>(n));
        at += static_cast<std::uint64_t>(n);
    }
    return {};
}

}  // namespace

struct remote_checkpoint::state {
    struct shard_file {
        std::string url;
        std::filesystem::path path;
        int fd = -1;
        std::uint64_t size = 0;
    };

    remote_settings settings;
    std::chrono::steady_clock::time_point deadline;
    remote::directory_location where;
    std::filesystem::path temp;  // the temporary directory made beside the output (removed)
    std::filesystem::path dir;   // temp / the repository's name: the checkpoint directory
    // step 1: one budget (--max-fetch, else none: each file has its cap), one entry per file asked
    std::unique_ptr<remote::fetch_budget> head_budget;
    std::list<remote::part_stats> head_stats;  // stable addresses: each source writes its own
    std::uint32_t files = 0;
    std::map<std::string, shard_file> shards;
    // step 3: a budget of exactly the planned bytes, one reader per shard
    std::unique_ptr<remote::fetch_budget> budget;
    std::list<remote::part_stats> stats;
    std::map<std::string, std::unique_ptr<remote::range_reader>> readers;
    std::uint64_t planned = 0;
    std::vector<std::byte> buffer;
    std::mutex mutex;  // fetch and release (the writer's sources may be asked from several threads)

    ~state() {
        readers.clear();
        for (auto& [name, s] : shards)
            if (s.fd >= 0) ::close(s.fd);
        if (!temp.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(temp, ec);  // nothing to do about a failure here: best effort
        }
    }

    remote::fetch_options options_for(const std::string& url) const {
        remote::fetch_options fo;
        fo.timeout_s = settings.timeout_s.value_or(default_timeout_s);
        fo.deadline = deadline;
        if (!settings.hf_token.empty() && remote::is_hub(url)) fo.bearer_token = settings.hf_token;
        return fo;
    }

    std::uint64_t head_bytes() const {
        std::uint64_t n = 0;
        for (const remote::part_stats& p : head_stats) n += p.bytes_received;
        return n;
    }

    gguf::result<void> make_spool(const std::filesystem::path& parent) {
        const std::filesystem::path p = parent.empty() ? std::filesystem::path(".") : parent;
        std::string templ = (p / ".minfer-convert-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr)
            return gguf::unexpected(io_failure(p, errno, "making the spool directory for the remote checkpoint beside the output"));
        temp = templ;
        dir = temp / where.name;
        if (::mkdir(dir.c_str(), 0700) != 0) return gguf::unexpected(io_failure(dir, errno, "making the spool directory"));
        return {};
    }

    // A file of the spool: `head` at its start, `size` bytes long (the rest a hole). The descriptor,
    // open for writing, or -1 when `keep` is false (closed).
    gguf::result<int> spool_file(const std::string& name, std::span<const std::byte> head, std::uint64_t size, bool keep) {
        const std::filesystem::path path = dir / name;
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return gguf::unexpected(io_failure(path, errno, "making a file of the spool"));
        auto w = write_all(fd, 0, head, path);
        if (w && ::ftruncate(fd, static_cast<off_t>(size)) != 0)
            w = gguf::unexpected(io_failure(path, errno, "sizing a file of the spool"));
        if (!w || !keep) {
            ::close(fd);
            if (!w) return gguf::unexpected(std::move(w).error());
            return -1;
        }
        return fd;
    }

    // A small file fetched whole under its cap (a 404 or 410: absent, nothing made); one above the
    // cap made as a hole of its size, which its reader refuses as it refuses the local file.
    gguf::result<void> fetch_small(const small_file& f) {
        const std::string url = remote::file_in(where, f.name);
        remote::fetch_options fo = options_for(url);
        fo.first_read = std::max<std::uint64_t>(1, std::min(f.cap, small_first_read));
        head_stats.emplace_back();
        head_stats.back().url = url;
        auto src = remote::open_http_source(url, fo, *head_budget, head_stats.back());
        if (!src) {
            if (absent(src.error())) return {};
            return gguf::unexpected(std::move(src).error());
        }
        ++files;
        const std::uint64_t size = (*src)->size();
        if (size > f.cap) {
            auto made = spool_file(f.name, {}, size, false);
            if (!made) return gguf::unexpected(std::move(made).error());
            return {};
        }
        auto bytes = (*src)->prefix(size);
        if (!bytes) return gguf::unexpected(std::move(bytes).error());
        auto made = spool_file(f.name, *bytes, size, false);
        if (!made) return gguf::unexpected(std::move(made).error());
        return {};
    }

    // A shard as a sparse file of its size holding its length prefix and JSON header. `named`: the
    // index names it (a 404 is an error); else it is looked for (a 404: absent).
    gguf::result<void> fetch_shard(const std::string& name, bool named) {
        const std::string url = remote::file_in(where, name);
        remote::fetch_options fo = options_for(url);
        fo.first_read = 8;
        head_stats.emplace_back();
        head_stats.back().url = url;
        auto src = remote::open_http_source(url, fo, *head_budget, head_stats.back());
        if (!src) {
            gguf::error e = std::move(src).error();
            if (!named && absent(e)) return {};
            if (e.subject.empty()) e.subject = name;
            return gguf::unexpected(std::move(e));
        }
        ++files;
        const std::uint64_t size = (*src)->size();
        std::uint64_t want = std::min<std::uint64_t>(size, 8);
        auto prefix = (*src)->prefix(want);
        if (!prefix) return gguf::unexpected(std::move(prefix).error());
        if (size >= 8) {
            std::uint64_t n = 0;
            for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<std::uint64_t>((*prefix)[static_cast<std::size_t>(i)]);
            // a header the format allows and the file holds; else only the prefix, and checkpoint::open
            // says what is wrong as it says it of the local file
            if (n <= cv::safetensors_max_header_bytes && n <= size - 8) want = 8 + n;
        }
        auto head = (*src)->prefix(want);
        if (!head) return gguf::unexpected(std::move(head).error());
        auto fd = spool_file(name, *head, size, true);
        if (!fd) return gguf::unexpected(std::move(fd).error());
        shards[name] = shard_file{url, dir / name, *fd, size};
        return {};
    }

    gguf::result<remote::range_reader*> reader(const shard_file& s) {
        if (auto it = readers.find(s.url); it != readers.end()) return it->second.get();
        if (!budget) {
            gguf::error e;
            e.code = gguf::errc::index_out_of_range;
            e.file = s.url;
            e.detail = "a remote tensor fetched before the plan's bytes were counted";
            return gguf::unexpected(std::move(e));
        }
        stats.emplace_back();
        stats.back().url = s.url;
        auto r = remote::open_range_reader(s.url, s.size, options_for(s.url), *budget, stats.back());
        if (!r) return gguf::unexpected(std::move(r).error());
        return readers.emplace(s.url, std::move(*r)).first->second.get();
    }
};

remote_checkpoint::remote_checkpoint(remote_settings settings) : state_(std::make_unique<state>()) {
    state_->settings = std::move(settings);
    const double s = state_->settings.timeout_s.value_or(default_timeout_s);
    state_->deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(std::min(s, 1e9)));
}

bool remote_checkpoint::available() noexcept { return true; }

gguf::result<std::filesystem::path> remote_checkpoint::open(const std::string& location, const std::filesystem::path& parent) {
    state& s = *state_;
    auto where = remote::resolve_directory(location);
    if (!where) return gguf::unexpected(std::move(where).error());
    s.where = std::move(*where);
    if (auto r = s.make_spool(parent); !r) return gguf::unexpected(std::move(r).error());
    s.head_budget = std::make_unique<remote::fetch_budget>(s.settings.max_fetch.value_or(UINT64_MAX));
    remote::global_init();
    for (const small_file& f : small_files)
        if (auto r = s.fetch_small(f); !r) {
            gguf::error e = std::move(r).error();
            // the budget ran out on the checkpoint's files (the loader's wording would speak of a GGUF head)
            if (e.code == gguf::errc::fetch_budget_exceeded && e.detail.empty()) e.detail = "the checkpoint's small files and headers";
            return gguf::unexpected(std::move(e));
        }
    const std::filesystem::path index = s.dir / cv::checkpoint_index_name;
    std::error_code ec;
    if (std::filesystem::exists(index, ec)) {
        auto names = cv::checkpoint_shard_names(index);
        if (!names) {
            gguf::error e = std::move(names).error();
            relocate(e);
            return gguf::unexpected(std::move(e));
        }
        for (const std::string& name : *names)
            if (auto r = s.fetch_shard(name, true); !r) return gguf::unexpected(std::move(r).error());
    } else if (auto r = s.fetch_shard("model.safetensors", false); !r) {
        return gguf::unexpected(std::move(r).error());
    }
    return s.dir;
}

void remote_checkpoint::detach() noexcept {
    state& s = *state_;
    if (s.temp.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(s.temp, ec);
    if (!ec) s.temp.clear();
}

gguf::result<void> remote_checkpoint::start_tensors(std::uint64_t planned_bytes) {
    state& s = *state_;
    s.planned = planned_bytes;
    const std::uint64_t heads = s.head_bytes();
    if (s.settings.max_fetch && (heads > *s.settings.max_fetch || planned_bytes > *s.settings.max_fetch - heads)) {
        gguf::error e;
        e.code = gguf::errc::fetch_budget_exceeded;
        e.file = s.where.base;
        e.expected = *s.settings.max_fetch;
        e.found = heads + planned_bytes;
        e.detail = "the checkpoint's small files and headers took " + std::to_string(heads) +
                   " bytes and the tensors the conversion reads are " + std::to_string(planned_bytes) + " bytes";
        return gguf::unexpected(std::move(e));
    }
    if (!s.settings.timeout_s && planned_bytes > 0) {
        // No --timeout: the tensors get their own time, 60 s plus 1 s per MiB (a floor of 1 MiB/s),
        // as assemble's remote models do.
        const double t = default_timeout_s + std::ceil(static_cast<double>(planned_bytes) / (1 << 20));
        s.deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(t));
    }
    s.budget = std::make_unique<remote::fetch_budget>(planned_bytes);
    return {};
}

gguf::result<void> remote_checkpoint::fetch(std::span<const shard_range> ranges) {
    state& s = *state_;
    const std::lock_guard<std::mutex> lock(s.mutex);
    std::vector<shard_range> merged(ranges.begin(), ranges.end());
    std::sort(merged.begin(), merged.end(),
              [](const shard_range& a, const shard_range& b) { return std::tie(a.shard, a.offset) < std::tie(b.shard, b.offset); });
    std::size_t n = 0;
    for (std::size_t i = 0; i < merged.size(); ++i) {
        const shard_range& r = merged[i];
        if (r.size == 0) continue;
        if (n > 0 && merged[n - 1].shard == r.shard && merged[n - 1].offset + merged[n - 1].size >= r.offset) {
            shard_range& last = merged[n - 1];
            last.size = std::max(last.offset + last.size, r.offset + r.size) - last.offset;
        } else {
            if (n != i) merged[n] = merged[i];
            ++n;
        }
    }
    merged.resize(n);
    for (const shard_range& r : merged) {
        const auto it = s.shards.find(r.shard);
        if (it == s.shards.end() || r.offset > it->second.size || r.size > it->second.size - r.offset) {
            gguf::error e;
            e.code = gguf::errc::index_out_of_range;
            e.file = it == s.shards.end() ? r.shard : it->second.url;
            e.found = r.offset;
            e.detail = "a tensor range outside the shards fetched";
            return gguf::unexpected(std::move(e));
        }
        const state::shard_file& f = it->second;
        auto rd = s.reader(f);
        if (!rd) return gguf::unexpected(std::move(rd).error());
        s.buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(max_request, std::max<std::uint64_t>(s.buffer.size(), r.size))));
        for (std::uint64_t done = 0; done < r.size;) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(s.buffer.size(), r.size - done));
            const std::span<std::byte> chunk(s.buffer.data(), k);
            if (auto got = (*rd)->read(r.offset + done, chunk); !got) return gguf::unexpected(std::move(got).error());
            if (auto w = write_all(f.fd, r.offset + done, chunk, f.path); !w) return w;
            done += k;
        }
    }
    return {};
}

void remote_checkpoint::release(std::span<const shard_range> ranges) noexcept {
    state& s = *state_;
    const std::lock_guard<std::mutex> lock(s.mutex);
    for (const shard_range& r : ranges) {
        const auto it = s.shards.find(r.shard);
        if (it == s.shards.end() || r.size == 0) continue;
        // a file system without holes (EOPNOTSUPP) keeps the bytes until the spool is removed
        (void)::fallocate(it->second.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(r.offset),
                          static_cast<off_t>(r.size));
    }
}

void remote_checkpoint::relocate(gguf::error& e) const {
    const state& s = *state_;
    if (s.dir.empty()) return;
    const std::string prefix = s.dir.string() + "/";
    if (e.file == s.dir.string()) {
        e.file = s.where.base;
    } else if (e.file.starts_with(prefix)) {
        e.file = remote::file_in(s.where, std::string_view(e.file).substr(prefix.size()));
    }
    for (std::size_t at = e.detail.find(prefix); at != std::string::npos; at = e.detail.find(prefix, at + s.where.base.size()))
        e.detail.replace(at, prefix.size(), s.where.base);
}

fetch_totals remote_checkpoint::totals() const {
    const state& s = *state_;
    fetch_totals f;
    f.head_bytes = s.head_bytes();
    f.planned_bytes = s.planned;
    f.bytes = f.head_bytes;
    f.files = s.files;
    for (const remote::part_stats& p : s.head_stats) f.requests += p.requests;
    for (const remote::part_stats& p : s.stats) {
        f.bytes += p.bytes_received;
        f.requests += p.requests;
    }
    return f;
}

#else  // no minfer::remote in this build

struct remote_checkpoint::state {};

void remote_checkpoint::detach() noexcept {}

remote_checkpoint::remote_checkpoint(remote_settings) : state_(std::make_unique<state>()) {}
bool remote_checkpoint::available() noexcept { return false; }
gguf::result<std::filesystem::path> remote_checkpoint::open(const std::string& location, const std::filesystem::path&) {
    return gguf::unexpected(make_error(codes::unsupported_config, location,
                                       "a remote checkpoint, and this build has no remote support (minfer::remote): download it first"));
}
gguf::result<void> remote_checkpoint::start_tensors(std::uint64_t) { return {}; }
gguf::result<void> remote_checkpoint::fetch(std::span<const shard_range>) {
    return gguf::unexpected(make_error(codes::unsupported_config, "", "no remote support in this build"));
}
void remote_checkpoint::release(std::span<const shard_range>) noexcept {}
void remote_checkpoint::relocate(gguf::error&) const {}
fetch_totals remote_checkpoint::totals() const { return {}; }

#endif

remote_checkpoint::~remote_checkpoint() = default;

}  // namespace minfer::toolbox::detail

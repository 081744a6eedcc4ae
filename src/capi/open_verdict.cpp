// Opening with an error out-parameter (minfer_gguf_open) and the verdict of a file that is not kept
// open (minfer_gguf_check_file). The verdict is the loader's own: the file is mapped and parsed
// (file_view::parse) or its set opened (model::open), as the two openers do, without the copy of
// every value a context makes.
#include "minfer.h"

#include <utility>

#include "capi_errors.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/model.hpp"

namespace gguf = minfer::gguf;
using namespace minfer::capi;

namespace {

constexpr unsigned known_open_flags = MINFER_OPEN_SPLIT;

// Unknown flag bits are refused: a flag this build does not know may change the meaning of the call.
bool refuse_flags(unsigned flags, const char* fn) noexcept {
    if ((flags & ~known_open_flags) == 0) return false;
    record_code(unsupported_param, fn, "unknown flag bits (MINFER_OPEN_SPLIT is the only flag)", known_open_flags,
                flags);
    return true;
}

// The loader's error for `fname`, or ok.
gguf::error verdict(const char* fname, bool split) noexcept {
    if (split) {
        auto set = gguf::model::open(fname);
        return set ? gguf::error{} : std::move(set).error();
    }
    auto file = gguf::mapped_file::open(fname);
    if (!file) return std::move(file).error();
    auto view = gguf::file_view::parse(file->bytes());
    return view ? gguf::error{} : std::move(view).error();
}

}  // namespace

extern "C" {

struct minfer_gguf_context* minfer_gguf_open(const char* fname, unsigned flags, struct minfer_error* err) noexcept {
    constexpr const char* fn = "minfer_gguf_open";
    if (refuse_flags(flags, fn)) {
        report(err, true);
        return nullptr;
    }
    const minfer_gguf_init_params params{true, nullptr};
    minfer_gguf_context* ctx = (flags & MINFER_OPEN_SPLIT) != 0 ? minfer_gguf_init_from_split(fname, params)
                                                                : minfer_gguf_init_from_file(fname, params);
    report(err, ctx == nullptr);
    return ctx;
}

int minfer_gguf_check_file(const char* fname, unsigned flags, struct minfer_error* err) noexcept {
    constexpr const char* fn = "minfer_gguf_check_file";
    int code = 0;
    if (refuse_flags(flags, fn)) {
        code = MINFER_ERROR_UNSUPPORTED_PARAM;
    } else if (fname == nullptr) {
        record_code(null_argument, fn, "fname");
        code = MINFER_ERROR_NULL_ARGUMENT;
    } else {
        gguf::error e = verdict(fname, (flags & MINFER_OPEN_SPLIT) != 0);  // the openers never throw
        code = static_cast<int>(e.code);
        if (code != 0) record_open_error(std::move(e), fname);
    }
    report(err, code != 0);
    return code;
}

}  // extern "C"

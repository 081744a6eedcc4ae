#pragma once
// The differences between two models' tensor tables and bytes, tensor by tensor (`minfer diff`,
// minfer.diff); with `values`, how far apart the values of tensors with the same shape are.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "minfer/compare/value_compare.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/model.hpp"

namespace minfer::compare {

struct tensor_difference {
    enum class kind {
        only_in_a,     ///< no tensor of that name in B
        only_in_b,     ///< no tensor of that name in A
        changed,       ///< another type or shape
        data_differs,  ///< same type and shape, other bytes
    };
    tensor_difference(kind k, const gguf::tensor_ref* ta, const gguf::tensor_ref* tb) : what(k), a(ta), b(tb) {}
    kind what;
    const gguf::tensor_ref* a = nullptr;
    const gguf::tensor_ref* b = nullptr;
    bool type_changed = false;
    bool shape_changed = false;
    std::optional<value_compare> values;      ///< with values, when both have the same ne
    std::optional<gguf::error> values_error;  ///< with values: a type that does not convert, …
};

struct tensor_counts {
    std::uint64_t only_a = 0, only_b = 0, changed = 0, data_differs = 0, identical = 0;
};

/// Told the progress of one tensor's value comparison: its name, bytes of f32 values done, of all.
using compare_progress = std::function<void(std::string_view name, std::uint64_t done, std::uint64_t total)>;

/// Every tensor that differs: A's in A's order (only in A, changed, data differs), then B's new
/// ones in B's order; identical tensors are only counted. With `values`, tensors of the same ne are
/// converted chunk by chunk (bounded memory) and compared (value_compare). @returns
/// model_incomplete when either model was opened from heads only (it has no tensor bytes to
/// compare). Throws std::bad_alloc.
gguf::result<std::vector<tensor_difference>> diff_tensors(const gguf::model& a, const gguf::model& b, bool values,
                                                          tensor_counts& counts, const compare_progress& progress = {});

}  // namespace minfer::compare

// Building a json_tree from nlohmann's events.
#include "json_tree.hpp"

#include <cstring>
#include <limits>
#include <unordered_set>

namespace minfer::convert::detail {
namespace {

class tree_builder {
public:
    tree_builder(json_tree& tree, std::uint64_t base, const json_tree_limits& limits, json_failure& failure)
        : tree_(tree), base_(base), limits_(limits), failure_(failure) {}

    bool on_null(std::uint64_t at) { return leaf(at, json_kind::null) != nullptr; }
    bool on_bool(bool v, std::uint64_t at) {
        json_node* n = leaf(at, json_kind::boolean);
        if (n != nullptr) n->boolean = v;
        return n != nullptr;
    }
    bool on_unsigned(std::uint64_t v, std::uint64_t at) { return number(at, number_kind::unsigned_integer, v); }
    bool on_signed(std::int64_t v, std::uint64_t at) {
        return number(at, number_kind::signed_integer, static_cast<std::uint64_t>(v));
    }
    bool on_float(double v, std::uint64_t at) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        return number(at, number_kind::floating, bits);
    }
    bool on_string(std::string& s, std::uint64_t at) {
        json_node* n = leaf(at, json_kind::string);
        if (n == nullptr) return false;
        n->text_begin = append_text(s);
        n->text_size = static_cast<std::uint32_t>(s.size());
        return true;
    }
    bool on_key(std::string& k, std::uint64_t at) {
        frame& f = frames_.back();
        if (!f.keys.insert(k).second) return fail(at, "duplicate key " + in_quotes(k));
        key_begin_ = append_text(k);
        key_size_ = static_cast<std::uint32_t>(k.size());
        return true;
    }
    bool on_begin_object(std::uint64_t at) { return open(at, json_kind::object); }
    bool on_begin_array(std::uint64_t at) { return open(at, json_kind::array); }
    bool on_end_object(std::uint64_t /*at*/) { return close(); }
    bool on_end_array(std::uint64_t /*at*/) { return close(); }

private:
    struct frame {
        std::uint32_t node;
        std::size_t first_pending;              // this container's children in pending_
        std::unordered_set<std::string> keys;   // an object's keys so far (duplicates are refused)
    };

    bool fail(std::uint64_t at, std::string detail) {
        failure_.offset = at;
        failure_.detail = std::move(detail);
        return false;
    }

    // Strings are short and the text is capped by the caller (under 4 GiB): offsets fit 32 bits.
    std::uint32_t append_text(const std::string& s) {
        const auto begin = static_cast<std::uint32_t>(tree_.text.size());
        tree_.text += s;
        return begin;
    }

    json_node* leaf(std::uint64_t at, json_kind kind) {
        if (tree_.nodes.size() >= limits_.max_values) {
            fail(at, "more than " + std::to_string(limits_.max_values) + " values");
            return nullptr;
        }
        const auto index = static_cast<std::uint32_t>(tree_.nodes.size());
        json_node& n = tree_.nodes.emplace_back();
        n.kind = kind;
        n.offset = base_ + at;
        if (!frames_.empty()) {
            pending_.push_back(index);
            if (tree_.nodes[frames_.back().node].kind == json_kind::object) {
                n.key_begin = key_begin_;
                n.key_size = key_size_;
            }
        }
        return &n;
    }

    bool number(std::uint64_t at, number_kind kind, std::uint64_t bits) {
        json_node* n = leaf(at, json_kind::number);
        if (n == nullptr) return false;
        n->number = kind;
        n->bits = bits;
        return true;
    }

    bool open(std::uint64_t at, json_kind kind) {
        if (leaf(at, kind) == nullptr) return false;
        frames_.push_back(frame{static_cast<std::uint32_t>(tree_.nodes.size() - 1), pending_.size(), {}});
        return true;
    }

    bool close() {
        frame& f = frames_.back();
        json_node& n = tree_.nodes[f.node];
        n.first_child = static_cast<std::uint32_t>(tree_.children.size());
        n.child_count = static_cast<std::uint32_t>(pending_.size() - f.first_pending);
        tree_.children.insert(tree_.children.end(), pending_.begin() + static_cast<std::ptrdiff_t>(f.first_pending),
                              pending_.end());
        pending_.resize(f.first_pending);
        frames_.pop_back();
        return true;
    }

    json_tree& tree_;
    std::uint64_t base_;
    const json_tree_limits& limits_;
    json_failure& failure_;
    std::vector<frame> frames_;
    std::vector<std::uint32_t> pending_;  // children of the open containers, innermost last
    std::uint32_t key_begin_ = 0;
    std::uint32_t key_size_ = 0;
};

}  // namespace

bool build_json_tree(std::string_view text, std::uint64_t base_offset, const json_tree_limits& limits,
                     json_tree& tree, json_failure& failure) noexcept {
    if (text.size() >= std::numeric_limits<std::uint32_t>::max()) {
        failure.offset = base_offset;
        failure.detail = {};
        return false;
    }
    tree = json_tree{};
    tree_builder builder(tree, base_offset, limits, failure);
    if (parse_json_events(text, builder, limits.max_depth, failure)) return true;
    // the adapter's offsets are relative to the text; the builder's are too (it adds base_ to nodes only)
    failure.offset += base_offset;
    return false;
}

}  // namespace minfer::convert::detail

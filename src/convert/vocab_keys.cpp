// vocab_keys.hpp: the reference's dict of keys, in order.
#include "minfer/convert/vocab_keys.hpp"

namespace minfer::convert {

const vocab_key* find_key(std::span<const vocab_key> keys, std::string_view name) noexcept {
    for (const vocab_key& k : keys)
        if (k.name == name) return &k;
    return nullptr;
}

void set_key(std::vector<vocab_key>& keys, std::string_view name, vocab_value value) {
    for (vocab_key& k : keys) {
        if (k.name == name) {
            k.value = std::move(value);  // a Python dict keeps the key's first position
            return;
        }
    }
    keys.push_back(vocab_key{std::string(name), std::move(value)});
}

}  // namespace minfer::convert

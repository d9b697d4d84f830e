#pragma once
// The `model:` block of a version-2 scenario (docs/scenario-format.md, "Models"): a
// decoder-only transformer given key by key, or read from a Hugging Face config.json
// (`hf_config: FILE`) with any key given beside it overriding the file's. Internal to the
// loader.
#include <map>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/transformer_spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {

// The block at `value`, validated; the scenario's dtype is the model's. The files it reads
// (its hf_config) are appended to `files_read` when given.
TransformerSpec read_model(const Value& value, DType dtype,
                           std::vector<std::string>* files_read = nullptr);

// The architecture in a Hugging Face config.json (model_type llama, mistral or qwen2):
// layers, widths, heads, vocabulary and the biases and tying the file states (head_dim 0
// when the file gives none: hidden / heads, once read_model has applied overrides); seq and
// micro_batch are left unset (they are the run's, not the model's). A key that would change
// the model's matrix work in a way symmesh does not model (experts, sliding windows, MLP
// biases) and a key it does not know fail at that key, naming it; the file's dtype is not
// read (the scenario's decides).
// `origins`, when given, receives for each model key the file set (layers, hidden, heads,
// kv_heads, head_dim, ffn, vocab) the config's value, so that a value found wrong later
// (heads not a multiple of kv_heads, a size over its cap) is reported at the config's key.
TransformerSpec read_hf_config(const Value& root, std::map<std::string, Value>* origins = nullptr);

}  // namespace symmesh::scenario

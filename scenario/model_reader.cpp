// `model:` blocks and Hugging Face config.json files (model_reader.hpp).
#include "scenario/model_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"
#include "scenario/cluster_reader.hpp"

namespace symmesh::scenario {
namespace {

const std::vector<std::string> kModelKeys{
    "hf_config",    "name",     "layers",         "hidden",  "heads",    "kv_heads",
    "head_dim",     "ffn",      "activation",     "vocab",   "seq",      "micro_batch",
    "global_batch", "qkv_bias", "tie_embeddings", "dropout", "recompute"};
const std::vector<std::string> kActivations{"swiglu", "gelu"};
const std::vector<std::string> kModelTypes{"llama", "mistral", "qwen2"};

// Keys of the Llama, Mistral and Qwen2 configs that do not change the matrix work of a
// training step: token ids, initialisation, positions (rotary: no parameters), numerics,
// caching, provenance.
const std::vector<std::string> kIgnoredHfKeys{"_name_or_path",
                                              "_commit_hash",
                                              "architectures",
                                              "attention_dropout",
                                              "bos_token_id",
                                              "eos_token_id",
                                              "pad_token_id",
                                              "initializer_range",
                                              "max_position_embeddings",
                                              "max_window_layers",
                                              "pretraining_tp",
                                              "rms_norm_eps",
                                              "rope_scaling",
                                              "rope_theta",
                                              "rope_parameters",
                                              "torch_dtype",
                                              "dtype",
                                              "transformers_version",
                                              "use_cache",
                                              "layer_types"};
// Keys symmesh reads.
const std::vector<std::string> kReadHfKeys{
    "model_type",        "hidden_size",         "intermediate_size", "num_attention_heads",
    "num_hidden_layers", "num_key_value_heads", "head_dim",          "vocab_size",
    "hidden_act",        "tie_word_embeddings", "attention_bias",    "mlp_bias",
    "sliding_window",    "use_sliding_window"};
// The model: keys a config's sizes stand for (read_hf_config's origins).
const std::vector<std::pair<std::string, const char*>> kModelKeyOfHfKey{
    {"layers", "num_hidden_layers"},  {"hidden", "hidden_size"},
    {"heads", "num_attention_heads"}, {"kv_heads", "num_key_value_heads"},
    {"head_dim", "head_dim"},         {"ffn", "intermediate_size"},
    {"vocab", "vocab_size"}};
// Keys of models symmesh does not model, with why.
struct Refused {
  const char* key;
  const char* why;
};
const Refused kRefusedHfKeys[] = {
    {"num_local_experts", "a mixture of experts (Mixtral) is not modelled yet"},
    {"num_experts", "a mixture of experts (Qwen2-MoE) is not modelled yet"},
    {"num_experts_per_tok", "a mixture of experts is not modelled yet"},
    {"moe_intermediate_size", "a mixture of experts is not modelled yet"},
    {"n_routed_experts", "a mixture of experts is not modelled yet"},
    {"q_lora_rank", "multi-head latent attention (DeepSeek) is not modelled"},
    {"kv_lora_rank", "multi-head latent attention (DeepSeek) is not modelled"},
};

std::string listed(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out.append(out.empty() ? "" : ", ").append(w);
  return out;
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// A Hugging Face config is JSON, read through the YAML reader for its line:col: a value
// YAML would take but JSON would not is refused at its place — a quoted number or
// boolean ("num_hidden_layers": "2" is a string in JSON, not the count 2).
Value json_typed(const Value& v, const char* json_type) {
  if (v.node().IsScalar() && v.node().Tag() == "!")
    v.fail(v.path() + ": expected a JSON " + std::string(json_type) + ", got the string \"" +
           v.node().Scalar() + "\"");
  return v;
}

// The config as strict JSON (a trailing comma, a comment, an unquoted word are refused), at
// the line and column where the parser stopped.
void check_strict_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text = read_bounded_input(in, path, path);
  try {
    (void)nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte: 1-based position of the last byte read.
    SourceLocation at{path, 1, 1};
    const size_t end = std::min(text.size(), e.byte > 0 ? e.byte - 1 : 0);
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++at.line;
        at.column = 1;
      } else {
        ++at.column;
      }
    }
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 2: syntax error while
    // parsing object key - unexpected '}'; expected string literal": the part after the
    // position, which the location already says.
    if (const size_t colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
    throw InvalidArgument("a Hugging Face config.json must be JSON: " + without_input_quote(why),
                          at.to_string());
  }
}

}  // namespace

TransformerSpec read_hf_config(const Value& root, std::map<std::string, Value>* origins) {
  if (!root.is_map())
    root.fail("a Hugging Face config.json must be a JSON object, got " + root.describe());
  TransformerSpec spec;
  spec.name = std::filesystem::path(root.file()).stem().string();
  // The family first: a config of another family (GPT-2's activation_function, n_embd…)
  // is refused for that, not for its first unknown key.
  if (const YAML::Node type = root.node()["model_type"]; type && type.IsScalar()) {
    const std::string model_type = type.Scalar();
    if (!contains(kModelTypes, model_type))
      for (const Value::Entry& entry : root.entries())
        if (entry.name == "model_type")
          entry.value.fail("model_type '" + model_type +
                           "' is not supported (symmesh reads the decoder-only " +
                           listed(kModelTypes) + " configs)");
  }
  std::vector<std::optional<Value>> fields(kReadHfKeys.size());
  for (const Value::Entry& entry : root.entries()) {
    const std::string& key = entry.name;
    for (const Refused& refused : kRefusedHfKeys)
      if (key == refused.key) entry.key.fail("'" + key + "': " + refused.why);
    const auto read = std::find(kReadHfKeys.begin(), kReadHfKeys.end(), key);
    if (read != kReadHfKeys.end()) {
      fields[read - kReadHfKeys.begin()] = entry.value.with_path(key);
      continue;
    }
    if (contains(kIgnoredHfKeys, key)) continue;
    entry.key.fail("unsupported key '" + key + "' in a Hugging Face config: symmesh reads " +
                   listed(kReadHfKeys) + " and ignores " + listed(kIgnoredHfKeys) +
                   "; remove it if it does not change the model's matrix work");
  }
  const auto field = [&](const char* key) -> const std::optional<Value>& {
    const auto at = std::find(kReadHfKeys.begin(), kReadHfKeys.end(), key);
    return fields[at - kReadHfKeys.begin()];
  };
  const auto require = [&](const char* key) -> Value {
    if (!field(key)) root.fail("missing key '" + std::string(key) + "' in the Hugging Face config");
    return *field(key);
  };
  const auto present = [&](const char* key) { return field(key) && !field(key)->node().IsNull(); };

  const Value type = require("model_type");
  const std::string model_type = type.as_string();
  if (!contains(kModelTypes, model_type))
    type.fail("model_type '" + model_type + "' is not supported (symmesh reads the decoder-only " +
              listed(kModelTypes) + " configs)");
  spec.layers = json_typed(require("num_hidden_layers"), "number").as_int(1);
  spec.hidden = json_typed(require("hidden_size"), "number").as_int(1);
  spec.heads = json_typed(require("num_attention_heads"), "number").as_int(1);
  spec.kv_heads =
      present("num_key_value_heads") ? json_typed(*field("num_key_value_heads"), "number").as_int(1) : spec.heads;
  spec.ffn = json_typed(require("intermediate_size"), "number").as_int(1);
  spec.vocab = json_typed(require("vocab_size"), "number").as_int(1);
  // 0 when the file gives none: Hugging Face's default (LlamaConfig), hidden_size //
  // num_attention_heads, follows from the widths read_model ends with.
  spec.head_dim = present("head_dim") ? json_typed(*field("head_dim"), "number").as_int(1) : 0;
  if (origins)
    for (const auto& [model_key, config_key] : kModelKeyOfHfKey)
      if (present(config_key)) origins->insert_or_assign(model_key, *field(config_key));
  // The three families' MLP is gated whatever hidden_act names (SiLU: SwiGLU; a GELU: GeGLU,
  // the same matrix work).
  spec.activation = MlpActivation::swiglu;
  if (present("hidden_act")) {
    const std::string act = field("hidden_act")->as_string();
    if (act != "silu" && act != "swish" && !act.starts_with("gelu"))
      field("hidden_act")->fail("hidden_act '" + act + "' is not supported (silu or a gelu)");
  }
  if (present("tie_word_embeddings")) spec.tie_embeddings = json_typed(*field("tie_word_embeddings"), "boolean").as_bool();
  // Qwen2 always has q/k/v biases; Llama says so with attention_bias.
  spec.qkv_bias = model_type == "qwen2";
  if (present("attention_bias")) spec.qkv_bias = json_typed(*field("attention_bias"), "boolean").as_bool();
  if (present("mlp_bias") && json_typed(*field("mlp_bias"), "boolean").as_bool())
    field("mlp_bias")->fail("'mlp_bias': true is not modelled (biases on the MLP's matrices)");
  const bool windowed = model_type == "qwen2" ? present("use_sliding_window") &&
                                                    json_typed(*field("use_sliding_window"), "boolean").as_bool()
                                              : present("sliding_window");
  if (windowed)
    (model_type == "qwen2" ? field("use_sliding_window") : field("sliding_window"))
        ->fail(
            "sliding-window attention is not modelled (its scores cost less than causal "
            "attention's); give 'sliding_window': null for full attention");
  return spec;
}

TransformerSpec read_model(const Value& value, DType dtype, std::vector<std::string>* files_read) {
  const MapReader model(value, kModelKeys);
  TransformerSpec spec;
  std::map<std::string, Value> from_config;  // model key -> the config's value, where one set it
  if (auto file = model.get("hf_config")) {
    const std::string path = resolve_reference(*file, kModelConfigs);
    if (files_read) files_read->push_back(path);
    // Read (and its file checked: a regular file within the size bound) before it is
    // parsed again as strict JSON.
    const Value root = read_yaml_file(path);
    check_strict_json(path);
    spec = read_hf_config(root, &from_config);
  }
  const bool from_file = model.has("hf_config");
  // An architecture key is required without hf_config and overrides the file's with it.
  const auto count = [&](const char* key, auto& out) {
    if (auto v = model.get(key))
      out = v->as_int(1);
    else if (!from_file)
      model.require(key);
  };
  if (auto v = model.get("name")) spec.name = v->as_string();
  count("layers", spec.layers);
  count("hidden", spec.hidden);
  count("heads", spec.heads);
  if (auto v = model.get("kv_heads"))
    spec.kv_heads = v->as_int(1);
  else if (!from_file)
    spec.kv_heads = spec.heads;
  if (auto v = model.get("head_dim")) spec.head_dim = v->as_int(1);
  count("ffn", spec.ffn);
  count("vocab", spec.vocab);
  if (auto v = model.get("activation")) {
    const std::string name = v->as_string();
    if (!contains(kActivations, name))
      v->fail("unknown model.activation '" + name + "'" + suggestion(name, kActivations));
    spec.activation = name == "gelu" ? MlpActivation::gelu : MlpActivation::swiglu;
  }
  if (auto v = model.get("qkv_bias")) spec.qkv_bias = v->as_bool();
  if (auto v = model.get("tie_embeddings")) spec.tie_embeddings = v->as_bool();
  if (auto v = model.get("dropout")) spec.dropout = v->as_bool();
  if (auto v = model.get("recompute")) {
    const std::string how = v->as_string();
    if (how == "selective")
      v->fail(
          "model.recompute 'selective' recomputes attention's scores, which the generated "
          "step's fused attention never stores (its backward recomputes them already): "
          "give none or full");
    if (how != "none" && how != "full")
      v->fail("unknown model.recompute '" + how + "' (none or full)");
    spec.full_recompute = how == "full";
    spec.recompute_given = true;
  }
  spec.seq = model.require("seq").as_int(1);
  if (auto v = model.get("micro_batch")) spec.micro_batch = v->as_int(1);
  if (auto v = model.get("global_batch")) {
    spec.global_batch = v->as_int(1);
    spec.micro_batch_given = model.has("micro_batch");
  }
  spec.dtype = dtype;
  if (spec.name.empty()) spec.name = "model";
  const bool default_head_dim = spec.head_dim == 0;
  if (default_head_dim) spec.head_dim = spec.hidden / spec.heads;
  // A wrong value is reported where it was written: at the model: key that gave it, else at
  // the Hugging Face config's key (named, the file's line:col), else at the block.
  const auto fail_at = [&](const std::string& key, const std::string& message) {
    if (auto v = model.get(key)) v->fail(message);
    if (auto from = from_config.find(key); from != from_config.end())
      from->second.fail(from->second.path() + " (model." + key + "): " + message);
    value.fail("model." + key + ": " + message);
  };
  if (default_head_dim && spec.hidden % spec.heads != 0)
    fail_at("heads", "hidden " + std::to_string(spec.hidden) + " is not a multiple of heads " +
                         std::to_string(spec.heads) + "; give head_dim");
  try {
    spec.validate("model");
  } catch (const InvalidArgument& e) {
    fail_at(e.where().substr(e.where().rfind('.') + 1), e.message());
  }
  return spec;
}

}  // namespace symmesh::scenario

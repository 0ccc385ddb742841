// A model for estimate.mjs from a Hugging Face config.json the reader pastes (nothing is fetched),
// and its parameters counted from the shapes. The twin of generator/estimate/hfconfig.py (see its
// docstring for every field read); tests/fixtures/hf_configs.json holds configs both read alike.

import { STATE_KINDS } from "./estimate.mjs";

/** A config the page cannot read: kind not_object, missing, not_whole or layer_kinds, and the config's field. */
export class ConfigError extends Error {
  constructor(kind, field = null) {
    super(field ? `${kind}: ${field}` : kind);
    this.kind = kind;
    this.field = field;
  }
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

function flat(config) {
  if (!isObject(config)) throw new ConfigError("not_object");
  const out = {};
  for (const [k, v] of Object.entries(config)) if (k !== "text_config" && k !== "vision_config") out[k] = v;
  if (isObject(config.text_config)) Object.assign(out, config.text_config);
  return out;
}

const given = (v) => v !== null && v !== undefined;

function whole(c, names, { required = false, dflt = null, zero = false } = {}) {
  for (const name of names) {
    const v = c[name];
    if (!given(v)) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || (zero ? v < 0 : v <= 0)) throw new ConfigError("not_whole", name);
    return v;
  }
  if (required) throw new ConfigError("missing", names[0]);
  return dflt;
}
const count0 = (c, ...names) => whole(c, names, { zero: true, dflt: 0 });
const countOf = (list, x) => list.filter((t) => t === x).length;

function layerKinds(c, layers) {
  const out = { state: 0, kind: null, mlp_only: 0, sliding: null };
  const pattern = c.hybrid_override_pattern;
  if (typeof pattern === "string" && pattern) {
    if (pattern.length !== layers) throw new ConfigError("layer_kinds", "hybrid_override_pattern");
    const chars = [...pattern];
    return { ...out, state: countOf(chars, "M"), kind: chars.includes("M") ? "mamba2" : null, mlp_only: countOf(chars, "-") };
  }
  const types = c.layer_types;
  if (Array.isArray(types) && types.length) {
    if (types.length !== layers) throw new ConfigError("layer_kinds", "layer_types");
    const names = types.map(String);
    for (const [name, kind] of [["linear_attention", "gated-deltanet"], ["mamba", "mamba2"], ["conv", "short-conv"]]) {
      if (names.includes(name)) { out.state = countOf(names, name); out.kind = kind; }
    }
    if (names.includes("sliding_attention")) out.sliding = countOf(names, "sliding_attention");
    return out;
  }
  const attnTypes = c.attn_type_list;
  if (Array.isArray(attnTypes) && attnTypes.length) {
    if (attnTypes.length !== layers) throw new ConfigError("layer_kinds", "attn_type_list");
    const lightning = countOf(attnTypes, 0);
    return { ...out, state: lightning, kind: lightning ? "lightning" : null };
  }
  const full = c.full_attn_idxs;
  if (Array.isArray(full) && c.conv_L_cache) {
    return { ...out, state: layers - full.length, kind: layers > full.length ? "short-conv" : null };
  }
  const interval = whole(c, ["full_attention_interval"]);
  if (interval && c.linear_num_value_heads) return { ...out, state: layers - Math.floor(layers / interval), kind: "gated-deltanet" };
  return out;
}

const STATE_NAMES = {
  "gated-deltanet": { state_heads: ["linear_num_value_heads"], state_head_dim: ["linear_value_head_dim"],
    state_key_heads: ["linear_num_key_heads"], state_key_dim: ["linear_key_head_dim"], state_conv_kernel: ["linear_conv_kernel_dim"] },
  mamba2: { state_heads: ["mamba_n_heads", "mamba_num_heads"], state_head_dim: ["mamba_d_head", "mamba_head_dim"],
    state_key_dim: ["mamba_d_state", "ssm_state_size"], state_groups: ["mamba_n_groups", "n_groups"],
    state_conv_kernel: ["mamba_d_conv", "conv_kernel"] },
  lightning: {},
  "short-conv": { state_conv_kernel: ["conv_L_cache"] },
};

function windows(c, attention, listed) {
  const chunk = whole(c, ["attention_chunk_size"]);
  if (chunk && Array.isArray(c.no_rope_layers)) return [chunk, c.no_rope_layers.filter(Boolean).length];
  const window = whole(c, ["sliding_window"]);
  if (!window || c.use_sliding_window === false) return null;
  if (listed !== null) return [window, listed];
  const pattern = whole(c, ["sliding_window_pattern"]);
  if (pattern) return [window, attention - Math.floor(attention / pattern)];
  if (String(c.model_type) === "gemma2") return [window, Math.floor(attention / 2)];
  return [window, attention];
}

/** intermediate_size; LFM2's block_ff_dim, cut to two thirds and rounded up where block_auto_adjust_ff_dim says so. */
function mlpWidth(c) {
  let width = whole(c, ["block_ff_dim", "intermediate_size"]);
  if (width && c.block_auto_adjust_ff_dim === true) {
    width = Math.trunc(2 * width / 3);
    const multiplier = c.block_ffn_dim_multiplier;
    if (typeof multiplier === "number" && multiplier > 0) width = Math.trunc(multiplier * width);
    const step = whole(c, ["block_multiple_of"], { dflt: 256 });
    width = step * Math.ceil(width / step);
  }
  return width;
}

/** Gemma 4: the full-attention layers' own head size and KV heads, and keys used as values (hfconfig.py). */
function fullAttentionFields(c, model) {
  const out = {};
  const dim = whole(c, ["global_head_dim"]), kv = whole(c, ["num_global_key_value_heads"]);
  if (dim && dim !== model.head_dim) out.full_head_dim = dim;
  if (kv && kv !== model.kv_heads) out.full_kv_heads = kv;
  if (c.attention_k_eq_v === true) out.full_values_from_keys = true;
  return out;
}

/** Gemma 4 E2B/E4B: the last num_kv_shared_layers layers keep no KV cache; how many of them slide (hfconfig.py). */
function sharedKvFields(c, layers, attention) {
  const shared = count0(c, "num_kv_shared_layers");
  if (!shared) return {};
  if (shared >= attention) throw new ConfigError("not_whole", "num_kv_shared_layers");
  const out = { kv_shared_layers: shared };
  const types = c.layer_types;
  if (Array.isArray(types) && types.length === layers) {
    out.kv_shared_sliding_layers = countOf(types.slice(layers - shared), "sliding_attention");
  }
  return out;
}

/** The engine's fields of the model a config describes, parameters aside. */
export function architectureFromConfig(config) {
  const c = flat(config);
  const layers = whole(c, ["num_hidden_layers"], { required: true });
  const hidden = whole(c, ["hidden_size"], { required: true });
  const heads = whole(c, ["num_attention_heads"], { required: true });
  const vocab = whole(c, ["vocab_size"], { required: true });
  const kv = whole(c, ["num_key_value_heads"], { dflt: heads });
  const model = { id: null, layers, hidden_size: hidden, attention_heads: heads, kv_heads: kv, vocab_size: vocab,
    tied_embeddings: c.tie_word_embeddings === true };
  const rank = whole(c, ["kv_lora_rank"]);
  if (rank) {
    const rope = whole(c, ["qk_rope_head_dim"], { required: true });
    model.head_dim = whole(c, ["qk_nope_head_dim"], { required: true }) + rope;
    Object.assign(model, { attention: "mla", kv_lora_rank: rank, qk_rope_head_dim: rope });
  } else {
    model.head_dim = whole(c, ["head_dim"], { dflt: Math.floor(hidden / heads) });
    model.attention = kv === heads ? "mha" : kv === 1 ? "mqa" : "gqa";
  }
  const nExp = whole(c, ["num_experts", "n_routed_experts", "num_local_experts"]);
  const dense = count0(c, "first_k_dense_replace");
  let inter = mlpWidth(c);
  if (nExp) {
    const perToken = whole(c, ["num_experts_per_tok", "top_k_experts"], { required: true });
    const width = whole(c, ["moe_intermediate_size"]) || inter;
    if (!given(width)) throw new ConfigError("missing", "moe_intermediate_size");
    let shared = count0(c, "n_shared_experts", "num_shared_experts");
    if (!shared && count0(c, "shared_expert_intermediate_size", "shared_intermediate_size") > 0) shared = 1;
    if (!shared && c.enable_moe_block === true && inter) shared = 1; // Gemma 4: a dense MLP beside the experts
    const step = whole(c, ["interleave_moe_layer_step"], { dflt: 1 });
    if (step > 1) inter = whole(c, ["intermediate_size_mlp"], { required: true });
    else if (!dense) inter = width;
    Object.assign(model, { experts: nExp, experts_per_token: perToken, shared_experts: shared, moe_intermediate_size: width,
      dense_layers: dense });
  }
  if (!given(inter)) throw new ConfigError("missing", "intermediate_size");
  model.intermediate_size = inter;
  const kinds = layerKinds(c, layers);
  if (kinds.state) {
    model.state_layers = kinds.state;
    model.state_kind = kinds.kind;
    for (const [field, aliases] of Object.entries(STATE_NAMES[kinds.kind])) model[field] = whole(c, aliases, { required: true });
    if (kinds.kind === "lightning") { model.state_heads = heads; model.state_head_dim = model.head_dim; }
  }
  if (kinds.mlp_only) model.mlp_only_layers = kinds.mlp_only;
  const w = windows(c, layers - kinds.state - kinds.mlp_only, kinds.sliding);
  if (w) {
    model.sliding_window = w[0]; model.sliding_window_layers = w[1];
    Object.assign(model, fullAttentionFields(c, model));
  }
  const shared = sharedKvFields(c, layers, layers - kinds.state - kinds.mlp_only);
  if (!w) delete shared.kv_shared_sliding_layers;
  Object.assign(model, shared);
  const perLayerDim = count0(c, "hidden_size_per_layer_input"); // Gemma 4 E2B/E4B: the per-layer embedding table's width
  if (perLayerDim) model.per_layer_embedding_dim = perLayerDim;
  const topk = whole(c, ["index_topk"]);
  if (topk && rank) {
    Object.assign(model, { index_topk: topk, index_heads: whole(c, ["index_n_heads"], { required: true }),
      index_head_dim: whole(c, ["index_head_dim"], { required: true }) });
  }
  const mtp = count0(c, "num_nextn_predict_layers", "mtp_num_hidden_layers");
  if (mtp) model.mtp_layers = mtp;
  const context = whole(c, ["max_position_embeddings"]);
  if (context) model.max_context = context;
  if (isObject(config.vision_config)) model.vision_encoder = "excluded";
  if (kinds.state && !STATE_KINDS[kinds.kind].every((f) => given(model[f]))) throw new ConfigError("layer_kinds", "layer_types");
  return model;
}

function attentionParams(c, m) {
  const h = m.hidden_size, heads = m.attention_heads;
  if (m.attention === "mla") {
    const rope = m.qk_rope_head_dim, rank = m.kv_lora_rank, nope = m.head_dim - rope;
    const vDim = whole(c, ["v_head_dim"], { dflt: nope });
    const qRank = whole(c, ["q_lora_rank"]);
    const q = qRank ? h * qRank + qRank + qRank * heads * m.head_dim : h * heads * m.head_dim;
    return q + h * (rank + rope) + rank + rank * heads * (nope + vDim) + heads * vDim * h;
  }
  return 2 * h * heads * m.head_dim + 2 * h * m.kv_heads * m.head_dim;
}

/** Attention weights of every attention layer, full-attention layers with their own shapes, KV-shared layers
 * without key and value projections (hfconfig.py). */
function allAttentionParams(c, m, attention) {
  const per = attentionParams(c, m);
  const shared = m.kv_shared_layers || 0;
  if (!shared && !["full_head_dim", "full_kv_heads", "full_values_from_keys"].some((k) => k in m)) return attention * per;
  const h = m.hidden_size, heads = m.attention_heads;
  const d = m.full_head_dim ?? m.head_dim, kv = m.full_kv_heads ?? m.kv_heads;
  const kvFull = (m.full_values_from_keys ? 1 : 2) * h * kv * d, kvSliding = 2 * h * m.kv_heads * m.head_dim;
  const sliding = m.sliding_window ? m.sliding_window_layers || 0 : 0;
  const sharedSliding = m.kv_shared_sliding_layers || 0;
  const total = sliding * per + (attention - sliding) * (2 * h * heads * d + kvFull);
  return total - sharedSliding * kvSliding - (shared - sharedSliding) * kvFull;
}

function stateParams(m) {
  const h = m.hidden_size, kind = m.state_kind;
  const heads = m.state_heads || 0, dim = m.state_head_dim || 0, keyDim = m.state_key_dim || 0, kernel = m.state_conv_kernel || 0;
  if (kind === "gated-deltanet") {
    const key = m.state_key_heads * keyDim, conv = 2 * key + heads * dim;
    return h * (2 * key + 2 * heads * dim + 2 * heads) + conv * kernel + heads * dim * h + 2 * heads;
  }
  if (kind === "mamba2") {
    const inner = heads * dim, conv = inner + 2 * m.state_groups * keyDim;
    return h * (2 * inner + 2 * m.state_groups * keyDim + heads) + conv * kernel + inner * h + 3 * heads + inner;
  }
  if (kind === "lightning") return 5 * h * heads * dim;
  return 4 * h * h + h * kernel;
}

/** {parameters_b, active_parameters_b} counted from the config's shapes (billions). */
export function parametersFromConfig(config) {
  const c = flat(config);
  const m = architectureFromConfig(config);
  const h = m.hidden_size, layers = m.layers, vocab = m.vocab_size;
  const state = m.state_layers || 0, mlpOnly = m.mlp_only_layers || 0;
  const attention = layers - state - mlpOnly;
  const matrices = String(c.mlp_hidden_act ?? c.hidden_act) === "relu2" ? 2 : 3;
  const mlpLayers = mlpOnly || layers;
  let total = vocab * h * (m.tied_embeddings ? 1 : 2) + h;
  total += allAttentionParams(c, m, attention) + state * stateParams(m) + 2 * h * layers;
  let inactive = 0;
  if (m.experts) {
    const nExp = m.experts, k = m.experts_per_token, width = m.moe_intermediate_size;
    const step = whole(c, ["interleave_moe_layer_step"], { dflt: 1 });
    const moeLayers = step > 1 ? Math.floor((mlpLayers - m.dense_layers) / step) : mlpLayers - m.dense_layers;
    const sharedWidth = count0(c, "shared_expert_intermediate_size", "shared_intermediate_size")
      || (c.enable_moe_block === true ? mlpWidth(c) : null) || width;
    const expert = matrices * h * width;
    total += moeLayers * (nExp * expert + m.shared_experts * matrices * h * sharedWidth + h * nExp);
    total += (mlpLayers - moeLayers) * matrices * h * m.intermediate_size;
    inactive = moeLayers * (nExp - k) * expert;
  } else {
    total += mlpLayers * matrices * h * m.intermediate_size;
    // Gemma 4 E2B: the KV-shared layers' MLP is twice as wide
    if (c.use_double_wide_mlp === true) total += (m.kv_shared_layers || 0) * matrices * h * m.intermediate_size;
  }
  const dim = m.per_layer_embedding_dim || 0;
  if (dim) total += vocab * layers * dim + h * layers * dim + dim + layers * (2 * h * dim + h);
  return { parameters_b: total / 1e9, active_parameters_b: (total - inactive) / 1e9 };
}

/** The engine's model: the architecture, with the parameters given or else counted from the shapes. */
export function modelFromConfig(config, parametersB = null, activeParametersB = null) {
  const model = architectureFromConfig(config);
  const counted = parametersFromConfig(config);
  model.parameters_b = given(parametersB) ? parametersB : counted.parameters_b;
  if (given(activeParametersB)) model.active_parameters_b = activeParametersB;
  else if (model.experts) {
    model.active_parameters_b = given(parametersB)
      ? parametersB * counted.active_parameters_b / counted.parameters_b : counted.active_parameters_b;
  } else model.active_parameters_b = model.parameters_b;
  return model;
}

/** The text the reader pasted -> {model} or {error: {kind, field, line}} (invalid JSON: kind "json"). */
export function readConfig(text) {
  let config;
  try {
    config = JSON.parse(String(text ?? "").replace(/^\uFEFF/, ""));
  } catch {
    return { error: { kind: "json", field: null } };
  }
  try {
    return { model: modelFromConfig(config) };
  } catch (e) {
    if (e instanceof ConfigError) return { error: { kind: e.kind, field: e.field } };
    throw e;
  }
}

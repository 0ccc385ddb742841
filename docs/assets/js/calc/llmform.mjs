// The large-model calculator's form as pure functions (no DOM, no text): what the reader typed
// -> a model, a card and the options of estimate.mjs, with field errors as message keys
// (calc.*), never a NaN. Also the catalogue table (which cards hold the model, how many of the
// others it needs). Tested by tests/js/llmform.test.mjs.

import { parseField, parseChoice } from "./formulas.mjs";
import {
  TABLES, WEIGHT_FORMATS, KV_BYTES, KV_BY_RUNTIME, MODES, OPTIMIZERS, OFFERED_RUNTIMES, GGUF_ONLY_RUNTIMES, TRAINING_RUNTIMES,
  SERVING_RUNTIMES, VLLM_UTILIZATION, DEFAULTS, LORA_TARGETS, ERRORS,
  run as runEstimate, resolveOptions, inferenceMemory, trainingMemory, usableBytes,
} from "./estimate.mjs";
import { readConfig } from "./hfconfig.mjs";

// The choices, their order and the limits come from the engine's tables (tables.json).
const FORM = TABLES.calculator;
export { MODES };
export const RUNTIMES = OFFERED_RUNTIMES;
/** Weight formats in the order of the form's list: the 16-bit ones first, then the engine's order. */
export const WEIGHTS = [...FORM.weights_first, ...Object.keys(WEIGHT_FORMATS).filter((w) => !FORM.weights_first.includes(w))];
export const KV = Object.keys(KV_BYTES);
/** Training optimizers, in the order of the form's list. */
export const OPT = Object.keys(OPTIMIZERS);
/** Where LoRA's adapters sit: the form's choices, in the order of its list, and the projections of each (null: all). */
export const LORA_PRESETS = Object.fromEntries(Object.entries(FORM.lora_presets).map(([k, v]) => [k, v ?? LORA_TARGETS]));
export const TARGETS = Object.keys(LORA_PRESETS);
/** LoRA's rank, read in LoRA and QLoRA only. */
export const RANK_FIELD = TABLES.limits.lora_rank;
export const MAX_CARDS = TABLES.limits.cards;

/** The model's shape when the reader describes it (custom architecture): each field, the engine's
 * name of it, and its limits (tables.json, the ones estimate.mjs checks). */
const ARCH_NAMES = {
  params: "parameters_b", active: "active_parameters_b", layers: "layers", hidden: "hidden_size", heads: "attention_heads",
  kv_heads: "kv_heads", head_dim: "head_dim", vocab: "vocab_size", inter: "intermediate_size", experts: "experts",
  experts_k: "experts_per_token", kv_shared: "kv_shared_layers", kv_shared_sliding: "kv_shared_sliding_layers",
  per_layer: "per_layer_embedding_dim",
};
const OPTIONAL = ["active", "inter", "experts", "experts_k"];
/** Gemma 3n / Gemma 4 E2B-E4B: the last layers, which reuse an earlier layer's KV cache (and how many of them have
 * the sliding window), and the width of the per-layer embedding table. Empty or 0: none. The engine checks these
 * counts against the layers (checkLayerKinds); evaluate() names the field at fault first. */
const LAYER_COUNT = { integer: true, min: 0, max: TABLES.limits.model.layers.max, optional: true };
const OWN_LIMITS = {
  kv_shared: LAYER_COUNT, kv_shared_sliding: LAYER_COUNT,
  per_layer: { ...TABLES.limits.model.per_layer_embedding_dim, min: 0, optional: true },
};
export const ARCH_FIELDS = Object.fromEntries(Object.entries(ARCH_NAMES).map(([field, name]) => [field,
  OWN_LIMITS[field] || (OPTIONAL.includes(field) ? { ...TABLES.limits.model[name], optional: true } : TABLES.limits.model[name])]));
export const RUN_FIELDS = { context: TABLES.limits.context, batch: TABLES.limits.batch, gpus: TABLES.limits.gpus };
/** Offload (inference): what goes to host memory, how many layers (empty: every MoE layer's experts), the host's
 * memory and bandwidth (empty: not checked, the platform's default); the runtime's backend ("": the vendor's). */
export const OFFLOAD = ["none", "auto", "experts", "layers"];
export const BACKENDS = ["default", ...Object.keys(TABLES.runtimes["llama.cpp"].backends || {})];
export const HOST_FIELDS = {
  offload_n: { integer: true, min: 0, max: TABLES.limits.model.layers.max, optional: true },
  host_gb: { ...TABLES.limits.host_memory_gb, optional: true },
  host_bw: { ...TABLES.limits.host_bandwidth_gbs, optional: true },
};
export const CHOICES = { mode: MODES, runtime: RUNTIMES, weights: WEIGHTS, kv: KV, opt: OPT, targets: TARGETS, offload: OFFLOAD, backend: BACKENDS };
const CHOICE_DEFAULTS = { opt: DEFAULTS.optimizer, targets: "all", offload: "none", backend: "default" };
/** Every named input of the form, in the order of the URL. */
export const NAMES = ["model", "custom", ...Object.keys(ARCH_FIELDS), "tied", "mode", "runtime", "weights", "context",
  "kv", "batch", "gpus", "card", "ckpt", "flash", "opt", "master", "inbwd", "chunk", "rank", "targets",
  "offload", "offload_n", "host_gb", "host_bw", "backend"];

/** Whether the runtime moves parts of the model to host memory, and whether it has backends to choose. */
export const offloads = (runtime) => Boolean(TABLES.runtimes[runtime] && TABLES.runtimes[runtime].offload);
export const hasBackends = (runtime) => Boolean(TABLES.runtimes[runtime] && TABLES.runtimes[runtime].backends);

const training = (mode) => mode !== "inference";
const adapted = (mode) => mode === "lora" || mode === "qlora";
// lookups by a name from the address check the table's own keys: "constructor" is no runtime
const own = (table, key) => (Object.hasOwn(table, key) ? table[key] : undefined);
const gguf = (w) => Boolean(own(WEIGHT_FORMATS, w) && WEIGHT_FORMATS[w].gguf);

/** Runtimes the mode can use: of those offered, the ones training is estimated for (transformers). */
export function runtimesFor(mode) {
  return training(mode) ? RUNTIMES.filter((r) => TRAINING_RUNTIMES.includes(r)) : RUNTIMES.slice();
}

/** Weight formats a runtime loads in a mode (the rules of estimate.mjs checkOptions). */
export function weightsFor(runtime, mode) {
  const trained = own(TABLES.modes, mode) && TABLES.modes[mode].weights;
  if (trained) return WEIGHTS.filter((w) => trained.includes(w));
  const runsIt = (w) => !WEIGHT_FORMATS[w].runtimes || WEIGHT_FORMATS[w].runtimes.includes(runtime);
  const loads = own(TABLES.runtimes, runtime) && TABLES.runtimes[runtime].loads;
  if (GGUF_ONLY_RUNTIMES.includes(runtime)) return WEIGHTS.filter((w) => runsIt(w) && (gguf(w) || loads.includes(w)));
  return WEIGHTS.filter((w) => runsIt(w) && !gguf(w) && (!loads || loads.includes(w)));
}

export function kvFor(runtime) {
  return KV.filter((k) => (own(KV_BY_RUNTIME, runtime) || KV).includes(k));
}

/** The value a choice takes when what it held is no longer allowed. */
export function defaultWeights(runtime, mode) {
  const m = TABLES.modes[mode];
  if (m && m.default_weights) return m.default_weights;
  if (training(mode)) return TABLES.default_weights;
  return (TABLES.runtimes[runtime] && TABLES.runtimes[runtime].form_weights) || TABLES.default_weights;
}

const norm = (s) => String(s ?? "").toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();

/**
 * An item of `items` ({id, name}) named by what the reader typed: the exact name or id, else the
 * only item whose name or id contains it (ignoring case, spaces and punctuation).
 * Returns {item} or {item: null, matches: n}.
 */
export function findByName(items, text) {
  const t = String(text ?? "").trim().toLowerCase();
  if (!t) return { item: null, matches: 0 };
  const exact = items.find((m) => String(m.name || "").toLowerCase() === t || String(m.id || "").toLowerCase() === t);
  if (exact) return { item: exact, matches: 1 };
  const n = norm(t);
  if (!n) return { item: null, matches: 0 };
  const hits = items.filter((m) => norm(m.name).includes(n) || norm(m.id).includes(n));
  return hits.length === 1 ? { item: hits[0], matches: 1 } : { item: null, matches: hits.length };
}

/** A catalogue model's shape in the form's fields (plain strings, URL form). */
export function archOf(model) {
  const s = (x) => (x === null || x === undefined ? "" : String(x));
  const moe = model.experts && model.experts_per_token && model.experts > model.experts_per_token;
  return {
    params: s(model.parameters_b), active: moe ? s(model.active_parameters_b) : "", layers: s(model.layers),
    hidden: s(model.hidden_size), heads: s(model.attention_heads), kv_heads: s(model.kv_heads), head_dim: s(model.head_dim),
    vocab: s(model.vocab_size), inter: s(model.intermediate_size), experts: moe ? s(model.experts) : "",
    experts_k: moe ? s(model.experts_per_token) : "", kv_shared: s(model.kv_shared_layers || ""),
    kv_shared_sliding: model.kv_shared_layers ? s(model.kv_shared_sliding_layers ?? 0) : "",
    per_layer: s(model.per_layer_embedding_dim || ""), tied: model.tied_embeddings ? "1" : "0",
  };
}

/** The facts of a model's layers that the form's fields do not hold: kept beside a custom architecture
 * started from a catalogue model or a pasted config.json, so that its estimate keeps them. */
export const LAYER_FACTS = ["attention", "kv_lora_rank", "qk_rope_head_dim", "sliding_window", "sliding_window_layers",
  "full_head_dim", "full_kv_heads", "full_values_from_keys",
  "state_layers", "state_kind", "state_heads", "state_head_dim", "state_key_heads", "state_key_dim", "state_groups",
  "state_conv_kernel", "mlp_only_layers", "index_topk", "index_heads", "index_head_dim", "moe_intermediate_size",
  "dense_layers", "shared_experts"];

export function layerFacts(model) {
  const out = {};
  for (const k of LAYER_FACTS) if (model && model[k] !== null && model[k] !== undefined) out[k] = model[k];
  return out;
}

const CONFIG_ERRORS = { json: "calc.llm.config_err_json", not_object: "calc.llm.config_err_object",
  missing: "calc.llm.config_err_missing", not_whole: "calc.llm.config_err_whole", layer_kinds: "calc.llm.config_err_layers" };

/**
 * A pasted config.json (hfconfig.mjs) -> {fields: the form's architecture fields as archOf gives them
 * (parameters counted from the shapes, to 4 significant digits), facts: layerFacts, attention: the
 * layers with a KV cache} or {error: {key, params}}.
 */
export function fromConfig(text) {
  const r = readConfig(text);
  if (r.error) return { error: { key: CONFIG_ERRORS[r.error.kind], params: r.error.field ? { field: r.error.field } : {} } };
  const m = r.model;
  const short = (x) => Number(x.toPrecision(4));
  const fields = archOf({ ...m, parameters_b: short(m.parameters_b), active_parameters_b: short(m.active_parameters_b) });
  const attention = m.layers - (m.state_layers || 0) - (m.mlp_only_layers || 0) - (m.kv_shared_layers || 0);
  return { fields, facts: layerFacts(m), layers: m.layers, attention };
}

/** The model a custom architecture describes: the same dict `python -m generator estimate` builds from its
 * flags, plus the KV-shared layers and the per-layer table (fields the command has no flag for; 0 or empty: none),
 * with the layer facts (layerFacts) of the model or config it started from. */
export function customModel(v, facts = null) {
  const model = {
    id: null, parameters_b: v.params, active_parameters_b: v.active ?? v.params, layers: v.layers, hidden_size: v.hidden,
    attention_heads: v.heads, kv_heads: v.kv_heads, head_dim: v.head_dim, vocab_size: v.vocab, tied_embeddings: Boolean(v.tied),
    intermediate_size: v.inter ?? 4 * v.hidden, attention: v.kv_heads === v.heads ? "mha" : "gqa",
  };
  if (v.experts !== null && v.experts !== undefined) {
    model.experts = v.experts;
    model.experts_per_token = v.experts_k ?? Math.min(2, v.experts);
  }
  if (v.kv_shared) {
    model.kv_shared_layers = v.kv_shared;
    model.kv_shared_sliding_layers = v.kv_shared_sliding ?? 0;
  }
  if (v.per_layer) model.per_layer_embedding_dim = v.per_layer;
  const kept = { ...(facts || {}) };
  if (!model.experts) for (const k of ["moe_intermediate_size", "dense_layers", "shared_experts"]) delete kept[k];
  if (kept.attention !== "mla") { delete kept.attention; delete kept.kv_lora_rank; delete kept.qk_rope_head_dim; }
  return Object.assign(model, kept);
}

/**
 * The KV-shared layers of a custom architecture (parsed fields `a`, with the layer facts it started from): fewer than
 * its attention layers (one at least keeps its own cache), and their sliding-window share no more than the shared
 * layers or the sliding-window layers, leaving no more full-attention ones than the model has. The engine refuses
 * the rest with one general message (checkLayerKinds); here each field gets the range it takes. {} when they hold.
 */
export function sharingErrors(a, facts = null) {
  if (!a.kv_shared || !a.layers) return {};
  const f = facts || {};
  const attention = a.layers - (f.state_layers || 0) - (f.mlp_only_layers || 0);
  if (a.kv_shared >= attention) return { kv_shared: { key: "calc.llm.err_kv_shared", params: { max: Math.max(attention - 1, 0) } } };
  const sliding = f.sliding_window ? Math.min(f.sliding_window_layers || 0, attention) : 0;
  const least = Math.max(0, a.kv_shared - (attention - sliding)), most = Math.min(a.kv_shared, sliding);
  const given = a.kv_shared_sliding ?? 0;
  if (given < least || given > most) {
    return { kv_shared_sliding: { key: "calc.llm.err_kv_shared_sliding", params: { min: least, max: most } } };
  }
  return {};
}

// The field of the form an engine error's {field} names
const ENGINE_FIELDS = {
  ...Object.fromEntries(Object.entries(ARCH_NAMES).map(([field, name]) => [name, field])),
  context: "context", batch: "batch", gpus: "gpus", lora_rank: "rank", host_memory_gb: "host_gb", host_bandwidth_gbs: "host_bw",
};

/** An error of estimate.mjs -> [the field it concerns, the form's message]: as tables.json's errors map it. */
export function engineError(e, mode) {
  const spec = Object.hasOwn(ERRORS, e.key) ? ERRORS[e.key] : {};
  if (!spec.ui) return ["model", { key: "calc.err.choice", params: {} }];
  const field = spec.field === "{field}" ? ENGINE_FIELDS[e.params.field] || "model" : spec.field;
  // the one number a text of the form shows: the limit a value is above
  const params = e.params && e.params.max !== undefined ? { max: e.params.max } : {};
  return [field, { key: (mode === "full" && spec.ui_full) || spec.ui, params }];
}

const bool = (x) => x === "1" || x === "true" || x === true;
// a box an older address (or a caller) leaves out keeps the engine's default
const CHECK_DEFAULTS = { master: DEFAULTS.master_weights, inbwd: DEFAULTS.optimizer_in_backward, chunk: DEFAULTS.chunked_loss };
const checked = (raw, name) => (raw[name] === undefined ? CHECK_DEFAULTS[name] : bool(raw[name]));

/**
 * Raw form values (strings; checkboxes "1"/"0") -> {errors, warnings, model, gpu, options, result}.
 * ctx: {models, gpus, table, lang}. `result` is estimate.mjs's, null whenever errors is not empty.
 */
export function evaluate(raw, ctx) {
  const lang = ctx.lang || "en";
  const errors = {}, warnings = {};
  const v = {};
  for (const [name, choices] of Object.entries(CHOICES)) {
    // an address saved before a choice existed keeps working: it gets the choice's default
    const given = raw[name] === undefined && name in CHOICE_DEFAULTS ? CHOICE_DEFAULTS[name] : raw[name];
    const r = parseChoice(given, { choices });
    if (r.ok) v[name] = r.value;
    else errors[name] = r.error;
  }
  const mode = v.mode || "inference";
  if (v.runtime && !runtimesFor(mode).includes(v.runtime)) errors.runtime = { key: "calc.llm.err_training_runtime", params: {} };
  if (v.weights && v.runtime && !errors.runtime && !weightsFor(v.runtime, mode).includes(v.weights)) {
    const key = mode === "qlora" ? "calc.llm.err_qlora_weights" : mode === "full" ? "calc.err.train_precision"
      : mode === "lora" ? "calc.llm.err_lora_weights" : "calc.llm.err_weights_runtime";
    errors.weights = { key, params: {} };
  }
  if (mode === "inference" && v.kv && v.runtime && !kvFor(v.runtime).includes(v.kv)) errors.kv = { key: "calc.llm.err_kv_runtime", params: {} };
  for (const [name, spec] of Object.entries(RUN_FIELDS)) {
    const r = parseField(raw[name], spec, lang);
    if (r.ok) v[name] = r.value;
    else errors[name] = r.error;
  }
  v.rank = DEFAULTS.lora_rank;
  if (adapted(mode)) {
    // an address saved before the rank was a field gets the engine's default
    const r = parseField(raw.rank === undefined ? String(DEFAULTS.lora_rank) : raw.rank, RANK_FIELD, lang);
    if (r.ok) v.rank = r.value;
    else errors.rank = r.error;
  }

  const host = {};
  if (mode === "inference") {
    for (const [name, spec] of Object.entries(HOST_FIELDS)) {
      const r = parseField(raw[name] ?? "", spec, lang);
      if (r.ok) host[name] = r.value;
      else errors[name] = r.error;
    }
  }

  let model = null;
  if (bool(raw.custom)) {
    const a = { tied: bool(raw.tied) };
    for (const [name, spec] of Object.entries(ARCH_FIELDS)) {
      if (name === "experts_k" && (raw.experts ?? "").trim() === "") continue;
      if (name === "kv_shared_sliding" && !a.kv_shared) continue; // read with the shared layers only
      const r = parseField(raw[name], spec, lang); // an address saved before a field existed: empty
      if (r.ok) a[name] = r.value;
      else errors[name] = r.error;
    }
    if (a.experts !== null && a.experts !== undefined && (a.active === null || a.active === undefined) && !errors.active) {
      errors.active = { key: "calc.llm.err_active_needed", params: {} };
    }
    if (a.heads && a.kv_heads && a.kv_heads > a.heads && !errors.kv_heads) errors.kv_heads = { key: "calc.err.kv_heads", params: {} };
    if (!errors.layers && !errors.kv_shared && !errors.kv_shared_sliding) Object.assign(errors, sharingErrors(a, ctx.facts));
    if (a.heads && a.head_dim && a.hidden && a.heads * a.head_dim !== a.hidden) {
      warnings.arch = { key: "calc.llm.warn_arch", params: { product: a.heads * a.head_dim, hidden: a.hidden } };
    }
    if (!Object.keys(ARCH_FIELDS).some((k) => errors[k])) model = customModel(a, ctx.facts);
  } else {
    const found = findByName(ctx.models || [], raw.model);
    if (found.item) model = found.item;
    else if (found.matches > 1) errors.model = { key: "calc.llm.err_model_many", params: { n: found.matches } };
    else errors.model = { key: "calc.llm.err_model", params: {} };
  }
  if (model && model.max_context && v.context > model.max_context) {
    warnings.context = { key: "calc.llm.warn_context", params: { max: model.max_context } };
  }

  const foundCard = findByName(ctx.gpus || [], raw.card);
  const gpu = foundCard.item;
  if (!gpu) errors.card = foundCard.matches > 1 ? { key: "calc.llm.err_card_many", params: { n: foundCard.matches } }
    : { key: "calc.llm.err_card", params: {} };

  const options = {
    mode, runtime: v.runtime, weights: v.weights, kv_cache: v.kv, context: v.context, batch: v.batch, gpus: v.gpus,
    checkpointing: bool(raw.ckpt), flash_attention: bool(raw.flash), optimizer: v.opt,
    master_weights: checked(raw, "master"), optimizer_in_backward: checked(raw, "inbwd"),
    chunked_loss: checked(raw, "chunk"), lora_rank: v.rank, lora_targets: LORA_PRESETS[v.targets || "all"],
  };
  if (mode === "inference") Object.assign(options, offloadOptions(v, host, model));
  if (Object.keys(errors).length) return { errors, warnings, model, gpu, options, result: null };
  const out = runEstimate(model, gpu, options, ctx.table || {});
  if (out.errors.length) {
    const [field, e] = engineError(out.errors[0], mode);
    return { errors: { [field]: e }, warnings, model, gpu, options, result: null };
  }
  return { errors, warnings, model, gpu, options, result: out.result };
}

/** The engine's offload options from the form's: "layers" and "experts" take the number of layers (experts: all when
 * empty); the offload and the backend apply where the runtime has them. */
export function offloadOptions(v, host, model) {
  const out = { host_memory_gb: host.host_gb ?? null, host_bandwidth_gbs: host.host_bw ?? null };
  if (offloads(v.runtime) && v.offload && v.offload !== "none") {
    const n = host.offload_n;
    if (v.offload === "layers") out.offload = `layers:${n ?? (model ? model.layers : 0)}`;
    else if (v.offload === "experts") out.offload = n === null || n === undefined ? "experts" : `experts:${n}`;
    else out.offload = v.offload;
  }
  if (hasBackends(v.runtime) && v.backend && v.backend !== "default") out.backend = v.backend;
  return out;
}

/** What a card can give the model: its usable memory, less vLLM's 10 % when a serving runtime pre-allocates. */
export function limitBytes(gpu, runtime) {
  const usable = usableBytes(gpu);
  return SERVING_RUNTIMES.includes(runtime) ? usable * VLLM_UTILIZATION : usable;
}

/** Memory per GPU with `n` GPUs, as estimate() computes it. */
export function totalBytes(model, options, constants, n) {
  const o = resolveOptions({ ...options, gpus: n });
  if (o.mode === "inference") {
    return inferenceMemory(model, o.weights, o.kv_cache, o.context, o.batch, o.runtime, n, o.gpu_layers, o.flash_attention, constants).total_bytes;
  }
  return trainingMemory(model, o.mode, o.mode === "qlora" ? "bf16" : o.weights, o.context, o.batch, n, o.lora_rank,
    o.checkpointing, o.flash_attention, constants, o.runtime, o.optimizer, o.master_weights, o.optimizer_in_backward,
    o.chunked_loss, o.lora_targets).total_bytes;
}

/** The fewest cards (from `from` up to `max`) whose share fits one card; null when even `max` do not. */
export function cardsNeeded(model, options, constants, gpu, from = 1, max = MAX_CARDS) {
  const limit = limitBytes(gpu, options.runtime);
  const fits = (n) => totalBytes(model, options, constants, n) <= limit;
  if (from > max || !fits(max)) return null;
  let lo = from - 1, hi = max; // hi fits; lo does not (or is below from)
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The catalogue's cards for this model and these options: those that hold it on `options.gpus`
 * cards first, fastest first (decode in inference, relative speed in training), then the
 * others by how many cards they need. Cards without memory or bandwidth figures are left out.
 */
export function cardTable(model, options, gpus, table) {
  const constants = (table && table.constants) || {};
  const rows = [];
  for (const g of gpus || []) {
    if (!(g && g.memory_gb > 0 && g.memory_bandwidth_gbs > 0)) continue;
    const out = runEstimate(model, g, options, table || {});
    if (!out.result) continue;
    const r = out.result;
    const speed = options.mode === "inference" ? r.decode_tokens_per_s : r.training_relative;
    const row = { id: g.id, name: g.name, memory_gb: g.memory_gb, fits: r.fits, speed: Number.isFinite(speed) ? speed : null };
    row.count = r.fits ? options.gpus : cardsNeeded(model, options, constants, g, options.gpus + 1);
    rows.push(row);
  }
  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  rows.sort((a, b) => {
    if (a.fits !== b.fits) return a.fits ? -1 : 1;
    if (a.fits) return (b.speed ?? -1) - (a.speed ?? -1) || b.memory_gb - a.memory_gb || byName(a, b);
    return (a.count ?? 1e9) - (b.count ?? 1e9) || b.memory_gb - a.memory_gb || byName(a, b);
  });
  return rows;
}

/**
 * The parameters of an error band's text: {key, params}. The band on results the fit has not seen
 * (leave-one-source-out: median and p90) with the fitted median and count; a table without it gives
 * the fitted median and count alone; no entry gives the "not measured" key.
 */
export function bandText(entry) {
  if (!entry || !entry.count) return { key: "calc.llm.no_band", params: {} };
  const all = entry.scope === "all";
  const unseen = entry.unseen;
  if (!unseen || unseen.median_pct === null || unseen.median_pct === undefined) {
    return { key: all ? "calc.llm.band_fitted_all" : "calc.llm.band_fitted", params: { median: entry.median_pct, count: entry.count } };
  }
  return { key: all ? "calc.llm.band_all" : "calc.llm.band",
    params: { median: unseen.median_pct, p90: unseen.p90_pct, in_median: entry.median_pct, count: entry.count } };
}

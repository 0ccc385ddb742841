// The estimation engine in the browser: memory, decode/prefill speed and relative training
// throughput of an LLM on a GPU. Twin of generator/estimate/ (formats, architecture, memory, speed,
// offload, engine): same formulas, same results, checked against tests/fixtures/estimate.json and,
// function by function, tests/fixtures/estimate_functions.json. The fixed tables are tables.json,
// read by both (here by formats.mjs). No fitting here: the fitted constants, the error table and the
// reference GPU arrive as data (`table` = {constants, errors, reference}). No DOM, no text: errors
// are keys, translated elsewhere.
//
// This module holds engine.py's part (input checks, EstimateError, one estimate) and re-exports
// the others', so that its importers see one engine: formats.mjs (the tables), architecture.mjs,
// memory.mjs, speed.mjs and offload.mjs.
import {
  DEFAULTS, ERRORS, GGUF_ONLY_RUNTIMES, KV_BYTES, KV_BY_RUNTIME, LORA_TARGETS, MODES, OPTIMIZERS, RUNTIME, RUNTIMES,
  SERVING_RUNTIMES, STATE_KINDS, TABLES, TRAINING_RUNTIMES, VLLM_UTILIZATION, WEIGHT_FORMATS, defaultRuntime,
  defaultWeights, isGguf,
} from "./formats.mjs";
import { inferenceMemory, memoryConstants, trainingMemory, usableBytes } from "./memory.mjs";
import {
  decodeFromTerms, decodeTerms, matrixTflops, prefillFromTerms, prefillTerms, relativeTraining, speedConstants,
} from "./speed.mjs";
import {
  adjustDecodeTerms, adjustPrefillTerms, backendsOf, chosenSplit, defaultBackend, hostBandwidthGbs, hostLimitBytes,
  moeLayers, parseOffload, resolveFrontEnd, smallerFormats, splitMemory,
} from "./offload.mjs";

export {
  GIB, TABLES, WEIGHT_FORMATS, KV_BYTES, STATE_BYTES, STATE_KINDS, RUNTIMES, OFFERED_RUNTIMES, MODES, OPTIMIZERS,
  LORA_TARGETS, LORA_RANK, LOSS_CHUNKS, LAYER_SPLIT_RUNTIMES, KV_BY_RUNTIME, GGUF_ONLY_RUNTIMES, SERVING_RUNTIMES,
  TRAINING_RUNTIMES, VENDOR_BACKEND, DEFAULT_MEMORY, DEFAULT_SPEED, KV_COPIES, DEFAULT_RELATIVE, VLLM_UTILIZATION,
  MAX_BATCHED_TOKENS, UBATCH, LLAMA_CPP_UBATCH, UNIFIED_SHARE_DEFAULT, DEFAULTS, ERRORS, defaultRuntime, defaultWeights,
  backend,
} from "./formats.mjs";
export * from "./architecture.mjs";
export * from "./memory.mjs";
export * from "./speed.mjs";
export * from "./offload.mjs";

const MAX_CONTEXT_SEARCH = TABLES.limits.context_search;
const MODEL_LIMITS = TABLES.limits.model;

// ------------------------------------------------------------------ one estimate

export class EstimateError extends Error {
  constructor(key, params = {}) {
    if (!Object.hasOwn(ERRORS, key)) throw new Error(`${key} is not an error key of tables.json`);
    super(key);
    this.key = key;
    this.params = params;
  }
}

/** `value` within `spec` (tables.json's limits: integer, min, minExclusive, max), else EstimateError. */
export function checkLimit(name, value, spec) {
  let number = typeof value === "number" && !Number.isNaN(value);
  if (spec.integer && !Number.isInteger(value)) number = false;
  const low = spec.min ?? 0;
  if (!number || value < low || (spec.minExclusive && value === low)) {
    throw new EstimateError(spec.integer ? "est.err.positive" : "est.err.positive_number", { field: name });
  }
  if (value > spec.max) throw new EstimateError("est.err.above_max", { field: name, max: spec.max });
}

const given = (v) => v !== null && v !== undefined;

/** The model's shape within tables.json's limits, then the rules its numbers obey together. */
export function checkModel(model) {
  for (const name of ["parameters_b", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size"]) {
    checkLimit(name, model[name], MODEL_LIMITS[name]);
  }
  for (const name of ["intermediate_size", "experts", "experts_per_token", "per_layer_embedding_dim"]) { // optional
    if (given(model[name])) checkLimit(name, model[name], MODEL_LIMITS[name]);
  }
  const p = model.parameters_b;
  if (model.kv_heads > model.attention_heads) throw new EstimateError("est.err.kv_heads_above_heads");
  if (model.attention_heads % model.kv_heads) throw new EstimateError("est.err.heads_not_divisible");
  const embeddings = model.vocab_size * model.hidden_size * (model.tied_embeddings ? 1 : 2)
    + model.vocab_size * model.layers * (model.per_layer_embedding_dim || 0);
  if (embeddings >= p * 1e9) throw new EstimateError("est.err.embeddings_above_params");
  const experts = model.experts, active = model.active_parameters_b;
  if (given(experts)) {
    if (!given(model.experts_per_token) || model.experts_per_token > experts) throw new EstimateError("est.err.experts_per_token");
    if (!given(active)) throw new EstimateError("est.err.experts_without_active");
  }
  if (given(active) && !(typeof active === "number" && active > 0 && active <= p)) {
    throw new EstimateError("est.err.active_above_total");
  }
  if (!given(experts) && given(active) && active !== p) throw new EstimateError("est.err.active_without_experts");
  checkLayerKinds(model);
}

/** State layers and MLP-only blocks within the layers; state layers of a known kind with its figures;
 * KV-shared layers fewer than the attention layers, their sliding-window ones within both counts. */
export function checkLayerKinds(model) {
  const count = (name) => model[name] || 0;
  for (const name of ["state_layers", "mlp_only_layers", "kv_shared_layers", "kv_shared_sliding_layers"]) {
    if (given(model[name]) && !(Number.isInteger(model[name]) && model[name] >= 0)) throw new EstimateError("est.err.layer_kinds");
  }
  if (count("state_layers") + count("mlp_only_layers") > model.layers) throw new EstimateError("est.err.layer_kinds");
  const attention = model.layers - count("state_layers") - count("mlp_only_layers");
  const sliding = model.sliding_window ? count("sliding_window_layers") : 0;
  const shared = count("kv_shared_layers"), sharedSliding = count("kv_shared_sliding_layers");
  if (shared && (shared >= attention || sharedSliding > Math.min(shared, sliding)
    || shared - sharedSliding > attention - Math.min(sliding, attention))) throw new EstimateError("est.err.layer_kinds");
  if (count("state_layers")) {
    const needs = Object.hasOwn(STATE_KINDS, model.state_kind) ? STATE_KINDS[model.state_kind] : null;
    const ok = (v) => Number.isInteger(v) && v > 0 && v <= TABLES.state.max_figure;
    if (!needs || needs.some((n) => !ok(model[n]))) throw new EstimateError("est.err.layer_kinds");
  }
}

export function resolveOptions(options) {
  let o = { ...DEFAULTS };
  for (const [k, v] of Object.entries(options || {})) if (v !== null && v !== undefined) o[k] = v;
  o = resolveFrontEnd(o);
  if (o.runtime === null || o.runtime === undefined) o.runtime = o.weights ? defaultRuntime(o.weights) : TABLES.default_runtime;
  if (o.weights === null || o.weights === undefined) {
    o.weights = (Object.hasOwn(TABLES.modes, o.mode) && TABLES.modes[o.mode].default_weights) || defaultWeights(o.runtime);
  }
  return o;
}

export function checkOptions(o, model) {
  if (!MODES.includes(o.mode)) throw new EstimateError("est.err.mode");
  if (!RUNTIMES.includes(o.runtime)) throw new EstimateError("est.err.runtime");
  if (!(o.weights in WEIGHT_FORMATS)) throw new EstimateError("est.err.weights");
  if (!(o.kv_cache in KV_BYTES)) throw new EstimateError("est.err.kv_cache");
  if (!Object.hasOwn(OPTIMIZERS, o.optimizer)) throw new EstimateError("est.err.optimizer");
  for (const name of ["context", "batch", "gpus", "lora_rank"]) checkLimit(name, o[name], TABLES.limits[name]);
  const t = o.lora_targets;
  if (!Array.isArray(t) || !t.length || new Set(t).size !== t.length || t.some((x) => !LORA_TARGETS.includes(x))) {
    throw new EstimateError("est.err.lora_targets", { targets: LORA_TARGETS.join(", ") });
  }
  if (o.gpu_layers !== null && !(Number.isInteger(o.gpu_layers) && o.gpu_layers >= 0 && o.gpu_layers <= model.layers)) {
    throw new EstimateError("est.err.gpu_layers", { layers: model.layers });
  }
  const longest = Math.max(model.max_context || 0, model.max_context_scaled || 0);
  if (longest && o.context > longest) throw new EstimateError("est.err.context_model", { context: o.context, max: longest });
  if (o.gpus > model.layers) throw new EstimateError("est.err.gpus_split", { gpus: o.gpus, layers: model.layers });
  const own = WEIGHT_FORMATS[o.weights].runtimes;
  if (own && !own.includes(o.runtime)) {
    throw new EstimateError("est.err.format_only_runtime", { weights: o.weights, runtime: o.runtime, runtimes: own.join(", ") });
  }
  const loads = RUNTIME[o.runtime].loads;
  if (loads && !GGUF_ONLY_RUNTIMES.includes(o.runtime) && !loads.includes(o.weights)) {
    throw new EstimateError("est.err.runtime_loads", { weights: o.weights, runtime: o.runtime, loads: loads.join(", ") });
  }
  if (isGguf(o.weights) && !GGUF_ONLY_RUNTIMES.includes(o.runtime)) {
    throw new EstimateError("est.err.gguf_runtime", { weights: o.weights, runtime: o.runtime });
  }
  if (GGUF_ONLY_RUNTIMES.includes(o.runtime) && !isGguf(o.weights) && !RUNTIME[o.runtime].loads.includes(o.weights)) {
    throw new EstimateError("est.err.format_runtime", { weights: o.weights, runtime: o.runtime });
  }
  if (!(KV_BY_RUNTIME[o.runtime] || Object.keys(KV_BYTES)).includes(o.kv_cache)) {
    throw new EstimateError("est.err.kv_runtime", { kv_cache: o.kv_cache, runtime: o.runtime });
  }
  if (o.mode !== "inference") {
    if (!TRAINING_RUNTIMES.includes(o.runtime)) throw new EstimateError("est.err.training_runtime", { runtime: o.runtime });
    if (o.mode === "qlora" && !TABLES.modes.qlora.weights.includes(o.weights)) throw new EstimateError("est.err.qlora_weights");
    if ((o.mode === "full" || o.mode === "lora") && !TABLES.modes[o.mode].weights.includes(o.weights)) {
      throw new EstimateError("est.err.training_weights", { weights: o.weights });
    }
    if (o.gpu_layers !== null) throw new EstimateError("est.err.gpu_layers_training");
  }
  checkOffload(o, model);
}

export function errorBand(errors, metric, runtime) {
  const rows = (errors || {})[metric] || {};
  let entry = rows[runtime];
  if (entry && entry.count) return withBands({ ...entry, scope: runtime });
  entry = rows.all;
  return entry && entry.count ? withBands({ ...entry, scope: "all" }) : null;
}

/** The entry with its in_sample and unseen (leave-one-source-out) bands, made from the flat keys of an older table. */
function withBands(entry) {
  if (!("in_sample" in entry)) {
    entry.in_sample = { median_pct: entry.median_pct ?? null, p90_pct: entry.p90_pct ?? null, count: entry.count ?? null,
      sources: entry.sources ?? null };
  }
  if (!("unseen" in entry)) {
    const median = entry.loso_median_pct ?? null;
    entry.unseen = median === null ? null
      : { median_pct: median, p90_pct: entry.loso_p90_pct ?? null, count: entry.count ?? null, sources: null };
  }
  return entry;
}

function memoryFor(model, o, constants, context) {
  if (o.mode === "inference" && o.split) return splitMemory(model, o, constants, context, o.split);
  if (o.mode === "inference") {
    return inferenceMemory(model, o.weights, o.kv_cache, context, o.batch, o.runtime, o.gpus, o.gpu_layers, o.flash_attention, constants);
  }
  return trainingMemory(model, o.mode, o.mode === "qlora" ? "bf16" : o.weights, context, o.batch, o.gpus, o.lora_rank,
    o.checkpointing, o.flash_attention, constants, o.runtime, o.optimizer, o.master_weights, o.optimizer_in_backward,
    o.chunked_loss, o.lora_targets);
}

export function maxContext(model, o, constants, limitBytes) {
  const cap = model.max_context || MAX_CONTEXT_SEARCH;
  if (memoryFor(model, o, constants, 1).total_bytes > limitBytes) return null;
  let lo = 1, hi = cap;
  if (memoryFor(model, o, constants, hi).total_bytes <= limitBytes) return hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (memoryFor(model, o, constants, mid).total_bytes <= limitBytes) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Everything shown for one model on one GPU: {memory, fits, ..., error, basis}; throws EstimateError. */
export function estimate(model, gpu, options = {}, table = {}) {
  checkModel(model);
  if (!(typeof gpu.memory_gb === "number" && gpu.memory_gb > 0 && typeof gpu.memory_bandwidth_gbs === "number" && gpu.memory_bandwidth_gbs > 0)) {
    throw new EstimateError("est.err.gpu_figures");
  }
  const o = resolveOptions(options);
  checkOptions(o, model);
  table = table || {};
  checkBackendCard(o, gpu);
  checkRuntimeCard(o, gpu, table.runtime_cards);
  if (o.backend) gpu = { ...gpu, backend: o.backend };
  const constants = table.constants || {}, errors = table.errors || {};
  const usable = usableBytes(gpu);
  const reserved = SERVING_RUNTIMES.includes(o.runtime) ? usable * VLLM_UTILIZATION : null;
  const limit = reserved !== null ? reserved : usable;
  const hostLimit = hostLimitBytes(o);
  o.split = o.mode === "inference" ? chosenSplit(model, o, constants, limit, hostLimit) : null;
  const mem = memoryFor(model, o, constants, o.context);
  const fits = mem.total_bytes <= limit && (hostLimit === null || mem.host_bytes <= hostLimit);
  let decode = null, prefill = null;
  if (o.mode === "inference" && fits) [decode, prefill] = speeds(model, gpu, o, constants);
  const ref = table.reference || null;
  const relative = o.mode !== "inference" && ref ? relativeTraining(gpu, ref, constants.relative) : null;
  const memory = {};
  for (const key of ["weights_bytes", "kv_cache_bytes", "activations_bytes", "overhead_bytes", "gradients_bytes",
    "optimizer_bytes", "total_bytes", "host_bytes"]) memory[key] = mem[key];
  const peak = o.mode === "inference" ? "peak_memory_gib" : "training_peak_memory_gib";
  const error = {
    memory: errorBand(errors, peak, o.runtime),
    weights_bytes: errorBand(errors, "weights_gib", o.runtime),
    decode_tokens_per_s: decode !== null ? errorBand(errors, "decode_tokens_per_s", o.runtime) : null,
    prefill_tokens_per_s: prefill !== null ? errorBand(errors, "prefill_tokens_per_s", o.runtime) : null,
    training_relative: relative !== null ? errorBand(errors, "training_relative", "all") : null,
  };
  const basis = {
    model: model.id ?? null, gpu: gpu.id ?? null, mode: o.mode, weights: o.weights, kv_cache: o.kv_cache,
    context: o.context, batch: o.batch, gpus: o.gpus, runtime: o.runtime, flash_attention: o.flash_attention,
    checkpointing: o.checkpointing, lora_rank: o.lora_rank, optimizer: o.optimizer, master_weights: o.master_weights,
    optimizer_in_backward: o.optimizer_in_backward, chunked_loss: o.chunked_loss,
    lora_targets: LORA_TARGETS.filter((x) => o.lora_targets.includes(x)), gpu_layers: mem.gpu_layers,
    bits_per_weight: mem.bits_per_weight ?? null, weights_file_bytes: mem.weights_file_bytes, usable_bytes: usable,
    memory_bandwidth_gbs: gpu.memory_bandwidth_gbs, matrix_tflops: matrixTflops(gpu, o.weights, o.runtime),
    speed_constants: speedConstants(constants, o.runtime, gpu), memory_constants: memoryConstants(constants, o.runtime),
    relative_constants: constants.relative ?? null, reference: ref ? ref.id : null,
  };
  if ("trainable_params" in mem) basis.trainable_params = mem.trainable_params;
  const out = {
    memory, fits, usable_bytes: usable, reserved_bytes: reserved,
    max_context: o.mode === "inference" ? maxContext(model, o, constants, limit) : null,
    decode_tokens_per_s: decode, prefill_tokens_per_s: prefill, training_relative: relative, error, basis,
  };
  if (o.mode === "inference") {
    const s = o.split;
    Object.assign(basis, {
      front_end: o.front_end ?? null, backend: backendName(o, gpu), offload: o.offload ?? null,
      host_layers: s.host_layers, expert_layers: s.expert_layers, host_memory_gb: o.host_memory_gb ?? null,
      host_bandwidth_gbs: hostBandwidthGbs(gpu, o.host_bandwidth_gbs), pcie_gbs: o.pcie_gbs || basis.speed_constants.pcie_gbs,
    });
    out.offload = {
      host_layers: s.host_layers, expert_layers: s.expert_layers, host_bytes: mem.host_bytes, host_limit_bytes: hostLimit,
      experts_host_bytes: mem.experts_host_bytes ?? 0,
    };
    out.shortfall = fits ? null : shortfall(model, gpu, o, constants, mem, limit);
  }
  return out;
}

/** {errors: [], result} or {errors: [{key, params}], result: null}: the calculator's entry point. */
export function run(model, gpu, options = {}, table = {}) {
  try {
    return { errors: [], result: estimate(model, gpu, options, table) };
  } catch (exc) {
    if (exc instanceof EstimateError) return { errors: [{ key: exc.key, params: exc.params }], result: null };
    throw exc;
  }
}

// ------------------------------------------------------------------ offload checks, backends, runtime's cards
// engine.py's part of the offload: the checks of the options and the card, and what a setup that
// does not fit lacks, and what would fit.

export function checkOffload(o, model) {
  for (const name of ["host_memory_gb", "host_bandwidth_gbs", "pcie_gbs"]) {
    if (o[name] !== null && o[name] !== undefined) checkLimit(name, o[name], TABLES.limits[name]);
  }
  const spec = parseOffload(o.offload || "none", model);
  if (spec === null) throw new EstimateError("est.err.offload", { layers: model.layers, moe_layers: moeLayers(model) });
  if (spec.kind !== "none" && o.mode !== "inference") throw new EstimateError("est.err.offload_training");
  if (spec.kind !== "none" && o.gpu_layers !== null && o.gpu_layers !== undefined) throw new EstimateError("est.err.offload_gpu_layers");
  const allowed = RUNTIME[o.runtime].offload || [];
  if (["layers", "experts", "auto"].includes(spec.kind) && !allowed.includes(spec.kind) && !(spec.kind === "auto" && allowed.length)) {
    throw new EstimateError("est.err.offload_runtime", { runtime: o.runtime, kind: spec.kind });
  }
  if (spec.kind === "experts" && !moeLayers(model)) throw new EstimateError("est.err.offload_experts");
  if (o.backend !== null && o.backend !== undefined) {
    const table = backendsOf(o.runtime) || {};
    if (!Object.hasOwn(table, o.backend)) {
      throw new EstimateError("est.err.backend", { runtime: o.runtime, backend: o.backend, backends: Object.keys(table).join(", ") || "none to choose" });
    }
  }
}

export function checkBackendCard(o, gpu) {
  const table = backendsOf(o.runtime) || {};
  const vendors = o.backend && Object.hasOwn(table, o.backend) ? table[o.backend] : null;
  if (o.backend && vendors !== null && !vendors.includes(gpu.vendor)) {
    throw new EstimateError("est.err.backend_card", { runtime: o.runtime, backend: o.backend, vendor: gpu.vendor ?? null });
  }
}

export function checkRuntimeCard(o, gpu, runtimeCards) {
  const cards = runtimeCards && Object.hasOwn(runtimeCards, o.runtime) ? runtimeCards[o.runtime] : null;
  if (cards && !cards.includes(gpu.id)) throw new EstimateError("est.err.runtime_card", { runtime: o.runtime, gpu: gpu.name || gpu.id });
}

export const backendName = (o, gpu) => o.backend || defaultBackend(o.runtime, gpu);

function speeds(model, gpu, o, constants) {
  const split = o.split, layers = model.layers;
  const k = speedConstants(constants, o.runtime, gpu);
  const t = decodeTerms(model, gpu, o.weights, o.kv_cache, o.context, o.batch, o.runtime, o.gpus, layers - split.host_layers, constants);
  const decode = decodeFromTerms(adjustDecodeTerms(t, model, gpu, o, k, split), k);
  if (o.backend === "cpu") return [decode, null];
  const p = prefillTerms(model, gpu, o.weights, o.context, o.batch, o.runtime, o.gpus, layers - split.host_layers, constants);
  if (p.compute_s === null) return [decode, null];
  return [decode, prefillFromTerms(adjustPrefillTerms(p, model, o, k, split), k)];
}

export function shortfall(model, gpu, o, constants, mem, limit) {
  const hostLimit = hostLimitBytes(o);
  const out = {
    bytes: Math.max(0, mem.total_bytes - limit),
    host_bytes: hostLimit !== null ? Math.max(0, mem.host_bytes - hostLimit) : 0,
    suggestions: [],
  };
  if (mem.total_bytes <= limit) return out;
  const tries = out.suggestions;
  for (const weights of smallerFormats(o)) {
    if (memoryFor(model, { ...o, weights }, constants, o.context).total_bytes <= limit) {
      tries.push({ kind: "weights", weights });
      break;
    }
  }
  const context = maxContext(model, o, constants, limit);
  if (context !== null) tries.push({ kind: "context", context });
  if (RUNTIME[o.runtime].offload && o.backend !== "cpu") {
    const split = chosenSplit(model, { ...o, offload: "auto" }, constants, limit, hostLimit);
    const trial = splitMemory(model, o, constants, o.context, split);
    if (trial.total_bytes <= limit && (hostLimit === null || trial.host_bytes <= hostLimit)) {
      const kind = split.host_layers ? "layers" : "experts";
      tries.push({ kind: "offload", offload: `${kind}:${split.host_layers || split.expert_layers}`, host_bytes: trial.host_bytes });
    }
  }
  for (let n = o.gpus + 1; n <= TABLES.limits.cards; n++) {
    if (memoryFor(model, { ...o, gpus: n }, constants, o.context).total_bytes <= limit) {
      tries.push({ kind: "gpus", gpus: n });
      break;
    }
  }
  return out;
}

// The estimation engine in the browser: memory, decode/prefill speed and relative training
// throughput of an LLM on a GPU. Twin of generator/estimate/ (formats, memory, speed, engine):
// same formulas, same results, checked against tests/fixtures/estimate.json and, function by
// function, tests/fixtures/estimate_functions.json. The fixed tables are tables.json, read by both.
// No fitting here: the fitted constants, the error table and the reference GPU arrive as data
// (`table` = {constants, errors, reference}). No DOM, no text: errors are keys, translated elsewhere.

export const GIB = 1024 ** 3;

// The engine's fixed tables: tables.json beside this file, the one copy generator/estimate/formats.py
// reads too. Fetched in the browser; read from disk when this module runs in Node (the tests).
async function readTables(url) {
  if (url.protocol === "file:") {
    const { readFileSync } = await import("node:fs");
    return JSON.parse(readFileSync(url, "utf8"));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}
export const TABLES = await readTables(new URL("./tables.json", import.meta.url));

const RUNTIME = TABLES.runtimes;
const runtimesWith = (test) => Object.keys(RUNTIME).filter((r) => test(RUNTIME[r]));
const memoryDefaults = (t) => ({ overhead_bytes: t.overhead_gib * GIB, act_scale: t.act_scale });

export const WEIGHT_FORMATS = TABLES.weight_formats;
export const KV_BYTES = TABLES.kv_cache;
/** Bytes per value of the fixed state of linear-attention / state-space layers, and each kind's config facts. */
export const STATE_BYTES = TABLES.state.bytes;
export const STATE_KINDS = TABLES.state.kinds;
export const RUNTIMES = Object.keys(RUNTIME);
/** The runtimes the calculator and the command offer. */
export const OFFERED_RUNTIMES = runtimesWith((t) => t.offered);
export const MODES = Object.keys(TABLES.modes);
// Training optimizers: [bytes of state per trainable parameter on the GPU, in host memory] (formats.py).
export const OPTIMIZERS = Object.fromEntries(Object.entries(TABLES.optimizers).map(([k, o]) => [k, [o.state_bytes, o.host_state_bytes]]));
// LoRA: the projections an adapter may sit on (all by default)
export const LORA_TARGETS = TABLES.lora_targets;
export const LORA_RANK = TABLES.defaults.lora_rank;
// a loss computed in chunks upcasts this many pieces of the logits to fp32 one after the other
export const LOSS_CHUNKS = TABLES.memory.loss_chunks;
export const LAYER_SPLIT_RUNTIMES = runtimesWith((t) => t.split === "layers");
export const KV_BY_RUNTIME = Object.fromEntries(RUNTIMES.map((r) => [r, RUNTIME[r].kv_cache]));
// runtimes that load GGUF files and, of the other formats, only those they list
export const GGUF_ONLY_RUNTIMES = runtimesWith((t) => t.gguf);
export const SERVING_RUNTIMES = runtimesWith((t) => t.serving);
export const TRAINING_RUNTIMES = runtimesWith((t) => t.training);
export const VENDOR_BACKEND = TABLES.backends;
export const DEFAULT_MEMORY = {
  ...Object.fromEntries(runtimesWith((t) => t.memory).map((r) => [r, memoryDefaults(RUNTIME[r].memory)])),
  "*": memoryDefaults(TABLES.memory),
};
export const DEFAULT_SPEED = TABLES.speed;
// transformers copies the cache out to every query head before attention (repeat_kv): each query
// head beyond the first that shares a KV head costs one more write and read of the cache
export const KV_COPIES = Object.fromEntries(runtimesWith((t) => t.kv_copies).map((r) => [r, RUNTIME[r].kv_copies]));
export const DEFAULT_RELATIVE = TABLES.relative;
export const VLLM_UTILIZATION = TABLES.memory.serving_utilization;
export const MAX_BATCHED_TOKENS = TABLES.memory.max_batched_tokens;
export const UBATCH = Object.fromEntries(runtimesWith((t) => t.ubatch).map((r) => [r, RUNTIME[r].ubatch]));
export const LLAMA_CPP_UBATCH = UBATCH["llama.cpp"];
export const UNIFIED_SHARE_DEFAULT = TABLES.memory.unified_share;
export const DEFAULTS = { ...TABLES.defaults, lora_targets: LORA_TARGETS };
/** The keys of EstimateError, each with the calculator's field and text and the command's sentence. */
export const ERRORS = TABLES.errors;
const MAX_CONTEXT_SEARCH = TABLES.limits.context_search;
const MODEL_LIMITS = TABLES.limits.model;

const num = (m, k, d = 0) => (m[k] === null || m[k] === undefined ? d : m[k]);
const isGguf = (w) => Boolean(WEIGHT_FORMATS[w] && WEIGHT_FORMATS[w].gguf);
/** llama.cpp for GGUF formats, transformers for everything else. */
export const defaultRuntime = (w) => {
  const own = WEIGHT_FORMATS[w] && WEIGHT_FORMATS[w].runtimes;
  if (own && own.length) return own[0];
  return isGguf(w) ? GGUF_ONLY_RUNTIMES[0] : TABLES.default_runtime;
};
/** f16 for llama.cpp (GGUF's 16-bit type), bf16 elsewhere. */
export const defaultWeights = (runtime) => (RUNTIME[runtime] && RUNTIME[runtime].default_weights) || TABLES.default_weights;
/** The chosen backend (gpu.backend), else the runtime's default for the vendor (llama.cpp: SYCL on Intel), else the vendor's. */
export const backend = (gpu, runtime = null) => {
  if (gpu.backend) return String(gpu.backend);
  const vendor = String(gpu.vendor || "");
  const own = (Object.hasOwn(RUNTIME, runtime || "") && RUNTIME[runtime].vendor_backend) || {};
  return (Object.hasOwn(own, vendor) && own[vendor]) || VENDOR_BACKEND[vendor] || "other";
};
const isMla = (m) => m.attention === "mla" && Boolean(m.kv_lora_rank);

// ------------------------------------------------------------------ layer kinds (architecture.py)

/** Layers with attention: all but the state layers and the MLP-only blocks. */
export const attentionLayers = (model) => model.layers - num(model, "state_layers") - num(model, "mlp_only_layers");
/** Layers with an MLP: every layer, or only the MLP blocks where the model gives them. */
export const mlpLayers = (model) => num(model, "mlp_only_layers") || model.layers;
export const sparseAttention = (model) => Boolean(model.index_topk && model.index_head_dim);

/** [recurrent values, convolution values] of one state layer for one sequence. */
export function stateParts(model) {
  const kind = model.state_kind;
  if (!num(model, "state_layers") || !kind) return [0, 0];
  const heads = num(model, "state_heads"), dim = num(model, "state_head_dim"), keyDim = num(model, "state_key_dim");
  const conv = Math.max(0, num(model, "state_conv_kernel") - 1);
  if (kind === "gated-deltanet") return [heads * keyDim * dim, conv * (2 * num(model, "state_key_heads") * keyDim + heads * dim)];
  if (kind === "mamba2") return [heads * dim * keyDim, conv * (heads * dim + 2 * num(model, "state_groups") * keyDim)];
  if (kind === "lightning") return [heads * dim * dim, 0];
  return [0, conv * model.hidden_size];
}

export function stateValuesPerLayer(model) {
  const [recurrent, conv] = stateParts(model);
  return recurrent + conv;
}

/** Bytes of the fixed state of every state layer, for `batch` sequences. */
export const stateBytes = (model, batch = 1) => num(model, "state_layers") * stateValuesPerLayer(model) * STATE_BYTES * batch;

/** FLOPs of the state layers' token mixing over n tokens (update and read of the recurrent state). */
export const stateFlops = (model, n) => num(model, "state_layers") * 4 * stateParts(model)[0] * n;

// ------------------------------------------------------------------ memory

export function paramBreakdown(model) {
  const total = model.parameters_b * 1e9;
  const active = (model.active_parameters_b || model.parameters_b) * 1e9;
  const vocab = model.vocab_size, hidden = model.hidden_size, layers = model.layers;
  const embed = vocab * hidden;
  const head = model.tied_embeddings ? 0 : vocab * hidden;
  const nExp = num(model, "experts"), k = num(model, "experts_per_token");
  let experts = 0;
  if (nExp && k && nExp > k) {
    const size = num(model, "moe_intermediate_size");
    const structural = (layers - num(model, "dense_layers")) * nExp * 3 * hidden * size;
    if (structural > 0 && structural < total - embed - head) experts = structural;
    else experts = Math.max(0, (total - active) / (1 - k / nExp));
  }
  const other = Math.max(0, total - embed - head - experts);
  const heads = model.attention_heads, kv = model.kv_heads, d = model.head_dim;
  const attnLayers = attentionLayers(model);
  const attention = attnLayers * (2 * hidden * heads * d + 2 * hidden * kv * d);
  const linear = other + experts;
  const mlp = Math.max(0, linear - attention);
  const vDown = linear > 0 ? Math.min(1, (mlp / 3 + attnLayers * hidden * kv * d) / linear) : 0;
  return { total, active, embed, head, experts, other, v_down_share: vDown };
}

export function expertFraction(model, tokens) {
  const nExp = num(model, "experts"), k = num(model, "experts_per_token");
  if (!(nExp && k && nExp > k)) return 1;
  return 1 - (1 - k / nExp) ** Math.max(1, tokens);
}

export function weightsParts(model, weights, runtime = "transformers") {
  const fmt = WEIGHT_FORMATS[weights];
  const p = paramBreakdown(model);
  const base = fmt.base + (fmt.more_bits || 0) * (fmt.more_share || 0) * p.v_down_share;
  let otherBits, expertBits, headBits, embedBits;
  if (weights === "mxfp4") {
    const rest = runtime === "llama.cpp" ? fmt.gguf_rest : fmt.base;
    otherBits = rest; expertBits = fmt.experts; headBits = rest; embedBits = rest;
  } else {
    otherBits = base; expertBits = base; headBits = fmt.head; embedBits = fmt.embed;
  }
  let embedB, headB;
  if (model.tied_embeddings) { embedB = 0; headB = p.embed * headBits / 8; }
  else { embedB = p.embed * embedBits / 8; headB = p.head * headBits / 8; }
  const otherB = p.other * otherBits / 8, expertB = p.experts * expertBits / 8;
  const total = embedB + headB + otherB + expertB;
  return { embed: embedB, head: headB, other: otherB, experts: expertB, total, bits_per_weight: total * 8 / p.total, params: p };
}

export function kvValuesPerSequence(model, context) {
  const layers = attentionLayers(model);
  if (isMla(model)) {
    const index = sparseAttention(model) ? num(model, "index_head_dim") : 0;
    return layers * (model.kv_lora_rank + num(model, "qk_rope_head_dim") + index) * context;
  }
  const window = num(model, "sliding_window");
  const sliding = window ? Math.min(layers, num(model, "sliding_window_layers")) : 0;
  return fullKvValuesPerToken(model) * (layers - sliding) * context
    + 2 * model.kv_heads * model.head_dim * sliding * Math.min(context, window);
}

/** Cached values per token of one full-attention layer (memory.py: full_kv_values_per_token). */
export function fullKvValuesPerToken(model) {
  const kv = model.full_kv_heads || model.kv_heads;
  const dim = model.full_head_dim || model.head_dim;
  return (model.full_values_from_keys ? 1 : 2) * kv * dim;
}

/** Values a decode step reads for one sequence: with sparse attention, every indexer key and at most index_topk latents. */
export function kvReadValuesPerSequence(model, context) {
  if (!(sparseAttention(model) && isMla(model))) return kvValuesPerSequence(model, context);
  const latent = model.kv_lora_rank + num(model, "qk_rope_head_dim");
  return attentionLayers(model) * (model.index_head_dim * context + latent * Math.min(context, model.index_topk));
}

/** The attention layers' KV cache at the KV precision, plus the fixed state of the state layers. */
export function kvCacheBytes(model, context, batch = 1, kvCache = "f16") {
  return kvValuesPerSequence(model, context) * KV_BYTES[kvCache] * batch + stateBytes(model, batch);
}

export function kvSharePerGpu(model, gpus, runtime) {
  if (gpus <= 1) return 1;
  if (LAYER_SPLIT_RUNTIMES.includes(runtime)) return 1 / gpus;
  if (isMla(model)) return 1;
  return Math.ceil(model.kv_heads / gpus) / model.kv_heads;
}

export function memoryConstants(constants, runtime) {
  const table = (constants && constants.memory) || {};
  return { ...DEFAULT_MEMORY["*"], ...(DEFAULT_MEMORY[runtime] || {}), ...(table["*"] || {}), ...(table[runtime] || {}) };
}

export function activationBasis(model, runtime, context, batch, flashAttention = true) {
  const h = model.hidden_size, inter = num(model, "intermediate_size", 4 * model.hidden_size), vocab = model.vocab_size;
  const heads = model.attention_heads;
  if (runtime === "llama.cpp") {
    const u = Math.min(LLAMA_CPP_UBATCH, context * batch);
    const extra = flashAttention ? 0 : 4 * heads * context;
    return u * (4 * vocab + 8 * (h + inter) + extra);
  }
  const perToken = 4 * h + 4 * inter;
  if (SERVING_RUNTIMES.includes(runtime)) return Math.min(MAX_BATCHED_TOKENS, Math.max(context * batch, 1)) * perToken;
  const scores = flashAttention ? 0 : 2 * heads * context * context * batch;
  return batch * context * perToken + scores;
}

export function usableBytes(gpu) {
  const total = gpu.memory_gb * GIB;
  if (gpu.unified_memory) return total * (gpu.gpu_memory_share || UNIFIED_SHARE_DEFAULT);
  return total;
}

export function inferenceMemory(model, weights, kvCache, context, batch, runtime, gpus = 1, gpuLayers = null,
  flashAttention = true, constants = null) {
  const w = weightsParts(model, weights, runtime);
  const layers = model.layers;
  const onGpu = gpuLayers === null || gpuLayers === undefined ? layers : Math.max(0, Math.min(layers, gpuLayers));
  const frac = onGpu / layers;
  const block = w.other + w.experts;
  const embedGpu = runtime === "llama.cpp" ? 0 : w.embed;
  const gpuW = block * frac + (onGpu === layers ? w.head : 0) + embedGpu;
  const hostW = w.total - gpuW;
  const kvAll = kvCacheBytes(model, context, batch, kvCache);
  let kvGpu = kvAll * frac;
  const k = memoryConstants(constants, runtime);
  const acts = k.act_scale * activationBasis(model, runtime, context, batch, flashAttention);
  const n = Math.max(1, gpus);
  const weightsGpu = gpuW / n;
  kvGpu = kvGpu * kvSharePerGpu(model, n, runtime);
  const total = weightsGpu + kvGpu + acts + k.overhead_bytes;
  return {
    weights_bytes: weightsGpu, kv_cache_bytes: kvGpu, activations_bytes: acts, overhead_bytes: k.overhead_bytes,
    gradients_bytes: 0, optimizer_bytes: 0, total_bytes: total, host_bytes: hostW + (kvAll - kvAll * frac),
    weights_file_bytes: w.total, bits_per_weight: w.bits_per_weight, kv_cache_total_bytes: kvAll, gpu_layers: onGpu,
  };
}

export function loraParams(model, rank, targets = LORA_TARGETS) {
  const h = model.hidden_size, heads = model.attention_heads, kv = model.kv_heads, d = model.head_dim, layers = mlpLayers(model);
  const sides = { q: h + heads * d, o: h + heads * d, k: h + kv * d, v: h + kv * d };
  let attn = 0;
  for (const t of LORA_TARGETS.slice(0, 4)) if (targets.includes(t)) attn += rank * sides[t];
  const mlpCount = LORA_TARGETS.slice(4).filter((t) => targets.includes(t)).length;
  const inter = num(model, "intermediate_size", 4 * h);
  const nExp = num(model, "experts");
  let mlp;
  if (nExp) {
    const moeLayers = layers - num(model, "dense_layers");
    const size = num(model, "moe_intermediate_size", inter);
    mlp = moeLayers * nExp * mlpCount * rank * (h + size) + (layers - moeLayers) * mlpCount * rank * (h + inter);
  } else {
    mlp = layers * mlpCount * rank * (h + inter);
  }
  return attentionLayers(model) * attn + mlp;
}

/** Parameters of the model's largest weight matrix: the embedding (or output head) or an MLP projection. */
export function largestMatrix(model) {
  const h = model.hidden_size, inter = num(model, "intermediate_size", 4 * h);
  return Math.max(model.vocab_size * h, h * inter, h * model.attention_heads * model.head_dim);
}

// Values per token and layer that full fine-tuning keeps for backward and LoRA does not (see memory.py)
export function frozenInputs(model, targets, flashAttention = true) {
  const h = model.hidden_size, inter = num(model, "intermediate_size", 4 * h);
  const has = (t) => targets.includes(t);
  let out = 0;
  if (!["q", "k", "v"].some(has)) out += h;
  if (!["gate", "up"].some(has)) out += h;
  if (!has("down")) out += inter;
  if (!flashAttention && !has("o")) out += model.attention_heads * model.head_dim;
  return out;
}

export function trainingMemory(model, mode, weights, context, batch, gpus = 1, loraRank = LORA_RANK, checkpointing = true,
  flashAttention = true, constants = null, runtime = "transformers", optimizerName = "adamw", masterWeights = true,
  optimizerInBackward = false, chunkedLoss = false, loraTargets = LORA_TARGETS) {
  const p = paramBreakdown(model);
  const wide = weights === "f32";
  const [state, hostState] = OPTIMIZERS[optimizerName];
  let trainable, base, grads, optimizer, dequant;
  if (mode === "full") {
    trainable = p.total;
    const width = wide ? 4 : 2;
    base = trainable * width;
    // stepped in the backward pass, a gradient is freed as soon as it is made: the largest matrix's is the most held
    grads = optimizerInBackward ? largestMatrix(model) * width : trainable * width;
    const master = wide || !masterWeights ? 0 : 4;
    optimizer = trainable * (state + master); // the optimizer's state (+ fp32 master weights in mixed precision)
    dequant = 0;
  } else {
    trainable = loraParams(model, loraRank, loraTargets);
    const baseFmt = mode === "qlora" ? "nf4" : weights;
    base = weightsParts(model, baseFmt, runtime).total;
    const h0 = model.hidden_size, inter0 = num(model, "intermediate_size", 4 * model.hidden_size);
    dequant = mode === "qlora" ? 2 * h0 * Math.max(inter0, model.attention_heads * model.head_dim) : 0;
    base += trainable * 4;
    grads = trainable * 4;
    optimizer = trainable * state;
  }
  const host = trainable * hostState;
  const h = model.hidden_size, heads = model.attention_heads, kv = model.kv_heads, d = model.head_dim;
  const inter = num(model, "intermediate_size", 4 * h);
  const scale = wide ? 2 : 1;
  let fullLayer = 2 * (4 * h + 2 * heads * d + 2 * kv * d + 4 * inter) + 4 * heads;
  if (!flashAttention) fullLayer += 4 * heads * context;
  if (mode === "lora") fullLayer -= 2 * frozenInputs(model, loraTargets, flashAttention); // not QLoRA: bitsandbytes keeps them
  const layers = model.layers;
  const perToken = checkpointing ? layers * 2 * h + fullLayer : layers * fullLayer;
  const logits = chunkedLoss ? 2 * scale + 8 / LOSS_CHUNKS : 8;
  const acts = (perToken * scale + logits * model.vocab_size) * context * batch;
  const n = Math.max(1, gpus);
  const k = memoryConstants(constants, runtime);
  const states = (base + grads + optimizer) / n;
  const total = states + dequant + acts + k.overhead_bytes;
  return {
    weights_bytes: base / n + dequant, kv_cache_bytes: 0, activations_bytes: acts, overhead_bytes: k.overhead_bytes,
    gradients_bytes: grads / n, optimizer_bytes: optimizer / n, total_bytes: total, host_bytes: host / n,
    trainable_params: trainable, weights_file_bytes: base, gpu_layers: layers,
  };
}

// ------------------------------------------------------------------ speed

export function speedConstants(constants, runtime, gpu) {
  const table = (constants && constants.speed) || {};
  const out = { ...DEFAULT_SPEED };
  for (const key of ["*", runtime, `${runtime}/${backend(gpu, runtime)}`]) Object.assign(out, table[key] || {});
  return out;
}

export function halfRateFp32Accumulate(gpu) {
  return gpu.vendor === "nvidia" && gpu.segment === "consumer" && !String(gpu.id || gpu.name || "").toLowerCase().includes("titan");
}

/** The int8 rate of llama.cpp's quantized matrix kernels (MMQ) on NVIDIA's CUDA backend in today's builds,
 * or null (speed.py: llama_cpp_int8_tops): 4 x fp32_tflops with dp4a on Pascal (6.1 to 6.x), twice the
 * FP16-accumulate tensor rate on int8 tensor cores (7.5 and later). */
export function llamaCppInt8Tops(gpu, weights, runtime) {
  if (runtime !== "llama.cpp" || gpu.vendor !== "nvidia" || backend(gpu, runtime) !== "cuda") return null;
  if (!(isGguf(weights) || weights === "mxfp4")) return null;
  const cc = versionTuple(gpu.compute_capability);
  if (cc === null) return null;
  if (!versionBelow(cc, [6, 1]) && versionBelow(cc, [7, 0])) return 4 * (gpu.fp32_tflops || 0) || null;
  const t = gpu.fp16_tensor_tflops || 0;
  if (!versionBelow(cc, [7, 5]) && t > 0) return 2 * t * (halfRateFp32Accumulate(gpu) ? 2 : 1);
  return null;
}

export function matrixTflops(gpu, weights, runtime) {
  if (weights === "fp8" && SERVING_RUNTIMES.includes(runtime) && (gpu.fp8_tensor_tflops || 0) > 0) return gpu.fp8_tensor_tflops;
  const int8 = llamaCppInt8Tops(gpu, weights, runtime);
  if (int8) return int8;
  const t = gpu.fp16_tensor_tflops || 0;
  if (t > 0 && runtime === "llama.cpp" && halfRateFp32Accumulate(gpu)) return 2 * t;
  return t > 0 ? t : (gpu.fp32_tflops || 0);
}

function split(model, gpuLayers) {
  const layers = model.layers;
  const onGpu = gpuLayers === null || gpuLayers === undefined ? layers : Math.max(0, Math.min(layers, gpuLayers));
  return [onGpu / layers, onGpu === layers];
}

/** "4.51.3" -> [4, 51, 3]; null where the version is missing or not numbered. */
export function versionTuple(version) {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(version ?? "").trim());
  return m ? m.slice(1).map((g) => Number(g || 0)) : null;
}

const versionBelow = (v, limit) => v[0] !== limit[0] ? v[0] < limit[0] : v[1] !== limit[1] ? v[1] < limit[1] : v[2] < (limit[2] || 0);

/** Which of the older code paths counted in decode a runtime release takes (speed.py). */
export function runtimePaths(runtime, version = null) {
  const v = versionTuple(version);
  if (runtime !== "transformers" || v === null) return { expert_loop: null, fp8_sync: false };
  const loop = versionBelow(v, [4, 53]) ? "all" : versionBelow(v, [5, 0]) ? "chosen" : null;
  return { expert_loop: loop, fp8_sync: versionBelow(v, [5, 4]) };
}

/** [expert module runs, device-synchronizing linear calls] per decode step on these paths. */
export function moduleRuns(model, weights, batch, paths) {
  const layers = model.layers, nExp = Math.trunc(model.experts || 0);
  const moeLayers = nExp ? layers - Math.trunc(model.dense_layers || 0) : 0;
  let perLayer = 0;
  if (paths.expert_loop === "all") perLayer = nExp;
  else if (paths.expert_loop === "chosen") perLayer = nExp * expertFraction(model, batch);
  const runs = moeLayers * perLayer;
  let syncs = 0;
  if (paths.fp8_sync && weights === "fp8") {
    const shared = Math.trunc(model.shared_experts || 0);
    syncs = 4 * layers + 3 * (layers - moeLayers) + 3 * moeLayers * shared + 3 * runs;
  }
  return [runs, syncs];
}

export function decodeTerms(model, gpu, weights, kvCache, context, batch, runtime, gpus = 1, gpuLayers = null, constants = null,
  runtimeVersion = null) {
  const k = speedConstants(constants, runtime, gpu);
  const w = weightsParts(model, weights, runtime);
  const [frac, headOnGpu] = split(model, gpuLayers);
  const block = w.other + w.experts * expertFraction(model, batch);
  const kv = kvReadValuesPerSequence(model, context) * KV_BYTES[kvCache] * batch;
  const moved = block + kv + 2 * stateBytes(model, batch); // the state is read and written back
  const gpuBytes = moved * frac + (headOnGpu ? w.head : 0);
  const cpuBytes = moved * (1 - frac) + (headOnGpu ? 0 : w.head);
  const n = Math.max(1, gpus);
  const tp = n > 1 && !LAYER_SPLIT_RUNTIMES.includes(runtime);
  const bw = gpu.memory_bandwidth_gbs * 1e9;
  const p = w.params;
  const flops = 2 * Math.max(p.active - (model.tied_embeddings ? 0 : p.embed), 0) * batch;
  const tflops = matrixTflops(gpu, weights, runtime) * 1e12;
  const kvS = kv * frac / bw / (tp ? n : 1);
  const [runs, syncs] = moduleRuns(model, weights, batch, runtimePaths(runtime, runtimeVersion));
  return {
    expert_runs: runs, sync_calls: syncs,
    mem_s: gpuBytes / bw / (tp ? n : 1),
    kv_s: kvS,
    kv_copy_s: kvS * (KV_COPIES[runtime] || 0) * (queryGroup(model) - 1),
    cpu_s: cpuBytes / (k.cpu_bandwidth_gbs * 1e9),
    compute_s: tflops > 0 ? flops / tflops / (tp ? n : 1) : 0,
    comm_s: tp ? 2 * model.layers * k.tp_latency_s : 0,
    batch, layers: model.layers, bytes_per_step: gpuBytes + cpuBytes,
  };
}

export function queryGroup(model) {
  // query heads per KV head (1 for multi-head attention and for MLA's shared latent)
  if (model.attention === "mla" && model.kv_lora_rank) return 1;
  return model.kv_heads ? model.attention_heads / model.kv_heads : 1;
}

export function decodeFromTerms(t, k) {
  // kv_factor: the bytes a runtime moves per byte of cache in a step (1: read once); kv_copy_s:
  // the copies made per query head (KV_COPIES)
  const mem = t.mem_s + (k.kv_factor - 1) * t.kv_s + t.kv_copy_s;
  const step = Math.max(mem / k.eff_bw + t.cpu_s / k.eff_cpu, t.compute_s / k.eff_compute);
  const paths = k.overhead_s_per_expert * (t.expert_runs || 0) + k.overhead_s_per_sync * (t.sync_calls || 0);
  return t.batch / (step + k.overhead_s + k.overhead_s_per_layer * t.layers + paths + t.comm_s);
}

export function attentionFlops(model, n) {
  const layers = attentionLayers(model);
  const per = 4 * model.attention_heads * model.head_dim;
  const perFull = 4 * model.attention_heads * (model.full_head_dim || model.head_dim);
  const window = model.sliding_window || 0;
  const sliding = window ? Math.min(layers, model.sliding_window_layers || 0) : 0;
  const full = n * n / 2;
  const local = n <= window ? full : n * window - window * window / 2;
  let flops = perFull * (layers - sliding) * full + per * sliding * local;
  if (sparseAttention(model)) {
    const topk = model.index_topk;
    const selected = n <= topk ? full : n * topk - topk * topk / 2;
    flops = per * layers * selected + 2 * (model.index_heads || 0) * model.index_head_dim * layers * full;
  }
  return flops + stateFlops(model, n);
}

export function prefillTerms(model, gpu, weights, context, batch, runtime, gpus = 1, gpuLayers = null, constants = null) {
  const k = speedConstants(constants, runtime, gpu);
  const w = weightsParts(model, weights, runtime);
  const [frac, headOnGpu] = split(model, gpuLayers);
  const tokens = context * batch;
  const p = w.params;
  let flops = 2 * Math.max(p.active - (model.tied_embeddings ? 0 : p.embed), 0) * tokens;
  flops += batch * attentionFlops(model, context);
  // the routed experts' share: slower than the dense matrix products by the fitted moe_prefill
  const nExp = model.experts || 0, perToken = model.experts_per_token || 0;
  const expertFlops = nExp && p.experts ? 2 * p.experts * perToken / nExp * tokens : 0;
  const ubatch = Math.min(UBATCH[runtime] ?? tokens, tokens);
  const chunks = Math.ceil(tokens / ubatch);
  const perChunk = w.other + w.experts * expertFraction(model, ubatch) + w.head;
  const cpuBytes = (w.other + w.experts * expertFraction(model, ubatch)) * (1 - frac) + (headOnGpu ? 0 : w.head);
  const n = Math.max(1, gpus);
  const tp = n > 1 && !LAYER_SPLIT_RUNTIMES.includes(runtime);
  const tflops = matrixTflops(gpu, weights, runtime) * 1e12;
  return {
    compute_s: tflops > 0 ? (flops - expertFlops) / tflops / (tp ? n : 1) : null,
    expert_s: tflops > 0 ? expertFlops / tflops / (tp ? n : 1) : 0,
    mem_s: chunks * perChunk / (gpu.memory_bandwidth_gbs * 1e9) / (tp ? n : 1),
    pcie_s: chunks * cpuBytes / (k.pcie_gbs * 1e9),
    comm_s: tp ? chunks * 2 * model.layers * k.tp_latency_s : 0,
    layer_passes: chunks * model.layers, tokens, flops,
  };
}

export function prefillFromTerms(t, k) {
  if (t.compute_s === null) return null;
  const compute = (t.compute_s + t.expert_s * k.moe_prefill) / k.eff_compute;
  // each pass launches every layer's kernels: the per-layer cost fitted on decode steps
  const time = Math.max(compute, t.mem_s / k.eff_bw) + t.pcie_s + t.comm_s + t.layer_passes * k.overhead_s_per_layer;
  return time > 0 ? t.tokens / time : 0;
}

export function decodeTokensPerS(model, gpu, weights, kvCache, context, batch, runtime, gpus = 1, gpuLayers = null, constants = null) {
  const t = decodeTerms(model, gpu, weights, kvCache, context, batch, runtime, gpus, gpuLayers, constants);
  return decodeFromTerms(t, speedConstants(constants, runtime, gpu));
}

export function prefillTokensPerS(model, gpu, weights, context, batch, runtime, gpus = 1, gpuLayers = null, constants = null) {
  const t = prefillTerms(model, gpu, weights, context, batch, runtime, gpus, gpuLayers, constants);
  return prefillFromTerms(t, speedConstants(constants, runtime, gpu));
}

export function trainingFeatures(gpu) {
  // memory the GPU may use: with unified memory, its share
  const memory = gpu.memory_gb && gpu.unified_memory ? gpu.memory_gb * (gpu.gpu_memory_share || 1) : gpu.memory_gb;
  const figures = [gpu.fp16_tensor_tflops || gpu.fp32_tflops, gpu.memory_bandwidth_gbs, gpu.l2_cache_mb, memory];
  return figures.map((v) => (v && v > 0 ? Math.log(v) : null));
}

export function relativeTraining(gpu, reference, coeffs = null) {
  const c = { ...DEFAULT_RELATIVE };
  for (const key of Object.keys(DEFAULT_RELATIVE)) if (coeffs && coeffs[key] !== undefined) c[key] = coeffs[key];
  const g = trainingFeatures(gpu), r = trainingFeatures(reference);
  if ([g[0], g[1], r[0], r[1]].includes(null)) return null;
  let log = c.a * (g[0] - r[0]) + c.b * (g[1] - r[1]);
  for (const [name, i] of [["c", 2], ["d", 3]]) if (c[name] && g[i] !== null && r[i] !== null) log += c[name] * (g[i] - r[i]);
  return Math.exp(log);
}

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
  for (const name of ["intermediate_size", "experts", "experts_per_token"]) { // optional
    if (given(model[name])) checkLimit(name, model[name], MODEL_LIMITS[name]);
  }
  const p = model.parameters_b;
  if (model.kv_heads > model.attention_heads) throw new EstimateError("est.err.kv_heads_above_heads");
  if (model.attention_heads % model.kv_heads) throw new EstimateError("est.err.heads_not_divisible");
  const embeddings = model.vocab_size * model.hidden_size * (model.tied_embeddings ? 1 : 2);
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

/** State layers and MLP-only blocks within the layers; state layers of a known kind with its figures. */
export function checkLayerKinds(model) {
  const count = (name) => model[name] || 0;
  for (const name of ["state_layers", "mlp_only_layers"]) {
    if (given(model[name]) && !(Number.isInteger(model[name]) && model[name] >= 0)) throw new EstimateError("est.err.layer_kinds");
  }
  if (count("state_layers") + count("mlp_only_layers") > model.layers) throw new EstimateError("est.err.layer_kinds");
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

// ------------------------------------------------------------------ offload, backends, runtime's cards
// Twin of generator/estimate/offload.py and of the offload checks of engine.py (see their docs):
// Ollama and LM Studio name the runtime they run; a runtime's backends and the vendors each runs;
// layers or routed experts in host memory, read at the host's bandwidth in decode and copied over
// PCIe once per micro-batch in prefill; what a setup that does not fit lacks, and what would fit.

export const FRONT_ENDS = TABLES.front_ends;
const HOST = TABLES.host;

export function resolveFrontEnd(o) {
  const fe = Object.hasOwn(FRONT_ENDS, o.runtime || "") ? FRONT_ENDS[o.runtime] : null;
  if (!fe) return o;
  const own = (Object.hasOwn(WEIGHT_FORMATS, o.weights || "") && WEIGHT_FORMATS[o.weights].runtimes) || [];
  const runtime = fe.mlx_weights_runtime && own.includes(fe.mlx_weights_runtime) ? fe.mlx_weights_runtime : fe.runtime;
  return { ...o, runtime, front_end: o.runtime };
}

export const backendsOf = (runtime) => (Object.hasOwn(RUNTIME, runtime) && RUNTIME[runtime].backends) || null;

export function defaultBackend(runtime, gpu) {
  const own = (Object.hasOwn(RUNTIME, runtime) && RUNTIME[runtime].vendor_backend) || {};
  const vendor = String(gpu.vendor || "");
  return Object.hasOwn(own, vendor) ? own[vendor] : null;
}

export function moeLayers(model) {
  const nExp = num(model, "experts"), k = num(model, "experts_per_token");
  if (!(nExp && k && nExp > k)) return 0;
  return Math.max(0, model.layers - num(model, "dense_layers"));
}

export function parseOffload(text, model) {
  if (typeof text !== "string") return null;
  const s = text.trim().toLowerCase();
  const i = s.indexOf(":");
  const kind = i < 0 ? s : s.slice(0, i), n = i < 0 ? "" : s.slice(i + 1);
  if ((kind === "none" || kind === "auto") && i < 0) return { kind, n: null };
  if (kind !== "layers" && kind !== "experts") return null;
  const top = kind === "layers" ? model.layers : moeLayers(model);
  if (kind === "experts" && i < 0) return { kind, n: top };
  if (!/^[0-9]+$/.test(n) || Number(n) > top) return null;
  return { kind, n: Number(n) };
}

export function hostBandwidthGbs(gpu, given = null) {
  if (given) return given;
  if (gpu.unified_memory) return gpu.memory_bandwidth_gbs;
  return HOST.bandwidth_gbs[HOST.server_segments.includes(gpu.segment) ? "server" : "desktop"];
}

export function expertsMoved(model, w, hostLayers, expertLayers) {
  const n = moeLayers(model);
  if (!(n && expertLayers && w.experts)) return 0;
  const onCard = w.experts * (model.layers - hostLayers) / model.layers;
  return Math.min(onCard, w.experts * expertLayers / n);
}

export function splitMemory(model, o, constants, context, split) {
  const h = split.host_layers, e = split.expert_layers;
  let mem = inferenceMemory(model, o.weights, o.kv_cache, context, o.batch, o.runtime, o.gpus, model.layers - h, o.flash_attention, constants);
  const moved = expertsMoved(model, weightsParts(model, o.weights, o.runtime), h, e);
  if (moved) {
    const n = Math.max(1, o.gpus);
    mem = { ...mem, weights_bytes: mem.weights_bytes - moved / n, total_bytes: mem.total_bytes - moved / n, host_bytes: mem.host_bytes + moved };
  }
  return { ...mem, host_layers: h, expert_layers: e, experts_host_bytes: moved };
}

// hostLimit does not change the choice (the least offload puts the least in host memory); the caller checks it
export function autoSplit(model, o, constants, limit, hostLimit = null) {
  const fits = (split) => splitMemory(model, o, constants, o.context, split).total_bytes <= limit;
  const least = (make, top) => {
    if (!fits(make(top))) return null;
    let lo = -1, hi = top;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(make(mid))) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  const nMoe = moeLayers(model);
  if (nMoe) {
    const e = least((n) => ({ host_layers: 0, expert_layers: n }), nMoe);
    if (e !== null) return { host_layers: 0, expert_layers: e };
  }
  const h = least((n) => ({ host_layers: n, expert_layers: nMoe }), model.layers);
  return { host_layers: h === null ? model.layers : h, expert_layers: nMoe };
}

export function chosenSplit(model, o, constants, limit, hostLimit = null) {
  const layers = model.layers;
  if (o.backend === "cpu") return { host_layers: layers, expert_layers: 0 };
  const spec = parseOffload(o.offload || "none", model) || { kind: "none", n: null };
  if (spec.kind === "layers") return { host_layers: spec.n, expert_layers: 0 };
  if (spec.kind === "experts") return { host_layers: 0, expert_layers: spec.n };
  if (spec.kind === "auto") return autoSplit(model, o, constants, limit, hostLimit);
  const onGpu = o.gpu_layers === null || o.gpu_layers === undefined ? layers : o.gpu_layers;
  return { host_layers: layers - onGpu, expert_layers: 0 };
}

export function adjustDecodeTerms(t, model, gpu, o, k, split) {
  const w = weightsParts(model, o.weights, o.runtime);
  const moved = expertsMoved(model, w, split.host_layers, split.expert_layers) * expertFraction(model, o.batch);
  const bw = gpu.memory_bandwidth_gbs * 1e9;
  const host = hostBandwidthGbs(gpu, o.host_bandwidth_gbs) * 1e9;
  const cpuBytes = t.cpu_s * k.cpu_bandwidth_gbs * 1e9 + moved;
  return { ...t, mem_s: Math.max(0, t.mem_s - moved / bw), cpu_s: cpuBytes / host };
}

export function adjustPrefillTerms(t, model, o, k, split) {
  const w = weightsParts(model, o.weights, o.runtime);
  const tokens = o.context * o.batch;
  const ubatch = Math.min(Object.hasOwn(UBATCH, o.runtime) ? UBATCH[o.runtime] : tokens, tokens);
  const chunks = Math.ceil(tokens / ubatch);
  const moved = expertsMoved(model, w, split.host_layers, split.expert_layers) * expertFraction(model, ubatch);
  const pcie = (o.pcie_gbs || k.pcie_gbs) * 1e9;
  const copied = t.pcie_s * k.pcie_gbs * 1e9 + chunks * moved;
  return { ...t, pcie_s: copied / pcie };
}

export function smallerFormats(o) {
  const spec = RUNTIME[o.runtime] || {};
  const mine = WEIGHT_FORMATS[o.weights].base;
  const out = [];
  for (const [name, f] of Object.entries(WEIGHT_FORMATS)) {
    if (f.runtimes && !f.runtimes.includes(o.runtime)) continue;
    if (spec.gguf) {
      if (!(isGguf(name) || (spec.loads || []).includes(name))) continue;
    } else if (isGguf(name) || (spec.loads && !spec.loads.includes(name))) continue;
    if (name === "nf4" || f.experts) continue;
    if (f.base < mine) out.push(name);
  }
  return out.map((n, i) => [n, i]).sort((a, b) => WEIGHT_FORMATS[b[0]].base - WEIGHT_FORMATS[a[0]].base || a[1] - b[1]).map((x) => x[0]);
}

export const hostLimitBytes = (o) => (o.host_memory_gb === null || o.host_memory_gb === undefined ? null : o.host_memory_gb * GIB);

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

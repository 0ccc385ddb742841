// Memory an LLM needs on a GPU: weights by part, KV cache, runtime workspace, training state,
// several GPUs, unified memory. Twin of generator/estimate/memory.py.
import {
  DEFAULT_MEMORY, GIB, KV_BYTES, LAYER_SPLIT_RUNTIMES, LLAMA_CPP_UBATCH, LORA_RANK, LORA_TARGETS, LOSS_CHUNKS,
  MAX_BATCHED_TOKENS, OPTIMIZERS, SERVING_RUNTIMES, UNIFIED_SHARE_DEFAULT, WEIGHT_FORMATS, isMla, num,
} from "./formats.mjs";
import { attentionLayers, mlpLayers, sparseAttention, stateBytes } from "./architecture.mjs";

export function paramBreakdown(model) {
  const total = model.parameters_b * 1e9;
  const active = (model.active_parameters_b || model.parameters_b) * 1e9;
  const vocab = model.vocab_size, hidden = model.hidden_size, layers = model.layers;
  const embed = vocab * hidden;
  const head = model.tied_embeddings ? 0 : vocab * hidden;
  const perLayer = perLayerEmbeddingParams(model);
  const nExp = num(model, "experts"), k = num(model, "experts_per_token");
  let experts = 0;
  if (nExp && k && nExp > k) {
    const size = num(model, "moe_intermediate_size");
    const structural = (layers - num(model, "dense_layers")) * nExp * 3 * hidden * size;
    if (structural > 0 && structural < total - embed - head - perLayer) experts = structural;
    else experts = Math.max(0, (total - active) / (1 - k / nExp));
  }
  const other = Math.max(0, total - embed - head - perLayer - experts);
  const heads = model.attention_heads, kv = model.kv_heads, d = model.head_dim;
  const attnLayers = attentionLayers(model);
  const attention = attnLayers * (2 * hidden * heads * d + 2 * hidden * kv * d);
  const linear = other + experts;
  const mlp = Math.max(0, linear - attention);
  const vDown = linear > 0 ? Math.min(1, (mlp / 3 + attnLayers * hidden * kv * d) / linear) : 0;
  return { total, active, embed, head, per_layer: perLayer, experts, other, v_down_share: vDown };
}

/** Parameters of the per-layer embedding table, vocab x layers x per_layer_embedding_dim (memory.py). */
export function perLayerEmbeddingParams(model) {
  return model.vocab_size * model.layers * num(model, "per_layer_embedding_dim");
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
  const perLayerB = p.per_layer * embedBits / 8; // an embedding table, stored as the embeddings are
  const total = embedB + headB + perLayerB + otherB + expertB;
  return {
    embed: embedB, head: headB, per_layer: perLayerB, other: otherB, experts: expertB, total,
    bits_per_weight: total * 8 / p.total, params: p,
  };
}

/** Values the KV cache holds for one sequence: the KV-shared layers keep none (memory.py). */
export function kvValuesPerSequence(model, context) {
  return kvValues(model, context, true);
}

function kvValues(model, context, cachedOnly) {
  const layers = attentionLayers(model);
  if (isMla(model)) {
    const index = sparseAttention(model) ? num(model, "index_head_dim") : 0;
    return layers * (model.kv_lora_rank + num(model, "qk_rope_head_dim") + index) * context;
  }
  const window = num(model, "sliding_window");
  let sliding = window ? Math.min(layers, num(model, "sliding_window_layers")) : 0;
  let full = layers - sliding;
  if (cachedOnly) {
    const sharedSliding = window ? Math.min(sliding, num(model, "kv_shared_sliding_layers")) : 0;
    sliding -= sharedSliding;
    full -= Math.min(full, num(model, "kv_shared_layers") - sharedSliding);
  }
  return fullKvValuesPerToken(model) * full * context
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
  if (!(sparseAttention(model) && isMla(model))) return kvValues(model, context, false); // shared layers read their source's cache
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
  const embedGpu = runtime === "llama.cpp" ? 0 : w.embed + w.per_layer; // llama.cpp keeps its input tables on the host
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

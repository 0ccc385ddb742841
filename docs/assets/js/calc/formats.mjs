// The estimation engine's fixed tables (tables.json, read once, here) under the names the other
// modules use, and the few helpers on them. Twin of generator/estimate/formats.py. estimate.mjs
// re-exports the tables and helpers it always offered; RUNTIME, num, isGguf and isMla serve the
// engine's modules only.

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

/** Each runtime's entry of tables.json (what it loads, splits, offloads, its defaults). */
export const RUNTIME = TABLES.runtimes;
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

/** A model's figure, or `d` where the record leaves it out. The engine calls it for nearly every
 *  figure it reads: `??` rather than a comparison with `undefined`, which the minifier writes as
 *  `0[0]`, a property read that made a recomputation of the large-model calculator 30 % slower. */
export const num = (m, k, d = 0) => m[k] ?? d;
export const isGguf = (w) => Boolean(WEIGHT_FORMATS[w] && WEIGHT_FORMATS[w].gguf);
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
export const isMla = (m) => m.attention === "mla" && Boolean(m.kv_lora_rank);

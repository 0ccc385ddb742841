// How fast an LLM runs: decode and prefill tokens/s, and 16-bit training throughput relative to a
// reference GPU. Twin of generator/estimate/speed.py.
import {
  DEFAULT_RELATIVE, DEFAULT_SPEED, KV_BYTES, KV_COPIES, LAYER_SPLIT_RUNTIMES, SERVING_RUNTIMES, UBATCH, backend, isGguf,
} from "./formats.mjs";
import { attentionLayers, sparseAttention, stateBytes, stateFlops } from "./architecture.mjs";
import { expertFraction, kvReadValuesPerSequence, weightsParts } from "./memory.mjs";

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
// llama.cpp builds before this one multiplied a prompt's quantized weights with FP16 cuBLAS where today's
// run int8 MMQ kernels, and spent a fixed extra time per layer in each decode step (speed.py)
export const MMQ_DEFAULT_BUILD = 3200;

/** 'b2824' -> 2824; null for a missing or unnumbered build (taken as a current one). */
export function llamaCppBuild(version) {
  const m = /^b?(\d+)$/.exec(String(version ?? "").trim());
  return m ? Number(m[1]) : null;
}

export function llamaCppInt8Tops(gpu, weights, runtime, runtimeVersion = null) {
  if (runtime !== "llama.cpp" || gpu.vendor !== "nvidia" || backend(gpu, runtime) !== "cuda") return null;
  if (!(isGguf(weights) || weights === "mxfp4")) return null;
  const cc = versionTuple(gpu.compute_capability);
  if (cc === null) return null;
  if (!versionBelow(cc, [6, 1]) && versionBelow(cc, [7, 0])) return 4 * (gpu.fp32_tflops || 0) || null;
  const build = llamaCppBuild(runtimeVersion);
  const t = gpu.fp16_tensor_tflops || 0;
  if (!versionBelow(cc, [7, 5]) && t > 0 && (build === null || build >= MMQ_DEFAULT_BUILD)) {
    return 2 * t * (halfRateFp32Accumulate(gpu) ? 2 : 1);
  }
  return null;
}

export function matrixTflops(gpu, weights, runtime, runtimeVersion = null) {
  if (weights === "fp8" && SERVING_RUNTIMES.includes(runtime) && (gpu.fp8_tensor_tflops || 0) > 0) return gpu.fp8_tensor_tflops;
  const int8 = llamaCppInt8Tops(gpu, weights, runtime, runtimeVersion);
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
  if (runtime === "llama.cpp") {
    const build = llamaCppBuild(version);
    return { expert_loop: null, fp8_sync: false, old_build: build !== null && build < MMQ_DEFAULT_BUILD };
  }
  const v = versionTuple(version);
  if (runtime !== "transformers" || v === null) return { expert_loop: null, fp8_sync: false, old_build: false };
  const loop = versionBelow(v, [4, 53]) ? "all" : versionBelow(v, [5, 0]) ? "chosen" : null;
  return { expert_loop: loop, fp8_sync: versionBelow(v, [5, 4]), old_build: false };
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
  const flops = 2 * computedParams(model, p) * batch;
  const tflops = matrixTflops(gpu, weights, runtime, runtimeVersion) * 1e12;
  const kvS = kv * frac / bw / (tp ? n : 1);
  const paths = runtimePaths(runtime, runtimeVersion);
  const [runs, syncs] = moduleRuns(model, weights, batch, paths);
  return {
    expert_runs: runs, sync_calls: syncs, old_layers: paths.old_build ? model.layers : 0,
    mem_s: gpuBytes / bw / (tp ? n : 1),
    kv_s: kvS,
    kv_copy_s: kvS * (KV_COPIES[runtime] || 0) * (queryGroup(model) - 1),
    cpu_s: cpuBytes / (k.cpu_bandwidth_gbs * 1e9),
    compute_s: tflops > 0 ? flops / tflops / (tp ? n : 1) : 0,
    comm_s: tp ? 2 * model.layers * k.tp_latency_s : 0,
    batch, layers: model.layers, bytes_per_step: gpuBytes + cpuBytes,
  };
}

/** Parameters a token multiplies: the active ones less the tables it only looks a row up in (speed.py). */
export function computedParams(model, p) {
  return Math.max(p.active - (model.tied_embeddings ? 0 : p.embed) - p.per_layer, 0);
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
  const paths = k.overhead_s_per_expert * (t.expert_runs || 0) + k.overhead_s_per_sync * (t.sync_calls || 0)
    + k.overhead_s_per_old_layer * (t.old_layers || 0);
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

export function prefillTerms(model, gpu, weights, context, batch, runtime, gpus = 1, gpuLayers = null, constants = null,
  runtimeVersion = null) {
  const k = speedConstants(constants, runtime, gpu);
  const w = weightsParts(model, weights, runtime);
  const [frac, headOnGpu] = split(model, gpuLayers);
  const tokens = context * batch;
  const p = w.params;
  let flops = 2 * computedParams(model, p) * tokens;
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
  const tflops = matrixTflops(gpu, weights, runtime, runtimeVersion) * 1e12;
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
  // the makers whose cards the fit measured (speed.py): no figure for another maker's card
  if (coeffs && Array.isArray(coeffs.vendors) && !coeffs.vendors.includes(gpu.vendor)) return null;
  const c = { ...DEFAULT_RELATIVE };
  for (const key of Object.keys(DEFAULT_RELATIVE)) if (coeffs && coeffs[key] !== undefined) c[key] = coeffs[key];
  const g = trainingFeatures(gpu), r = trainingFeatures(reference);
  if ([g[0], g[1], r[0], r[1]].includes(null)) return null;
  let log = c.a * (g[0] - r[0]) + c.b * (g[1] - r[1]);
  for (const [name, i] of [["c", 2], ["d", 3]]) if (c[name] && g[i] !== null && r[i] !== null) log += c[name] * (g[i] - r[i]);
  return Math.exp(log);
}

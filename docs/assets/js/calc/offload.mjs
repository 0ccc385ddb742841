// Front ends (Ollama, LM Studio), a runtime's backends and the vendors each runs, and what goes to
// host memory when a model does not fit the card: layers or routed experts, read at the host's
// bandwidth in decode and copied over PCIe once per micro-batch in prefill; the smaller formats a
// setup that does not fit could use. Twin of generator/estimate/offload.py (see its docs); the
// checks and the shortfall, engine.py's, are in estimate.mjs.
import { GIB, RUNTIME, TABLES, UBATCH, WEIGHT_FORMATS, isGguf, num } from "./formats.mjs";
import { expertFraction, inferenceMemory, weightsParts } from "./memory.mjs";

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

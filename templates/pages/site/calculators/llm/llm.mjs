// Memory and speed of a large model: DOM side. Form rules: llmform.mjs; figures: estimate.mjs
// with the fitted table of the shared data file (WG_DATA.estimates). No text here: every word
// comes from the page's data-m-* attributes; names from the data go in through textContent.
import {
  evaluate, NAMES, ARCH_FIELDS, runtimesFor, weightsFor, kvFor, defaultWeights, findByName, archOf, cardTable,
  bandText, limitBytes, MAX_CARDS, fromConfig, layerFacts, offloads, hasBackends, HOST_FIELDS,
} from "./llmform.mjs";
import { GIB, DEFAULTS } from "./estimate.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, el } from "./dom.mjs";

const ARCH = [...Object.keys(ARCH_FIELDS), "tied"];
const NUMERIC = new Set([...Object.keys(ARCH_FIELDS), "context", "batch", "gpus", ...Object.keys(HOST_FIELDS)]);
const TERMS = { weights: "weights_bytes", kv: "kv_cache_bytes", activations: "activations_bytes", gradients: "gradients_bytes",
  optimizer: "optimizer_bytes", overhead: "overhead_bytes" };

export function setup(root, { lang, prefix, msg, fmt, data }) {
  const out = outputs(root);
  const field = (name) => root.querySelector(`[name="${name}"]`);
  const models = ((data && data.models) || []).filter((m) => m && typeof m.id === "string");
  const gpus = ((data && data.gpus) || []).filter((g) => g && typeof g.id === "string" && g.memory_gb > 0);
  // the fitted table, and which cards each runtime runs (data/software.yaml): a card no build runs is left out
  const table = { ...((data && data.estimates) || {}), runtime_cards: (data && data.runtime_cards) || null };
  const toRoot = root.getAttribute("data-wg-root") || "../../";
  const list = (name) => root.querySelector(`[data-wg-list="${name}"]`);
  list("models").replaceChildren(...models.map((m) => el("option", { value: m.name }, m.id)));
  list("cards").replaceChildren(...gpus.map((g) => el("option", { value: g.name })));

  // the state of a shared link, ids shown as names; then the defaults for what it leaves out
  const state = readState(prefix);
  const named = (items, v) => { const x = items.find((i) => i.id === v); return x ? x.name : v; };
  for (const name of NAMES) {
    let v = state(name);
    if (v === null) continue;
    if (name === "model") v = named(models, v);
    if (name === "card") v = named(gpus, v);
    writeField(field(name), v);
  }
  if (state("model") === null) {
    const m = models.find((x) => x.id === root.getAttribute("data-wg-default-model")) || models[0];
    if (m) field("model").value = m.name;
  }
  if (state("custom") === null && !models.length) field("custom").checked = true;
  if (state("card") === null) {
    const ref = table.reference && gpus.find((g) => g.id === table.reference.id);
    const g = ref || gpus[0];
    if (g) field("card").value = g.name;
  }

  /** Only the choices the mode and runtime allow can be picked; fields a mode does not use are off. */
  const syncControls = (raw) => {
    const custom = raw.custom === "1";
    for (const n of ARCH) field(n).disabled = !custom;
    field("experts_k").disabled = !custom || (raw.experts || "").trim() === "";
    field("kv_shared_sliding").disabled = !custom || ["", "0"].includes((raw.kv_shared || "").trim());
    const allowed = { runtime: runtimesFor(raw.mode), weights: weightsFor(raw.runtime, raw.mode), kv: kvFor(raw.runtime) };
    for (const [n, ok] of Object.entries(allowed)) for (const o of field(n).options) o.disabled = !ok.includes(o.value);
    field("kv").disabled = raw.mode !== "inference";
    field("ckpt").disabled = raw.mode === "inference";
    field("opt").disabled = raw.mode === "inference";
    field("master").disabled = raw.mode !== "full";
    field("inbwd").disabled = raw.mode !== "full";
    field("chunk").disabled = raw.mode === "inference";
    field("rank").disabled = raw.mode !== "lora" && raw.mode !== "qlora";
    field("targets").disabled = raw.mode !== "lora" && raw.mode !== "qlora";
    const offload = raw.mode === "inference" && offloads(raw.runtime);
    field("offload").disabled = !offload;
    field("offload_n").disabled = !offload || (raw.offload !== "layers" && raw.offload !== "experts");
    field("host_gb").disabled = !offload;
    field("host_bw").disabled = !offload;
    field("backend").disabled = raw.mode !== "inference" || !hasBackends(raw.runtime);
  };

  /** After the reader changes the mode or the runtime: move dependent choices to an allowed value. */
  const repair = () => {
    const mode = field("mode").value;
    if (!runtimesFor(mode).includes(field("runtime").value)) field("runtime").value = runtimesFor(mode)[0];
    const runtime = field("runtime").value;
    if (!weightsFor(runtime, mode).includes(field("weights").value)) field("weights").value = defaultWeights(runtime, mode);
    if (!kvFor(runtime).includes(field("kv").value)) field("kv").value = DEFAULTS.kv_cache;
  };

  const gib = (bytes, digits = 2) => fmt(bytes / GIB, digits);
  const offloadWhat = (layers, experts) => [layers ? msg("calc.llm.off_layers", { n: fmt(layers, 0) }) : "",
    experts ? msg("calc.llm.off_experts", { n: fmt(experts, 0) }) : ""].filter(Boolean).join(" + ");
  /** Fits, or how far it is short (on the card, in host memory) and what would make it fit. */
  const fitText = (r, limit, total) => {
    if (r.fits) return msg("calc.llm.fit_yes", { free: gib(limit - total) });
    const s = r.shortfall;
    const parts = [total > limit ? msg("calc.llm.fit_no", { over: gib(total - limit) }) : ""];
    if (s && s.host_bytes) parts.push(msg("calc.llm.short_host", { gib: gib(s.host_bytes) }));
    const fixes = ((s && s.suggestions) || []).map((x) => (x.kind === "weights" ? msg("calc.llm.fix_weights", { weights: msg(`calc.llm.w_${x.weights}`) })
      : x.kind === "context" ? msg("calc.llm.fix_context", { n: fmt(x.context, 0) })
        : x.kind === "offload" ? msg("calc.llm.fix_offload", {
          what: offloadWhat(x.offload.startsWith("layers") ? Number(x.offload.split(":")[1]) : 0,
            x.offload.startsWith("experts") ? Number(x.offload.split(":")[1]) : 0), gib: gib(x.host_bytes) })
          : msg("calc.llm.fix_gpus", { n: fmt(x.gpus, 0) })));
    if (fixes.length) parts.push(msg("calc.llm.would_fit", { list: fixes.join("; ") }));
    return parts.filter(Boolean).join(" ");
  };
  /** What waits in host memory: the offloaded part (or llama.cpp's token embeddings) in inference, the paged optimizer's state in training. */
  const hostText = (r, mem, inference) => {
    if (!mem.host_bytes) return "";
    if (!inference) return msg("calc.llm.host", { gib: gib(mem.host_bytes) });
    const off = r.offload || { host_layers: 0, expert_layers: 0 };
    if (!off.host_layers && !off.expert_layers) return msg("calc.llm.host_embeddings", { gib: gib(mem.host_bytes) });
    return msg("calc.llm.host_offload", { gib: gib(mem.host_bytes), what: offloadWhat(off.host_layers, off.expert_layers) });
  };
  const band = (entry) => {
    const b = bandText(entry);
    return msg(b.key, Object.fromEntries(Object.entries(b.params).map(([k, v]) => [k, fmt(v, k === "count" ? 0 : 1)])));
  };
  const speed = (x) => fmt(x, x >= 100 ? 0 : 1);
  const say = (w) => (w ? msg(w.key, Object.fromEntries(Object.entries(w.params).map(([k, v]) => [k, fmt(v, 0)]))) : "");
  const lines = ["o_usable", "o_fit", "o_decode", "o_prefill", "o_context"];

  const clear = () => {
    setText(out.status, msg("calc.common.fix"));
    for (const t of Object.keys(TERMS)) { setText(out[`v_${t}`], "—"); setText(out[`e_${t}`], ""); }
    setText(out.v_total, "—");
    setText(out.e_total, "");
    for (const n of lines) setText(out[n], "—");
    out.fit.replaceChildren();
  };

  const cardRow = (row, mode) => {
    const count = row.fits ? msg("calc.llm.count_fits", { n: fmt(row.count, 0) })
      : row.count ? msg("calc.llm.count_need", { n: fmt(row.count, 0) }) : msg("calc.llm.count_none", { n: fmt(MAX_CARDS, 0) });
    const sp = !row.fits || row.speed === null ? "—"
      : mode === "inference" ? speed(row.speed) : msg("calc.llm.times", { x: fmt(row.speed, 2) });
    return el("tr", row.fits ? null : { class: "wgc-nofit" },
      el("th", { scope: "row" }, el("a", { href: `${toRoot}gpus/${row.id}/` }, row.name)),
      el("td", null, fmt(row.memory_gb, 1)), el("td", null, count), el("td", null, sp));
  };

  // the layer facts the fields do not hold (state layers, windows, MLA...): those of the model or the
  // pasted config.json the custom architecture started from
  let facts = null;

  /** The fields of the architecture show the picked model; a custom one starts from them. */
  const copyArch = (model) => {
    facts = layerFacts(model);
    for (const [n, v] of Object.entries(archOf(model))) {
      if (n === "tied") field(n).checked = v === "1";
      else if (field(n).value !== v) field(n).value = v;
    }
  };

  // later: on the first drawing, run the card table in a task of its own (with the number
  // formats, made before it), so that the page's load is short tasks rather than one long one
  const update = (save, later = null) => {
    const raw = readFields(root, NAMES);
    syncControls(raw);
    const ev = evaluate(raw, { models, gpus, table, lang, facts });
    if (raw.custom !== "1" && ev.model) copyArch(ev.model);
    showErrors(root, ev.errors, msg, fmt);
    setText(out.warn_arch, say(ev.warnings.arch));
    setText(out.warn_context, say(ev.warnings.context));
    if (save) {
      const s = {};
      for (const n of NAMES) s[n] = NUMERIC.has(n) ? canonical(raw[n], lang) : raw[n];
      const m = findByName(models, raw.model).item;
      s.model = m ? m.id : raw.model.trim();
      const g = findByName(gpus, raw.card).item;
      s.card = g ? g.id : raw.card.trim();
      if (raw.custom !== "1") for (const n of ARCH) s[n] = null;
      writeState(prefix, s);
    }
    const r = ev.result;
    if (!r) {
      root.wgLast = null;
      clear();
      return null;
    }
    const o = ev.options, mem = r.memory, inference = o.mode === "inference";
    const limit = limitBytes(ev.gpu, o.runtime);
    const total = mem.total_bytes;
    setText(out.status, msg(r.fits ? "calc.llm.status_fits" : "calc.llm.status_not", { gib: gib(total), gpu: ev.gpu.name }));
    for (const [t, key] of Object.entries(TERMS)) {
      setText(out[`v_${t}`], gib(mem[key]));
      setText(out[`e_${t}`], t === "weights" ? band(r.error.weights_bytes) : msg("calc.llm.band_total"));
    }
    setText(out.v_total, gib(total));
    setText(out.e_total, band(r.error.memory));
    setText(out.o_usable, r.reserved_bytes !== null
      ? msg("calc.llm.reserved", { gpu: ev.gpu.name, usable: gib(r.usable_bytes, 1), gib: gib(r.reserved_bytes, 1) })
      : msg("calc.llm.usable", { gpu: ev.gpu.name, gib: gib(r.usable_bytes, 1) }));
    setText(out.o_fit, [fitText(r, limit, total), hostText(r, mem, inference), r.basis.front_end
      ? msg("calc.llm.front_end", { name: r.basis.front_end, runtime: r.basis.runtime }) : ""].filter(Boolean).join(" "));
    if (inference && !r.fits) {
      setText(out.o_decode, msg("calc.llm.no_speed_fit"));
      setText(out.o_prefill, "—");
      setText(out.o_context, r.max_context === null ? msg("calc.llm.max_context_none") : msg("calc.llm.max_context", { n: fmt(r.max_context, 0) }));
    } else if (inference) {
      setText(out.o_decode, r.decode_tokens_per_s === null ? "—"
        : msg("calc.llm.decode", { x: speed(r.decode_tokens_per_s), band: band(r.error.decode_tokens_per_s) }));
      setText(out.o_prefill, r.prefill_tokens_per_s === null ? "—"
        : msg("calc.llm.prefill", { x: speed(r.prefill_tokens_per_s), band: band(r.error.prefill_tokens_per_s) }));
      setText(out.o_context, r.max_context === null ? msg("calc.llm.max_context_none") : msg("calc.llm.max_context", { n: fmt(r.max_context, 0) }));
    } else {
      setText(out.o_decode, r.training_relative === null || !table.reference ? "—"
        : msg("calc.llm.relative", { x: fmt(r.training_relative, 2), ref: table.reference.name, band: band(r.error.training_relative) }));
      setText(out.o_prefill, msg("calc.llm.no_speed"));
      setText(out.o_context, msg("calc.llm.max_context_training"));
    }
    out.picker.href = `../picker/?workload=${inference ? "llm-inference" : "transformer"}&memory=${Math.ceil((total / GIB) * 100) / 100}`;
    const fillCards = () => {
      const cards = cardTable(ev.model, o, gpus, table);
      out.fit.replaceChildren(...cards.map((row) => cardRow(row, o.mode)));
      root.wgLast = { ...r, cards };
      return root.wgLast;
    };
    if (!later) return fillCards();
    later(fillCards);
    return null;
  };

  /** A pasted config.json: the page parses it (nothing is fetched) and fills the custom architecture. */
  const readConfig = () => {
    const box = root.querySelector("[data-wg-config]");
    const got = fromConfig(box.value);
    if (got.error) {
      box.setAttribute("aria-invalid", "true");
      setText(out.config_status, msg(got.error.key, got.error.params));
      return;
    }
    box.removeAttribute("aria-invalid");
    field("custom").checked = true;
    for (const [n, v] of Object.entries(got.fields)) {
      if (n === "tied") field(n).checked = v === "1";
      else field(n).value = v;
    }
    facts = got.facts;
    setText(out.config_status, msg("calc.llm.config_done", { layers: fmt(got.layers, 0), attention: fmt(got.attention, 0) }));
    update(true);
  };

  const form = root.querySelector("form");
  form.addEventListener("submit", (e) => e.preventDefault());
  root.querySelector("[data-wg-config-read]").addEventListener("click", readConfig);
  form.addEventListener("input", (e) => {
    if (e.target && e.target.hasAttribute("data-wg-config")) return;
    const name = e.target && e.target.name;
    if (name === "mode" || name === "runtime") repair();
    if (name === "model" && field("custom").checked) {
      const hit = findByName(models, e.target.value).item;
      if (hit) copyArch(hit);
    }
    update(true);
  });
  // a name typed in part and confirmed (Enter, Tab, a pick from the list) is written out in full
  form.addEventListener("change", (e) => {
    const name = e.target && e.target.name;
    if (name === "model" || name === "card") {
      const hit = findByName(name === "model" ? models : gpus, e.target.value).item;
      if (hit && e.target.value !== hit.name) e.target.value = hit.name;
    }
  });
  root.wgUpdate = (save) => update(save);
  const next = (fn) => setTimeout(fn, 0);
  // the locale's number formats are built first, in a task of their own (the first one costs most)
  next(() => {
    fmt(1.5, 2);
    next(() => update(false, next));
  });
}

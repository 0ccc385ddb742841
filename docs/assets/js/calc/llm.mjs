// Memory of a large transformer: DOM side. Formulas: formulas.mjs (llmMemory, gpusNeeded).
import { run, LLM_FIELDS, llmIgnored, gpusNeeded, GIB } from "./formulas.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, el } from "./dom.mjs";

const NAMES = Object.keys(LLM_FIELDS);
const TEXT_FIELDS = NAMES.filter((n) => !LLM_FIELDS[n].choices);
const PRESET = ["params", "layers", "hidden", "heads", "kv_heads", "head_dim"];

export function setup(root, { lang, prefix, msg, fmt, data }) {
  const out = outputs(root);
  const field = (name) => root.querySelector(`[name="${name}"]`);
  const state = readState(prefix);
  for (const name of NAMES) writeField(field(name), state(name));
  const B = msg("calc.unit.b");
  const n0 = (x) => fmt(x, 0);

  // The cards of the catalogue, smallest memory first; the rows stay, only the counts change.
  const gpus = ((data && data.gpus) || []).filter((g) => g && g.memory_gb > 0);
  const order = gpusNeeded(0, gpus);
  const toRoot = root.getAttribute("data-wg-root") || "../../";
  const cells = new Map();
  out.fit.replaceChildren(...order.map((g) => {
    const count = el("td");
    cells.set(g.id, count);
    return el("tr", null, el("th", { scope: "row" }, el("a", { href: `${toRoot}gpus/${g.id}/` }, g.name)), el("td", null, fmt(g.memory_gb, 1)), count);
  }));

  const markIgnored = (mode) => {
    const off = new Set(llmIgnored(mode));
    for (const name of NAMES) {
      const input = field(name);
      if (input) input.disabled = off.has(name);
    }
  };

  const update = (save) => {
    const raw = readFields(root, NAMES);
    markIgnored(raw.mode);
    const { errors, result } = run("llm", raw, { lang });
    root.wgLast = result;
    showErrors(root, errors, msg, fmt);
    if (save) {
      const s = {};
      for (const n of NAMES) s[n] = TEXT_FIELDS.includes(n) ? canonical(raw[n], lang) : raw[n];
      writeState(prefix, s);
    }
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      for (const k of ["weights", "gradients", "optimizer", "activations", "kv", "overhead"]) {
        setText(out[`f_${k}`], "—");
        setText(out[`n_${k}`], "");
        setText(out[`v_${k}`], "—");
      }
      setText(out.v_total, "—");
      for (const cell of cells.values()) setText(cell, "—");
      return result;
    }
    const r = result;
    const v = { ...raw };
    const P = n0(r.P), T = n0(r.T);
    const gib = (x) => fmt(x / GIB, 2);
    setText(out.status, msg("calc.llm.result", { gib: fmt(r.totalGib, 2) }));

    // weights
    let fw, nw;
    if (v.mode === "qlora") {
      fw = `P × 0.5 ${B} + P × 0.127/8 ${B} + T × 2 ${B}`;
      nw = `${P} × 0.5 + ${P} × 0.015875 + ${T} × 2 = ${n0(r.weights)} ${B}`;
    } else if (v.mode === "lora") {
      fw = `P × ${r.weightBytes} ${B} + T × 2 ${B}`;
      nw = `${P} × ${r.weightBytes} + ${T} × 2 = ${n0(r.weights)} ${B}`;
    } else {
      fw = `P × ${r.weightBytes} ${B}`;
      nw = `${P} × ${r.weightBytes} = ${n0(r.weights)} ${B}`;
    }
    const line = (k, f, n, value) => { setText(out[`f_${k}`], f); setText(out[`n_${k}`], n); setText(out[`v_${k}`], gib(value)); };
    line("weights", fw, nw, r.weights);
    if (r.training) {
      const t = v.mode === "full" ? "P" : "T";
      line("gradients", `${t} × ${r.gradBytes} ${B}`, `${T} × ${r.gradBytes} = ${n0(r.gradients)} ${B}`, r.gradients);
      const k = r.optBytes - r.master;
      line("optimizer", `${t} × (${k} + ${r.master}) ${B}`, `${T} × ${r.optBytes} = ${n0(r.optimizer)} ${B}`, r.optimizer);
      const s = n0(Number(v.seq)), b = n0(Number(v.batch)), h = n0(Number(v.hidden)), a = n0(Number(v.heads)), L = n0(Number(v.layers));
      const x = r.actScale === 2 ? "2 × " : "";
      const full = `s·b·h·(34 + 5·a·s/h)`;
      const fullN = `${s}·${b}·${h}·(34 + 5·${a}·${s}/${h})`;
      if (r.checkpointing) {
        line("activations", `${x}(L × 2·s·b·h + ${full}) ${B}`, `${x}(${L} × 2·${s}·${b}·${h} + ${fullN}) = ${n0(r.activations)} ${B}`, r.activations);
      } else {
        line("activations", `${x}L × ${full} ${B}`, `${x}${L} × ${fullN} = ${n0(r.activations)} ${B}`, r.activations);
      }
      line("kv", "0", "", 0);
    } else {
      line("gradients", "0", "", 0);
      line("optimizer", "0", "", 0);
      line("activations", "0", "", 0);
      line("kv", `2 × L × n_kv × d × s × b × ${r.kvBytes} ${B}`,
        `2 × ${n0(Number(v.layers))} × ${n0(Number(v.kv_heads))} × ${n0(Number(v.head_dim))} × ${n0(Number(v.seq))} × ${n0(Number(v.batch))} × ${r.kvBytes} = ${n0(r.kvCache)} ${B}`, r.kvCache);
    }
    line("overhead", `${fmt(r.overhead / GIB, 2)} ${msg("calc.unit.gib")}`, `${n0(r.overhead)} ${B}`, r.overhead);
    setText(out.v_total, gib(r.total));

    for (const row of gpusNeeded(r.total, gpus)) {
      const cell = cells.get(row.id);
      if (cell) setText(cell, row.fits ? msg("calc.llm.count_one") : msg("calc.llm.count", { n: fmt(row.count, 0) }));
    }
    out.picker.href = `../picker/?workload=${r.training ? "transformer" : "llm-inference"}&memory=${Math.ceil(r.totalGib * 100) / 100}`;
    return result;
  };

  const form = root.querySelector("form");
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("input", (e) => { if (!e.target.hasAttribute("data-wg-preset")) update(true); });
  form.addEventListener("change", (e) => {
    const preset = e.target.closest("[data-wg-preset]");
    if (preset) {
      const opt = preset.selectedOptions[0];
      const values = opt && opt.getAttribute("data-p");
      if (values) values.split(",").forEach((x, i) => writeField(field(PRESET[i]), x));
    }
    update(true);
  });
  root.wgUpdate = update;
  update(false);
}

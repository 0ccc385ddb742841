// Memory of a fully connected network (2015 advice): DOM side. Formulas: formulas.mjs.
import { run, DENSE_FIELDS } from "./formulas.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, wire } from "./dom.mjs";

const NAMES = Object.keys(DENSE_FIELDS);

export function setup(root, { lang, prefix, msg, fmt }) {
  const out = outputs(root);
  const state = readState(prefix);
  for (const name of NAMES) writeField(root.querySelector(`[name="${name}"]`), state(name));

  const update = (save) => {
    const raw = readFields(root, NAMES);
    const { errors, result } = run("dense", raw, { lang });
    root.wgLast = result;
    showErrors(root, errors, msg, fmt);
    if (save) writeState(prefix, { layers: raw.layers.trim(), batch: canonical(raw.batch, lang) });
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      for (const k of ["weights", "units", "total"]) setText(out[k], "—");
      out.picker.removeAttribute("data-memory");
      return result;
    }
    const r = result;
    setText(out.status, msg("calc.dense.result", { gib: fmt.auto(r.gib), bytes: fmt(r.bytes, 0) }));
    const terms = r.weightTerms.map(([a, b]) => `${fmt(a, 0)} × ${fmt(b, 0)}`).join(" + ");
    setText(out.weights, msg("calc.dense.exp_weights", { terms, value: fmt(r.weights, 0) }));
    setText(out.units, msg("calc.dense.exp_units", {
      batch: fmt(r.batch, 0), widths: r.layers.map((w) => fmt(w, 0)).join(" + "), value: fmt(r.activations, 0),
    }));
    setText(out.total, msg("calc.dense.exp_total", {
      weights: fmt(r.weights, 0), units: fmt(r.activations, 0), bytes: fmt(r.bytes, 0), gib: fmt(r.gib, 4), gb: fmt(r.gb, 4),
    }));
    const memory = Math.ceil(r.gib * 100) / 100;
    out.picker.href = `../picker/?memory=${memory}`;
    out.picker.setAttribute("data-memory", String(memory));
    return result;
  };

  wire(root, update);
}

// Memory of a convolutional network (2016 advice): DOM side. Formulas: formulas.mjs.
import { run, CNN_FIELDS, CNN_LAYER_FIELDS, CNN_MAX_LAYERS, MIB } from "./formulas.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, el } from "./dom.mjs";

const NAMES = Object.keys(CNN_FIELDS);
const CODES = { c: "conv", p: "pool", r: "reduce" };
const LETTER = { conv: "c", pool: "p", reduce: "r" };
let counter = 0;

function layerFields(li) {
  const raw = { type: li.getAttribute("data-wg-layer") };
  for (const input of li.querySelectorAll("[data-wg-lf]")) raw[input.getAttribute("data-wg-lf")] = input.value;
  return raw;
}

/** "c.32.3.1.same_p.2.2_r.16" <-> layer list; values stay raw text, validation happens in run(). */
export function encodeLayers(layers, lang) {
  return layers.map((l) => [LETTER[l.type], ...Object.keys(CNN_LAYER_FIELDS[l.type]).map((k) => (k === "padding" ? l[k] : canonical(l[k] ?? "", lang)))].join(".")).join("_");
}

/** At most one layer more than the calculator takes (so that its message shows), read before any
 *  work: an address with thousands of layers costs no more than one with 101. */
export function decodeLayers(text) {
  if (!text) return [];
  return text.split("_", CNN_MAX_LAYERS + 1).map((part) => {
    const [code, ...vals] = part.split(".");
    const type = Object.hasOwn(CODES, code) ? CODES[code] : null;  // "constructor" is no layer
    if (!type) return null;
    const layer = { type };
    Object.keys(CNN_LAYER_FIELDS[type]).forEach((k, i) => { layer[k] = vals[i] ?? ""; });
    return layer;
  }).filter(Boolean);
}

export function setup(root, { lang, prefix, msg, fmt }) {
  const out = outputs(root);
  const list = root.querySelector("[data-wg-layers]");
  const state = readState(prefix);
  for (const name of NAMES) writeField(root.querySelector(`[name="${name}"]`), state(name));

  const newRow = (type) => {
    const tpl = root.querySelector(`template[data-wg-tpl="${type}"]`);
    const li = tpl.content.firstElementChild.cloneNode(true);
    const id = `n${++counter}`;
    for (const node of li.querySelectorAll("[id], [for], [aria-describedby]")) {
      for (const attr of ["id", "for", "aria-describedby"]) {
        const v = node.getAttribute(attr);
        if (v) node.setAttribute(attr, v.replaceAll("__ID__", id));
      }
    }
    return li;
  };

  const saved = state("layers");
  if (saved !== null) {
    list.replaceChildren(...decodeLayers(saved).map((layer) => {
      const li = newRow(layer.type);
      for (const input of li.querySelectorAll("[data-wg-lf]")) writeField(input, layer[input.getAttribute("data-wg-lf")]);
      return li;
    }));
  }

  const rowsOut = out.rows;
  const update = (save) => {
    const raw = readFields(root, NAMES);
    const items = [...list.querySelectorAll(":scope > li")];
    raw.layers = items.map(layerFields);
    const { errors, result } = run("cnn", raw, { lang });
    root.wgLast = result;
    showErrors(root.querySelector("form"), errors, msg, fmt);
    items.forEach((li, i) => showErrors(li, errors, msg, fmt, (name) => `layers.${i}.${name}`, "data-wg-lerr"));
    if (save) {
      writeState(prefix, {
        batch: canonical(raw.batch, lang), height: canonical(raw.height, lang), width: canonical(raw.width, lang),
        channels: canonical(raw.channels, lang), bits: raw.bits, layers: encodeLayers(raw.layers, lang),
      });
    }
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      setText(out.input, "—");
      rowsOut.replaceChildren();
      setText(out.sum_activations, "—");
      setText(out.sum_errors, "—");
      return result;
    }
    const r = result;
    const mib = (x) => fmt(x / MIB, 2);
    setText(out.status, msg("calc.cnn.result", { mib: fmt.auto(r.totalMib), mb: fmt.auto(r.totalMb), gib: fmt.auto(r.totalGib) }));
    const first = r.rows[0];
    setText(out.input, msg("calc.cnn.exp_input", {
      batch: fmt(first.values / (first.h * first.w * first.c), 0),
      h: fmt(first.h, 0), w: fmt(first.w, 0), c: fmt(first.c, 0), bytes_per: r.bytesPer,
      bytes: fmt(r.inputBytes, 0), mb: fmt(r.inputBytes / 1e6, 2), mib: fmt(r.inputBytes / MIB, 2),
    }));
    rowsOut.replaceChildren(...r.rows.map((row, i) => el("tr", null,
      el("td", null, String(i)),
      el("td", null, msg(`calc.cnn.type_${row.type}`)),
      el("td", null, `${fmt(row.h, 0)} × ${fmt(row.w, 0)} × ${fmt(row.c, 0)}`),
      el("td", null, mib(row.activations)),
      el("td", null, mib(row.errors)),
    )));
    setText(out.sum_activations, mib(r.activations));
    setText(out.sum_errors, mib(r.errors));
    out.picker.href = `../picker/?workload=cnn&memory=${Math.ceil(r.totalGib * 100) / 100}`;
    return result;
  };

  const form = root.querySelector("form");
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("input", () => update(true));
  form.addEventListener("change", () => update(true));
  form.addEventListener("click", (e) => {
    const add = e.target.closest("[data-wg-add]");
    const remove = e.target.closest("[data-wg-remove]");
    if (add) {
      const li = newRow(add.getAttribute("data-wg-add"));
      list.append(li);
      update(true);
      const first = li.querySelector("input, select");
      if (first) first.focus();
    } else if (remove) {
      const li = remove.closest("li");
      const next = li.nextElementSibling || li.previousElementSibling;
      li.remove();
      update(true);
      const target = next ? next.querySelector("input, select") : root.querySelector("[data-wg-add]");
      if (target) target.focus();
    }
  });
  root.wgUpdate = update;
  update(false);
}

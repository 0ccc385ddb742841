// whichgpu calculators: every formula, as pure functions (no DOM, no text).
//
// Checked against the golden cases in each calculator's folder (cases.json). Python keeps only the
// memory and cloud formulas, for the worked examples the pages print (generator/facts/calc.py).
// Inputs arrive as the strings a reader typed, so parsing and validation are part of the
// contract: an invalid field yields a message key
// (calc.err.*) and parameters, never a NaN or an Infinity.
import { PICKER_FIELDS, rankGpus } from "./ranking.mjs";

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;

// the GPU picker's ranking lives in ranking.mjs; its names are this module's too
export * from "./ranking.mjs";

// ------------------------------------------------------------------ parsing and validation

const SPACES = /[ \t\n\r\u00a0\u2009\u202f_]/g;
const NUMBER = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

const MARKS = new Map();

/** The decimal mark of a language as the page's own number formatting writes it (Intl, which
 *  also prints the results); the locale table's `decimal` (generator/data/locales.py) is the same
 *  for every language of the site (tests/test_locales.py checks). No language: a point. */
export function decimalMark(lang) {
  if (!lang) return ".";
  let mark = MARKS.get(lang);
  if (mark === undefined) {
    try {
      const part = new Intl.NumberFormat(lang).formatToParts(1.5).find((p) => p.type === "decimal");
      mark = part ? part.value : ".";
    } catch (e) {
      mark = ".";  // not a language tag
    }
    MARKS.set(lang, mark);
  }
  return mark;
}

/** Text as typed -> plain "123.45" form. A language with a decimal comma takes one; elsewhere a
 *  comma groups thousands. */
export function normalizeNumber(raw, lang) {
  let t = String(raw ?? "").trim().replace(SPACES, "");
  if (decimalMark(lang) === ",") {
    if (!t.includes(".") && (t.match(/,/g) || []).length === 1) t = t.replace(",", ".");
  } else {
    t = t.replace(/,(?=[0-9]{3}(?![0-9]))/g, "");
  }
  return t;
}

function fail(key, params) {
  return { ok: false, error: { key, params: params || {} } };
}

/**
 * One number field. spec: {min, minExclusive, max, integer, optional}.
 * Returns {ok: true, value} or {ok: false, error: {key, params}}.
 */
export function parseField(raw, spec, lang) {
  const text = normalizeNumber(raw, lang);
  if (text === "") return spec.optional ? { ok: true, value: null } : fail("calc.err.required");
  if (!NUMBER.test(text)) return fail("calc.err.number");
  const value = Number(text);
  if (!Number.isFinite(value)) return fail("calc.err.max", { max: spec.max });
  if (spec.integer && !Number.isInteger(value)) return fail("calc.err.integer");
  const min = spec.min ?? 0;
  if (spec.minExclusive ? value <= min : value < min) {
    if (min === 0) return fail(spec.minExclusive ? "calc.err.positive" : "calc.err.negative");
    if (min === 1 && spec.integer && value <= 0) return fail("calc.err.positive");
    return fail("calc.err.min", { min });
  }
  if (value > spec.max) return fail("calc.err.max", { max: spec.max });
  return { ok: true, value };
}

/** A choice field: the raw value must be one of spec.choices. */
export function parseChoice(raw, spec) {
  const value = String(raw ?? "").trim();
  if (value === "") return fail("calc.err.required");
  return spec.choices.includes(value) ? { ok: true, value } : fail("calc.err.choice");
}

const LIST_SPLIT = /[\s,;x×*]+/;

/** A list of whole numbers such as "9000, 4000, 4000, 32" (commas, spaces, x or ; between them). */
export function parseIntList(raw, spec) {
  const text = String(raw ?? "").trim();
  if (text === "") return fail("calc.err.required");
  const items = text.split(LIST_SPLIT).filter((s) => s !== "");
  if (items.length === 0) return fail("calc.err.required");
  const values = [];
  for (const item of items) {
    if (!/^[0-9]+$/.test(item)) return fail("calc.err.list_item", { item: item.slice(0, 20) });
    const v = Number(item);
    if (v < spec.min) return fail("calc.err.list_min", { min: spec.min });
    if (v > spec.max) return fail("calc.err.list_max", { max: spec.max });
    values.push(v);
  }
  if (values.length < spec.minItems) return fail("calc.err.list_short", { min: spec.minItems });
  if (values.length > spec.maxItems) return fail("calc.err.list_long", { max: spec.maxItems });
  return { ok: true, value: values };
}

function parseAll(raw, specs, lang) {
  const values = {};
  const errors = {};
  for (const [name, spec] of Object.entries(specs)) {
    let r;
    if (spec.choices) r = parseChoice(raw[name], spec);
    else if (spec.list) r = parseIntList(raw[name], spec);
    else r = parseField(raw[name], spec, lang);
    if (r.ok) values[name] = r.value;
    else errors[name] = r.error;
  }
  return { values, errors };
}

// ------------------------------------------------------------------ 1. dense networks (2015)

export const DENSE_FIELDS = {
  layers: { list: true, min: 1, max: 1e6, minItems: 2, maxItems: 200 },
  batch: { integer: true, min: 1, max: 1e6 },
};

/** 12 bytes per number (the 2015 article): memory = 12 × (Σ weight matrices + batch × Σ widths) bytes. */
export function denseMemory(layers, batch) {
  const weightTerms = [];
  let weights = 0;
  for (let i = 0; i + 1 < layers.length; i++) {
    const n = layers[i] * layers[i + 1];
    weightTerms.push([layers[i], layers[i + 1], n]);
    weights += n;
  }
  const units = layers.reduce((a, b) => a + b, 0);
  const activations = batch * units;
  const numbers = weights + activations;
  const bytes = 12 * numbers;
  return { layers, batch, weightTerms, weights, units, activations, numbers, bytes, gib: bytes / GIB, gb: bytes / 1e9 };
}

// ------------------------------------------------------------------ 2. convolutional networks (2016)

export const CNN_FIELDS = {
  batch: { integer: true, min: 1, max: 1e5 },
  height: { integer: true, min: 1, max: 1e5 },
  width: { integer: true, min: 1, max: 1e5 },
  channels: { integer: true, min: 1, max: 1e5 },
  bits: { choices: ["32", "16"] },
};
export const CNN_LAYER_FIELDS = {
  conv: {
    kernels: { integer: true, min: 1, max: 1e5 },
    size: { integer: true, min: 1, max: 1e4 },
    stride: { integer: true, min: 1, max: 1e4 },
    padding: { choices: ["same", "valid"] },
  },
  pool: {
    size: { integer: true, min: 1, max: 1e4 },
    stride: { integer: true, min: 1, max: 1e4 },
  },
  reduce: {
    kernels: { integer: true, min: 1, max: 1e5 },
  },
};
export const CNN_MAX_LAYERS = 100;

/** Output height or width of one layer; 0 when the window does not fit. */
export function cnnOutSize(layer, size) {
  if (layer.type === "reduce") return size;
  if (layer.type === "conv" && layer.padding === "same") return Math.ceil(size / layer.stride);
  if (size < layer.size) return 0;
  return Math.floor((size - layer.size) / layer.stride) + 1;
}

/**
 * Activations and errors, layer by layer: each layer's output holds batch × H × W × C values
 * (its activations) and as many errors in the backward pass. The input has activations only.
 */
export function cnnMemory(input, layers) {
  const bytesPer = input.bits === 16 || input.bits === "16" ? 2 : 4;
  const b = input.batch;
  let h = input.height, w = input.width, c = input.channels;
  const inputValues = b * h * w * c;
  const rows = [{ type: "input", h, w, c, values: inputValues, activations: inputValues * bytesPer, errors: 0 }];
  let empty = -1;
  layers.forEach((layer, i) => {
    h = cnnOutSize(layer, h);
    w = cnnOutSize(layer, w);
    if (layer.type !== "pool") c = layer.kernels;
    if ((h === 0 || w === 0) && empty < 0) empty = i;
    const values = b * h * w * c;
    rows.push({ type: layer.type, h, w, c, values, activations: values * bytesPer, errors: values * bytesPer });
  });
  let activations = 0, errors = 0;
  for (const r of rows) { activations += r.activations; errors += r.errors; }
  const total = activations + errors;
  return {
    bytesPer, rows, activations, errors, total, empty,
    inputBytes: rows[0].activations,
    totalMib: total / MIB, totalMb: total / 1e6, totalGib: total / GIB,
  };
}

function parseCnnLayers(rawLayers, lang) {
  const layers = [];
  const errors = {};
  const list = Array.isArray(rawLayers) ? rawLayers : [];
  if (list.length > CNN_MAX_LAYERS) errors.layers = { key: "calc.err.list_long", params: { max: CNN_MAX_LAYERS } };
  list.slice(0, CNN_MAX_LAYERS).forEach((raw, i) => {
    const type = raw && Object.hasOwn(CNN_LAYER_FIELDS, raw.type) ? raw.type : null;
    if (!type) { errors[`layers.${i}.type`] = { key: "calc.err.choice", params: {} }; return; }
    const specs = CNN_LAYER_FIELDS[type];
    const { values, errors: errs } = parseAll(raw, specs, lang);
    for (const [k, e] of Object.entries(errs)) errors[`layers.${i}.${k}`] = e;
    layers.push({ type, ...values });
  });
  return { layers, errors };
}

// ------------------------------------------------------------------ 4. GPU picker: ranking.mjs

// ------------------------------------------------------------------ decision tree (2023)

export function isLeaf(node) {
  return !!node && typeof node === "object" && !("question" in node);
}

/** The node reached by answers such as "yny" (y = yes, n = no); null for a path the tree lacks. */
export function treeAt(tree, path) {
  let node = tree;
  for (const ch of String(path || "")) {
    if (!node || isLeaf(node)) return null;
    if (ch === "y") node = node.if_yes;
    else if (ch === "n") node = node.if_no;
    else return null;
  }
  return node || null;
}

// ------------------------------------------------------------------ 5. desktop or cloud (2020)

// A desktop for deep learning costs at least this much (USD), an hour of a cloud GPU at least a
// cent: below, the break-even is meaningless (a price of 1e-320 gave "0 days").
export const CLOUD_MIN_DESKTOP = 100;
export const CLOUD_MIN_HOURLY = 0.01;
export const CLOUD_FIELDS = {
  desktop: { min: CLOUD_MIN_DESKTOP, max: 1e7 },
  gpu_w: { min: 0, minExclusive: true, max: 1e5 },
  system_w: { min: 0, max: 1e5 },
  kwh: { min: 0, max: 100 },
  util: { min: 0, minExclusive: true, max: 100 },
  cloud: { min: CLOUD_MIN_HOURLY, max: 1e5 },
  spot: { min: CLOUD_MIN_HOURLY, max: 1e5 },
};
export const DAYS_PER_MONTH = 365.25 / 12;

/**
 * Desktop against cloud at the same use: the desktop costs its price plus electricity, the cloud
 * its hourly price for the hours used. Break-even day d: desktop + d × power per day = cloud per day × d.
 */
export function cloudBreakEven(v) {
  const u = v.util / 100;
  const kwhYear = ((v.gpu_w + v.system_w) / 1000) * u * 24 * 365;
  const powerYear = kwhYear * v.kwh;
  const powerDay = powerYear / 365;
  const cloudDay = v.cloud * u * 24;
  const spotDay = v.spot * u * 24;
  const days = (perDay) => (perDay > powerDay ? v.desktop / (perDay - powerDay) : null);
  const d = days(cloudDay), ds = days(spotDay);
  return {
    kwhYear, powerYear, powerDay, desktopFirstYear: v.desktop + powerYear,
    cloudDay, cloudYear: cloudDay * 365, spotDay, spotYear: spotDay * 365,
    days: d, months: d === null ? null : d / DAYS_PER_MONTH,
    spotDays: ds, spotMonths: ds === null ? null : ds / DAYS_PER_MONTH,
  };
}

// ------------------------------------------------------------------ one entry point per calculator

/**
 * Validate raw inputs and compute. Returns {errors, result}: errors maps a field (for CNN layers
 * "layers.<i>.<field>") to {key, params}; result is null whenever errors is not empty.
 */
export function run(name, raw, opts = {}) {
  const lang = opts.lang;
  raw = raw || {};
  if (name === "dense") {
    const { values, errors } = parseAll(raw, DENSE_FIELDS, lang);
    return done(errors, () => denseMemory(values.layers, values.batch));
  }
  if (name === "cnn") {
    const { values, errors } = parseAll(raw, CNN_FIELDS, lang);
    const parsed = parseCnnLayers(raw.layers, lang);
    Object.assign(errors, parsed.errors);
    if (Object.keys(errors).length) return { errors, result: null };
    const result = cnnMemory({ ...values, bits: Number(values.bits) }, parsed.layers);
    if (result.empty >= 0) return { errors: { [`layers.${result.empty}.size`]: { key: "calc.err.layer_empty", params: {} } }, result: null };
    return { errors, result };
  }
  if (name === "picker") {
    const data = opts.data || { gpus: [], revisions: [] };
    const { values, errors } = parseAll(raw, PICKER_FIELDS, lang);
    const dates = (data.revisions || []).map((r) => r.date).concat(data.today ? ["today"] : []);
    const rev = String(raw.revision ?? "").trim();
    if (rev !== "" && !dates.includes(rev)) errors.revision = { key: "calc.err.choice", params: {} };
    values.revision = rev || null;
    return done(errors, () => rankGpus(data, values));
  }
  if (name === "cloud") {
    const { values, errors } = parseAll(raw, CLOUD_FIELDS, lang);
    // a spot instance is the same machine at a discount: dearer than on demand is a typing slip
    if (!errors.cloud && !errors.spot && values.spot > values.cloud) errors.spot = { key: "calc.err.spot_above", params: { max: values.cloud } };
    return done(errors, () => cloudBreakEven(values));
  }
  throw new Error(`unknown calculator ${name}`);
}

function done(errors, compute) {
  if (Object.keys(errors).length) return { errors, result: null };
  return { errors, result: compute() };
}

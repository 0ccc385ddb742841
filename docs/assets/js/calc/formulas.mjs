// whichgpu calculators: every formula, as pure functions (no DOM, no text).
//
// Checked against the golden cases in each calculator's folder (cases.json). Python keeps only the
// memory and cloud formulas, for the worked examples the pages print (generator/facts/calc.py).
// Inputs arrive as the strings a reader typed, so parsing and validation are part of the
// contract: an invalid field yields a message key
// (calc.err.*) and parameters, never a NaN or an Infinity.

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;

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

// ------------------------------------------------------------------ 4. GPU picker

// The one vocabulary of workloads (generator/data/schema.py WORKLOADS): the home form, the picker and
// /today/ read the same keys. A revision speaks of four of them; the others read as the nearest.
export const WORKLOADS = ["cnn", "rnn", "transformer", "llm-inference", "llm-32b", "llm-70b", "memory"];
export const ADVISED_AS = { cnn: "cnn", rnn: "rnn", transformer: "transformer", "llm-inference": "llm-inference",
  "llm-32b": "llm-inference", "llm-70b": "llm-inference", memory: "transformer" };
export const WORKLOAD_NETWORK = { cnn: "cnn", rnn: "rnn", transformer: "transformer", "llm-inference": "transformer",
  "llm-32b": "transformer", "llm-70b": "transformer", memory: "transformer" };
/** Which relative-performance table of a revision speaks for each workload, best match first. */
export const WORKLOAD_TABLES = {
  cnn: ["cnn", "overall"],
  rnn: ["rnn", "overall"],
  transformer: ["transformer", "training-16bit", "overall"],
  "llm-inference": ["inference-8bit", "transformer", "overall"],
  "llm-32b": ["inference-8bit", "transformer", "overall"],
  "llm-70b": ["inference-8bit", "transformer", "overall"],
  memory: ["transformer", "overall"],
};
/** Order used when a revision states no priorities for the network. */
export const DEFAULT_ORDER = ["memory-bandwidth", "tensor-cores", "flops"];

export const PICKER_FIELDS = {
  workload: { choices: WORKLOADS },
  memory: { min: 0, minExclusive: true, max: 4096 },
  budget: { min: 0, minExclusive: true, max: 1e7 },
  prices: { choices: ["new", "used"] },
};

/** The spec figure that stands for a feature of a priority order; null when the card lacks it. */
export function featureValue(gpu, feature) {
  const pos = (x) => (typeof x === "number" && x > 0 ? x : null);
  switch (feature) {
    case "tensor-cores":
    case "fp16-capability":
      return pos(gpu.fp16_tensor_tflops) ?? pos(gpu.fp32_tflops);
    case "flops": return pos(gpu.fp32_tflops);
    case "memory-bandwidth": return pos(gpu.memory_bandwidth_gbs);
    case "memory-size": return pos(gpu.memory_gb);
    default: return null;
  }
}

/** Rank weights: n, n-1, ... 1 for the features of an order, normalised to sum to 1. */
export function orderWeights(order) {
  const n = order.length;
  const sum = (n * (n + 1)) / 2;
  return order.map((_, i) => (n - i) / sum);
}

/** Weighted geometric mean of the features of `order`; null when a figure is missing. */
export function specScore(gpu, order, weights) {
  let log = 0;
  for (let i = 0; i < order.length; i++) {
    const v = featureValue(gpu, order[i]);
    if (v === null) return null;
    log += weights[i] * Math.log(v);
  }
  return Math.exp(log);
}

/**
 * The price a view gives a card: its quote for the basis ("used" falls back to "new"), else the
 * card's launch price. The quotes come from the build (generator/picker.py).
 */
export function viewPrice(gpu, view, basis) {
  const q = view && view.quotes && view.quotes[gpu.id];
  const chosen = q && ((basis === "used" && q.used) || q.new);
  if (chosen) return { usd: chosen[0], source: chosen[1], date: chosen[2] };
  if (typeof gpu.launch_price_usd === "number" && gpu.launch_price_usd > 0) return { usd: gpu.launch_price_usd, source: "catalogue", date: null };
  return null;
}

export function revisionByDate(data, date) {
  const revs = (data && data.revisions) || [];
  if (!date) return revs.length ? revs[revs.length - 1] : null;
  return revs.find((r) => r.date === date) || null;
}

function isoDate(x) {
  return typeof x === "string" ? x.slice(0, 10) : "";
}

/** The reference card: the table's, the advice's best overall, its first recommended card, else the best-scoring card released by then. */
function referenceCard(gpus, table, view, advised, order, weights, date) {
  const first = (advised.find((a) => a.role === "recommended") || {}).gpu;
  for (const id of [table && table.reference, view.best, first]) {
    const g = id ? gpus.find((x) => x.id === id) : null;
    const s = g ? specScore(g, order, weights) : null;
    if (s !== null) return { id, score: s };
  }
  let ref = { id: null, score: null };
  for (const g of gpus) {
    if (isoDate(g.release_date) > date) continue;
    const s = specScore(g, order, weights);
    if (s !== null && (ref.score === null || s > ref.score)) ref = { id: g.id, score: s };
  }
  return ref;
}

const skippedCounts = () => ({ tooNew: 0, noPrice: 0, tooSmall: 0, overBudget: 0, noPerf: 0 });
const cmpId = (x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);

/**
 * Cards that fit the memory and the budget, in the view of one revision: the cards it advised
 * first (recommended, then alternatives), then the others; within each, by performance per
 * dollar; cards it advised against, or of a vendor it advised against, last and flagged.
 * Performance is the revision's own figure where its tables have one ("revision"), else a
 * spec-based estimate that follows its priority order ("estimate"), relative to the same card.
 */
export function rankGpus(data, v) {
  if (v.revision === "today") return rankToday(data, v);
  const rev = revisionByDate(data, v.revision);
  if (!rev) return null;
  const date = isoDate(rev.date);
  const view = ((data && data.picker) || {})[date] || {};
  const gpus = (data.gpus || []).filter((g) => g && typeof g.id === "string");
  let table = null;
  for (const w of WORKLOAD_TABLES[v.workload]) {
    table = (view.tables || []).find((t) => t.workload === w) || null;
    if (table) break;
  }
  const network = WORKLOAD_NETWORK[v.workload];
  const prio = (view.priorities || []).find((p) => p.network === network);
  const order = prio ? prio.order.slice() : DEFAULT_ORDER.slice();
  const weights = orderWeights(order);
  const advisedList = (view.advised || {})[ADVISED_AS[v.workload]] || [];
  const ref = referenceCard(gpus, table, view, advisedList, order, weights, date);
  const advised = new Map(advisedList.map((a) => [a.gpu, a]));
  const avoid = new Set(view.avoid || []), avoidVendors = new Set(view.avoid_vendors || []);
  const values = table ? table.values : {};
  const rows = [], skipped = skippedCounts();
  for (const g of gpus) {
    if (isoDate(g.release_date) > date) { skipped.tooNew++; continue; }
    if (!(g.memory_gb >= v.memory)) { skipped.tooSmall++; continue; }
    const a = advised.get(g.id) || null;
    const price = viewPrice(g, view, v.prices === "used" || (a && a.used) ? "used" : "new");
    if (!price) { skipped.noPrice++; continue; }
    if (price.usd > v.budget) { skipped.overBudget++; continue; }
    let perf, source;
    if (Object.prototype.hasOwnProperty.call(values, g.id)) {
      perf = values[g.id];
      source = "revision";
    } else {
      const s = ref.score ? specScore(g, order, weights) : null;
      if (s === null) { skipped.noPerf++; continue; }
      perf = s / ref.score;
      source = "estimate";
    }
    const flag = avoid.has(g.id) ? "avoid" : avoidVendors.has(g.vendor) ? "vendor" : null;
    rows.push({
      id: g.id, name: g.name, memory_gb: g.memory_gb, price: price.usd, priceSource: price.source, priceDate: price.date,
      perf, perfSource: source, value: (perf / price.usd) * 1000, flag, avoided: flag !== null,
      advised: a ? a.role : null, advisedUsed: !!(a && a.used), personas: a ? a.personas.slice() : [],
    });
  }
  const role = (r) => (r.advised === "recommended" ? 0 : r.advised === "alternative" ? 1 : 2);
  rows.sort((x, y) => (x.flag !== null) - (y.flag !== null) || role(x) - role(y) || y.value - x.value || y.perf - x.perf || cmpId(x, y));
  return {
    mode: "revision", revision: date, table: table ? table.workload : null, reference: ref.id, order, weights,
    advisedFrom: view.advised_from || null, rows, skipped,
  };
}

/**
 * Today's cards that fit the memory and the budget, by the estimation model's figure per dollar:
 * the workload's figure (training throughput, decode speed of a model of the chosen size, or
 * memory) over the buyer's price (the cheaper of new and used) plus the electricity of the
 * ownership period. Cards today's software does not run are left out. The site's computation,
 * never a revision's advice.
 */
export function rankToday(data, v) {
  const today = (data && data.today) || {};
  const names = new Map(((data && data.gpus) || []).map((g) => [g.id, g.name]));
  const vendors = new Map(((data && data.gpus) || []).map((g) => [g.id, g.vendor]));
  const figureOf = today.figure_of || {};
  const figure = Object.prototype.hasOwnProperty.call(figureOf, v.workload) ? figureOf[v.workload] : "training";
  const metric = figure.startsWith("decode_") ? "decode" : figure === "memory" ? "memory" : "training";
  const elec = today.electricity || {};
  const usdPerKwh = typeof v.electricity === "number" && v.electricity >= 0 ? v.electricity : elec.usd_per_kwh || 0;
  const rows = [], skipped = { ...skippedCounts(), software: 0 };
  for (const r of today.rows || []) {
    if (!(r.memory_gb >= v.memory)) { skipped.tooSmall++; continue; }
    if (r.support && r.support !== "current") { skipped.software++; continue; }
    const buy = r.buy;
    if (!buy) { skipped.noPrice++; continue; }
    if (buy[0] > v.budget) { skipped.overBudget++; continue; }
    const f = (r.figures || {})[figure];
    const perf = typeof f === "number" && f > 0 ? f : null;
    if (perf === null) { skipped.noPerf++; continue; }
    const cost = buy[0] + (r.kwh || 0) * usdPerKwh;
    const name = names.get(r.gpu) || r.gpu;
    // a card PyTorch runs through ROCm, XPU or Metal: its figures come from specifications only
    const viaCuda = vendors.get(r.gpu) === "nvidia";
    rows.push({
      id: r.gpu, count: r.count || 1, name: (r.count || 1) > 1 ? `${r.count} × ${name}` : name, memory_gb: r.memory_gb,
      price: buy[0], priceSource: buy[2] === "used" ? "observed-used" : "observed-new", priceDate: buy[1], stale: !!r.stale,
      perf, perfSource: "model", value: (perf / cost) * (figure === "memory" ? 100 : 1000), flag: viaCuda ? null : "software", avoided: false,
      advised: null, advisedUsed: false, personas: [],
    });
  }
  rows.sort((x, y) => y.value - x.value || y.perf - x.perf || x.count - y.count || cmpId(x, y));
  return {
    mode: "today", revision: "today", metric, figure, newest: today.newest || null,
    model: ((today.models || {})[figure]) || today.model || null,
    error: (today.errors || {})[metric === "memory" ? "training" : metric] || null, reference: today.reference || null, rows, skipped,
  };
}

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

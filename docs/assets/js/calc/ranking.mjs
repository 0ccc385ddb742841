// The GPU picker's ranking (calculator 4): the workloads, the picker's fields, and the cards of
// one revision's view, or today's, ranked by performance per dollar. Pure functions, no DOM, no
// text; formulas.mjs re-exports every name and runs it (run("picker", ...)). Checked against
// the picker's golden cases (templates/pages/site/calculators/picker/cases.json).

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

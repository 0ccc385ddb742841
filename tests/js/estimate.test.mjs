// Golden cases of tests/fixtures/estimate.json against docs/assets/js/calc/estimate.mjs.
// Run with `node --test tests/js/estimate.test.mjs` (tests/test_estimate.py runs it too).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as E from "../../docs/assets/js/calc/estimate.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/estimate.json", import.meta.url), "utf8"));

function close(actual, expected, tol, where) {
  if (typeof expected === "number") {
    assert.equal(typeof actual, "number", `${where}: expected a number, got ${actual}`);
    assert.ok(Number.isFinite(actual), `${where}: not finite`);
    assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${where}: ${actual} != ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), where);
    expected.forEach((e, i) => close(actual[i], e, tol, `${where}[${i}]`));
  } else if (expected && typeof expected === "object") {
    assert.ok(actual && typeof actual === "object", `${where}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [k, e] of Object.entries(expected)) close(actual[k], e, tol, `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

const modelOf = (c) => (typeof c.model === "string" ? fixture.models[c.model] : c.model);

for (const c of fixture.cases) {
  test(`estimate: ${c.id}`, () => {
    const out = E.run(modelOf(c), fixture.gpus[c.gpu], c.options, fixture.table);
    if (c.error) {
      assert.equal(out.result, null);
      assert.deepEqual(out.errors, [c.error]);
      return;
    }
    assert.deepEqual(out.errors, []);
    close(out.result, c.expect, fixture.tolerance, c.id);
  });
}

for (const c of fixture.relative) {
  test(`training relative: ${c.id}`, () => {
    // the figure of `estimate --training-relative` (Python's training_relative_only), from the same table
    const out = E.relativeTraining(fixture.gpus[c.gpu], fixture.table.reference, fixture.table.constants.relative ?? null);
    close(out, c.expect, fixture.tolerance, c.id);
  });
}

test("QLoRA < LoRA < full for every model of the fixture", () => {
  for (const model of Object.values(fixture.models)) {
    const total = (mode) => E.estimate(model, fixture.gpus["h100-sxm"], { mode, context: 2048 }, fixture.table).memory.total_bytes;
    assert.ok(total("qlora") < total("lora"), model.id);
    assert.ok(total("lora") < total("full"), model.id);
  }
});

test("every weight format and KV precision has a golden case", () => {
  for (const w of Object.keys(E.WEIGHT_FORMATS)) {
    assert.ok(fixture.cases.some((c) => c.expect && c.expect.basis.weights === w), w);
  }
  for (const kv of Object.keys(E.KV_BYTES)) {
    assert.ok(fixture.cases.some((c) => c.expect && (c.options.kv_cache || "f16") === kv), kv);
  }
});

// Every exported function against its Python twin: tests/fixtures/estimate_functions.json holds
// what generator/estimate returns for each call (rewrite it with tests/fixtures/update_estimate_functions.py).
const functions = JSON.parse(readFileSync(new URL("../fixtures/estimate_functions.json", import.meta.url), "utf8"));

function resolveArg(arg) {
  if (Array.isArray(arg)) return arg.map(resolveArg);
  if (typeof arg !== "string" || !arg.startsWith("@")) return arg;
  const at = arg.indexOf(":");
  const kind = at < 0 ? arg.slice(1) : arg.slice(1, at), name = arg.slice(at + 1);
  if (kind === "model") return fixture.models[name];
  if (kind === "gpu") return fixture.gpus[name];
  if (kind === "options") return E.resolveOptions(JSON.parse(name));
  return kind === "table" ? fixture.table : fixture.table[kind];
}

function callJs(fn, args) {
  try {
    const value = E[fn](...args.map(resolveArg));
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  } catch (exc) {
    if (exc instanceof E.EstimateError) return { error: { key: exc.key, params: exc.params } };
    throw exc;
  }
}

// the same keys and values (numbers within 1e-12: the two languages may round the last bit apart)
function same(actual, expected, where) {
  if (typeof expected === "number") {
    assert.equal(typeof actual, "number", `${where}: ${actual}`);
    assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${where}: ${actual} != ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${where}: ${JSON.stringify(actual)}`);
    expected.forEach((e, i) => same(actual[i], e, `${where}[${i}]`));
  } else if (expected && typeof expected === "object") {
    assert.ok(actual && typeof actual === "object", `${where}: ${JSON.stringify(actual)}`);
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), where);
    for (const [k, e] of Object.entries(expected)) same(actual[k], e, `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

const byFunction = Map.groupBy ? Map.groupBy(functions.calls, (c) => c.fn)
  : functions.calls.reduce((m, c) => m.set(c.fn, [...(m.get(c.fn) || []), c]), new Map());
for (const [fn, calls] of byFunction) {
  test(`twin of Python: ${fn}`, () => {
    calls.forEach((c, i) => same(callJs(fn, c.args), c.expect, `${fn} #${i}`));
  });
}

test("every exported function has calls in estimate_functions.json", () => {
  const isClass = (v) => /^class\b/.test(Function.prototype.toString.call(v));
  const exported = Object.keys(E).filter((k) => typeof E[k] === "function" && !isClass(E[k]));
  assert.deepEqual(exported.filter((k) => !byFunction.has(k)), []);
});

// estimate.mjs is the engine's one entry: it re-exports every name of the modules it is made of
// (the twins of generator/estimate/'s modules), save the helpers formats.mjs keeps for them.
test("estimate.mjs re-exports every name of the engine's modules", async () => {
  const internal = new Set(["RUNTIME", "num", "isGguf", "isMla"]);
  for (const name of ["formats", "architecture", "memory", "speed", "offload"]) {
    const M = await import(`../../docs/assets/js/calc/${name}.mjs`);
    const missing = Object.keys(M).filter((k) => !internal.has(k) && E[k] !== M[k]);
    assert.deepEqual(missing, [], `${name}.mjs`);
  }
  assert.deepEqual([...internal].filter((k) => k in E), []);
});

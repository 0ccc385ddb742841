// Golden cases of every calculator (templates/pages/site/calculators/<id>/cases.json, with the
// shared catalogue of tests/fixtures/calculators.json) against docs/assets/js/calc/formulas.mjs.
// Run with `node --test tests/js/` (tests/test_calculators.py does, so `make test` covers it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as F from "../../docs/assets/js/calc/formulas.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/calculators.json", import.meta.url), "utf8"));
const folders = new URL("../../templates/pages/site/calculators/", import.meta.url);
fixture.cases = readdirSync(folders, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(new URL(`${d.name}/cases.json`, folders)))
  .sort((a, b) => (a.name < b.name ? -1 : 1))
  .flatMap((d) => JSON.parse(readFileSync(new URL(`${d.name}/cases.json`, folders), "utf8")));

function at(obj, path) {
  if (path === "ranking") return obj.rows.map((r) => r.id);
  let cur = obj;
  for (const part of path.split(".")) {
    if (cur === null || cur === undefined) return undefined;
    cur = cur[part];
  }
  return cur;
}

function close(actual, expected, tol, where) {
  if (typeof expected === "number") {
    assert.equal(typeof actual, "number", `${where}: expected a number, got ${actual}`);
    assert.ok(Number.isFinite(actual), `${where}: not finite`);
    assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${where}: ${actual} != ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: expected a list, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${where}: length`);
    expected.forEach((e, i) => close(actual[i], e, tol, `${where}[${i}]`));
  } else if (expected && typeof expected === "object") {
    for (const [k, e] of Object.entries(expected)) close(actual?.[k], e, tol, `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

function treeCase(data, path) {
  // the newest revision that gives its advice as a decision tree
  const rev = data.revisions.findLast((r) => r && r.decision_tree);
  const node = F.treeAt(rev.decision_tree, path);
  return { revision: rev.date, leaf: F.isLeaf(node), node };
}

function finiteEverywhere(value, where) {
  if (typeof value === "number") assert.ok(Number.isFinite(value), `${where} is ${value}`);
  else if (Array.isArray(value)) value.forEach((v, i) => finiteEverywhere(v, `${where}[${i}]`));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) finiteEverywhere(v, `${where}.${k}`);
}

for (const c of fixture.cases) {
  test(`${c.calc}: ${c.id}`, () => {
    const tol = c.tol ?? fixture.tolerance;
    if (c.calc === "tree") {
      const got = treeCase(fixture.data, c.input.path);
      for (const [path, expected] of Object.entries(c.expect)) close(at(got, path), expected, tol, path);
      return;
    }
    const out = F.run(c.calc, c.input, { lang: c.lang || "en", data: fixture.data });
    if (c.errors) {
      assert.equal(out.result, null);
      assert.deepEqual(out.errors, c.errors);
      return;
    }
    assert.deepEqual(out.errors, {}, `unexpected errors ${JSON.stringify(out.errors)}`);
    finiteEverywhere(out.result, "result");
    for (const [path, expected] of Object.entries(c.expect)) close(at(out.result, path), expected, tol, path);
  });
}

test("every calculator appears in the golden cases, with good and bad inputs", () => {
  const calcs = new Set(fixture.cases.map((c) => c.calc).filter((calc) => calc !== "tree"));  // the tree's cases are walks
  assert.ok(calcs.size >= 4, [...calcs].join(", "));
  for (const calc of calcs) {
    assert.ok(fixture.cases.some((c) => c.calc === calc && c.expect), `${calc}: no result case`);
    assert.ok(fixture.cases.some((c) => c.calc === calc && c.errors), `${calc}: no error case`);
  }
});

test("number parsing follows the reader's language", () => {
  assert.equal(F.decimalMark("fr"), ",");
  assert.equal(F.decimalMark("en"), ".");
  assert.equal(F.decimalMark(undefined), ".");
  assert.equal(F.decimalMark("not a tag!"), ".");
  assert.equal(F.normalizeNumber("1,234.5", undefined), "1234.5");
  assert.equal(F.normalizeNumber("1 234,5", "fr"), "1234.5");
  assert.equal(F.normalizeNumber("1\u202f234,5", "fr"), "1234.5");
  assert.equal(F.normalizeNumber("1,234.5", "en"), "1234.5");
  assert.equal(F.normalizeNumber("0.12", "fr"), "0.12");
  assert.deepEqual(F.parseField("12", { min: 0, max: 10 }, "en"), { ok: false, error: { key: "calc.err.max", params: { max: 10 } } });
  assert.deepEqual(F.parseField("", { min: 0, max: 10, optional: true }, "en"), { ok: true, value: null });
});

test("ranking 10,000 synthetic GPUs stays finite and ordered", () => {
  const gpus = [];
  for (let i = 0; i < 10000; i++) {
    gpus.push({ id: `g-${i}`, name: `G ${i}`, release_date: "2018-01-01", memory_gb: 4 + (i % 40),
      memory_bandwidth_gbs: 100 + (i % 900), fp32_tflops: 1 + (i % 30), fp16_tensor_tflops: i % 3 ? 10 + (i % 90) : null,
      launch_price_usd: 100 + (i * 7) % 3000 });
  }
  const data = { gpus, revisions: [{ date: "2020-01-01", priorities: [{ network: "cnn", order: ["tensor-cores", "memory-bandwidth"] }] }] };
  const t0 = performance.now();
  const out = F.rankGpus(data, { workload: "cnn", memory: 8, budget: 2000, prices: "new", revision: null });
  const ms = performance.now() - t0;
  assert.ok(out.rows.length > 1000);
  for (let i = 1; i < out.rows.length; i++) assert.ok(out.rows[i - 1].value >= out.rows[i].value);
  finiteEverywhere(out.rows, "rows");
  assert.ok(ms < 1000, `${ms} ms`);
});

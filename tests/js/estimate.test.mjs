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

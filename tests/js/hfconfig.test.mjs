// tests/fixtures/hf_configs.json against docs/assets/js/calc/hfconfig.mjs: the browser reads every
// config as generator/estimate/hfconfig.py does (rewrite the fixture with
// tests/fixtures/update_hf_configs.py). Run with `node --test tests/js/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as H from "../../docs/assets/js/calc/hfconfig.mjs";
import * as E from "../../docs/assets/js/calc/estimate.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/hf_configs.json", import.meta.url), "utf8"));
const golden = JSON.parse(readFileSync(new URL("../fixtures/estimate.json", import.meta.url), "utf8"));

function close(actual, expected, where) {
  if (typeof expected === "number") {
    assert.equal(typeof actual, "number", `${where}: ${actual}`);
    assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${where}: ${actual} != ${expected}`);
  } else if (expected && typeof expected === "object") {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), where);
    for (const [k, v] of Object.entries(expected)) close(actual[k], v, `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

for (const c of fixture.cases) {
  test(`config: ${c.id}`, () => {
    const out = H.readConfig(JSON.stringify(c.config));
    if (c.error) {
      assert.deepEqual(out, { error: c.error });
      return;
    }
    close(out.model, c.model, c.id);
  });
}

test("a config gives its record's estimate in the browser too", () => {
  // the golden cases of catalogue models with a config in the fixture, with the record's parameters
  const byRecord = Object.fromEntries(fixture.cases.filter((c) => c.record).map((c) => [c.record, c]));
  let checked = 0;
  for (const g of golden.cases) {
    const c = typeof g.model === "string" && g.expect ? byRecord[g.model] : null;
    if (!c) continue;
    const record = golden.models[g.model];
    const model = H.modelFromConfig(c.config, record.parameters_b, record.active_parameters_b);
    const want = E.run(record, golden.gpus[g.gpu], g.options, golden.table).result;
    const got = E.run(model, golden.gpus[g.gpu], g.options, golden.table).result;
    for (const k of ["memory", "decode_tokens_per_s", "prefill_tokens_per_s", "max_context", "fits"]) {
      close(got[k], want[k], `${g.id}.${k}`);
    }
    checked += 1;
  }
  assert.ok(checked >= 10, `only ${checked} golden cases have a config`);
});

test("text that is not JSON, and a byte-order mark", () => {
  assert.deepEqual(H.readConfig("{hidden_size: 4096"), { error: { kind: "json", field: null } });
  assert.deepEqual(H.readConfig(""), { error: { kind: "json", field: null } });
  const llama = fixture.cases.find((c) => c.id === "llama-3-1-8b");
  close(H.readConfig("\uFEFF" + JSON.stringify(llama.config)).model, llama.model, "bom");
});

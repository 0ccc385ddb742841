// Number formatting of the calculators' results (docs/assets/js/calc/dom.mjs formatter). Run with
// `node --test tests/js/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatter, SIGNIFICANT } from "../../docs/assets/js/calc/dom.mjs";

const en = formatter("en");
const digits = (text) => text.replace(/[^0-9]/g, "").replace(/^0+/, "").replace(/0+$/, "").length;

test("no result prints the noise of floating point", () => {
  assert.equal(en(80399999999999970, 1), "80,400,000,000,000,000");
  assert.equal(en(0.1 + 0.2, 4), "0.3");
  assert.equal(en(76675.12345678, 2), "76,675.1");
  for (const x of [1 / 3, 2 / 3 * 1e9, Math.PI * 1e12, 8.04e16 - 30]) assert.ok(digits(en(x, 4)) <= SIGNIFICANT, en(x, 4));
});

test("whole numbers a double holds exactly are written in full", () => {
  assert.equal(en(625536000, 0), "625,536,000");
  assert.equal(en(1234567891, 0), "1,234,567,891");
});

test("the short form keeps about four significant figures in every language", () => {
  assert.equal(en.auto(80399999999999970), "80,400,000,000,000,000");
  assert.equal(en.auto(12345.678), "12,350");
  assert.equal(en.auto(0.4123456), "0.4123");
  assert.equal(formatter("fr").auto(1234.5).replace(/\s/g, " "), "1 235");
  assert.equal(en(Infinity), "—");
  assert.equal(en.auto(NaN), "—");
});

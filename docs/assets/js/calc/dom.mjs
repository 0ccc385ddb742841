// Shared DOM plumbing of the calculators: texts from the page, number formatting, field errors,
// URL state. No text of its own: every word comes from data-m-* attributes that the page renders
// in its language. Elements are built with textContent only.

import { normalizeNumber } from "./formulas.mjs";

/** msg("calc.err.max", {max: "100"}): the page's text for a key, with {name} placeholders filled. */
export function messages(root) {
  const cache = new Map();
  return (key, params) => {
    let text = cache.get(key);
    if (text === undefined) {
      text = root.getAttribute("data-m-" + key.replace(/\./g, "-")) || "";
      cache.set(key, text);
    }
    return params ? fill(text, params) : text;
  };
}

export function fill(text, params) {
  return text.replace(/\{([a-z][a-z0-9_]*)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}

/** At most this many significant digits in a result: a whole number the double holds exactly
 *  (a count of bytes, of weights) is written in full, any other is rounded, so that no result
 *  prints the noise of floating point ("80,399,999,999,999,970 MB"). */
export const SIGNIFICANT = 6;

/** Locale number formatting; anything that is not a finite number shows as a dash. */
export function formatter(lang) {
  const cache = new Map();
  const get = (max, min) => {
    const key = `${max}:${min}`;
    let f = cache.get(key);
    if (!f) cache.set(key, (f = new Intl.NumberFormat(lang, { maximumFractionDigits: max, minimumFractionDigits: min })));
    return f;
  };
  const num = (x, max = 2, min = 0) => {
    if (typeof x !== "number" || !Number.isFinite(x)) return "—";
    const y = Number.isSafeInteger(x) ? x : Number(x.toPrecision(SIGNIFICANT));
    return get(max, Math.min(min, max)).format(y);
  };
  /** About four significant figures, never in exponent notation. */
  num.auto = (x) => {
    if (typeof x !== "number" || !Number.isFinite(x)) return "—";
    const a = Math.abs(x);
    return a >= 1000 ? num(Number(x.toPrecision(4)), 0) : num(x, a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4);
  };
  return num;
}

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  for (const ch of children) if (ch !== null && ch !== undefined) node.append(ch instanceof Node ? ch : String(ch));
  return node;
}

export function setText(node, text) {
  if (node && node.textContent !== text) node.textContent = text;
}

/** The page's status line and other outputs by name. */
export function outputs(root) {
  const map = {};
  for (const node of root.querySelectorAll("[data-wg-out]")) if (!node.closest("template")) map[node.getAttribute("data-wg-out")] = node;
  return map;
}

/** Raw values of named fields (text as typed, a choice's value, "1"/"0" for a checkbox). */
export function readFields(root, names) {
  const raw = {};
  for (const name of names) {
    const input = root.querySelector(`[name="${name}"]`);
    if (!input) continue;
    raw[name] = input.type === "checkbox" ? (input.checked ? "1" : "0") : input.value;
  }
  return raw;
}

export function writeField(input, value) {
  if (!input || value === null || value === undefined) return;
  if (input.type === "checkbox") input.checked = value === "1" || value === "true";
  else if (input.tagName === "SELECT") {
    if ([...input.options].some((o) => o.value === value)) input.value = value;
  } else input.value = value;
}

/**
 * Show each field's message in its reserved line (`[data-wg-err=name]` inside `scope`) and mark
 * the input invalid; clear the others.
 */
export function showErrors(scope, errors, msg, fmt, keyOf = (name) => name, attr = "data-wg-err") {
  for (const slot of scope.querySelectorAll(`[${attr}]`)) {
    if (slot.closest("template")) continue;
    const key = keyOf(slot.getAttribute(attr), slot);
    const e = errors[key];
    const text = e ? msg(e.key, formatParams(e.params, fmt)) : "";
    setText(slot, text);
    const input = slot.parentElement && slot.parentElement.querySelector("input, select");
    if (input) {
      if (e) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }
}

function formatParams(params, fmt) {
  const out = {};
  for (const [k, v] of Object.entries(params || {})) out[k] = typeof v === "number" ? fmt(v, 4) : v;
  return out;
}

// ------------------------------------------------------------------ state in the URL

export function readState(prefix) {
  const params = new URLSearchParams(location.search);
  return (name) => params.get(prefix + name);
}

/** Numbers are kept in the URL in one plain form ("0.12", "1000") so a link works in every language. */
export function canonical(raw, lang) {
  return normalizeNumber(raw, lang);
}

export function writeState(prefix, values) {
  const url = new URL(location.href);
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined) url.searchParams.delete(prefix + k);
    else url.searchParams.set(prefix + k, v);
  }
  if (url.href !== location.href) history.replaceState(history.state, "", url.href);
}

/** Recompute on every edit of the calculator's form (never submitted), expose the recompute for
 *  tests and the language menu as `root.wgUpdate`, and show the first result. */
export function wire(root, update, events = ["input"]) {
  const form = root.querySelector("form");
  form.addEventListener("submit", (e) => e.preventDefault());
  for (const type of events) form.addEventListener(type, () => update(true));
  root.wgUpdate = update;
  update(false);
}

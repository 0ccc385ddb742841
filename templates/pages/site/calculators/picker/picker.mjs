// GPU picker: DOM side. Ranking model: formulas.mjs (rankGpus).
import { run, PICKER_FIELDS } from "./formulas.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, el, wire } from "./dom.mjs";

const NAMES = [...Object.keys(PICKER_FIELDS), "revision"];
const SHOWN = 50;

export function setup(root, { lang, prefix, msg, fmt, data }) {
  const out = outputs(root);
  const state = readState(prefix);
  for (const name of NAMES) writeField(root.querySelector(`[name="${name}"]`), state(name));
  const toRoot = root.getAttribute("data-wg-root") || "../../";
  const names = new Map(((data && data.gpus) || []).map((g) => [g.id, g.name]));
  const usd = (x) => msg("calc.unit.usd_value", { x: fmt(x, 0) });
  const priceLabel = { used: "calc.picker.price_used", street: "calc.picker.price_street", launch: "calc.picker.price_launch", catalogue: "calc.picker.price_catalogue" };

  const personas = (() => { try { return JSON.parse(root.getAttribute("data-wg-personas") || "{}"); } catch (e) { return {}; } })();
  const models = new Map(((data && data.models) || []).map((m) => [m.id, m.name]));
  const day = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeZone: "UTC" });
  const date = (d) => (d ? day.format(new Date(d + "T00:00:00Z")) : "");
  const pct = (x) => msg("calc.unit.pct", { x: fmt(x, 0) });
  const priceNote = (row) => {
    if (row.priceSource === "observed" || row.priceSource === "observed-used") return msg("calc.picker.price_observed", { date: date(row.priceDate) });
    if (row.priceSource === "observed-new") return msg("calc.picker.price_observed_new", { date: date(row.priceDate) });
    return msg(priceLabel[row.priceSource]);
  };
  const perfNote = { revision: "calc.picker.src_revision", estimate: "calc.picker.src_estimate", model: "calc.picker.src_model" };
  const badges = (row) => {
    const out = [];
    if (row.advised) {
      const who = row.personas.map((p) => personas[p] || p).join(", ");
      const text = [msg(row.advised === "recommended" ? "calc.picker.advised_rec" : "calc.picker.advised_alt")];
      if (row.advisedUsed) text.push(msg("calc.picker.advised_used"));
      if (who) text.push(msg("calc.picker.for_personas", { personas: who }));
      out.push(el("span", { class: "wgc-badge" }, text.join("; ")));
    }
    const flags = { vendor: "calc.picker.vendor_flag", software: "calc.picker.software_flag" };
    if (row.flag) out.push(el("span", { class: "wgc-flag" }, msg(flags[row.flag] || "calc.picker.avoided")));
    return out;
  };
  const describe = (r) => {
    if (r.mode === "today") {
      // the band on results the fit has not seen (each source left out in turn)
      const e = (r.error || {}).unseen || {};
      const params = { ref: names.get(r.reference) || r.reference || "—", model: models.get(r.model) || r.model || "—",
        median: pct(e.median_pct), p90: pct(e.p90_pct), date: date(r.newest) };
      return [msg(r.metric === "decode" ? "calc.picker.model_today_decode" : "calc.picker.model_today_training", params), ""];
    }
    const order = r.order.map((f, i) => `${msg(`feature.${f}`)} (${msg("calc.unit.pct", { x: fmt(r.weights[i] * 100, 0) })})`).join(msg("calc.picker.order_sep"));
    const ref = names.get(r.reference) || r.reference || "—";
    const model = r.table
      ? msg("calc.picker.model_table", { workload: msg(`workload.${r.table}`), ref, order })
      : msg("calc.picker.model_estimate", { ref, order });
    const advised = r.advisedFrom === "tree" ? "calc.picker.advised_tree" : r.advisedFrom === "personas" ? "calc.picker.advised_personas" : "calc.picker.advised_none";
    return [model, msg(advised)];
  };

  const update = (save) => {
    const raw = readFields(root, NAMES);
    const { errors, result } = run("picker", raw, { lang, data: data || { gpus: [], revisions: [] } });
    root.wgLast = result;
    showErrors(root, errors, msg, fmt);
    if (save) writeState(prefix, { ...raw, memory: canonical(raw.memory, lang), budget: canonical(raw.budget, lang) });
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      setText(out.model, "");
      setText(out.advised, "");
      setText(out.skipped, "");
      out.rows.replaceChildren();
      return result;
    }
    const r = result;
    const best = r.rows[0];
    root.dataset.wgMode = r.mode;
    const headline = r.mode === "today" ? "calc.picker.result_today" : best && best.advised ? "calc.picker.result_advised" : "calc.picker.result";
    setText(out.status, best ? msg(headline, { n: fmt(r.rows.length, 0), gpu: best.name }) : msg("calc.picker.none"));
    const [model, advised] = describe(r);
    setText(out.model, model);
    setText(out.advised, advised);
    const s = r.skipped;
    const more = r.rows.length > SHOWN ? " " + msg("calc.picker.more", { n: fmt(r.rows.length - SHOWN, 0) }) : "";
    // today has no revision to be released after, but cards today's software does not run
    setText(out.skipped, msg(r.mode === "today" ? "calc.picker.skipped_today" : "calc.picker.skipped", {
      new: fmt(s.tooNew, 0), small: fmt(s.tooSmall, 0), price: fmt(s.noPrice, 0), budget: fmt(s.overBudget, 0), perf: fmt(s.noPerf, 0),
      software: fmt(s.software || 0, 0),
    }) + more);
    // the figure column says what it holds: relative speed, tokens per second or gigabytes
    const perfHead = root.querySelector("[data-wg-col=perf]");
    if (perfHead) {
      const key = r.mode === "today" && r.metric === "decode" ? "calc.picker.col_tps"
        : r.mode === "today" && r.metric === "memory" ? "calc.picker.col_gb" : "calc.picker.col_perf";
      setText(perfHead, msg(key));
    }
    const perfText = (row) => (r.mode === "today" && r.metric === "decode" ? msg("calc.picker.tps", { x: fmt(row.perf, 1) }) : fmt(row.perf, 2));
    out.rows.replaceChildren(...r.rows.slice(0, SHOWN).map((row, i) => el("tr", { "data-gpu": row.id, "data-advised": row.advised || "", "data-flag": row.flag || "" },
      el("td", null, String(i + 1)),
      el("th", { scope: "row" }, el("a", { href: `${toRoot}gpus/${row.id}/` }, row.name), ...badges(row)),
      el("td", null, fmt(row.memory_gb, 1)),
      el("td", null, usd(row.price), el("span", { class: "wgc-sub" }, priceNote(row))),
      el("td", null, perfText(row), el("span", { class: "wgc-sub" }, msg(perfNote[row.perfSource]))),
      el("td", null, fmt(row.value, 2)),
    )));
    return result;
  };

  wire(root, update, ["input", "change"]);
}

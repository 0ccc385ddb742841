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

  const update = (save) => {
    const raw = readFields(root, NAMES);
    const { errors, result } = run("picker", raw, { lang, data: data || { gpus: [], revisions: [] } });
    root.wgLast = result;
    showErrors(root, errors, msg, fmt);
    if (save) writeState(prefix, { ...raw, memory: canonical(raw.memory, lang), budget: canonical(raw.budget, lang) });
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      setText(out.model, "");
      setText(out.skipped, "");
      out.rows.replaceChildren();
      return result;
    }
    const r = result;
    const best = r.rows[0];
    setText(out.status, best ? msg("calc.picker.result", { n: fmt(r.rows.length, 0), gpu: best.name }) : msg("calc.picker.none"));
    const order = r.order.map((f, i) => `${msg(`feature.${f}`)} (${msg("calc.unit.pct", { x: fmt(r.weights[i] * 100, 0) })})`).join(msg("calc.picker.order_sep"));
    const ref = names.get(r.reference) || r.reference || "—";
    setText(out.model, r.table
      ? msg("calc.picker.model_table", { workload: msg(`workload.${r.table}`), ref, order })
      : msg("calc.picker.model_estimate", { ref, order }));
    const s = r.skipped;
    const more = r.rows.length > SHOWN ? " " + msg("calc.picker.more", { n: fmt(r.rows.length - SHOWN, 0) }) : "";
    setText(out.skipped, msg("calc.picker.skipped", {
      new: fmt(s.tooNew, 0), small: fmt(s.tooSmall, 0), price: fmt(s.noPrice, 0), budget: fmt(s.overBudget, 0), perf: fmt(s.noPerf, 0),
    }) + more);
    out.rows.replaceChildren(...r.rows.slice(0, SHOWN).map((row, i) => el("tr", null,
      el("td", null, String(i + 1)),
      el("th", { scope: "row" }, el("a", { href: `${toRoot}gpus/${row.id}/` }, row.name),
        row.avoided ? el("span", { class: "wgc-flag" }, msg("calc.picker.avoided")) : null),
      el("td", null, fmt(row.memory_gb, 1)),
      el("td", null, usd(row.price), el("span", { class: "wgc-sub" }, msg(priceLabel[row.priceSource]))),
      el("td", null, fmt(row.perf, 2), el("span", { class: "wgc-sub" }, msg(row.perfSource === "revision" ? "calc.picker.src_revision" : "calc.picker.src_estimate"))),
      el("td", null, fmt(row.value, 2)),
    )));
    return result;
  };

  wire(root, update, ["input", "change"]);
}

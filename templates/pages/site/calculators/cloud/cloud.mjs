// Desktop or cloud (2020 advice): DOM side. Formulas: formulas.mjs (cloudBreakEven).
import { run, CLOUD_FIELDS } from "./formulas.mjs";
import { outputs, readFields, writeField, showErrors, setText, readState, writeState, canonical, wire } from "./dom.mjs";

const NAMES = Object.keys(CLOUD_FIELDS);

export function setup(root, { lang, prefix, msg, fmt }) {
  const out = outputs(root);
  const state = readState(prefix);
  for (const name of NAMES) writeField(root.querySelector(`[name="${name}"]`), state(name));
  const usd = (x) => msg("calc.unit.usd_value", { x: fmt(x, 2) });
  const kwh = (x) => msg("calc.unit.kwh_value", { x: fmt(x, 1) });
  const span = (days, months) => (days === null ? msg("calc.cloud.never_short") : msg("calc.cloud.days_months", { days: fmt(days, 0), months: fmt(months, 1) }));
  const ROWS = ["power", "desktop_year", "cloud_year", "spot_year", "days", "spot_days"];

  const update = (save) => {
    const raw = readFields(root, NAMES);
    const { errors, result } = run("cloud", raw, { lang });
    root.wgLast = result;
    showErrors(root, errors, msg, fmt);
    if (save) {
      const s = {};
      for (const n of NAMES) s[n] = canonical(raw[n], lang);
      writeState(prefix, s);
    }
    if (!result) {
      setText(out.status, msg("calc.common.fix"));
      for (const k of ROWS) { setText(out[`n_${k}`], ""); setText(out[`v_${k}`], "—"); }
      return result;
    }
    const r = result;
    const v = {};
    for (const n of NAMES) v[n] = fmt(Number(canonical(raw[n], lang)), 4);
    const u = fmt(Number(canonical(raw.util, lang)) / 100, 4);
    setText(out.status, r.days === null ? msg("calc.cloud.never") : msg("calc.cloud.result", { days: fmt(r.days, 0), months: fmt(r.months, 1), spot_months: r.spotDays === null ? "—" : fmt(r.spotMonths, 1) }));
    setText(out.n_power, `(${v.gpu_w} + ${v.system_w}) / 1000 × ${u} × 24 × 365 = ${kwh(r.kwhYear)} × ${v.kwh}`);
    setText(out.v_power, usd(r.powerYear));
    setText(out.n_desktop_year, `${v.desktop} + ${fmt(r.powerYear, 2)}`);
    setText(out.v_desktop_year, usd(r.desktopFirstYear));
    setText(out.n_cloud_year, `${v.cloud} × ${u} × 24 × 365`);
    setText(out.v_cloud_year, usd(r.cloudYear));
    setText(out.n_spot_year, `${v.spot} × ${u} × 24 × 365`);
    setText(out.v_spot_year, usd(r.spotYear));
    setText(out.n_days, r.days === null ? "" : `${v.desktop} / (${fmt(r.cloudDay, 4)} − ${fmt(r.powerDay, 4)}) = ${fmt(r.days, 2)}`);
    setText(out.v_days, span(r.days, r.months));
    setText(out.n_spot_days, r.spotDays === null ? "" : `${v.desktop} / (${fmt(r.spotDay, 4)} − ${fmt(r.powerDay, 4)}) = ${fmt(r.spotDays, 2)}`);
    setText(out.v_spot_days, span(r.spotDays, r.spotMonths));
    return result;
  };

  wire(root, update);
}

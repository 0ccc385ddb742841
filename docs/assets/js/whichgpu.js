/* whichgpu: catalogue sorting and filters, GPU compare, revision diff picker, revision selector.
   Plain script, no framework. Every string from the data is written with textContent. Runs on
   every page view, including views reached by Material's instant navigation. */
(function () {
  "use strict";

  const data = () => window.WG_DATA || { gpus: [], revisions: [], personas: [] };

  /* The shared data file (window.WG_DATA) is loaded only by pages that use it, after the page
     has rendered; it sits next to this script (assets/data/ beside assets/js/). A script
     element rather than fetch() so that the site also works from file://. */
  const DATA_SRC = ((document.currentScript && document.currentScript.src) || "").replace(/js\/whichgpu\.js(?:[?#].*)?$/, "data/whichgpu-data.js");
  let loading = null;
  function loadData() {
    if (window.WG_DATA) return Promise.resolve(window.WG_DATA);
    if (!loading) {
      loading = new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = DATA_SRC;
        s.async = true;
        s.onload = () => (window.WG_DATA ? resolve(window.WG_DATA) : reject(new Error("whichgpu: no data in " + DATA_SRC)));
        s.onerror = () => { loading = null; s.remove(); reject(new Error("whichgpu: cannot load " + DATA_SRC)); };
        document.head.appendChild(s);
      });
    }
    return loading;
  }
  const withData = (fn) => loadData().then(fn, (err) => console.error(err));
  const num = (v) => { const x = parseFloat(v); return Number.isFinite(x) ? x : null; };
  const fmt = (x) => (x === null || x === undefined ? "—" : new Intl.NumberFormat(document.documentElement.lang || "en", { maximumFractionDigits: 3 }).format(x));
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
  const once = (node, key) => { if (!node || node.dataset[key]) return false; node.dataset[key] = "1"; return true; };
  const jsonAttr = (node, name) => { try { return JSON.parse(node.getAttribute(name) || "{}"); } catch (e) { return {}; } };
  /* A piece of the address as text: a malformed escape ("#%", "?q=%E0") is kept as written
     instead of throwing, so one bad piece of an address never stops the page. */
  const decode = (text) => { try { return decodeURIComponent(text); } catch (e) { return text; } };

  /* ---------------------------------------------------------------- the advice through time */
  // The advice in force on each date (including what update revisions only record as changes)
  // is derived once, at build time: each revision of the data file carries it as advice_in_force.
  function diffAdvice(revisions, personaOrder, a, b) {
    // "today": the site's picks per reader profile (never a revision's advice), after every revision
    const today = (data() && data().today) || {};
    const asToday = { date: "today", avoid: [],
      advice_in_force: Object.fromEntries(Object.entries(today.picks || {}).map(([p, g]) => [p, { gpus: g }])) };
    const find = (d) => (d === "today" ? asToday : revisions.find((r) => r.date === d) || {});
    const ra = find(a), rb = find(b);
    const sa = ra.advice_in_force || {}, sb = rb.advice_in_force || {};
    const ids = [...new Set([...Object.keys(sa), ...Object.keys(sb)])];
    const rank = (p) => { const i = personaOrder.indexOf(p); return i < 0 ? personaOrder.length : i; };
    ids.sort((x, y) => rank(x) - rank(y));
    const rows = [];
    for (const p of ids) {
      const before = sa[p] ? sa[p].gpus : [], after = sb[p] ? sb[p].gpus : [];
      if (sa[p] && sb[p] && before.join() === after.join()) continue;
      rows.push({ persona: p, removed: before.filter((g) => !after.includes(g)), added: after.filter((g) => !before.includes(g)),
                  status: !sa[p] ? "new" : !sb[p] ? "dropped" : "changed" });
    }
    const avoidA = ra.avoid || [], avoidB = rb.avoid || [];
    const ca = advisedCards(revisions, ra), cb = advisedCards(revisions, rb);
    return { rows, avoidAdded: avoidB.filter((g) => !avoidA.includes(g)), avoidRemoved: avoidA.filter((g) => !avoidB.includes(g)),
             advisedAdded: cb.filter((g) => !ca.includes(g)), advisedRemoved: ca.filter((g) => !cb.includes(g)) };
  }
  // Every card the advice in force names: the reader lists, and the leaves of the flowchart in force
  // (that of the newest full revision on or before the date, or of a later update that gives one).
  function advisedCards(revisions, rev) {
    const out = [];
    const add = (g) => { if (!out.includes(g)) out.push(g); };
    for (const st of Object.values(rev.advice_in_force || {})) (st.gpus || []).forEach(add);
    let tree = null;
    for (const r of revisions) {
      if (!rev.date || rev.date === "today" || r.date > rev.date) break;
      if (r.kind === "full" || r.decision_tree) tree = r.decision_tree || null;
    }
    const walk = (n) => {
      if (!n || typeof n !== "object") return;
      if ("question" in n) { walk(n.if_yes); walk(n.if_no); } else (n.gpus || []).forEach(add);
    };
    walk(tree);
    return out;
  }
  window.WG = Object.assign(window.WG || {}, { diffAdvice, loadData });

  /* ---------------------------------------------------------------- long lists */
  // A long list's page carries its first rows; the rest are in a script beside the page
  // (<tbody data-wg-rest="gpu-table.rows.js">), loaded on first use: sorting, filtering, the
  // "show all" button, or an address that names a row the page does not carry.
  const restLoads = new WeakMap();
  function loadRest(table) {
    const body = table && table.tBodies[0];
    if (!body || !body.dataset.wgRest) return Promise.resolve(false);
    if (!restLoads.has(body)) {
      restLoads.set(body, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = new URL(body.dataset.wgRest, location.href).href;
        s.async = true;
        s.onload = () => {
          const html = (window.wgRows || {})[table.id];
          if (typeof html !== "string") { reject(new Error("whichgpu: no rows in " + s.src)); return; }
          body.insertAdjacentHTML("beforeend", html);  // rows made by the build, every string escaped there
          delete window.wgRows[table.id];
          delete body.dataset.wgRest;
          const note = document.querySelector(`[data-wg-rest-for="${table.id}"]`);
          if (note) note.hidden = true;
          if (table.wgSort) table.wgSort.refresh();
          resolve(true);
        };
        s.onerror = () => { restLoads.delete(body); s.remove(); reject(new Error("whichgpu: cannot load " + s.src)); };
        document.head.appendChild(s);
      }));
    }
    return restLoads.get(body);
  }

  function initRest(root) {
    root.querySelectorAll("tbody[data-wg-rest]").forEach((body) => {
      const table = body.closest("table");
      if (!table || !once(table, "wgRest")) return;
      const note = root.querySelector(`[data-wg-rest-for="${table.id}"]`);
      const button = note && note.querySelector("button");
      if (button) {
        button.hidden = false;
        button.addEventListener("click", () => loadRest(table).catch((err) => console.error(err)));
      }
      // a sort before the rest is in: hold the click, load, then sort every row
      const head = table.tHead;
      if (head) head.addEventListener("click", (e) => {
        const th = e.target.closest("th");
        if (!th || !body.dataset.wgRest || th.getAttribute("data-sort-method") === "none") return;
        e.stopPropagation();
        loadRest(table).then(() => sortBy(table, th), (err) => console.error(err));
      }, true);
      // a chart's data table: its rows come with the first opening of the table
      const details = table.closest("details");
      if (details) {
        const opened = () => { if (details.open) loadRest(table).catch((err) => console.error(err)); };
        details.addEventListener("toggle", opened);
        opened();
      }
      const id = decode(location.hash.slice(1));
      if (id && !document.getElementById(id)) {
        loadRest(table).then(() => { const row = document.getElementById(id); if (row) row.scrollIntoView(); }, (err) => console.error(err));
      }
    });
  }
  window.WG.loadRest = loadRest;

  /* Sort a table by a header as a click on it does: the previous column loses its order mark
     and becomes the current one, so the address and the sort menu see the new column. With
     ``dir``, that order ("asc" or "desc") rather than the next one. */
  function sortBy(table, th, dir) {
    const sorter = table.wgSort;
    if (!sorter || !th) return;
    if (sorter.current && sorter.current !== th) sorter.current.removeAttribute("aria-sort");
    // tablesort turns a column's current order around: to get ``dir``, mark the opposite first
    if (dir) th.setAttribute("aria-sort", dir === "desc" ? "ascending" : "descending");
    sorter.current = th;
    sorter.sortTable(th);
  }

  /* ---------------------------------------------------------------- catalogue */
  // The build writes a table's rows in its default column's order; sorting them again on load
  // would move every row and lay the table out twice, so the sort is skipped when they are.
  function sortable(t) {
    const def = t.tHead && t.tHead.querySelector("th[data-sort-default]");
    const plain = def && !def.hasAttribute("data-sort-method") && !def.hasAttribute("data-sort-reverse");
    const key = (r) => { const c = r.cells[def.cellIndex]; return c ? (c.getAttribute("data-sort") || c.textContent || "").trim().toLowerCase() : ""; };
    const rows = plain && t.tBodies[0] ? [...t.tBodies[0].rows] : [];
    const inOrder = plain && rows.every((r, i) => i === 0 || key(rows[i - 1]) <= key(r));
    if (inOrder) def.removeAttribute("data-sort-default");
    const sorter = new window.Tablesort(t);
    if (inOrder) {
      def.setAttribute("data-sort-default", "");
      def.setAttribute("aria-sort", "ascending");
      sorter.current = def;
    }
    return sorter;
  }

  function initCatalogue(root) {
    root.querySelectorAll("table.wg-sortable").forEach((t) => { if (once(t, "wgSort") && window.Tablesort) t.wgSort = sortable(t); });
    initRest(root);
    const form = root.querySelector("#wg-filters");
    const table = root.querySelector("#gpu-table");
    if (!table || !once(form, "wgInit")) return;
    const body = table.tBodies[0];
    const total = () => Number(body.dataset.wgTotal) || body.rows.length;
    const params = new URLSearchParams(location.search);
    for (const input of form.elements) if (input.name && params.has(input.name)) input.value = params.get(input.name);
    const formValues = () => {
      const f = {};
      for (const input of form.elements) if (input.name && input.name !== "count") f[input.name] = input.value.trim();
      return f;
    };
    const filtered = () => Object.values(formValues()).some((v) => v);
    const apply = () => {
      const f = formValues();
      const mem = num(f.mem), price = num(f.price), from = num(f.from), to = num(f.to);
      let shown = 0;
      for (const r of body.rows) {  // every row the page holds now, the loaded rest included
        const d = r.dataset, p = num(d.price);
        const ok = (!f.vendor || d.vendor === f.vendor) && (!f.segment || d.segment === f.segment) && (!f.arch || d.arch === f.arch)
          && (mem === null || num(d.mem) >= mem) && (price === null || (p !== null && p <= price))
          && (from === null || num(d.year) >= from) && (to === null || num(d.year) <= to);
        r.hidden = !ok;
        if (ok) shown += 1;
      }
      // without a filter, a page that carries part of the list says so rather than "50 of 116"
      const out = form.querySelector("output");
      const partial = body.dataset.wgRest && !filtered() && out.dataset.templatePart;
      out.textContent = ((partial ? out.dataset.templatePart : out.dataset.template) || "{shown}/{total}").replace("{shown}", shown).replace("{total}", total());
      writeAddress(f);
    };
    // the address keeps the filters and the sort (?sort=memory&dir=desc): a view can be shared
    const heads = [...table.tHead.rows[0].cells].filter((th) => th.dataset.key);
    const sortParams = () => {
      const th = table.wgSort && table.wgSort.current;
      if (!th || !th.dataset.key || !th.getAttribute("aria-sort")) return {};
      const dir = th.getAttribute("aria-sort") === "descending" ? "desc" : "asc";
      return th.hasAttribute("data-sort-default") && dir === "asc" ? {} : { sort: th.dataset.key, dir };
    };
    // the column chooser works by CSS alone; the address keeps a choice that differs from the default
    const boxes = [...root.querySelectorAll('.wg-columns input[name="col"]')];
    if (params.has("cols")) {
      const want = params.get("cols").split(",");
      boxes.forEach((b) => { b.checked = want.includes(b.value); });
    }
    const colParams = () => {
      const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
      const usual = boxes.filter((b) => b.defaultChecked).map((b) => b.value);
      return chosen.join(",") === usual.join(",") ? {} : { cols: chosen.join(",") || "none" };
    };
    boxes.forEach((b) => b.addEventListener("change", () => writeAddress(formValues())));
    const writeAddress = (f) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(f || {})) if (v) q.set(k, v);
      for (const [k, v] of Object.entries(sortParams())) q.set(k, v);
      for (const [k, v] of Object.entries(colParams())) q.set(k, v);
      history.replaceState(history.state, "", (q.toString() ? "?" + q : location.pathname) + location.hash);
    };
    // the sort menu sorts by any column, shown or not (a hidden column has no heading to select)
    const sortKey = form.querySelector("[data-wg-sort-key]"), sortDir = form.querySelector("[data-wg-sort-dir]");
    const showSort = () => {
      const th = table.wgSort && table.wgSort.current;
      if (!sortKey || !sortDir || !th || !th.dataset.key) return;
      sortKey.value = th.dataset.key;
      sortDir.value = th.getAttribute("aria-sort") === "descending" ? "desc" : "asc";
    };
    const sortAll = (th, dir) => {
      if (!th || !table.wgSort) return;
      if (body.dataset.wgRest) loadRest(table).then(() => sortBy(table, th, dir), (err) => console.error(err));
      else sortBy(table, th, dir);
    };
    if (sortKey && sortDir) {
      const fromMenu = (e) => {
        e.stopPropagation();  // a sort is no filter
        sortAll(heads.find((h) => h.dataset.key === sortKey.value), sortDir.value);
      };
      sortKey.addEventListener("change", fromMenu);
      sortDir.addEventListener("change", fromMenu);
      sortKey.addEventListener("input", (e) => e.stopPropagation());
      sortDir.addEventListener("input", (e) => e.stopPropagation());
    }
    // a sort (the first one loads the rest, which also sorts it) changes the count and the address
    table.addEventListener("afterSort", () => { showSort(); apply(); });
    const wanted = heads.find((h) => h.dataset.key === params.get("sort"));
    if (wanted) sortAll(wanted, params.get("dir") === "desc" ? "desc" : "asc");
    showSort();
    // filters cover every card: the first change loads the rows the page does not carry
    const update = () => {
      if (!body.dataset.wgRest || !filtered()) { apply(); return; }
      loadRest(table).then(apply, (err) => console.error(err));
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("reset", () => setTimeout(() => { showSort(); update(); }, 0));
    form.addEventListener("submit", (e) => e.preventDefault());
    update();
  }

  /* ---------------------------------------------------------------- compare 2 to 4 GPUs */
  function initCompare(root) {
    const box = root.querySelector("#wg-compare");
    if (!once(box, "wgInit")) return;
    withData(() => compare(box));
  }

  // Rows where more is better, and rows where less is; the others (names, dates) are not ranked.
  const MORE = new Set(["memory_gb", "memory_bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "tensor_per_kusd", "fp32_per_kusd"]);
  const LESS = new Set(["tdp_w", "launch_price_usd"]);
  // Figures the site computes (per dollar) come from the build (gpu.figures); shown to three significant digits.
  const DERIVED = new Set(["tensor_per_kusd", "fp32_per_kusd"]);

  function compare(box) {
    const selects = [...box.querySelectorAll("select")];
    const table = box.querySelector("table");
    const gpus = new Map(data().gpus.map((g) => [g.id, g]));
    const vendors = jsonAttr(box, "data-vendors");
    const lang = document.documentElement.lang || "en";
    const sig3 = new Intl.NumberFormat(lang, { maximumSignificantDigits: 3 });
    // every card, by name (as the catalogue's data lists them), in each of the selects
    const options = document.createDocumentFragment();
    const key = (g) => g.name.toLowerCase();
    [...gpus.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1))
      .forEach((g) => { const o = el("option", g.name); o.value = g.id; options.appendChild(o); });
    selects.forEach((s, i) => s.appendChild(i === selects.length - 1 ? options : options.cloneNode(true)));
    const chosen = (new URLSearchParams(location.search).get("gpus") || "").split(",").filter((id) => gpus.has(id)).slice(0, selects.length);
    selects.forEach((s, i) => { s.value = chosen[i] || ""; });
    const valueOf = (g, field) => (DERIVED.has(field) ? (g.figures || {})[field] : field === "vendor" ? vendors[g.vendor] || g.vendor : g[field]);
    const render = () => {
      const ids = [...new Set(selects.map((s) => s.value).filter((v) => gpus.has(v)))];
      const head = table.tHead.rows[0];
      while (head.cells.length > 1) head.deleteCell(1);
      for (const row of table.tBodies[0].rows) while (row.cells.length > 1) row.deleteCell(1);
      for (const id of ids) {
        const th = el("th");
        th.scope = "col";
        const a = el("a", gpus.get(id).name);
        a.href = box.dataset.gpuBase + id + "/";
        th.appendChild(a);
        head.appendChild(th);
      }
      for (const row of table.tBodies[0].rows) {
        const field = row.dataset.field;
        const values = ids.map((id) => valueOf(gpus.get(id), field));
        const nums = values.filter((v) => typeof v === "number");
        // the best of the chosen cards is marked when at least two have the figure and they differ
        const best = nums.length >= 2 && Math.min(...nums) !== Math.max(...nums)
          ? (MORE.has(field) ? Math.max(...nums) : LESS.has(field) ? Math.min(...nums) : null) : null;
        values.forEach((value) => {
          const text = typeof value === "number" ? (DERIVED.has(field) ? sig3.format(value) : fmt(value)) : value === null || value === undefined ? "—" : String(value);
          const td = el("td", text);
          if (field === "release_date") td.className = "wg-date";  // a date never breaks over two lines
          if (best !== null && value === best) {
            td.className = "wg-best";
            td.appendChild(el("span", " " + box.dataset.best, "wg-sr"));
          }
          row.appendChild(td);
        });
      }
      table.hidden = ids.length === 0;
      box.querySelector("output").textContent = ids.length < 2 ? box.dataset.hint : "";
      const q = new URLSearchParams(location.search);
      if (ids.length) q.set("gpus", ids.join(",")); else q.delete("gpus");
      history.replaceState(history.state, "", (q.toString() ? "?" + q : location.pathname) + location.hash);
    };
    selects.forEach((s) => s.addEventListener("change", render));
    render();
  }

  /* ---------------------------------------------------------------- diff any two revisions */
  function initDiffPicker(root) {
    const box = root.querySelector("#wg-diff");
    if (!once(box, "wgInit")) return;
    withData(() => diffPicker(box));
  }

  function diffPicker(box) {
    const [selA, selB] = box.querySelectorAll("select");
    const result = box.querySelector("tbody");
    const out = box.querySelector("output");
    const personas = jsonAttr(box, "data-personas");
    const gpus = new Map(data().gpus.map((g) => [g.id, g.name]));
    const names = (ids) => ids.map((g) => gpus.get(g) || g).join(", ") || "—";
    // the page carries each select's default date; every revision comes from the data
    const dates = data().revisions.map((r) => r.date);
    const today = data().today;
    if (today && today.picks && Object.keys(today.picks).length) dates.push("today");
    const siteLabel = siteDate(jsonAttr(box, "data-date-format"));
    const label = (d) => (d === "today" ? fill(box.dataset.todayLabel, { date: siteLabel(today.newest) }) : siteLabel(d));
    for (const s of [selA, selB]) s.replaceChildren(...revisionOptions(dates, (d) => d, s.value, label));
    // a date of the address that no revision has keeps the select's default, and says so
    const q = new URLSearchParams(location.search);
    const unknown = [];
    for (const [s, name] of [[selA, "a"], [selB, "b"]]) {
      const want = q.get(name);
      if (want === null || want === "") continue;
      if (dates.includes(want)) s.value = want; else unknown.push(want);
    }
    const render = () => {
      result.replaceChildren();
      const messages = unknown.splice(0).map((d) => fill(box.dataset.unknown, { date: d }));
      // "from" after "to" reads the changes backwards: no table, a message
      const reversed = selA.value > selB.value;
      const d = reversed ? { rows: [], avoidAdded: [], avoidRemoved: [], advisedAdded: [], advisedRemoved: [] } : diffAdvice(data().revisions, data().personas, selA.value, selB.value);
      for (const r of d.rows) {
        const tr = el("tr");
        tr.dataset.persona = r.persona;
        tr.append(el("th", personas[r.persona] || r.persona), el("td", names(r.removed), "wg-removed"), el("td", names(r.added), "wg-added"));
        result.appendChild(tr);
      }
      if (d.advisedAdded && (d.advisedAdded.length || d.advisedRemoved.length)) {
        const tr = el("tr");
        tr.dataset.persona = "advised";
        tr.append(el("th", box.dataset.advisedLabel), el("td", names(d.advisedRemoved), "wg-removed"), el("td", names(d.advisedAdded), "wg-added"));
        result.appendChild(tr);
      }
      if (d.avoidAdded.length || d.avoidRemoved.length) {
        const tr = el("tr");
        tr.dataset.persona = "avoid";
        tr.append(el("th", box.dataset.avoidLabel), el("td", names(d.avoidRemoved), "wg-removed"), el("td", names(d.avoidAdded), "wg-added"));
        result.appendChild(tr);
      }
      result.closest("table").hidden = reversed;
      if (reversed) messages.push(box.dataset.reversed);
      else if (!d.rows.length && !d.avoidAdded.length && !d.avoidRemoved.length) messages.push(box.dataset.empty);
      out.textContent = messages.join(" ");
      history.replaceState(history.state, "", `?a=${encodeURIComponent(selA.value)}&b=${encodeURIComponent(selB.value)}${location.hash}`);
    };
    selA.addEventListener("change", render);
    selB.addEventListener("change", render);
    render();
  }

  /* ---------------------------------------------------------------- revision selector */
  function initRevisionSelect(root) {
    root.querySelectorAll("select.wg-revision-select").forEach((s) => {
      if (!once(s, "wgInit")) return;
      // The page carries only its own revision; the list comes from the shared data file, so
      // page size does not grow with the history.
      withData(() => fillRevisionSelect(s));
    });
  }

  // A date as the site writes it in the page's language ({day} {month} {year} and the like, the
  // locale table's pattern with the page's month names, data-date-format); ISO without one.
  function siteDate(format) {
    const f = format || {};
    const months = Array.isArray(f.months) && f.months.length === 12 ? f.months : null;
    return (iso) => {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(iso));
      if (!m || !months || typeof f.pattern !== "string") return String(iso);
      const day = Number(m[3]), month = Number(m[2]);
      const dayText = day === 1 && f.first_day ? f.first_day.replace("{day}", "1") : String(day);
      return f.pattern.replace("{day}", dayText).replace("{month_number}", String(month))
        .replace("{month}", months[month - 1] || String(month)).replace("{year}", m[1]);
    };
  }
  const fill = (text, params) => String(text || "").replace(/\{([a-z_]+)\}/g, (all, k) => (k in params ? String(params[k]) : all));
  window.WG.siteDate = siteDate;
  window.WG.decode = decode;

  // An <option> per date, labelled as the site writes dates.
  function revisionOptions(dates, valueOf, selected, label) {
    return dates.map((d) => {
      const o = el("option", label(d));
      o.value = valueOf(d);
      o.selected = d === selected;
      return o;
    });
  }

  function fillRevisionSelect(s) {
    const dates = data().revisions.map((r) => r.date).reverse();
    s.replaceChildren(...revisionOptions(dates, (d) => s.dataset.base + d + "/", s.dataset.current, siteDate(jsonAttr(s, "data-date-format"))));
    s.addEventListener("change", () => { if (s.value) location.href = new URL(s.value, location.href).href; });
  }

  /* The theme's search dialog has no accessible name: give it the search field's. */
  function nameSearchDialog(root) {
    const dialog = root.querySelector(".md-search[role=dialog]");
    const input = root.querySelector(".md-search__input");
    if (dialog && input && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", input.getAttribute("aria-label") || "Search");
  }

  /* Today's cards: rank by the chosen workload's value per dollar (price plus the electricity of
     the ownership period at the reader's price), filter by budget and memory; the choice is kept
     in the address. Every figure is in the rows' data attributes (data-values holds the figures as
     JSON); cards today's software does not run, and cards without the figure, come last. */
  const OLD_WORKLOADS = { training: "transformer", decode_8b: "llm-inference", decode_32b: "llm-32b", decode_70b: "llm-70b" };
  function todayValue(row, figure, usdPerKwh) {
    let values = {};
    try { values = JSON.parse(row.getAttribute("data-values") || "{}"); } catch (e) { values = {}; }
    const v = Object.prototype.hasOwnProperty.call(values, figure) ? Number(values[figure]) : NaN;
    const buy = row.dataset.buy === "" ? NaN : Number(row.dataset.buy);
    const kwh = row.dataset.kwh === "" ? 0 : Number(row.dataset.kwh);
    const cost = buy + kwh * usdPerKwh;
    if (!(v > 0) || !(cost > 0)) return null;
    return (v / cost) * (figure === "memory" ? 100 : 1000);
  }
  function todayOrder(rows, figure, usdPerKwh) {
    const key = (r) => {
      const value = todayValue(r, figure, usdPerKwh);
      const runs = r.dataset.support === "" || r.dataset.support === "current";
      return { r, value, runs };
    };
    return rows.map(key).sort((a, b) => (a.runs === b.runs ? 0 : a.runs ? -1 : 1)
      || ((a.value === null) - (b.value === null)) || ((b.value || 0) - (a.value || 0))
      || (Number(a.r.dataset.count) - Number(b.r.dataset.count)) || a.r.dataset.gpu.localeCompare(b.r.dataset.gpu));
  }
  function initToday(root) {
    const form = root.querySelector("#wg-today-filters");
    const table = root.querySelector("#today-table");
    if (!form || !table || !once(form, "wgInit")) return;
    const body = table.tBodies[0];
    let rows = Array.from(body.rows);
    let figureOf = {};
    try { figureOf = JSON.parse(table.getAttribute("data-figure-of") || "{}"); } catch (e) { figureOf = {}; }
    const params = new URLSearchParams(location.search);
    const select = form.elements.workload;
    const known = (w) => Array.from(select.options).some((o) => o.value === w);
    let asked = params.get("workload");
    if (asked !== null && !known(asked) && Object.prototype.hasOwnProperty.call(OLD_WORKLOADS, asked)) asked = OLD_WORKLOADS[asked];
    if (asked !== null && known(asked)) select.value = asked;
    for (const name of ["budget", "memory", "electricity"]) {
      const v = params.get(name);
      if (v !== null && form.elements[name]) form.elements[name].value = v;
    }
    const num = (v) => (v === "" || v === undefined || v === null || !Number.isFinite(Number(v)) ? null : Number(v));
    const fmt = new Intl.NumberFormat(document.documentElement.lang || "en", { maximumFractionDigits: 2, minimumFractionDigits: 2 });
    const elecInput = form.elements.electricity;
    function apply() {
      const workload = select.value || select.options[0].value;
      const figure = Object.prototype.hasOwnProperty.call(figureOf, workload) ? figureOf[workload] : "training";
      const budget = num(form.elements.budget.value);
      const memory = num(form.elements.memory.value);
      const given = elecInput ? num(elecInput.value) : null;
      const usdPerKwh = given !== null && given >= 0 ? given : Number((elecInput && elecInput.dataset.default) || 0);
      let shown = 0;
      for (const { r, value } of todayOrder(rows, figure, usdPerKwh)) {
        const buy = num(r.dataset.buy);
        // a build of several cards is there for the models one card cannot hold: shown where it has the figure
        const build = Number(r.dataset.count) > 1 && value === null;
        const ok = !build && (budget === null || (buy !== null && buy <= budget)) && (memory === null || Number(r.dataset.usable) >= memory);
        r.hidden = !ok;
        if (ok) shown += 1;
        const cell = r.querySelector(".wg-today__value");
        if (cell) cell.textContent = value === null ? "\u2014" : fmt.format(value);
        body.appendChild(r);
      }
      const out = form.elements.count;
      const total = Number(body.dataset.wgTotal) || rows.length;
      if (out) out.value = (out.dataset.template || "{shown}").replace("{shown}", shown).replace("{total}", total);
      const next = new URLSearchParams();
      if (workload !== select.options[0].value) next.set("workload", workload);
      if (budget !== null) next.set("budget", String(budget));
      if (memory !== null) next.set("memory", String(memory));
      if (given !== null) next.set("electricity", String(given));
      const q = next.toString();
      history.replaceState(history.state, "", location.pathname + (q ? "?" + q : "") + location.hash);
    }
    // the page carries the best cards by the default ranking; another ranking or a filter
    // first loads the cards it does not carry
    const update = () => {
      const changed = select.selectedIndex > 0 || form.elements.budget.value || form.elements.memory.value || (elecInput && elecInput.value);
      if (!body.dataset.wgRest || !changed) { apply(); return; }
      loadRest(table).then(() => { rows = Array.from(body.rows); apply(); }, (err) => console.error(err));
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("reset", () => setTimeout(update, 0));
    update();
  }

  /* Charts: a tap (or click) near a point or a bar segment writes its values under the chart,
     since a touch screen shows no tooltip. The nearest item within about a finger's width wins. */
  function initCharts(root) {
    root.querySelectorAll("figure.wg-chart").forEach((fig) => {
      const svg = fig.querySelector("svg.wg-chart__svg"), out = fig.querySelector(".wg-chart__picked");
      if (!svg || !out || fig.wgCharts) return;
      fig.wgCharts = true;
      // a chart that is about today opens on its newest years when the screen is narrower than it
      const plot = fig.querySelector(".wg-chart__plot");
      if (plot && fig.dataset.wgScroll === "end") plot.scrollLeft = plot.scrollWidth;
      out.textContent = out.getAttribute("data-wg-hint") || "";
      svg.addEventListener("click", (e) => {
        let best = null, bestDistance = 22;
        svg.querySelectorAll("g.pt, g.seg").forEach((g) => {
          if (g.closest(".legend") || !g.querySelector("title")) return;
          const r = g.getBoundingClientRect();
          const dx = Math.max(r.left - e.clientX, 0, e.clientX - r.right);
          const dy = Math.max(r.top - e.clientY, 0, e.clientY - r.bottom);
          const d = Math.hypot(dx, dy);
          if (d < bestDistance) { best = g; bestDistance = d; }
        });
        svg.querySelectorAll(".wg-picked").forEach((g) => g.classList.remove("wg-picked"));
        if (!best) return;
        best.classList.add("wg-picked");
        out.textContent = best.querySelector("title").textContent;
        out.classList.add("wg-chart__picked--on");
      });
    });
  }

  /* The language menu leads to the same page in the other language with this page's state: its
     query string (filters, a pair of dates) and fragment, as they are when the link is used. */
  const LANG_LINK = ".md-select a[hreflang]";
  function carryState(e) {
    const link = e.target instanceof Element ? e.target.closest(LANG_LINK) : null;
    if (!link) return;
    const url = new URL(link.getAttribute("href"), location.href);
    url.search = location.search;
    url.hash = location.hash;
    link.setAttribute("href", url.href);
  }
  for (const type of ["pointerdown", "focusin", "mouseover", "contextmenu", "click"]) document.addEventListener(type, carryState, true);

  function init() {
    const root = document;
    // each part on its own: one that fails (a bad address, a missing element) stops no other
    for (const part of [initCharts, initRest, initToday, nameSearchDialog, initCatalogue, initCompare, initDiffPicker, initRevisionSelect]) {
      try { part(root); } catch (err) { console.error(err); }
    }
  }

  // Material's document$ emits on every page view with instant navigation; without it (file://)
  // it completes without emitting, so fall back to the ordinary load event.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    let emitted = false;
    window.document$.subscribe({
      next() { emitted = true; init(); },
      complete() { if (!emitted) (document.readyState === "loading" ? addEventListener("DOMContentLoaded", init) : init()); },
    });
  } else if (document.readyState === "loading") {
    addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

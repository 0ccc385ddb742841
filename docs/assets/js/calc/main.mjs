// Entry point of the calculators, listed in mkdocs.yml extra_javascript (an ES module, so it
// runs after the theme bundle and window.document$ exists). It finds calculator roots on the
// current page, `[data-wg-calc]`, and loads only the modules those need. init() runs on every
// page change of instant navigation, on a normal load and from file:// (where document$
// completes without emitting), and is idempotent.


// A calculator's module is ./<id>.mjs, its id the root's data-wg-calc (one folder each under
// templates/pages/site/calculators/; the build copies the modules here).
const ID = /^[a-z][a-z0-9-]*$/;

// Calculators that read the catalogue or the revisions (client_data: true in their folder's
// calculator.yaml; the build writes the list); the shared data file is loaded for them only
// (whichgpu.js provides the loader).
const NEEDS_DATA = new Set(/* calculators that read the client data */);
// The default language, at the site's root; every other one has a folder named by its code
// (the first of the locale table, generator/data/locales.py; the build writes it).
const DEFAULT_LANG = String(/* the default language */);

function loadData() {
  return window.WG && window.WG.loadData ? window.WG.loadData() : Promise.resolve(window.WG_DATA || null);
}

function context(dom, root, data) {
  const lang = root.getAttribute("data-wg-lang") || document.documentElement.lang || DEFAULT_LANG;
  return {
    lang,
    prefix: root.getAttribute("data-wg-prefix") || "",
    msg: dom.messages(root),
    fmt: dom.formatter(lang),
    data: data || null,
  };
}

// Pages without a calculator load nothing more than this file.
function init() {
  for (const root of document.querySelectorAll("[data-wg-calc]")) {
    if (root.hasAttribute("data-wg-ready")) continue;
    const kind = root.getAttribute("data-wg-calc");
    if (!ID.test(kind)) continue;
    root.setAttribute("data-wg-ready", "");
    Promise.all([import("./dom.mjs"), import(`./${kind}.mjs`), NEEDS_DATA.has(kind) ? loadData() : null])
      .then(([dom, mod, data]) => mod.setup(root, context(dom, root, data)))
      .catch((err) => {
        root.removeAttribute("data-wg-ready");
        console.error("whichgpu calculator", err);
      });
  }
}

/** The same calculator page in another language, with this page's query string and fragment. The page's own
 *  root says where it is: the menu's links stay those of the first page instant navigation loaded. */
function pageInLanguage(root, lang) {
  const here = root.getAttribute("data-wg-lang") || DEFAULT_LANG;
  const toLangRoot = root.getAttribute("data-wg-root") || "../../";
  const siteRoot = toLangRoot + (here === DEFAULT_LANG ? "" : "../");
  const dir = lang === DEFAULT_LANG ? "" : `${lang}/`;
  return new URL(siteRoot + dir + (root.getAttribute("data-wg-page") || "") + location.search + location.hash, location.href).href;
}

// The language menu: on a calculator page, go to the same calculator in the other language
// and keep its state (the query string), which the theme's own handler would drop.
document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target instanceof Element ? event.target.closest(".md-select a[hreflang]") : null;
  const root = document.querySelector("[data-wg-calc][data-wg-page]");
  if (!link || !root) return;
  const lang = (link.getAttribute("hreflang") || "").slice(0, 2).toLowerCase();
  if (!/^[a-z]{2}$/.test(lang)) return;
  event.preventDefault();
  event.stopPropagation();
  location.assign(pageInLanguage(root, lang));
}, true);

let emitted = false;
if (!window.document$) document.readyState === "loading" ? addEventListener("DOMContentLoaded", init) : init();
else window.document$.subscribe({
  next() { emitted = true; init(); },
  complete() {
    if (!emitted) document.readyState === "loading" ? addEventListener("DOMContentLoaded", init) : init();
  },
});

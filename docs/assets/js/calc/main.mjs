// Entry point of the calculators, listed in mkdocs.yml extra_javascript (an ES module, so it
// runs after the theme bundle and window.document$ exists). It finds calculator roots on the
// current page, `[data-wg-calc]`, and loads only the modules those need. init() runs on every
// page change of instant navigation, on a normal load and from file:// (where document$
// completes without emitting), and is idempotent.

import { messages, formatter, pageInLanguage } from "./dom.mjs";

const MODULES = {
  dense: "./dense.mjs",
  cnn: "./cnn.mjs",
  llm: "./llm.mjs",
  picker: "./picker.mjs",
  tree: "./tree.mjs",
  cloud: "./cloud.mjs",
};

function context(root) {
  const lang = root.getAttribute("data-wg-lang") || document.documentElement.lang || "en";
  return {
    lang,
    prefix: root.getAttribute("data-wg-prefix") || "",
    msg: messages(root),
    fmt: formatter(lang),
    data: window.WG_DATA || null,
  };
}

function init() {
  for (const root of document.querySelectorAll("[data-wg-calc]")) {
    if (root.hasAttribute("data-wg-ready")) continue;
    const path = MODULES[root.getAttribute("data-wg-calc")];
    if (!path) continue;
    root.setAttribute("data-wg-ready", "");
    import(path)
      .then((mod) => mod.setup(root, context(root)))
      .catch((err) => {
        root.removeAttribute("data-wg-ready");
        console.error("whichgpu calculator", err);
      });
  }
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

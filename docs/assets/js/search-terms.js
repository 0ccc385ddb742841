// The search box looks for more than the reader typed: the same word without its accents
// ("memoire" also finds "mémoire") and the words data/search.yaml gives for it in this language
// ("타이탄" also finds "TITAN"). The theme runs its search in a worker; this wraps the worker the
// theme creates, reads the index once when the theme hands it over, and widens each query on its
// way in. Loaded (deferred) before the theme's bundle, which creates the worker.
(function () {
  "use strict";
  var Native = window.Worker;
  if (!Native || !String.prototype.normalize) return;
  var here = document.currentScript && document.currentScript.src;
  var termsUrl = here ? new URL("../data/search-terms.json", here).href : null;
  var SETUP = 0, QUERY = 2;

  function fold(word) {
    return word.normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/œ/g, "oe").replace(/æ/g, "ae");
  }

  // folded word -> the accented words of the index that fold to it
  function accentIndex(docs) {
    var out = Object.create(null);
    var words = /[A-Za-zÀ-ÖØ-öø-ÿŒœ]*[À-ÖØ-öø-ÿŒœ][A-Za-zÀ-ÖØ-öø-ÿŒœ]*/g;
    for (var i = 0; i < docs.length; i++) {
      var text = (docs[i].title || "") + " " + (docs[i].text || "");
      var found = text.match(words) || [];
      for (var j = 0; j < found.length; j++) {
        var w = found[j].toLowerCase(), key = fold(w);
        if (key === w) continue;
        (out[key] = out[key] || Object.create(null))[w] = true;
      }
    }
    return out;
  }

  // the extra words for one typed word: its synonyms, and the accented words it stands for
  // (also as a prefix, since the search matches words as they are being typed)
  function extra(word, synonyms, accents) {
    var lower = word.toLowerCase(), more = [];
    (synonyms[lower] || []).forEach(function (s) { more.push(s); });
    if (fold(lower) === lower && lower.length >= 3) {
      var keys = Object.keys(accents);
      for (var i = 0; i < keys.length && more.length < 8; i++) {
        if (keys[i].lastIndexOf(lower, 0) === 0) Object.keys(accents[keys[i]]).forEach(function (w) { more.push(w); });
      }
    }
    return more.filter(function (w, i) { return w.toLowerCase() !== lower && more.indexOf(w) === i; });
  }

  function widen(query, synonyms, accents) {
    // leave the query syntax (quotes, +, -, field:, ~, ^) as it is; widen plain words only
    return query.split(/(\s+)/).map(function (part) {
      if (!part.trim() || /["*+~^:]|^-/.test(part)) return part;
      var more = extra(part, synonyms, accents);
      return more.length ? part + " " + more.join(" ") : part;
    }).join("");
  }

  function Wrapped(url, options) {
    var worker = new Native(url, options);
    if (!/search/.test(String(url))) return worker;
    var post = worker.postMessage.bind(worker);
    var synonyms = {}, accents = {};
    var terms = termsUrl && window.fetch
      ? fetch(termsUrl).then(function (r) { return r.ok ? r.json() : {}; })
          .then(function (t) { synonyms = (t && t.synonyms) || {}; }, function () {})
      : Promise.resolve();
    worker.postMessage = function (message) {
      if (message && message.type === SETUP && message.data && message.data.docs) {
        accents = accentIndex(message.data.docs);
      } else if (message && message.type === QUERY && typeof message.data === "string") {
        var typed = message.data;
        return terms.then(function () { post({ type: QUERY, data: widen(typed, synonyms, accents) }); });
      }
      return post.apply(worker, arguments);
    };
    return worker;
  }
  Wrapped.prototype = Native.prototype;
  window.Worker = Wrapped;
})();

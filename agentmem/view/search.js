/* agentmem's memory view: its note files, and search ranked as `agentmem search` ranks (ranked mode).
   Words and stems are made as search/words.py and search/stemmer.py make them; scores as search/ranked.py
   and search/find.py give them (BM25 per project, title words counted twice, a bonus per query word pair
   side by side, a note due for review demoted, a corrected note listed below its correction). The
   postings come from the term files beside the page (view/files.py), one file per query word. */
const AgentmemFiles = (function () {
  "use strict";
  let where = null;
  const loading = new Map(); // "n3" -> Promise of that file's data
  const waiting = new Map(); // "n3" -> resolve, until the file's script calls back
  // The one entry point of the note files: each is `agentmemViewFile(generation, kind, number, data)`.
  window.agentmemViewFile = function (generation, kind, number, data) {
    const key = kind + number;
    if (!where || generation !== where.generation || !waiting.has(key)) return;
    waiting.get(key)(data);
    waiting.delete(key);
  };
  function load(kind, number) {
    const key = kind + number;
    if (loading.has(key)) return loading.get(key);
    const promise = new Promise((resolve, reject) => {
      waiting.set(key, resolve);
      const el = document.createElement("script");
      el.src = where.dir + "/" + key + ".js";
      const fail = (why) => {
        waiting.delete(key);
        loading.delete(key); // the next look tries again
        reject(new Error(why));
      };
      el.onload = () => {
        el.remove();
        if (waiting.has(key)) fail("the note file " + key + ".js does not belong to this page");
      };
      el.onerror = () => {
        el.remove();
        fail("the note file " + key + ".js is missing: a newer view replaced this page's files (reload the page), " +
          "or they were removed (run agentmem view again)");
      };
      document.head.append(el);
    });
    loading.set(key, promise);
    return promise;
  }
  return { use: (files) => { where = files; }, load: load };
})();

const AgentmemSearch = (function () {
  "use strict";
  // --- search/stemmer.py, step by step ---------------------------------
  function cons(w, i) {
    const c = w[i];
    if (c === "a" || c === "e" || c === "i" || c === "o" || c === "u") return false;
    if (c === "y") return i === 0 || !cons(w, i - 1);
    return true;
  }
  function measure(s) {
    let m = 0, prevVowel = false;
    for (let i = 0; i < s.length; i++) {
      const vowel = !cons(s, i);
      if (prevVowel && !vowel) m++;
      prevVowel = vowel;
    }
    return m;
  }
  function hasVowel(s) {
    for (let i = 0; i < s.length; i++) if (!cons(s, i)) return true;
    return false;
  }
  function doubled(w) {
    return w.length >= 2 && w[w.length - 1] === w[w.length - 2] && cons(w, w.length - 1);
  }
  function cvc(w) {
    const n = w.length;
    return n >= 3 && cons(w, n - 3) && !cons(w, n - 2) && cons(w, n - 1) && !"wxy".includes(w[n - 1]);
  }
  function replace(w, rules, minM) {
    for (const [suffix, repl] of rules) {
      if (w.endsWith(suffix)) {
        const stem = w.slice(0, w.length - suffix.length);
        return measure(stem) > minM ? stem + repl : w;
      }
    }
    return w;
  }
  const STEP2 = [["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"],
    ["bli", "ble"], ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"], ["ization", "ize"],
    ["ation", "ate"], ["ator", "ate"], ["alism", "al"], ["iveness", "ive"], ["fulness", "ful"],
    ["ousness", "ous"], ["aliti", "al"], ["iviti", "ive"], ["biliti", "ble"], ["logi", "log"]];
  const STEP3 = [["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""],
    ["ness", ""]];
  // longest first, ties in the listed order (Python's stable sort)
  const STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize"].map((s, i) => [s, i])
    .sort((a, b) => b[0].length - a[0].length || a[1] - b[1]).map((p) => p[0]);
  function step1c(w) {
    return w.endsWith("y") && hasVowel(w.slice(0, -1)) ? w.slice(0, -1) + "i" : w;
  }
  function step1(w) {
    if (w.endsWith("sses") || w.endsWith("ies")) w = w.slice(0, -2);
    else if (!w.endsWith("ss") && w.endsWith("s")) w = w.slice(0, -1);
    if (w.endsWith("eed")) {
      if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
      return step1c(w);
    }
    for (const suffix of ["ed", "ing"]) {
      if (w.endsWith(suffix) && hasVowel(w.slice(0, -suffix.length))) {
        w = w.slice(0, -suffix.length);
        if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
        else if (doubled(w) && !"lsz".includes(w[w.length - 1])) w = w.slice(0, -1);
        else if (measure(w) === 1 && cvc(w)) w += "e";
        break;
      }
    }
    return step1c(w);
  }
  function step4(w) {
    for (const suffix of STEP4) {
      if (w.endsWith(suffix)) {
        const stem = w.slice(0, w.length - suffix.length);
        if (suffix === "ion" && !(stem.endsWith("s") || stem.endsWith("t"))) return w;
        return measure(stem) > 1 ? stem : w;
      }
    }
    return w;
  }
  function step5(w) {
    if (w.endsWith("e")) {
      const stem = w.slice(0, -1), m = measure(stem);
      if (m > 1 || (m === 1 && !cvc(stem))) w = stem;
    }
    if (w.endsWith("ll") && measure(w) > 1) w = w.slice(0, -1);
    return w;
  }
  const memo = new Map();
  function stem(w) {
    if (w.length <= 2 || !/^[a-z]+$/.test(w)) return w;
    let got = memo.get(w);
    if (got === undefined) {
      got = step5(step4(replace(replace(step1(w), STEP2, 0), STEP3, 0)));
      memo.set(w, got);
    }
    return got;
  }

  // --- search/words.py: words, stopwords, terms -------------------------
  const WORD = /[\p{L}\p{N}]+/gu; // Python's [^\W_]+: letters and digits of any script
  let stop = new Set(), fold = {};
  function words(text) { // Python's casefold(): lower case, then where they differ (settings.fold)
    let low = text.toLowerCase();
    if (/[^\x00-\x7f]/.test(low)) low = low.replace(/[^\x00-\x7f]/g, (c) => fold[c] || c);
    return low.match(WORD) || [];
  }
  function terms(text) {
    const out = [];
    for (const w of words(text)) if (!stop.has(w)) out.push(/^[\x00-\x7f]*$/.test(w) ? stem(w) : w);
    return out;
  }
  // view/files.py term_file: FNV-1a over UTF-16 code units
  function termFile(term, count) {
    let h = 0x811c9dc5;
    for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193) >>> 0;
    return h % count;
  }

  // --- postings: view/collect.py Postings --------------------------------
  // One pass over the text: each entry's row and term count; its positions are read only when the pair
  // bonus asks for them (a common word's postings are tens of thousands of entries).
  function digit(c) {
    return c <= 57 ? c - 48 : c - 87;
  }
  function parse(text) {
    let n = 1;
    for (let i = text.indexOf(","); i >= 0; i = text.indexOf(",", i + 1)) n++;
    const rows = new Int32Array(n), tfs = new Int32Array(n), starts = new Int32Array(n), ends = new Int32Array(n);
    const len = text.length;
    let row = -1, i = 0;
    for (let k = 0; k < n; k++) {
      let v = 0, c = text.charCodeAt(i);
      while (i < len && c !== 47 && c !== 46 && c !== 44) { v = v * 36 + digit(c); c = text.charCodeAt(++i); }
      row += v;
      let tf = -1;
      if (c === 47) { // "/": the term count, when not the number of positions
        tf = 0;
        c = text.charCodeAt(++i);
        while (i < len && c !== 46 && c !== 44) { tf = tf * 36 + digit(c); c = text.charCodeAt(++i); }
      }
      let count = 0;
      starts[k] = i;
      while (i < len && c !== 44) { if (c === 46) count++; c = text.charCodeAt(++i); }
      ends[k] = i;
      rows[k] = row;
      tfs[k] = tf >= 0 ? tf : count;
      i++;
    }
    return { rows: rows, tfs: tfs, places: (k) => text.slice(starts[k] + 1, ends[k]).split(".").map((p) => parseInt(p, 36)) };
  }
  const parsed = new Map(); // term -> postings (or null: in no note)
  let S = null, N = null;
  function use(settings, notes) {
    S = settings;
    N = notes;
    stop = new Set(settings.stopwords.split(" "));
    fold = settings.fold;
  }
  async function postings(term) {
    if (parsed.has(term)) return parsed.get(term);
    const file = await AgentmemFiles.load("t", termFile(term, N.termFiles));
    const got = Object.prototype.hasOwnProperty.call(file, term) ? parse(file[term]) : null;
    parsed.set(term, got);
    return got;
  }

  // --- ranking: search/ranked.py _search, per project as each project's search scores ----------
  let last = { key: null, found: null }; // a keystroke that changes no term (a space) ranks nothing again
  async function rank(query) {
    const qterms = terms(query.replace(/"/g, " "));
    const key = qterms.join(" ");
    if (key === last.key) return last.found;
    const found = await ranked(qterms);
    last = { key: key, found: found };
    return found;
  }
  async function ranked(qterms) {
    const distinct = [...new Set(qterms)].slice(0, S.max_terms);
    if (!distinct.length) return { rows: [], every: [], terms: 0 };
    const held = await Promise.all(distinct.map(postings));
    const np = N.projectCount, stats = N.stats();
    const scores = new Float64Array(N.count), hits = new Int32Array(N.count);
    const touched = [];
    held.forEach((post) => {
      if (!post) return;
      const df = new Int32Array(np);
      for (const r of post.rows) df[N.project[r]]++;
      const idf = Array.from(df, (d, p) => Math.log(1 + (stats.n[p] - d + 0.5) / (d + 0.5)));
      for (let i = 0; i < post.rows.length; i++) {
        const r = post.rows[i], p = N.project[r], tf = post.tfs[i];
        const w = idf[p] * (tf * (S.k1 + 1) / (tf + S.k1 * (1 - S.b + S.b * N.dl[r] / stats.avgdl[p])));
        if (!hits[r]) touched.push(r);
        scores[r] += w;
        hits[r]++;
      }
    });
    // the pair bonus goes to each project's best `depth` notes (and those tied with the last), as there
    const pairs = new Map();
    for (let i = 0; i + 1 < qterms.length; i++) pairs.set(qterms[i] + " " + qterms[i + 1], [qterms[i], qterms[i + 1]]);
    const floor = pairs.size ? floors(touched, scores, np) : null;
    const final = new Float64Array(N.count);
    const where = new Map(distinct.map((t, i) => [t, held[i]]));
    for (const r of touched) {
      let score = scores[r];
      if (pairs.size && score >= floor[N.project[r]]) score += S.pair_bonus * pairsIn(r, pairs, where);
      final[r] = N.due(r) ? score * S.review_demotion : score;
    }
    // best first, then newest, then the highest ID: the page lists rows in that order of (created, ID), so
    // among equal scores the lower row comes first (rows in order, then a stable sort by score)
    const order = Array.from(Int32Array.from(touched).sort()).sort((a, b) => final[b] - final[a]);
    const every = order.filter((r) => hits[r] === distinct.length);
    return { rows: order, every: every, terms: distinct.length };
  }
  function floors(touched, scores, np) { // each project's `depth`-th best score (search/ranked.py _top)
    const per = Array.from({ length: np }, () => []);
    for (const r of touched) per[N.project[r]].push(scores[r]);
    return per.map((s) => (s.length <= S.depth ? -Infinity : Float64Array.from(s).sort()[s.length - S.depth]));
  }
  function pairsIn(r, pairs, where) {
    let found = 0;
    for (const [a, b] of pairs.values()) {
      const pa = at(where.get(a), r), pb = at(where.get(b), r);
      if (!pa || !pb) continue;
      const next = new Set(pb);
      if (pa.some((p) => next.has(p + 1))) found++;
    }
    return found;
  }
  function at(post, r) { // the positions of a term in note r, by binary search over its rows
    if (!post) return null;
    let lo = 0, hi = post.rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1, v = post.rows[mid];
      if (v === r) return post.places(mid);
      if (v < r) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }

  // search/corrections.py mark: each corrected note right below its newest correction, within the
  // first `limit` results; a correction not among them is brought in
  function mark(results, fixersOf, limit) {
    const out = results.slice(0, limit);
    const present = new Set(out), kept = new Set();
    for (let pass = 0; pass < out.length + 8; pass++) {
      let moved = false;
      for (const r of out.slice()) {
        const fixers = fixersOf(r);
        if (!fixers.length) continue;
        const newest = fixers[0];
        if (!present.has(newest)) {
          present.add(newest);
          out.splice(out.indexOf(r), 0, newest);
          moved = true;
        }
        kept.add(r).add(newest);
        if (out.indexOf(r) < out.indexOf(newest)) {
          out.splice(out.indexOf(r), 1);
          out.splice(out.indexOf(newest) + 1, 0, r);
          moved = true;
        }
      }
      if (!moved) break;
    }
    while (out.length > limit) {
      const drop = out.slice().reverse().find((r) => !kept.has(r));
      if (drop === undefined) break;
      out.splice(out.lastIndexOf(drop), 1);
    }
    return out;
  }

  return { use: use, rank: rank, mark: mark, terms: terms, stem: stem, termFile: termFile };
})();

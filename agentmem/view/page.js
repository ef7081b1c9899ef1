/* agentmem's memory view: renders the data in #memory-data (each note's row, in columns: view/page.py),
   and reads a note's details from its note file when it is opened (view/files.py). Sends nothing. */
(function () {
  "use strict";
  const { h, link, body: bodyView } = AgentmemDom;
  const DATA = JSON.parse(document.getElementById("memory-data").textContent);
  const C = DATA.notes, T = C.tables, COUNT = C.count;
  const BATCH = 100; // rows rendered at a time: a keystroke stays cheap at 100k notes (about 12 fit the screen)

  // --- the notes' columns -----------------------------------------------
  const IDS = COUNT ? C.id.split("\n") : [], TITLES = COUNT ? C.title.split("\n") : [];
  const NP = T.projects.length, NK = T.kinds.length;
  const project = new Int32Array(COUNT), kind = new Int32Array(COUNT), agent = new Int32Array(COUNT);
  const dl = new Int32Array(COUNT);
  const attrs = COUNT ? C.attr.split(",") : [], lengths = COUNT ? C.dl.split(",") : [];
  const STATES = COUNT ? C.states.split(",") : [];
  for (let i = 0; i < COUNT; i++) {
    const v = parseInt(attrs[i], 36);
    project[i] = v % NP;
    kind[i] = Math.floor(v / NP) % NK;
    agent[i] = Math.floor(v / (NP * NK));
    dl[i] = parseInt(lengths[i], 36);
  }
  const STATE_NAME = Object.fromEntries(T.states.map((s) => [s.code, s.name]));
  const LABELS = { pending: "pending upload", retracted: "retracted", "review-due": "review due", pinned: "pinned",
    corrected: "corrected", team: "team" };
  function idTime(id) { // view/page.py _id_time
    if (id.length < 20 || id[8] !== "T" || id.slice(18, 20) !== "Z-") return null;
    return id.slice(0, 4) + "-" + id.slice(4, 6) + "-" + id.slice(6, 8) + "T" + id.slice(9, 11) + ":" +
      id.slice(11, 13) + ":" + id.slice(13, 15) + "." + id.slice(15, 18) + "Z";
  }
  function created(i) {
    const given = C.created[i];
    return given !== undefined ? given : idTime(IDS[i]);
  }
  function states(i) { // state names of row i, "corrected" included
    const out = [...STATES[i]].map((c) => STATE_NAME[c]);
    if (C.corrected_by[i]) out.push("corrected");
    return out;
  }
  const has = (i, code) => STATES[i].includes(code);
  const NOTES = {
    count: COUNT, project: project, dl: dl, projectCount: NP, termFiles: DATA.files.term_files,
    due: (i) => has(i, "d"),
    stats: (() => {
      let cached = null;
      return () => {
        if (cached) return cached;
        const n = new Float64Array(NP), total = new Float64Array(NP);
        for (let i = 0; i < COUNT; i++) { n[project[i]]++; total[project[i]] += dl[i]; }
        cached = { n: n, avgdl: Array.from(total, (t, p) => (t ? t / n[p] : 1.0)) };
        return cached;
      };
    })(),
  };
  AgentmemFiles.use(DATA.files);
  AgentmemSearch.use(DATA.search, NOTES);
  const state = { matches: [], shown: 0, selected: null, seq: 0, settled: Promise.resolve() };

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }
  function when(iso) {
    return iso ? iso.slice(0, 16).replace("T", " ") : "";
  }

  // --- the facets --------------------------------------------------------
  function chooser(id, label, names, counts, labels) {
    const sel = h("select", { id: id, "aria-label": label, onchange: apply }, h("option", { value: "", text: label }));
    names.map((name, i) => [name, i]).filter(([, i]) => counts[i]).sort((a, b) => a[0].localeCompare(b[0]))
      .forEach(([name, i]) => sel.append(h("option", { value: String(i),
        text: (labels ? labels[name] : name) + " (" + counts[i] + ")" })));
    return sel;
  }
  function tally(size, each) {
    const counts = new Int32Array(size);
    for (let i = 0; i < COUNT; i++) each(i, counts);
    return counts;
  }
  const STATE_LIST = [...T.states.map((s) => s.name), "corrected"];
  const fProject = chooser("f-project", "All projects", T.projects, tally(NP, (i, c) => c[project[i]]++));
  const fKind = chooser("f-kind", "All kinds", T.kinds, tally(NK, (i, c) => c[kind[i]]++));
  const fTag = chooser("f-tag", "All tags", T.tags, tally(T.tags.length, (i, c) => {
    for (const t of C.tags[i] || []) c[t]++;
  }));
  const fAgent = chooser("f-agent", "All agents", T.agents, tally(T.agents.length, (i, c) => c[agent[i]]++));
  const fState = chooser("f-state", "Any state", STATE_LIST, tally(STATE_LIST.length, (i, c) => {
    for (const s of states(i)) c[STATE_LIST.indexOf(s)]++;
  }), LABELS);
  // the facets' values are indexes; the tests and a person pick them by name
  for (const [sel, names] of [[fProject, T.projects], [fKind, T.kinds], [fAgent, T.agents], [fTag, T.tags],
    [fState, STATE_LIST]]) {
    for (const o of sel.options) if (o.value !== "") o.value = names[+o.value];
  }

  // --- the page ----------------------------------------------------------
  const q = h("input", { type: "search", id: "q", placeholder: "Search notes, or paste an ID",
    title: "Ranked as agentmem search ranks: its first results are search's; then every note holding all the words",
    "aria-label": "Search notes", autocomplete: "off", spellcheck: "false", oninput: apply });
  const fFrom = h("input", { type: "date", id: "f-from", "aria-label": "From date", onchange: apply });
  const fTo = h("input", { type: "date", id: "f-to", "aria-label": "To date", onchange: apply });
  const count = h("p", { id: "count", "aria-live": "polite" });
  const list = h("ol", { id: "list" });
  const more = h("button", { id: "more", type: "button", hidden: true, onclick: () => renderRows(state.shown + BATCH) });
  const detail = h("article", { id: "detail" });
  const views = {
    notes: h("section", { id: "notes-view" },
      h("div", { class: "filters" }, q, fProject, fKind, fTag, fAgent, fState,
        h("label", { class: "date" }, "from ", fFrom), h("label", { class: "date" }, "to ", fTo)),
      h("div", { class: "split" }, h("div", { class: "listpane" }, count, list, more), detail)),
    skills: AgentmemPanels.skills(DATA),
    store: AgentmemPanels.store(DATA),
  };
  const tabs = h("nav", { class: "tabs", role: "tablist" });
  for (const [name, label] of [["notes", "Notes (" + COUNT + ")"], ["skills", "Skills (" + DATA.skills.length + ")"],
    ["store", "Store and freshness"]]) {
    tabs.append(h("button", { type: "button", role: "tab", id: "tab-" + name, "aria-selected": name === "notes",
      text: label, onclick: () => show(name) }));
  }
  function show(name) {
    for (const [key, view] of Object.entries(views)) view.hidden = key !== name;
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.id === "tab-" + name));
  }
  const checked = DATA.projects.map((p) => p.checked_at).filter(Boolean).sort();
  document.body.append(
    h("header", {},
      h("h1", {}, "agentmem ", h("span", { text: "memory" })),
      h("p", { id: "summary", text: plural(COUNT, "note") + " in " + plural(DATA.projects.length, "project") +
        " · store " + DATA.store.label + " · " + (checked.length ? "last checked " + when(checked[0]) + " UTC"
        : "never checked") })),
    AgentmemPanels.banner(DATA), tabs, views.notes, views.skills, views.store);
  show("notes");

  // --- filtering, searching and the list ---------------------------------
  let days = null; // each row's day, made on the first date filter
  function passes() {
    const pick = (sel, names) => (sel.value ? names.indexOf(sel.value) : -1);
    const p = pick(fProject, T.projects), k = pick(fKind, T.kinds), a = pick(fAgent, T.agents);
    const t = pick(fTag, T.tags), st = fState.value, from = fFrom.value, to = fTo.value;
    if ((from || to) && !days) days = Array.from({ length: COUNT }, (_, i) => (created(i) || "").slice(0, 10));
    return (i) => (p < 0 || project[i] === p) && (k < 0 || kind[i] === k) && (a < 0 || agent[i] === a) &&
      (t < 0 || (C.tags[i] || []).includes(t)) && (!st || states(i).includes(st)) &&
      (!from || days[i] >= from) && (!to || days[i] <= to);
  }
  let byId = null;
  function idMatches(query) { // a pasted note ID finds its note(s), in every project
    if (!byId) {
      byId = new Map();
      IDS.forEach((id, i) => byId.set(id, (byId.get(id) || []).concat(i)));
    }
    return query.split(/\s+/).flatMap((w) => byId.get(w) || []);
  }
  function fixersOf(i) { // for search's ordering: the corrections not retracted, newest first
    return (C.corrected_by[i] || []).filter((r) => !has(r, "r"));
  }
  function apply() {
    const seq = ++state.seq, query = q.value.trim(), ok = passes();
    if (!query) {
      showRows(seq, Array.from({ length: COUNT }, (_, i) => i).filter(ok), null);
      state.settled = Promise.resolve();
      return state.settled;
    }
    count.textContent = "Searching…";
    state.settled = AgentmemSearch.rank(query).then((found) => {
      if (seq !== state.seq) return;
      const direct = idMatches(query).filter(ok);
      const ranked = found.rows.filter(ok);
      const first = AgentmemSearch.mark(ranked, fixersOf, DATA.search.limit);
      const every = new Set(found.every);
      const seen = new Set([...direct, ...first]);
      const rest = ranked.filter((r) => every.has(r) && !seen.has(r));
      showRows(seq, [...direct, ...first.filter((r) => !direct.includes(r)), ...rest], found);
    }, (err) => {
      if (seq === state.seq) count.textContent = "The search could not read its files: " + err.message;
    });
    return state.settled;
  }
  function showRows(seq, rows, found) {
    if (seq !== state.seq) return;
    state.matches = rows;
    state.found = found;
    list.replaceChildren();
    state.shown = 0;
    renderRows(BATCH);
    // the details shown are always of a listed note: the one chosen while it stays listed, else the first
    if (state.selected !== null && rows.includes(state.selected)) return;
    if (rows.length) return select(rows[0]);
    state.selected = null;
    detail.replaceChildren(h("p", { class: "empty", text: "No note is listed: change the search or the filters." }));
  }
  function renderRows(upto) {
    const frag = document.createDocumentFragment();
    const end = Math.min(upto, state.matches.length);
    for (let i = state.shown; i < end; i++) frag.append(row(state.matches[i]));
    list.append(frag);
    state.shown = end;
    const total = state.matches.length;
    count.textContent = (total === COUNT ? total + " notes" : total + " of " + COUNT + " notes") +
      (end < total ? " (showing " + end + ")" : "");
    more.hidden = end >= total;
    more.textContent = "Show " + Math.min(BATCH, total - end) + " more";
  }
  function badges(i, states_) {
    const out = [h("span", { class: "kind kind-" + T.kinds[kind[i]], text: T.kinds[kind[i]] })];
    for (const s of states_) out.push(h("span", { class: "state state-" + s.name, title: s.detail, text: s.label }));
    if (C.corrects[i] !== undefined) out.push(h("span", { class: "state state-correction", text: "correction" }));
    return out;
  }
  function rowStates(i) {
    return states(i).map((name) => ({ name: name, label: LABELS[name] || name }));
  }
  function row(i) {
    const li = h("li", { class: "note" + (state.selected === i ? " selected" : "") + (has(i, "r") ? " retracted" : ""),
      "data-id": IDS[i], "data-project": T.projects[project[i]], "data-row": i, tabindex: "0",
      onclick: () => select(i), onkeydown: (e) => { if (e.key === "Enter") select(i); } },
    h("div", { class: "title" }, badges(i, rowStates(i)), h("span", { class: "t", text: TITLES[i] })),
    h("div", { class: "meta" },
      h("span", { text: when(created(i)) }), h("span", { class: "project", text: T.projects[project[i]] }),
      h("span", { text: T.agents[agent[i]] }),
      (C.tags[i] || []).slice(0, 4).map((t) => h("span", { class: "tag", text: T.tags[t] }))));
    return li;
  }

  // --- one note -----------------------------------------------------------
  function noteLink(r) {
    if (typeof r !== "number") return h("span", { class: "missing", text: r + " (not on this machine)" });
    return h("button", { type: "button", class: "linkish", onclick: () => select(r) },
      TITLES[r] + " ", h("span", { class: "id", text: when(created(r)) }));
  }
  function select(i) {
    state.selected = i;
    for (const el of list.querySelectorAll("li.selected")) el.classList.remove("selected");
    const rowEl = list.querySelector('li[data-row="' + i + '"]');
    if (rowEl) rowEl.classList.add("selected");
    const per = DATA.files.notes_per_file;
    detail.replaceChildren(h("h2", { text: TITLES[i] }), h("div", { class: "badges" }, badges(i, rowStates(i))),
      h("p", { class: "loading", text: "Reading the note…" }));
    return AgentmemFiles.load("n", Math.floor(i / per)).then((file) => {
      if (state.selected === i) showNote(i, file[i % per]);
    }, (err) => {
      if (state.selected === i) detail.replaceChildren(h("h2", { text: TITLES[i] }), h("p", { class: "notice", text: err.message }));
    });
  }
  function showNote(i, given) {
    const n = Object.assign({ title: TITLES[i], sources: [], states: [], session: null }, given); // view/collect.py
    const pname = T.projects[project[i]];
    const facts = [["ID", IDS[i]], ["Project", pname], ["Kind", T.kinds[kind[i]]], ["Created", when(created(i)) + " UTC"],
      ["Agent", T.agents[agent[i]]]];
    const who = T.agents[agent[i]];
    facts.push(["Machine", who.includes("@") ? who.slice(who.lastIndexOf("@") + 1) : "unknown"]);
    if (n.author) facts.push(["Author", n.author]);
    if (n.promoted_from) facts.push(["Promoted from", n.promoted_from]);
    if (n.session) facts.push(["Session", n.session]);
    const dl_ = h("dl", {}, facts.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })]));
    const tags = (C.tags[i] || []).map((t) => T.tags[t]);
    if (tags.length) dl_.append(h("dt", { text: "Tags" }), h("dd", {}, tags.map((t) => h("span", { class: "tag", text: t }))));
    if (n.sources.length) {
      dl_.append(h("dt", { text: "Sources" }),
        h("dd", {}, h("ul", { class: "sources" }, n.sources.map((s) => h("li", {}, link(s, s))))));
    }
    const notices = [];
    for (const s of n.states) {
      const box = h("div", { class: "notice state-" + s.name }, h("strong", { text: s.label + ": " }));
      if (s.command) box.append("retry the upload with", AgentmemPanels.command(s.command), h("span", { class: "why", text: s.detail }));
      else box.append(s.detail);
      notices.push(box);
    }
    const fixers = C.corrected_by[i] || [];
    if (fixers.length) {
      notices.push(h("div", { class: "notice state-corrected" },
        h("strong", { text: "Corrected by a later note, read it first: " }), fixers.map(noteLink)));
    }
    if (C.corrects[i] !== undefined) {
      notices.push(h("div", { class: "notice state-correction" }, h("strong", { text: "Corrects: " }),
        noteLink(C.corrects[i])));
    }
    const title = n.title.length > 2000 ? n.title.slice(0, 2000) + "… (" + AgentmemDom.size(n.title.length) + ")" : n.title;
    const shown = n.states.concat(fixers.length ? [{ name: "corrected", label: "corrected" }] : []);
    detail.replaceChildren(h("h2", { text: title }), h("div", { class: "badges" }, badges(i, shown)), ...notices, dl_,
      AgentmemPanels.actions(has(i, "t") ? (DATA.commands[pname] || {}).team : DATA.commands[pname], IDS[i],
        has(i, "r"), has(i, "p"), pname), bodyView(n.body)); // a team note's commands carry --team
    detail.scrollTop = 0;
  }

  // for a test or a benchmark: when the last keystroke's list is shown, and the search's words
  window.agentmemView = { settled: () => state.settled, terms: AgentmemSearch.terms, termFile: AgentmemSearch.termFile };
  apply();
  document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
})();

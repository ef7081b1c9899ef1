/* agentmem's memory view: renders the JSON in #memory-data. Loads nothing, sends nothing.
   Note text only ever reaches the page through textContent (never as markup); the Markdown
   subset below builds its elements with DOM calls, and links only http(s) URLs. */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("memory-data").textContent);
  const NOTES = DATA.notes;
  const BY_ID = new Map(NOTES.map((n) => [n.id, n]));
  const BATCH = 100; // rows rendered at a time: a filter keystroke stays cheap at 10k notes (about 12 fit the screen)
  const state = { matches: [], shown: 0, selected: null };

  // --- DOM helpers ------------------------------------------------------
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return el;
  }
  const WEB = /^https?:\/\/[^\s]+$/i;
  function safeUrl(text) {
    if (!WEB.test(text)) return null;
    try {
      const url = new URL(text);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }
  function link(label, url) {
    const href = safeUrl(url);
    if (href === null) return document.createTextNode(label === url ? label : "[" + label + "](" + url + ")");
    return h("a", { href: href, rel: "noopener noreferrer", target: "_blank", text: label });
  }
  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }
  function when(iso) {
    return iso ? iso.slice(0, 16).replace("T", " ") : "";
  }

  // --- a small Markdown subset, built with DOM calls --------------------
  const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+)/g;
  function inline(text) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > last) out.push(text.slice(last, m.index));
      if (m[1]) out.push(h("code", { text: m[1].slice(1, -1) }));
      else if (m[2]) out.push(h("strong", { text: m[2].slice(2, -2) }));
      else if (m[3]) out.push(link(m[3], m[4]));
      else {
        const url = m[5].replace(/[.,;:!?'"]+$/, ""); // a sentence's full stop is not part of its URL
        out.push(link(url, url));
        last = m.index + url.length;
        continue;
      }
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }
  function markdown(body) {
    const root = h("div", { class: "body" });
    const lines = body.split("\n");
    let para = [], list = null;
    const flush = () => {
      if (para.length) root.append(h("p", {}, inline(para.join("\n"))));
      para = [];
      list = null;
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = line.match(/^\s*(```|~~~)/);
      if (fence) {
        flush();
        const code = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) code.push(lines[i]);
        root.append(h("pre", {}, h("code", { text: code.join("\n") })));
        continue;
      }
      const head = line.match(/^(#{1,6})\s+(.*)$/);
      const item = line.match(/^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/);
      if (!line.trim()) flush();
      else if (head) {
        flush();
        root.append(h("h" + Math.min(6, head[1].length + 2), {}, inline(head[2])));
      } else if (item) {
        if (para.length) flush();
        const tag = item[1] ? "ol" : "ul";
        if (!list || list.tagName.toLowerCase() !== tag) {
          list = h(tag);
          root.append(list);
        }
        list.append(h("li", {}, inline(item[2])));
      } else if (line.startsWith(">")) {
        flush();
        root.append(h("blockquote", {}, inline(line.replace(/^>\s?/, ""))));
      } else {
        list = null;
        para.push(line);
      }
    }
    flush();
    return root;
  }

  // --- the haystacks and facets, computed once --------------------------
  // The lowercase text each search looks in: built just after the first render (or by the first
  // keystroke, if that comes sooner), so the list shows before 10k notes are lowercased.
  let hayReady = false;
  function ensureHay() {
    if (hayReady) return;
    for (const n of NOTES) {
      n._hay = [n.title, n.body, n.tags.join(" "), n.sources.join(" "), n.agent, n.project, n.id, n.kind,
        n.session || "", n.states.map((s) => s.label).join(" ")].join("\n").toLowerCase();
    }
    hayReady = true;
  }
  for (const n of NOTES) {
    n._day = (n.created || "").slice(0, 10);
    n._states = new Set(n.states.map((s) => s.name));
    if (n.corrected_by.length) n._states.add("corrected");
  }
  function facet(values) {
    const counts = new Map();
    for (const v of values) if (v) counts.set(v, (counts.get(v) || 0) + 1);
    return [...counts.entries()].sort((a, b) => a[0].localeCompare(b[0]));
  }
  function chooser(id, label, values, names) {
    const sel = h("select", { id: id, "aria-label": label, onchange: apply },
      h("option", { value: "", text: label }));
    for (const [value, count] of facet(values)) {
      sel.append(h("option", { value: value, text: (names && names[value]) || value + " (" + count + ")" }));
    }
    return sel;
  }
  const stateNames = { corrected: "corrected" };
  for (const n of NOTES) for (const s of n.states) stateNames[s.name] = s.label;
  const stateCounts = facet(NOTES.flatMap((n) => [...n._states]));
  const stateLabels = Object.fromEntries(stateCounts.map(([v, c]) => [v, stateNames[v] + " (" + c + ")"]));

  // --- the page ---------------------------------------------------------
  const q = h("input", { type: "search", id: "q", placeholder: "Search notes, tags, sources, IDs",
    "aria-label": "Search notes", autocomplete: "off", spellcheck: "false", oninput: apply });
  const fProject = chooser("f-project", "All projects", NOTES.map((n) => n.project));
  const fKind = chooser("f-kind", "All kinds", NOTES.map((n) => n.kind));
  const fTag = chooser("f-tag", "All tags", NOTES.flatMap((n) => n.tags));
  const fAgent = chooser("f-agent", "All agents", NOTES.map((n) => n.agent));
  const fState = chooser("f-state", "Any state", NOTES.flatMap((n) => [...n._states]), stateLabels);
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
    skills: skillsView(),
    store: storeView(),
  };
  const tabs = h("nav", { class: "tabs", role: "tablist" });
  for (const [name, label] of [["notes", "Notes (" + NOTES.length + ")"],
    ["skills", "Skills (" + DATA.skills.length + ")"], ["store", "Store and freshness"]]) {
    tabs.append(h("button", { type: "button", role: "tab", id: "tab-" + name, "aria-selected": name === "notes",
      text: label, onclick: () => show(name) }));
  }
  function show(name) {
    for (const [key, view] of Object.entries(views)) view.hidden = key !== name;
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.id === "tab-" + name));
  }
  const projects = DATA.projects.map((p) => p.name);
  const checked = DATA.projects.map((p) => p.checked_at).filter(Boolean).sort();
  document.body.append(
    h("header", {},
      h("h1", {}, "agentmem ", h("span", { text: "memory" })),
      h("p", { id: "summary", text: plural(NOTES.length, "note") + " in " + plural(projects.length, "project") +
        " · store " + DATA.store.label + " · " + (checked.length ? "last checked " + when(checked[0]) + " UTC"
        : "never checked") })),
    staleBanner(), tabs, views.notes, views.skills, views.store);
  show("notes");

  function staleBanner() {
    if (!DATA.stale) return h("div", { id: "fresh", class: "banner ok", text: "Up to date: the store was checked for every project shown." });
    return h("div", { id: "stale", class: "banner warn" },
      h("strong", { text: "This view may be stale or incomplete." }),
      h("ul", {}, DATA.stale_reasons.map((r) => h("li", { text: r }))));
  }

  // --- filtering and the list -------------------------------------------
  function apply() {
    const words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    const project = fProject.value, kind = fKind.value, tag = fTag.value, agent = fAgent.value;
    const st = fState.value, from = fFrom.value, to = fTo.value;
    if (words.length) ensureHay();
    const out = [];
    for (const n of NOTES) {
      if (project && n.project !== project) continue;
      if (kind && n.kind !== kind) continue;
      if (agent && n.agent !== agent) continue;
      if (tag && !n.tags.includes(tag)) continue;
      if (st && !n._states.has(st)) continue;
      if (from && n._day < from) continue;
      if (to && n._day > to) continue;
      let ok = true;
      for (const w of words) if (!n._hay.includes(w)) { ok = false; break; }
      if (ok) out.push(n);
    }
    state.matches = out;
    list.replaceChildren();
    state.shown = 0;
    renderRows(BATCH);
  }
  function renderRows(upto) {
    const frag = document.createDocumentFragment();
    const end = Math.min(upto, state.matches.length);
    for (let i = state.shown; i < end; i++) frag.append(row(state.matches[i]));
    list.append(frag);
    state.shown = end;
    const total = state.matches.length;
    count.textContent = (total === NOTES.length ? total + " notes" : total + " of " + NOTES.length + " notes") +
      (end < total ? " (showing " + end + ")" : "");
    more.hidden = end >= total;
    more.textContent = "Show " + Math.min(BATCH, total - end) + " more";
  }
  function badges(n) {
    const out = [h("span", { class: "kind kind-" + n.kind, text: n.kind })];
    for (const s of n.states) out.push(h("span", { class: "state state-" + s.name, title: s.detail, text: s.label }));
    if (n.corrected_by.length) out.push(h("span", { class: "state state-corrected", text: "corrected" }));
    if (n.corrects) out.push(h("span", { class: "state state-correction", text: "correction" }));
    return out;
  }
  function row(n) {
    const li = h("li", { class: "note" + (state.selected === n.id ? " selected" : "") +
      (n._states.has("retracted") ? " retracted" : ""), "data-id": n.id,
      tabindex: "0", onclick: () => select(n.id), onkeydown: (e) => { if (e.key === "Enter") select(n.id); } },
      h("div", { class: "title" }, badges(n), h("span", { class: "t", text: n.title })),
      h("div", { class: "meta" },
        h("span", { text: when(n.created) }), h("span", { class: "project", text: n.project }),
        h("span", { text: n.agent }),
        n.tags.slice(0, 4).map((t) => h("span", { class: "tag", text: t }))));
    return li;
  }

  // --- one note ---------------------------------------------------------
  function noteLink(id) {
    const target = BY_ID.get(id);
    if (!target) return h("span", { class: "missing", text: id + " (not on this machine)" });
    return h("button", { type: "button", class: "linkish", onclick: () => select(id) },
      target.title + " ", h("span", { class: "id", text: when(target.created) }));
  }
  function select(id) {
    const n = BY_ID.get(id);
    if (!n) return;
    state.selected = id;
    for (const el of list.querySelectorAll("li.selected")) el.classList.remove("selected");
    const rowEl = list.querySelector('li[data-id="' + CSS.escape(id) + '"]');
    if (rowEl) rowEl.classList.add("selected");
    const facts = [["ID", n.id], ["Project", n.project], ["Kind", n.kind], ["Created", when(n.created) + " UTC"],
      ["Agent", n.agent], ["Machine", n.machine || "unknown"]];
    if (n.session) facts.push(["Session", n.session]);
    const dl = h("dl", {}, facts.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })]));
    if (n.tags.length) dl.append(h("dt", { text: "Tags" }), h("dd", {}, n.tags.map((t) => h("span", { class: "tag", text: t }))));
    if (n.sources.length) {
      dl.append(h("dt", { text: "Sources" }),
        h("dd", {}, h("ul", { class: "sources" }, n.sources.map((s) => h("li", {}, link(s, s))))));
    }
    const notices = [];
    for (const s of n.states) {
      notices.push(h("div", { class: "notice state-" + s.name }, h("strong", { text: s.label + ": " }), s.detail));
    }
    if (n.corrected_by.length) {
      notices.push(h("div", { class: "notice state-corrected" },
        h("strong", { text: "Corrected by a later note, read it first: " }),
        n.corrected_by.map((c) => noteLink(c))));
    }
    if (n.corrects) {
      notices.push(h("div", { class: "notice state-correction" }, h("strong", { text: "Corrects: " }), noteLink(n.corrects)));
    }
    detail.replaceChildren(h("h2", { text: n.title }), h("div", { class: "badges" }, badges(n)), ...notices, dl,
      markdown(n.body));
    detail.scrollTop = 0;
  }

  // --- skills and the store ---------------------------------------------
  function skillsView() {
    const sec = h("section", { id: "skills-view", class: "panel" });
    if (!DATA.skills.length) sec.append(h("p", { class: "empty", text: "No shared skills in the store." }));
    for (const s of DATA.skills) {
      const inst = s.installed.map((i) => i.runtime + " " + (i.revision || "(not from the store)")).join(", ");
      sec.append(h("div", { class: "skill" }, h("h3", { text: s.name }),
        h("p", { class: "installed", text: inst ? "installed: " + inst : "not installed here" }),
        h("table", {}, h("tr", {}, ["revision", "description", "files", "size"].map((t) => h("th", { text: t }))),
          s.revisions.map((r) => h("tr", {}, h("td", { class: "id", text: r.revision }),
            h("td", { text: r.problem ? "unusable: " + r.problem : r.description || "" }),
            h("td", { text: String(r.files) }), h("td", { text: r.bytes + " B" }))))));
    }
    return sec;
  }
  function storeView() {
    const rows = DATA.projects.map((p) => h("tr", {}, h("td", { text: p.name }), h("td", { text: String(p.notes) }),
      h("td", { text: p.checked_at ? when(p.checked_at) + " UTC" : "never" }),
      h("td", { class: p.stale ? "warn" : "ok", text: p.stale ? "may be stale: " + p.stale_reason : "current" }),
      h("td", { text: p.unreadable.map((u) => u.id + ": " + u.message).join("; ") })));
    const sec = h("section", { id: "store-view", class: "panel" },
      h("dl", {}, [["Store", DATA.store.label + " (" + DATA.store.kind + ")"], ["This machine's agent", DATA.agent],
        ["Projects shown", { machine: "every project this machine knows", store: "every project in the store",
          project: "one project" }[DATA.scope]], ["Page written", when(DATA.generated_at) + " UTC"]]
        .map(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })])),
      h("table", {}, h("tr", {}, ["project", "notes", "store last checked", "freshness", "unreadable in the store"]
        .map((t) => h("th", { text: t }))), rows));
    if (DATA.pending_unreadable.length) {
      sec.append(h("h3", { text: "Pending folders without a readable note" }),
        h("ul", {}, DATA.pending_unreadable.map((b) => h("li", { text: b.id + ": " + b.problem }))));
    }
    if (DATA.withheld) {
      sec.append(h("p", { class: "notice", text: DATA.withheld + " credential(s) were withheld from this page." }));
    }
    return sec;
  }

  apply();
  if (NOTES.length) select(NOTES[0].id);
  document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  setTimeout(ensureHay, 0);
})();

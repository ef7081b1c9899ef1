/* agentmem's memory view: the freshness banner, the skills and store tabs, and the commands that act on a
   note. Each command is the line `agentmem` itself rendered (view/commands.py: the absolute helper, each
   word quoted); the page only puts the note's ID where the project's line has its placeholder. */
const AgentmemPanels = (function () {
  "use strict";
  const { h } = AgentmemDom;
  function when(iso) {
    return iso ? iso.slice(0, 16).replace("T", " ") : "";
  }

  function banner(DATA) {
    if (!DATA.stale) return h("div", { id: "fresh", class: "banner ok", text: "Up to date: the store was checked for every project shown." });
    return h("div", { id: "stale", class: "banner warn" },
      h("strong", { text: "This view may be stale or incomplete." }),
      h("ul", {}, DATA.stale_reasons.map((r) => h("li", { text: r }))));
  }

  // One command, as it runs, and a button that copies it (or selects it where the clipboard is refused).
  function command(line) {
    const code = h("code", { class: "cmd", text: line });
    const button = h("button", { type: "button", class: "copy", text: "Copy" });
    button.addEventListener("click", () => {
      const selectIt = () => {
        const range = document.createRange();
        range.selectNodeContents(code);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        button.textContent = "Selected: copy it with Ctrl+C";
      };
      if (!navigator.clipboard) return selectIt();
      navigator.clipboard.writeText(line).then(() => { button.textContent = "Copied"; }, selectIt);
    });
    return h("div", { class: "command" }, code, button);
  }

  const ACTIONS = [
    ["retract", "Retract it: no longer true (search hides it; edit the reason if you like)"],
    ["pin", "Pin it: shown at the start of every session of the project"],
    ["unpin", "Unpin it"],
    ["purge", "Purge it: delete it from the store and every machine, for good (asks first)"],
  ];
  // The commands that act on note `id` of project `name` (`given`: the project's lines, view/commands.py).
  function actions(given, id, retracted, pinned, name) {
    const box = h("details", { class: "actions" }, h("summary", { text: "Act on this note: " +
      (given && given.lines ? (retracted ? "" : "retract, ") + (pinned ? "unpin" : "pin") + ", purge" : "how") }));
    if (!given || !given.lines) {
      box.append(h("p", { class: "empty", text: "Project " + name + " is not mapped on this machine, so no command " +
        "can act on its notes here" + (given && given.map ? ": map a checkout of it first (" + given.map +
        ", DIRECTORY being the checkout), then run agentmem view again." : ".") }));
      return box;
    }
    for (const [what, label] of ACTIONS) {
      if ((what === "retract" && retracted) || (what === "pin" && pinned) || (what === "unpin" && !pinned)) continue;
      const line = given.lines[what].split(given.placeholder).join(id); // view/commands.py for_note
      box.append(h("div", { class: "action action-" + what }, h("p", { text: label }), command(line)));
    }
    return box;
  }

  function skills(DATA) {
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

  function store(DATA) {
    const rows = DATA.projects.map((p) => h("tr", {}, h("td", { text: p.name }), h("td", { text: String(p.notes) }),
      h("td", { text: p.checked_at ? when(p.checked_at) + " UTC" : "never" }),
      h("td", { class: p.stale ? "warn" : "ok", text: p.stale ? "may be stale: " + p.stale_reason : "current" }),
      h("td", { text: p.unreadable.map((u) => u.id + ": " + u.message).join("; ") })));
    const sec = h("section", { id: "store-view", class: "panel" },
      h("dl", {}, [["Store", DATA.store.label + " (" + DATA.store.kind + ")"],
        ...(DATA.store.team ? [["Team store", DATA.store.team + " (its notes marked team)"]] : []),
        ["This machine's agent", DATA.agent],
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

  return { banner: banner, command: command, actions: actions, skills: skills, store: store };
})();

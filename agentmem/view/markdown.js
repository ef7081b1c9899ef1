/* agentmem's memory view: building elements, and a small Markdown subset built with DOM calls.
   Note text only ever reaches the page through textContent (never as markup); only http(s) URLs
   become links. A body is shown in pieces: the first BODY_SHOWN characters as Markdown, the rest as
   plain text on request, REST_STEP at a time, so a note of a megabyte never stalls the page, and every
   pattern below is bounded (no pattern can scan a long line once per character of it). */
const AgentmemDom = (function () {
  "use strict";
  const BODY_SHOWN = 64 * 1024;
  const REST_STEP = 256 * 1024;

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
  function trimEnd(url) { // a sentence's full stop is not part of its URL
    let end = url.length;
    while (end > 0 && ".,;:!?'\"".includes(url[end - 1])) end--;
    return url.slice(0, end);
  }

  const INLINE = /(`[^`\n]{1,1000}`)|(\*\*[^*\n]{1,1000}\*\*)|\[([^\]\n]{1,500})\]\(([^)\s]{1,2000})\)|(https?:\/\/[^\s<>()]{1,2000})/g;
  function inline(text) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > last) out.push(text.slice(last, m.index));
      if (m[1]) out.push(h("code", { text: m[1].slice(1, -1) }));
      else if (m[2]) out.push(h("strong", { text: m[2].slice(2, -2) }));
      else if (m[3]) out.push(link(m[3], m[4]));
      else {
        const url = trimEnd(m[5]);
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
      const fence = line.match(/^[ \t]{0,8}(```|~~~)/);
      if (fence) {
        flush();
        const code = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) code.push(lines[i]);
        root.append(h("pre", {}, h("code", { text: code.join("\n") })));
        continue;
      }
      const head = line.match(/^(#{1,6})[ \t]+(.*)$/);
      const item = line.match(/^[ \t]{0,8}(?:[-*+]|(\d{1,9})[.)])[ \t]+(.*)$/);
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
        root.append(h("blockquote", {}, inline(line.replace(/^>[ \t]?/, ""))));
      } else {
        list = null;
        para.push(line);
      }
    }
    flush();
    return root;
  }
  function size(chars) {
    return chars < 1024 * 1024 ? Math.ceil(chars / 1024) + " KB" : (chars / 1048576).toFixed(1) + " MB";
  }
  // A body: its first BODY_SHOWN characters (to a line's end) as Markdown, the rest on request.
  function body(text) {
    if (text.length <= BODY_SHOWN) return markdown(text);
    let cut = text.lastIndexOf("\n", BODY_SHOWN);
    if (cut < BODY_SHOWN / 2) cut = BODY_SHOWN;
    const root = markdown(text.slice(0, cut));
    let shown = cut;
    const more = h("button", { type: "button", class: "more-body" });
    const note = h("p", { class: "notice long" });
    const say = () => {
      note.textContent = "This note is " + size(text.length) + " long; " + size(shown) + " of it is shown" +
        (shown < cut + 1 ? " (as formatted text)." : ", the rest as plain text.");
      more.textContent = "Show " + size(Math.min(REST_STEP, text.length - shown)) + " more";
      more.hidden = shown >= text.length;
    };
    more.addEventListener("click", () => {
      const next = Math.min(text.length, shown + REST_STEP);
      more.before(h("pre", { class: "rest", text: text.slice(shown, next) }));
      shown = next;
      say();
    });
    say();
    root.append(note, more);
    return root;
  }
  return { h: h, link: link, markdown: markdown, body: body, size: size };
})();

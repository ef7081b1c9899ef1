"""The memory view in a real browser: Debian's Chromium driven by Playwright (tests/browserkit.py).

Notes are saved through the real CLI into a folder store in a throwaway home, `agentmem view` writes
the page, and Chromium opens it from file:// as a person would. Every request the page makes is
recorded (and anything but the page itself refused), every dialog too.
"""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path

import pytest

from tests import browserkit
from tests.fixtures_core import missing_prerequisite, save_pending
from tests.test_view import saved, two_projects

pytestmark = pytest.mark.slow  # a real Chromium

PWNED = "window.__agentmem_pwned"
HOSTILE_BODY = (
    "Hostile text, shown as text:\n"
    f"<script>{PWNED} = 1; alert('script')</script>\n"
    f"<img src=x onerror=\"{PWNED} = 2\">\n"
    f"<a href=\"javascript:{PWNED} = 3\">a raw link</a> and [a Markdown link](javascript:{PWNED}=4)\n"
    "</textarea><textarea>\n"
    f"</script><script>{PWNED} = 5</script>\n"
    f"<svg onload=\"{PWNED} = 6\"></svg> <iframe src=\"data:text/html,<script>parent.{PWNED}=7</script>\"></iframe>\n"
    "![an image](http://127.0.0.1:9/x.png)\n"
)


@pytest.fixture(scope="module")
def chromium():
    why = browserkit.missing()
    if why:
        missing_prerequisite(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = browserkit.launch(pw)
        yield browser
        browser.close()


class Visit:
    """One page opened in a fresh browser context, with every request and dialog recorded."""

    def __init__(self, browser, path):
        self.url = path.as_uri()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.context.route("**/*", lambda route: route.continue_() if route.request.url == self.url else route.abort())
        self.page = self.context.new_page()
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.url)
        self.page.wait_for_selector("html[data-ready-ms]")

    def rows(self) -> list[str]:
        # textContent: rows skip rendering until they are on screen (content-visibility), and innerText
        # reads rendered text, empty for a row the next frame has not reached yet
        return self.page.locator("#list li.note .t").all_text_contents()

    def close(self):
        self.context.close()


@pytest.fixture
def visit(chromium):
    opened = []

    def _visit(path):
        opened.append(Visit(chromium, path))
        return opened[-1]

    yield _visit
    for v in opened:
        v.close()


def view(m) -> Path:
    status, out, err = m.json("view", cwd=m.user_home)
    assert status == 0, err
    return Path(out["path"])


def test_the_page_lists_every_saved_note(laptop, visit):
    titles = [f"Note number {i}" for i in range(5)]
    for t in titles:
        saved(laptop, laptop.checkout, f"body of {t}", "--title", t)
    v = visit(view(laptop))
    assert sorted(v.rows()) == sorted(titles)
    assert v.page.inner_text("#count") == "5 notes" and v.errors == []


def test_typing_in_the_search_box_filters_the_notes(laptop, visit):
    saved(laptop, laptop.checkout, "The cache key is the lockfile hash", "--title", "Cache key")
    saved(laptop, laptop.checkout, "Lockfile changes bust the cache", "--title", "Cache busting")
    saved(laptop, laptop.checkout, "Deploys wait for the schema migration", "--title", "Deploy order")
    v = visit(view(laptop))
    search = v.page.locator("input[type=search]")
    search.press_sequentially("lockfile")  # key by key, as a person types
    assert sorted(v.rows()) == ["Cache busting", "Cache key"] and v.page.inner_text("#count") == "2 of 3 notes"
    search.press_sequentially(" hash")
    assert v.rows() == ["Cache key"]
    search.fill("")
    assert len(v.rows()) == 3


def test_the_filters_narrow_by_project_kind_tag_agent_and_state(machines, tmp_path, visit):
    m, web, api = two_projects(machines, tmp_path)
    saved(m, web, "web build", "--title", "Web build", "--tag", "build")
    saved(m, web, "web checkpoint", "--title", "Web checkpoint", "--kind", "checkpoint")
    saved(m, api, "api build", "--title", "Api build", "--tag", "build")
    v = visit(view(m))
    v.page.select_option("#f-project", "web")
    assert sorted(v.rows()) == ["Web build", "Web checkpoint"]
    v.page.select_option("#f-tag", "build")
    assert v.rows() == ["Web build"]
    v.page.select_option("#f-project", "")
    v.page.select_option("#f-tag", "")
    v.page.select_option("#f-kind", "checkpoint")
    assert v.rows() == ["Web checkpoint"]
    v.page.select_option("#f-kind", "")
    v.page.fill("#f-from", "2000-01-01")
    v.page.fill("#f-to", "2000-12-31")
    assert v.rows() == [] and v.page.inner_text("#count") == "0 of 3 notes"


def test_a_hostile_note_shows_as_text_and_runs_nothing(laptop, visit):  # INV view-inert
    hostile = saved(laptop, laptop.checkout, HOSTILE_BODY, "--title", f"<img src=x onerror=\"{PWNED}=8\"> title",
                    "--tag", "<b>bold</b>", "--source", f"javascript:{PWNED}=9")
    v = visit(view(laptop))
    v.page.click(f'li.note[data-id="{hostile}"]')
    v.page.mouse.move(400, 300)
    time.sleep(0.3)  # an onerror/onload would have fired by now
    detail = v.page.inner_text("#detail")
    for text in ("<script>", "onerror=", "javascript:", "</textarea>", "</script>", "<svg onload=", "<iframe"):
        assert text in detail, text
    assert v.page.evaluate(PWNED) is None and v.dialogs == [] and v.errors == []
    injected = v.page.evaluate("""() => ({
        scripts: document.scripts.length,
        media: document.querySelectorAll("img, svg, iframe, textarea, object, embed, video, audio").length,
        handlers: [...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length,
        scriptLinks: [...document.links].filter(a => !/^https?:/.test(a.href)).length,
        bold: document.querySelectorAll("b").length,
    })""")
    assert injected == {"scripts": 2, "media": 0, "handlers": 0, "scriptLinks": 0, "bold": 0}
    assert v.requests == [v.url]


def test_the_page_makes_no_network_request(laptop, visit):  # INV view-inert
    saved(laptop, laptop.checkout, "See https://example.com/docs. And ![img](https://example.com/a.png)",
          "--title", "Links", "--source", "https://example.com/issue/1")
    v = visit(view(laptop))
    v.page.locator("input[type=search]").press_sequentially("links")
    v.page.click("#tab-skills")
    v.page.click("#tab-store")
    v.page.click("#tab-notes")
    assert v.requests == [v.url]  # the page itself, nothing else
    assert v.page.locator("#detail a[href='https://example.com/docs']").count() == 1  # a link, never fetched


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_the_policy_stops_even_injected_code_from_reaching_a_server(laptop, chromium, tmp_path):  # INV view-inert
    """Were a script to run in the page anyway, the Content-Security-Policy would still let it load nothing."""
    saved(laptop, laptop.checkout, "a note")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(view(laptop).as_uri())
        page.wait_for_selector("html[data-ready-ms]")
        outcome = page.evaluate("""async (base) => {
            const img = new Image(); img.src = base + "/img";
            document.body.append(img);
            const frame = document.createElement("iframe"); frame.src = base + "/frame";
            document.body.append(frame);
            const style = document.createElement("link"); style.rel = "stylesheet"; style.href = base + "/css";
            document.head.append(style);
            try { await fetch(base + "/fetch"); return "fetched"; } catch (e) { return "refused"; }
        }""", base)
        time.sleep(0.5)
        assert outcome == "refused" and _Recorder.hits == []
        with urlopen_ok(base + "/control"):  # the server is reachable from outside the page
            pass
        assert _Recorder.hits == ["/control"]
    finally:
        context.close()
        server.shutdown()


def urlopen_ok(url):
    import urllib.request

    return urllib.request.urlopen(url, timeout=5)


def test_a_correction_links_both_ways_in_the_page(laptop, visit):  # INV corrections-visible
    old = saved(laptop, laptop.checkout, "Deploys go out on Fridays", "--title", "Deploy day")
    new = saved(laptop, laptop.checkout, "Never on Fridays", "--title", "Deploy day, corrected", "--corrects", old)
    v = visit(view(laptop))
    row = v.page.locator(f'li.note[data-id="{old}"]')
    assert "corrected" in row.text_content().lower()
    row.click()
    notice = v.page.locator("#detail .notice.state-corrected")
    assert "Deploy day, corrected" in notice.inner_text()
    notice.locator("button").click()
    assert v.page.inner_text("#detail h2") == "Deploy day, corrected"
    v.page.locator("#detail .notice.state-correction button").click()
    assert v.page.inner_text("#detail h2") == "Deploy day"
    v.page.select_option("#f-state", "corrected")
    assert v.rows() == ["Deploy day"] and new


def test_a_pending_note_and_a_stale_store_are_shown(offline_machine, visit):
    note_id = save_pending(offline_machine, "kept here", title="Waiting for the store")
    v = visit(view(offline_machine))
    assert "may be stale" in v.page.inner_text("#stale")
    row = v.page.locator(f'li.note[data-id="{note_id}"]')
    assert "pending upload" in row.text_content().lower()
    row.click()
    assert "not confirmed by the store" in v.page.inner_text("#detail .notice.state-pending")
    v.page.click("#tab-store")
    assert "may be stale" in v.page.inner_text("#store-view")


def test_ten_thousand_notes_load_and_filter_within_budget(tmp_path, chromium):
    """The goal is usable < 1 s and a keystroke < 100 ms (bench/view.py measures them); this box is shared
    by several test runs, so the test allows 5 times that and checks the page is correct at that size."""
    import json
    import subprocess
    import sys

    from agentmem.paths import cache_root
    from agentmem.store.base import StoreDescription
    from agentmem.store.folder import create_store
    from bench import view as bench

    root = tmp_path / "m"
    create_store(str(root / "store"))
    env = bench.machine(root, root / "store")
    cwd = env.pop("_cwd")
    # The notes go straight into this machine's cache (the same layout as the store's), and the view
    # reads only the cache: the page at 10k notes is what this test is about; the first sync of 10k notes
    # is bench/view.py's to time.
    bench.fill(Path(cache_root(env["AGENTMEM_HOME"])) / StoreDescription("folder", str(root / "store")).key, 10_000)
    done = subprocess.run([sys.executable, "-m", "agentmem", "view", "--offline", "--json"], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["notes"] == 10_000, done.stderr
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    try:
        started = time.perf_counter()
        page.goto(f"file://{out['path']}")
        page.wait_for_selector("html[data-ready-ms]")
        usable = time.perf_counter() - started
        assert page.inner_text("#count") == "10000 notes (showing 100)"
        page.click("#more")
        assert page.inner_text("#count") == "10000 notes (showing 200)" and page.locator("#list li.note").count() == 200
        typed = page.evaluate(bench.KEYSTROKE, bench.TYPED)
        slowest = max(f for _, f in typed["times"])
        assert usable < 5 and slowest < 500, (usable, slowest)
        shown = page.inner_text("#count")
        notes = _notes(page)
        expected = sum(1 for n in notes if all(w in n for w in bench.TYPED.split()))
        # bench.fill plants the sentence in 1 note in 40; a random ID holding "key" on a note tagged "cache"
        # can add one more match by chance, so the planted ones are a floor, not the count.
        planted = sum(1 for n in notes if "the build cache key" in n)
        assert shown == f"{expected} of 10000 notes (showing 100)" and planted == 250 and expected >= planted
    finally:
        page.close()


def _notes(page) -> list[str]:
    return page.evaluate("""() => JSON.parse(document.getElementById("memory-data").textContent).notes.map(n =>
        [n.title, n.body, n.tags.join(" "), n.sources.join(" "), n.agent, n.project, n.id, n.kind, n.session || "",
         n.states.map(s => s.label).join(" ")].join("\\n").toLowerCase())""")


def test_a_note_body_is_shown_as_a_small_markdown_subset_built_from_text(laptop, visit):
    body = ("# Release steps\n\nRun **all** checks with `make check`:\n\n- build\n- sign\n\n1. tag\n2. push\n\n"
            "```sh\necho '<b>not bold</b>'\n```\n\n> quoted\n\nDocs: [the guide](https://example.com/guide)")
    note = saved(laptop, laptop.checkout, body, "--title", "Release steps")
    v = visit(view(laptop))
    v.page.click(f'li.note[data-id="{note}"]')
    shape = v.page.evaluate("""() => {
        const b = document.querySelector("#detail .body");
        const t = (s) => [...b.querySelectorAll(s)].map(e => e.textContent);
        return {h: t("h3"), strong: t("strong"), code: t("p code"), ul: t("ul li"), ol: t("ol li"), pre: t("pre code"),
                quote: t("blockquote"), links: [...b.querySelectorAll("a")].map(a => [a.textContent, a.href, a.rel]),
                bold: b.querySelectorAll("b").length};
    }""")
    assert shape == {"h": ["Release steps"], "strong": ["all"], "code": ["make check"], "ul": ["build", "sign"],
                     "ol": ["tag", "push"], "pre": ["echo '<b>not bold</b>'"], "quote": ["quoted"],
                     "links": [["the guide", "https://example.com/guide", "noopener noreferrer"]], "bold": 0}


def test_retracted_review_due_and_pinned_notes_are_marked_and_filterable(laptop, visit):
    m, cwd = laptop, laptop.checkout
    wrong = saved(m, cwd, "The staging URL is staging.example.com", "--title", "Staging URL")
    saved(m, cwd, "Look at this again", "--title", "Quarterly check", "--review-by", "2020-01-01")
    saved(m, cwd, "Never push to main", "--title", "Branch rule")
    m.json("retract", wrong, "--reason", "staging moved", cwd=cwd)
    m.json("pin", m.json("search", "branch", cwd=cwd)[1]["results"][0]["id"], cwd=cwd)
    v = visit(view(m))
    for state, title in (("retracted", "Staging URL"), ("review-due", "Quarterly check"), ("pinned", "Branch rule")):
        v.page.select_option("#f-state", state)
        assert v.rows() == [title], state
    v.page.select_option("#f-state", "retracted")
    v.page.click(f'li.note[data-id="{wrong}"]')
    assert "staging moved" in v.page.inner_text("#detail .notice.state-retracted")

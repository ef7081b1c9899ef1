"""The memory view in a real browser: Debian's Chromium driven by Playwright (tests/browserkit.py).

Notes are saved through the real CLI into a folder store in a throwaway home, `agentmem view` writes
the page and its note files, and Chromium opens it from file:// as a person would. Every request the
page makes is recorded (and anything but the page itself and its own note files refused), every dialog
too.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest

from agentmem.view import files
from tests import browserkit
from tests.fixtures_core import missing_prerequisite, save_pending
from tests.test_view import plant, saved, shown_notes, two_projects, view_of_many

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

    def __init__(self, browser, path, permissions=()):
        self.url = path.as_uri()
        self.own = Path(files.companion(str(path))).as_uri() + "/"  # the page's note files
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        if permissions:
            self.context.grant_permissions(list(permissions))
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.context.route("**/*", lambda route: route.continue_() if self.ours(route.request.url) else route.abort())
        self.page = self.context.new_page()
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.url)
        self.page.wait_for_selector("html[data-ready-ms]")

    def own_file(self, name: str) -> str:
        [found] = [u for u in self.requests if u.startswith(self.own) and u.endswith(f"/{name}.js")]
        return found

    def ours(self, url: str) -> bool:
        return url == self.url or (url.startswith(self.own) and url.endswith(".js") and "/../" not in url)

    def settle(self) -> None:
        """Wait until the list shows what the last keystroke asked for (a search reads its term files)."""
        self.page.evaluate("() => window.agentmemView && window.agentmemView.settled()")  # none before issue U

    def rows(self) -> list[str]:
        # textContent: rows skip rendering until they are on screen (content-visibility), and innerText
        # reads rendered text, empty for a row the next frame has not reached yet
        self.settle()
        return self.page.locator("#list li.note .t").all_text_contents()

    def ids(self) -> list[str]:
        self.settle()
        return self.page.eval_on_selector_all("#list li.note", "els => els.map(e => e.dataset.id)")

    def open(self, note_id: str, project: str | None = None) -> None:
        """Click a note's row and wait for its details (read from its note file)."""
        where = f'[data-project="{project}"]' if project else ""
        self.page.click(f'li.note[data-id="{note_id}"]{where}')
        self.page.wait_for_selector("#detail .body")

    def close(self):
        self.context.close()


@pytest.fixture
def visit(chromium):
    opened = []

    def _visit(path, permissions=()):
        opened.append(Visit(chromium, path, permissions))
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
    search.press_sequentially(" hash")  # ranked as `agentmem search` ranks: the note holding both words first
    assert v.rows() == ["Cache key", "Cache busting"]
    search.fill("deploying")  # words meet at their stems, as in search
    assert v.rows() == ["Deploy order"]
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
    v.open(hostile)
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
    assert v.requests == [v.url, v.own_file("n0")]


def test_the_page_makes_no_network_request(laptop, visit):  # INV view-inert
    saved(laptop, laptop.checkout, "See https://example.com/docs. And ![img](https://example.com/a.png)",
          "--title", "Links", "--source", "https://example.com/issue/1")
    v = visit(view(laptop))
    v.page.locator("input[type=search]").press_sequentially("links")
    v.settle()
    v.page.click("#tab-skills")
    v.page.click("#tab-store")
    v.page.click("#tab-notes")
    assert v.requests == [v.url, v.own_file("n0"), v.own_file("t0")]  # the page and its note files, nothing else
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
            const script = document.createElement("script"); script.src = base + "/script.js";
            document.head.append(script);
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
    v.open(old)
    notice = v.page.locator("#detail .notice.state-corrected")
    assert "Deploy day, corrected" in notice.inner_text()
    notice.locator("button").click()
    v.page.wait_for_selector("#detail .notice.state-correction button")
    assert v.page.inner_text("#detail h2") == "Deploy day, corrected"
    v.page.locator("#detail .notice.state-correction button").click()
    v.page.wait_for_selector("#detail .notice.state-corrected")
    assert v.page.inner_text("#detail h2") == "Deploy day"
    v.page.select_option("#f-state", "corrected")
    assert v.rows() == ["Deploy day"] and new


def test_a_pending_note_and_a_stale_store_are_shown(offline_machine, visit):
    note_id = save_pending(offline_machine, "kept here", title="Waiting for the store")
    v = visit(view(offline_machine))
    assert "may be stale" in v.page.inner_text("#stale")
    row = v.page.locator(f'li.note[data-id="{note_id}"]')
    assert "pending upload" in row.text_content().lower()
    v.open(note_id)
    assert "not confirmed by the store" in v.page.inner_text("#detail .notice.state-pending")
    v.page.click("#tab-store")
    assert "may be stale" in v.page.inner_text("#store-view")


def test_ten_thousand_notes_load_and_filter_within_budget(tmp_path, chromium):
    """The goal is usable < 1 s and a keystroke < 100 ms (bench/view.py measures them); this box is shared
    by several test runs, so the test allows 5 times that and checks the page is correct at that size."""
    from bench import view as bench

    out = view_of_many(tmp_path, 10_000)
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
        # bench.fill plants "The build cache key is the lockfile hash" in 1 note in 40; no other word of its
        # made-up vocabulary is "key", so the notes holding both words are those 250, ranked first
        assert page.inner_text("#count") == "250 of 10000 notes (showing 100)"
        first = page.eval_on_selector_all("#list li.note", "els => els.map(e => +e.dataset.row)")
        held = shown_notes(Path(out["path"]))
        assert all("The build cache key" in held[r]["body"] for r in first)
    finally:
        page.close()


def test_a_note_body_is_shown_as_a_small_markdown_subset_built_from_text(laptop, visit):
    body = ("# Release steps\n\nRun **all** checks with `make check`:\n\n- build\n- sign\n\n1. tag\n2. push\n\n"
            "```sh\necho '<b>not bold</b>'\n```\n\n> quoted\n\nDocs: [the guide](https://example.com/guide)")
    note = saved(laptop, laptop.checkout, body, "--title", "Release steps")
    v = visit(view(laptop))
    v.open(note)
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
    v.open(wrong)
    assert "staging moved" in v.page.inner_text("#detail .notice.state-retracted")


# --- U item 11 ------------------------------------------------------------------------------------------


def test_the_same_id_in_two_projects_opens_each_projects_own_note(machines, tmp_path, store_dir, visit):
    m, _, _ = two_projects(machines, tmp_path)
    twin = "20261201T100000000Z-twintwin"
    plant(store_dir, "web", twin, "Web twin", "the web project's note")
    plant(store_dir, "api", twin, "Api twin", "the api project's note")
    v = visit(view(m))
    assert sorted(v.rows()) == ["Api twin", "Web twin"]
    rows = v.page.locator("#list li.note")
    for at in (0, 1, 0, 1):  # each row opens its own project's note, whichever was opened before
        title = rows.nth(at).locator(".t").text_content()
        rows.nth(at).click()
        v.page.wait_for_function("(t) => document.querySelector('#detail h2')?.textContent === t && "
                                 "document.querySelector('#detail .body')", arg=title, timeout=5000)
        project = title.split()[0].lower()
        assert f"the {project} project's note" in v.page.inner_text("#detail .body")
        assert rows.nth(at).get_attribute("class").split() == ["note", "selected"]


def test_bidi_and_zero_width_characters_show_as_code_points_in_the_page(laptop, store_dir, visit):
    tricky = "pay \u202etxt.exe\u202c to \u200bbob\u2066 now"
    plant(store_dir, "app", "20261201T100000000Z-aaaaaaaa", f"Title {tricky}", f"Body {tricky}",
          extra=f'tags: [{json.dumps("tag" + chr(0x200D) + "x")}]\n')
    v = visit(view(laptop))
    shown = "pay <U+202E>txt.exe<U+202C> to <U+200B>bob<U+2066> now"
    assert v.rows() == [f"Title {shown}"]
    v.open("20261201T100000000Z-aaaaaaaa")
    text = v.page.inner_text("#detail")
    assert f"Title {shown}" in text and f"Body {shown}" in text and "tag<U+200D>x" in text
    page_text = v.page.evaluate("() => document.body.textContent")
    assert not {"\u202e", "\u202c", "\u200b", "\u2066", "\u200d"} & set(page_text)


def test_after_filtering_the_details_are_of_a_listed_note(machines, tmp_path, visit):
    m, web, api = two_projects(machines, tmp_path)
    saved(m, web, "web build", "--title", "Web build")
    api_note = saved(m, api, "api build", "--title", "Api build")
    v = visit(view(m))
    v.open(api_note)
    v.page.select_option("#f-project", "web")
    v.page.wait_for_function("() => document.querySelector('#detail h2')?.textContent === 'Web build'")
    assert v.rows() == ["Web build"] and v.page.locator("li.note.selected .t").text_content() == "Web build"
    v.page.fill("#q", "nothing matches this")
    v.settle()
    assert v.rows() == [] and "No note is listed" in v.page.inner_text("#detail")
    assert "Api build" not in v.page.inner_text("#detail")


def test_a_command_copied_from_the_page_runs_as_copied(laptop, visit):
    """U item 11: each note's commands, with a copy button; the owner acts from the page (here: pins it)."""
    import shlex
    import subprocess

    note = saved(laptop, laptop.checkout, "Never push to main", "--title", "Branch rule")
    v = visit(view(laptop), permissions=("clipboard-read", "clipboard-write"))
    v.open(note)
    actions = v.page.locator("#detail .actions")
    actions.locator("summary").click()  # folded away until asked for
    shown = actions.locator(".cmd").all_text_contents()
    assert [shlex.split(c)[1] for c in shown] == ["retract", "pin", "purge"]
    actions.locator(".action-pin button.copy").click()
    v.page.wait_for_function("() => document.querySelector('.action-pin button.copy').textContent === 'Copied'")
    copied = v.page.evaluate("() => navigator.clipboard.readText()")
    assert copied == shown[1] and shlex.split(copied)[1:] == ["pin", note, "--project", "app"]
    done = subprocess.run(shlex.split(copied), cwd=laptop.user_home, env=laptop.env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and f"pinned {note}" in done.stdout, done.stderr
    v2 = visit(view(laptop))
    v2.open(note)
    assert "pinned" in v2.page.inner_text("#detail .badges").lower()
    assert [shlex.split(c)[1] for c in v2.page.locator("#detail .actions .cmd").all_text_contents()] == \
        ["retract", "unpin", "purge"]


def test_a_pending_note_shows_its_retry_command_before_its_last_error(offline_machine, visit):
    m = offline_machine
    note_id = save_pending(m, "kept here", title="Waiting for the store")
    v = visit(view(m))
    v.open(note_id)
    notice = v.page.locator("#detail .notice.state-pending")
    retry = notice.locator(".cmd").text_content()
    assert f"retry: {retry}" in m.run("pending", cwd=m.user_home)[1]  # the line `agentmem pending` prints
    text = notice.inner_text()
    assert text.index(retry) < text.index("the last attempt") and notice.locator("button.copy").count() == 1


def test_a_megabyte_note_leaves_the_page_usable(laptop, store_dir, chromium):
    """U item 11: a 1 MiB note planted in the store froze the page for 23-37 s (7 s here: 180k list lines
    and a line of unclosed links). Now the page is usable, and the note open, within the 2 s budget."""
    import random

    rng = random.Random(7)
    words = ["redis", "latency", "cache", "key", "deploy", "lockfile"]
    lines = "\n".join("- " + " ".join(rng.choice(words) for _ in range(3)) for _ in range(40_000))
    body = (lines + "\n" + "see [the doc " * 40_000)[:1_000_000]
    big = "20261201T100000000Z-bigbigbi"
    plant(store_dir, "app", big, "A megabyte", body)
    saved(laptop, laptop.checkout, "a small note", "--title", "Small")
    path = view(laptop)
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    try:
        started = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-ready-ms]")
        page.click(f'li.note[data-id="{big}"]')
        page.wait_for_selector("#detail .body li")
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))")
        usable = time.perf_counter() - started
        assert usable < 2, usable
        assert "This note is 977 KB long" in page.inner_text("#detail .notice.long")
        started = time.perf_counter()
        page.click("text=Small")
        page.wait_for_function("() => document.querySelector('#detail h2').textContent === 'Small'")
        assert time.perf_counter() - started < 2
    finally:
        page.close()


def _readme_corpus(store_dir: Path, count: int) -> list[str]:
    """`count` notes of project "app" written into the store as `agentmem save` writes them: windows of this
    repository's README (real words, real neighbours), a few tags, one in 12 due for review, one in 30
    correcting an earlier one, and 12 about Redis latency."""
    import random
    from datetime import UTC, datetime, timedelta

    from agentmem.note import document

    rng = random.Random(11)
    lines = [ln.strip() for ln in (Path(__file__).resolve().parent.parent / "README.md").read_text().splitlines()
             if len(ln.split()) >= 4]
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    for i in range(count):
        start = rng.randrange(len(lines) - 10)
        body = "\n".join(lines[start:start + rng.randint(2, 8)])
        if i % 33 == 5:
            body = f"Redis latency spikes when the cache is cold.\n{body}"
        note = document.build(body=body, title=" ".join(body.split()[:rng.randint(3, 7)]), kind="note", project="app",
                              agent="bench@box", tags=rng.sample(["cache", "search", "store", "hooks"], rng.randint(0, 2)),
                              review_by="2020-01-01" if i % 12 == 3 else None,
                              corrects=made[-5] if i % 30 == 29 else None,
                              now=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=7 * i))
        (folder / document.note_file(note.id)).write_bytes(note.render())
        made.append(note.id)
    return made


QUERIES = ["cache", "search", "the store", "hooks", "pending upload", "memory view", "redis latency",
           "redis lat", "notes saved", "retracted notes", "searching stores", "agent CLI", "credential withheld",
           "project mapped directory", "hybrid search embedding", "purge", "review due", "session start reminder",
           "copier update", "json output", "offline", "bucket", "MCP server tool", "nothing like this exists"]


def test_the_search_box_ranks_as_agentmem_search_does(laptop, store_dir, visit):
    """U item 11: the page's search box gives the top results `agentmem search` gives (ranked mode), in its
    order, for every query of QUERIES over 400 notes (agreement 24 of 24 queries); what it lists beyond
    them are the notes holding every word of the query, so "redis lat" keeps search's 10 notes (none holds "lat"), not most."""
    from agentmem.search import words

    _readme_corpus(store_dir, 400)
    assert laptop.run("sync", cwd=laptop.checkout)[0] == 0  # as setup brings a joining machine all the way
    v = visit(view(laptop))
    held = shown_notes(v_path := Path(v.url.removeprefix("file://")))
    assert len(held) == 400 and v_path.exists()
    terms = [set(words.terms(f"{n['title']} {' '.join(n['tags'])}\n{n['body']}\n{' '.join(n['sources'])}"))
             for n in held]
    agree = 0
    for query in QUERIES:
        status, out, err = laptop.json("search", query, "--limit", "10", cwd=laptop.checkout)
        assert status == 0, err
        expected = [r["id"] for r in out["results"]]
        v.page.fill("#q", query)
        listed = v.ids()
        agree += listed[:len(expected)] == expected
        wanted = set(words.split_query(query)[1])
        every = {held[i]["id"] for i, t in enumerate(terms) if wanted and wanted <= t}
        kept = every | set(expected)
        assert set(listed) <= kept and len(listed) == min(100, len(kept)), query  # rows render 100 at a time
        assert v.page.inner_text("#count").startswith(f"{len(kept)} of 400 notes"), query
        assert listed[:len(expected)] == expected, (query, listed[:len(expected)], expected)
    assert agree == len(QUERIES)
    v.page.fill("#q", "redis lat")
    assert v.page.inner_text("#count") == "10 of 400 notes"


def test_the_page_makes_words_and_stems_as_search_does(laptop, visit):
    """The page's words, stopwords, stems and term-file choice (search.js) equal search/words.py's and
    view/files.py's, over every word of this repository's docs and a few other scripts."""
    from agentmem.search import words

    saved(laptop, laptop.checkout, "a note")
    v = visit(view(laptop))
    root = Path(__file__).resolve().parent.parent
    texts = [p.read_text() for p in (root / "README.md", *sorted((root / "docs").glob("*.md")))]
    texts.append("Ünïcödé naïve café STRASSE straße Σίσυφος ΣΊΣΥΦΟΣ déjà-vu 東京タワー 123abc x_y ﬁle  İstanbul")
    vocabulary = sorted({w for t in texts for w in words.words(t)})
    assert len(vocabulary) > 3000
    got = v.page.evaluate("(texts) => texts.map((t) => window.agentmemView.terms(t))", texts)
    assert got == [words.terms(t) for t in texts]
    for count in (1, 7, 331):
        hashes = v.page.evaluate("([ws, n]) => ws.map((w) => window.agentmemView.termFile(w, n))", [vocabulary, count])
        assert hashes == [files.term_file(w, count) for w in vocabulary]

"""A real Chromium for page tests and benchmarks: Debian's /usr/bin/chromium driven by Playwright's Python
package (its driver ships in the wheel; no browser is ever downloaded: never `playwright install`).

The flags turn off what Chromium would otherwise try to reach on its own (updates, sync, safe browsing,
field trials), so the only requests a page test records are the page's own.
"""

from __future__ import annotations

import os
import shutil

CHROMIUM = os.environ.get("AGENTMEM_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
        "--disable-features=OptimizationHints,MediaRouter,Translate"]


def missing() -> str | None:
    """Why a real browser cannot be driven here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python package is not installed (pip install -e '.[test]')"
    if not (os.path.isfile(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does it)"
    return None


def launch(playwright):
    """A headless Chromium from the system's package."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)

"""The rules site: generated pages are current, the strict build passes, and in a real
browser the comparison page shows every profile and the client-side search finds "barrel".

The site is built once per test session (about 400 pages). The browser tests serve it on
127.0.0.1 and drive headless Chromium (the Debian package, /usr/bin/chromium); without it
they are skipped locally and fail when CI is set. With SITE_SCREENSHOT set, a screenshot
of the comparison page (1400x1000) is saved there.
"""

from __future__ import annotations

import functools
import html.parser
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest
from tests.support.paths import ROOT

CHROMIUM = "/usr/bin/chromium"
PROFILES = ("gambler-club", "repino-2013", "classic", "skill-games", "polish", "polish-tournament")
HANG_GUARD = 180  # seconds: only turns a hang into a failure, never a timing check
QUIET = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
REPORT_PATH = "/__report"  # where the search harness page posts what it found


@pytest.fixture(scope="module")
def strict_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The result of ``mkdocs build --strict`` into a temporary folder, and that folder."""
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD, env=QUIET)
    return done, site


@pytest.fixture(scope="module")
def site(strict_build: tuple[subprocess.CompletedProcess[str], Path]) -> Path:
    done, folder = strict_build
    if done.returncode != 0:
        pytest.fail(f"the site does not build (see test_the_strict_build_passes):\n{_tail(done.stderr)}")
    return folder


def _tail(text: str) -> str:
    """mkdocs' warnings and errors, or the end of its output when it printed none."""
    flagged = [line for line in text.splitlines() if "WARNING" in line or "ERROR" in line or "Aborted" in line]
    return "\n".join(flagged or text.splitlines()[-30:])[-4000:]


@pytest.mark.slow
def test_the_generated_pages_are_current() -> None:
    done = subprocess.run([sys.executable, "-m", "sitegen", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, f"python -m sitegen --check failed:\n{done.stdout}{done.stderr}"


@pytest.mark.slow
def test_the_strict_build_passes(strict_build: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, folder = strict_build
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{_tail(done.stderr)}"
    assert (folder / "verify" / "index.html").is_file() and (folder / "compare" / "index.html").is_file()


# --- the browser ----------------------------------------------------------------------

class _Handler(SimpleHTTPRequestHandler):
    """Serves the built site; records what the search harness reports."""

    reports: list[dict[str, Any]]
    reported: threading.Event

    def do_GET(self) -> None:  # noqa: N802 (the name http.server dispatches to)
        if self.path.startswith(REPORT_PATH + "?"):
            query = urllib.parse.unquote(self.path.split("?", 1)[1])
            self.reports.append(json.loads(query))
            self.reported.set()
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[tuple[str, type[_Handler]]]:
    """The built site on a free port of 127.0.0.1: (base URL, handler class with reports)."""
    handler = type("Handler", (_Handler,), {"reports": [], "reported": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium() -> str:
    if not Path(CHROMIUM).is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing, and CI is set: the CI image must install the chromium package")
        pytest.skip(f"{CHROMIUM} is not installed")
    return CHROMIUM


def _browser(chromium: str, profile_dir: Path, *extra: str) -> list[str]:
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile_dir}", *extra]


class _Tables(html.parser.HTMLParser):
    """The header cells of each table of a page, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.headers.append([])
        elif tag == "th" and self.headers:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "th" and self._cell is not None:
            self.headers[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.mark.slow
def test_the_comparison_page_shows_all_six_profiles(chromium: str, served: tuple[str, type[_Handler]],
                                                     tmp_path: Path) -> None:
    """Each profile has a column, except one folded into its parent's, which the page names and explains."""
    base, _ = served
    done = subprocess.run(_browser(chromium, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom",
                                   f"{base}/compare/"),
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, f"chromium failed: {done.stderr[-2000:]}"
    tables = _Tables()
    tables.feed(done.stdout)
    assert tables.headers, "the rendered comparison page has no table"
    for header in tables.headers:
        missing = [name for name in PROFILES if name not in header]
        for name in missing:
            assert f"Where is {name}?" in done.stdout, f"{name} has no column and no note saying why; header {header}"
        assert len(missing) <= 1, f"a comparison table lacks the columns {missing}; its header is {header}"
    screenshot = os.environ.get("SITE_SCREENSHOT")
    if screenshot:
        shot = subprocess.run(_browser(chromium, tmp_path / "profile", "--hide-scrollbars", "--window-size=1400,1000",
                                       "--virtual-time-budget=5000", f"--screenshot={Path(screenshot).resolve()}",
                                       f"{base}/compare/"),
                              capture_output=True, text=True, timeout=HANG_GUARD)
        assert shot.returncode == 0 and Path(screenshot).is_file(), f"no screenshot: {shot.stderr[-2000:]}"


# The harness opens a page with ?q=barrel (mkdocs-material then fills the search box and
# runs the query in its web worker over search_index.json), waits until results are shown
# and sends their links and titles back to the test server.
_HARNESS = """<!doctype html><html><body>
<iframe id="page" src="/compare/?q=barrel" width="1200" height="900"></iframe>
<script>
function poll() {
  const doc = document.getElementById("page").contentDocument;
  const items = doc ? [...doc.querySelectorAll(".md-search-result__item")] : [];
  if (items.length === 0) { setTimeout(poll, 100); return; }
  const results = items.map((item) => ({
    href: item.querySelector("a").getAttribute("href"),
    title: (item.querySelector("h1, h2") || item).textContent.trim(),
  }));
  fetch("REPORT?" + encodeURIComponent(JSON.stringify({results})));
}
poll();
</script></body></html>
"""


@pytest.mark.slow
def test_search_finds_the_barrel(chromium: str, served: tuple[str, type[_Handler]], site: Path, tmp_path: Path) -> None:
    base, handler = served
    (site / "search-harness.html").write_text(_HARNESS.replace("REPORT", REPORT_PATH), encoding="utf-8")
    # No --dump-dom here: the search runs in a web worker on real time, so the browser
    # stays open until the harness reports, and is then stopped.
    browser = subprocess.Popen(_browser(chromium, tmp_path / "profile", f"{base}/search-harness.html"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        reported = False
        for _ in range(HANG_GUARD):
            reported = handler.reported.wait(1)
            if reported or browser.poll() is not None:
                break
        exit_code = browser.poll()
    finally:
        if browser.poll() is None:
            os.killpg(browser.pid, signal.SIGKILL)  # the browser and its helpers, all started here
        browser.wait()
    assert exit_code is None or reported, f"chromium exited ({exit_code}) before the search showed results"
    assert reported, "the search produced no results in the browser"
    results = handler.reports[-1]["results"]
    paths = [urllib.parse.urlsplit(result["href"]).path for result in results]
    about_barrel = [path for path, result in zip(paths, results)
                    if "barrel" in path and "barrel" in result["title"].lower()]
    assert about_barrel, f"no search result links to a page about the barrel: {results[:10]}"
    assert not paths[0].startswith("/cases/"), f"a transcript ranks first, above the explanations: {results[:5]}"
    assert all(path.startswith("/") for path in paths)
    target = site / about_barrel[0].strip("/") / "index.html"
    assert target.is_file(), f"the search result {about_barrel[0]} names no built page"


def test_every_profile_rule_links_to_a_transcript() -> None:
    """Each knob on a profile page links to a transcript: its own, or (inert here) the deciding rule's."""
    import variants

    for info in variants.list_profiles():
        text = (ROOT / "docs" / "profiles" / f"{info.name}.md").read_text(encoding="utf-8")
        items = re.split(r"\n- <a id=", text)[1:]
        assert items, info.name
        for item in items:
            knob = re.search(r"`([a-z_]+\.[a-z_]+): ", item)
            assert knob, item[:200]
            if knob.group(1) == "giving_up.local_name":
                continue  # display only: not a rule of play
            assert "](../cases/" in item.split("\n## ")[0], f"{info.name}: {knob.group(1)} links to no transcript"


# --- the pages of issue 14, measured in the browser --------------------------------------

NEW_PAGES = ("sources/", "house-rules/", "how-a-deal-goes/", "results/", "compare/", "compare-deals/",
             "cases/gambler-club/scoring/worked-example-contract-160-made/")

# Appended to a page by --dump-dom runs: measures layout after the page's scripts ran and
# writes the numbers into the DOM, where the test reads them back.
_MEASURE = """
<script>
window.addEventListener("load", () => setTimeout(() => {
  const main = document.querySelector(".md-content") || document.body;
  const box = main.getBoundingClientRect();
  let widest = 0;
  for (const el of main.querySelectorAll("*")) {
    if (el.closest(".replay-scroll, .md-typeset__scrollwrap, pre, .highlight")) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0) widest = Math.max(widest, r.right);
  }
  const box2 = document.getElementById("differences-only");
  let hidden = -1;
  if (box2) { box2.click(); hidden = [...document.querySelectorAll("tr.same-row")].filter(r => r.offsetParent === null).length; }
  const out = document.createElement("pre");
  out.id = "measured";
  const heights = [...document.querySelectorAll("table.replay-table th")].map(th => th.getBoundingClientRect().height);
  out.textContent = JSON.stringify({
    tallest_replay_header: Math.max(0, ...heights), replay_tables: document.querySelectorAll("table.replay-table").length,
    body: document.documentElement.scrollWidth, viewport: window.innerWidth,
    main_right: box.right, widest: widest, hidden_same_rows: hidden,
    same_rows: document.querySelectorAll("tr.same-row").length,
  });
  document.body.append(out);
}, 300));
</script>
"""


def _measure(chromium: str, base: str, site: Path, page: str, width: int, height: int, profile: Path) -> dict[str, Any]:
    """Load a copy of the page with the measuring script, at the window size; the numbers it found."""
    source = site / page / "index.html"
    copy = site / page / "measure.html"
    copy.write_text(source.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    done = subprocess.run(_browser(chromium, profile, f"--window-size={width},{height}", "--virtual-time-budget=8000",
                                   "--dump-dom", f"{base}/{page}measure.html"),
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, f"chromium failed on {page}: {done.stderr[-2000:]}"
    start = done.stdout.find('<pre id="measured">')
    assert start >= 0, f"the measuring script did not run on {page}"
    text = done.stdout[start + len('<pre id="measured">'):].split("</pre>", 1)[0]
    return dict(json.loads(html_unescape(text)))


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


@pytest.mark.slow
@pytest.mark.parametrize("page", NEW_PAGES)
def test_every_new_page_loads(chromium: str, served: tuple[str, type[_Handler]], page: str, tmp_path: Path) -> None:
    base, _ = served
    done = subprocess.run(_browser(chromium, tmp_path / "profile", "--virtual-time-budget=3000", "--dump-dom", f"{base}/{page}"),
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, f"chromium failed on {page}: {done.stderr[-2000:]}"
    assert "<h1" in done.stdout and "md-content" in done.stdout, f"{page} did not render a page"
    assert "shared/" not in done.stdout, f"{page} names a path outside the repository"


@pytest.mark.slow
@pytest.mark.parametrize("page", ("compare/", "compare-deals/"))
def test_no_horizontal_overflow_at_1400(chromium: str, served: tuple[str, type[_Handler]], site: Path,
                                        page: str, tmp_path: Path) -> None:
    base, _ = served
    found = _measure(chromium, base, site, page, 1400, 1000, tmp_path / "profile")
    assert found["body"] <= found["viewport"], f"{page} scrolls sideways at 1400 px: {found}"
    assert found["widest"] <= found["main_right"] + 1, f"content sticks out of {page}'s main column: {found}"


@pytest.mark.slow
def test_the_comparison_page_is_usable_at_400(chromium: str, served: tuple[str, type[_Handler]], site: Path,
                                              tmp_path: Path) -> None:
    base, _ = served
    found = _measure(chromium, base, site, "compare/", 400, 900, tmp_path / "profile")
    assert found["body"] <= found["viewport"], f"the comparison page scrolls sideways at 400 px: {found}"
    assert found["same_rows"] > 0 and found["hidden_same_rows"] == found["same_rows"], \
        f"the differences-only switch did not hide the rows that agree: {found}"


def _search(chromium: str, served: tuple[str, type[_Handler]], site: Path, tmp_path: Path, word: str) -> list[dict[str, str]]:
    base, handler = served
    handler.reports.clear()
    handler.reported.clear()
    harness = f"search-{word}.html"
    (site / harness).write_text(_HARNESS.replace("REPORT", REPORT_PATH).replace("q=barrel", f"q={word}"), encoding="utf-8")
    browser = subprocess.Popen(_browser(chromium, tmp_path / "profile", f"{base}/{harness}"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(HANG_GUARD):
            if handler.reported.wait(1) or browser.poll() is not None:
                break
    finally:
        if browser.poll() is None:
            os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()
    assert handler.reports, f"the search for {word!r} showed no results"
    return list(handler.reports[-1]["results"])


@pytest.mark.slow
@pytest.mark.parametrize("word", ("rospis", "bomb"))
def test_search_finds_the_local_names_of_giving_up(chromium: str, served: tuple[str, type[_Handler]], site: Path,
                                                   tmp_path: Path, word: str) -> None:
    results = _search(chromium, served, site, tmp_path, word)
    paths = [urllib.parse.urlsplit(r["href"]).path for r in results]
    about = [path for path, r in zip(paths, results)
             if "glossary" in path or "/profiles/" in path or word in r["title"].lower()]
    assert about, f"no result for {word!r} names it or leads to the glossary or a profile: {results[:10]}"
    assert all((site / path.strip("/") / "index.html").is_file() for path in about), about


def test_no_page_names_a_path_outside_the_repository() -> None:
    for path in (ROOT / "docs").rglob("*"):
        if path.is_file() and path.suffix in (".md", ".json", ".txt", ".js", ".css"):
            assert "shared/" not in path.read_text(encoding="utf-8"), path


def test_every_citation_links_to_the_sources_page() -> None:
    """On the profile pages every 'Source:' names its key as a link to sources.md#key."""
    for page in (ROOT / "docs" / "profiles").glob("*.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if "*Source: " in line:
                assert re.search(r"\[(seed-\d{3}|kurnik)\]\(\.\./sources\.md#(seed-\d{3}|kurnik)\)", line), line


def test_verify_page_numbers_come_from_sitegen() -> None:
    """Run summaries on docs/verify.md are included from generated snippets, so --check catches stale ones."""
    text = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")
    hard = [line for line in text.splitlines() if re.match(r"^\d+(/\d+)? pass\b", line)]
    assert not hard, f"docs/verify.md writes run counts by hand: {hard}"
    for name in re.findall(r'--8<-- "docs/(snippets/[^"]+)"', text):
        assert (ROOT / "docs" / name).is_file(), name


# --- issue 19: values in words or JSON, the knob reference, replays on a phone, case checks ---

class _Text(html.parser.HTMLParser):
    """A page's visible text, leaving out scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip:
            if tag == self._skip[0]:
                self._skip.append(tag)
        elif tag in ("script", "style"):
            self._skip.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._skip and tag == self._skip[-1]:
            self._skip.pop()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


# A frozen mapping; a dict, tuple or list of quoted strings as Python prints it ({'S': 40},
# ('a', 'b'), ['bid 105']); Python's constants. A quotation in parentheses, as prose writes
# it ("gives K to Ben ('give K 9')"), is not a repr.
PYTHON_REPR = re.compile(r"mappingproxy|\{'|\('[^'\n]*',|\['[^'\n]*'[,\]]|\b(?:True|False|None)\b")
# A highlighted block of source code (the adapter's Python on verify.md, a YAML profile, a
# diff) has keyword or diff tokens; outputs (console, text, JSON) have none. Source is not a value shown.
SOURCE_BLOCK = re.compile(r'<div class="highlight"><pre>(?:(?!</pre>).)*?<span class="(?:k[ct]?|g[di])">.*?</pre></div>', re.S)


@pytest.mark.slow
def test_no_page_shows_a_python_repr(site: Path) -> None:
    """Every value on every built page is in words or JSON: no frozen mapping, no Python
    quoting, no True/False/None (outside code blocks that show source code)."""
    found = []
    for page in sorted(site.rglob("*.html")):
        parser = _Text()
        parser.feed(SOURCE_BLOCK.sub("", page.read_text(encoding="utf-8")))
        text = "".join(parser.parts)
        for match in PYTHON_REPR.finditer(text):
            found.append(f"{page.relative_to(site)}: ...{text[max(0, match.start() - 60):match.end() + 60]}...")
    assert not found, f"{len(found)} Python reprs in the built site, e.g.\n" + "\n".join(found[:10])


def _dom(chromium: str, base: str, page: str, profile: Path) -> str:
    done = subprocess.run(_browser(chromium, profile, "--virtual-time-budget=5000", "--dump-dom", f"{base}/{page}"),
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, f"chromium failed on {page}: {done.stderr[-2000:]}"
    return done.stdout


@pytest.mark.slow
def test_the_knob_reference_lists_every_knob_with_its_allowed_values(chromium: str, served: tuple[str, type[_Handler]],
                                                                     tmp_path: Path) -> None:
    from variants.schema import rule_sections

    base, _ = served
    dom = _dom(chromium, base, "knobs/", tmp_path / "profile")
    knobs = [f"{section}.{knob}" for section, names in rule_sections().items() for knob in names]
    missing = [knob for knob in knobs if f'id="{knob.replace(".", "-").replace("_", "-")}"' not in dom]
    assert not missing, f"the knob reference has no entry for {missing}"
    assert "no_tricks" in dom and "Allowed values" in dom
    assert "no limit" in dom and "Write <code>null</code>, not <code>off</code>" in dom
    profile_page = _dom(chromium, base, "profiles/gambler-club/", tmp_path / "profile")
    assert 'href="../../knobs/#auction-stop-at"' in profile_page, "profile pages link each rule to the knob reference"
    assert "<code>auction.stop_at: null</code>" in _dom(chromium, base, "profiles/classic/", tmp_path / "profile")


@pytest.mark.slow
def test_the_same_deal_page_is_readable_at_400(chromium: str, served: tuple[str, type[_Handler]], site: Path,
                                               tmp_path: Path) -> None:
    base, _ = served
    found = _measure(chromium, base, site, "compare-deals/", 400, 900, tmp_path / "profile")
    assert found["body"] <= found["viewport"], f"the Same deal page scrolls sideways at 400 px: {found}"
    assert found["replay_tables"] >= 5 and found["tallest_replay_header"] < 200, \
        f"a replay table's profile cell is too tall at 400 px: {found}"
    wide = _measure(chromium, base, site, "compare-deals/", 1400, 1000, tmp_path / "profile")
    assert wide["tallest_replay_header"] < 200, f"a replay table's header is too tall at 1400 px: {wide}"


@pytest.mark.slow
def test_a_case_page_shows_each_steps_legal_set(chromium: str, served: tuple[str, type[_Handler]], tmp_path: Path) -> None:
    base, _ = served
    dom = _dom(chromium, base, "cases/gambler-club/auction/bidding-stops-at-120-first/", tmp_path / "profile")
    assert "legal before it (exactly)" in dom
    legal = dom.split("legal before it (exactly)", 1)[1].split("</td>", 1)[0]
    for action in ("pass", "bid 105", "bid 110", "bid 115", "bid 120"):
        assert f"<code>{action}</code>" in legal, f"{action} missing from the legal set shown: {legal}"
    assert "refused as <code>bid_past_stop</code>" in dom
    assert "<title>Below 120 no bid above 120 is legal" in dom, "a case page is titled by its heading"

"""`vtcode sessions show ID --html FILE`: one self-contained page of a real session.

Sessions come from real `vtcode exec` runs on shipped replay scripts (plus one hostile script of
ours). The page is checked as markup (parsed with the standard library: structure, escaping, no
external references, no script), as a syrupy outline, and in headless Chromium: the DOM it builds
(`--dump-dom`) and a screenshot decoded with the pure-Python reader of tests/test_html_png.py.
"""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SCRIPTS, vtcode
from tests.report.test_html_png import read_png
from vtcode.report import build_report
from vtcode.report.model import apportion_cost
from vtcode.report.plot import COST_COLOR, TOKENS_COLOR

HOSTILE = Path(__file__).parents[1] / "fixtures" / "report" / "hostile.toml"
FAST = ["-c", "agent.task_retry_backoff_secs=0"]
DEMO_PRICE = "pricing = { input_per_mtok = 3.0, output_per_mtok = 15.0 }"
RUNS: dict[str, tuple[Path, list[str], int]] = {
    # session id: (script, extra exec args, exit code)
    "demo": (SCRIPTS / "demo.toml", [], 0),
    "budget": (SCRIPTS / "scenario-budget.toml", ["--max-budget-usd", "0.02"], 4),
    "max-turns": (SCRIPTS / "scenario-max-turns.toml", ["--max-turns", "2"], 3),
    "fatal": (SCRIPTS / "scenario-provider-fatal.toml", [], 1),
    "recovery": (SCRIPTS / "context-recovery.toml", [], 0),
    "hostile": (HOSTILE, [], 0),
}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--force-color-profile=srgb",  # exact colours in the screenshot, whatever the display
    "--hide-scrollbars",
]
# What the page may contain: no script, no embedded content, nothing that loads a resource.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "section", "article", "header",
    "footer", "div", "span", "h1", "h2", "h3", "p", "ol", "ul", "li", "code", "pre", "details",
    "summary", "i", "svg", "line", "rect", "text", "polyline", "circle",
}  # fmt: skip


def _hex(color: str) -> tuple[int, int, int]:
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding one real session per entry of RUNS."""
    root = tmp_path_factory.mktemp("html-ws")
    # The shipped demo has no price (a scripted model prints no bill, issue 26); the page's cost
    # line is drawn from a copy priced at $3 / $15 per Mtok.
    priced = tmp_path_factory.mktemp("priced") / "demo.toml"
    text = (SCRIPTS / "demo.toml").read_text(encoding="utf-8")
    priced.write_text(
        text.replace("[provider]\n", "[provider]\n" + DEMO_PRICE + "\n", 1), encoding="utf-8"
    )
    for sid, (script, extra, rc) in RUNS.items():
        script = priced if sid == "demo" else script
        proc = vtcode(
            [*FAST, "exec", "-q", "--session-id", sid, "--script", str(script), *extra, "go"], root
        )
        assert proc.returncode == rc, (sid, proc.stderr)
    return root


@pytest.fixture(scope="module")
def pages(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("pages")
    paths = {}
    for sid in RUNS:
        target = out / f"{sid}.html"
        proc = vtcode(["sessions", "show", sid, "--html", str(target)], ws)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == f"wrote {target}\n"
        assert proc.stdout == ""
        paths[sid] = target
    return paths


def _events(ws: Path, sid: str) -> list[dict[str, Any]]:
    log = ws / ".vtcode" / "sessions" / sid / "events.jsonl"
    return [json.loads(line)["event"] for line in log.read_text().splitlines()]


class Page(HTMLParser):
    """The parsed page: every start tag with its attributes, the visible text, and an outline
    (per turn: its outcome and each entry's tag and badges)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.outline: list[dict[str, Any]] = []
        self._stack: list[tuple[str, str]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        cls = a.get("class") or ""
        if tag == "article" and "turn" in cls.split():
            self.outline.append({"turn": int(a["data-turn"] or 0), "entries": [], "badges": []})
        elif tag == "li" and self.outline and ("entry" in cls.split() or "marker" in cls.split()):
            parts = cls.split()
            name = parts[1] if len(parts) > 1 else parts[0]
            self.outline[-1]["entries"].append({"class": name, "text": []})
        if tag not in ("meta", "line", "rect", "circle"):
            self._stack.append((tag, cls))

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        classes = {c for _, cls in self._stack for c in cls.split()}
        if not self.outline or not ({"badge", "tag"} & classes):
            return
        turn = self.outline[-1]
        if turn["entries"] and any(t == "li" for t, _ in self._stack):
            turn["entries"][-1]["text"].append(data)
        elif "badge" in classes:
            turn["badges"].append(data)

    def count(self, tag: str, cls: str | None = None) -> int:
        return sum(
            1
            for t, a in self.tags
            if t == tag and (cls is None or cls in (a.get("class") or "").split())
        )

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def _page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


# ---- markup ------------------------------------------------------------------------------


def test_demo_page_has_header_turns_items_and_plot(
    ws: Path, pages: dict[str, Path], snapshot_json: Any
) -> None:
    events = _events(ws, "demo")
    done = events[-1]
    page = _page(pages["demo"])
    text = page.all_text
    assert "vtcode session demo" in text
    assert "success" in text and f"${done['total_cost_usd']:.3f}" in text
    assert f"{done['usage']['input_tokens']:,}" in text
    turns = sum(1 for e in events if e["type"] == "turn.started")
    assert page.count("article", "turn") == turns == done["num_turns"] == 5
    assert page.count("svg", "plot") == 1
    assert page.count("rect", "bar") == turns
    polyline = next(a for t, a in page.tags if t == "polyline")
    assert len((polyline["points"] or "").split()) == turns
    # tool calls with outcome and exit code, file changes, messages
    assert "exit 1" in text and "exit 0" in text
    assert "$ python3 test_greet.py" in text
    assert "AssertionError: Hello vtcode" in text
    assert page.count("li", "kind-file_change") == 3
    assert page.count("li", "kind-tool_invocation") == 5
    assert page.outline == snapshot_json(name="demo-outline")


@pytest.mark.parametrize(
    ("sid", "subtype"),
    [
        ("budget", "error_max_budget_usd"),
        ("max-turns", "error_max_turns"),
        ("fatal", "error_during_execution"),
    ],
)
def test_stopped_sessions_show_their_outcome(
    ws: Path, pages: dict[str, Path], sid: str, subtype: str
) -> None:
    events = _events(ws, sid)
    done = events[-1]
    assert done["subtype"] == subtype
    page = _page(pages[sid])
    assert subtype in page.all_text
    turns = sum(1 for e in events if e["type"] == "turn.started")
    assert page.count("article", "turn") == turns
    failed = [e["message"] for e in events if e["type"] == "turn.failed"]
    for message in failed:
        assert message in page.all_text
    if done.get("stop_reason"):
        assert done["stop_reason"] in page.all_text


def test_compaction_and_harness_items_are_on_the_timeline(pages: dict[str, Path]) -> None:
    page = _page(pages["recovery"])
    assert page.count("li", "compaction") == 1
    assert page.count("line", "mark") == 1
    assert page.count("li", "kind-harness") == 1
    assert "error_recovered" in page.all_text
    assert "recovery / local" in page.all_text
    # no pricing in this script: the cost line is absent and the page says why
    assert page.count("polyline", "cost") == 0
    assert "Cost unknown" in page.all_text


def test_context_reset_thread_error_and_cancelled_render(tmp_path: Path) -> None:
    """`vtcode exec` never emits context.reset (a plan-approval event), so this session is
    written through the real store from events of the contract."""
    from vtcode.config.model import StoreConfig
    from vtcode.events.enums import ContextResetTrigger, ThreadCompletionSubtype
    from vtcode.events.types import (
        ContextResetEvent,
        ThreadCompletedEvent,
        ThreadErrorEvent,
        ThreadStartedEvent,
        TurnCompletedEvent,
        TurnStartedEvent,
        Usage,
    )
    from vtcode.report import session_html
    from vtcode.store import DispatchGate, SessionWriter

    gate = DispatchGate(SessionWriter.create(tmp_path, "r", StoreConfig()))
    for event in (
        ThreadStartedEvent(thread_id="r"),
        TurnStartedEvent(),
        TurnCompletedEvent(usage=Usage(input_tokens=900, output_tokens=9)),
        ContextResetEvent(
            thread_id="r",
            turn_id="turn_1",
            trigger=ContextResetTrigger.PLAN_APPROVAL,
            plan_preserved=True,
            previous_context_usage_percent=87,
            tool_budget_reset=True,
        ),
        ThreadErrorEvent(message="provider said <no>"),
        TurnStartedEvent(),
        TurnCompletedEvent(usage=Usage(input_tokens=300, output_tokens=3)),
        ThreadCompletedEvent(
            thread_id="r",
            session_id="r",
            subtype=ThreadCompletionSubtype.CANCELLED,
            outcome_code="cancelled",
            usage=Usage(input_tokens=1200, output_tokens=12),
            num_turns=2,
        ),
    ):
        gate.emit(event)
    gate.close()
    log = tmp_path / ".vtcode/sessions/r/events.jsonl"
    assert vtcode(["validate", str(log)], tmp_path).returncode == 0
    page = Page(session_html(tmp_path, "r"))
    assert page.count("li", "reset") == 1 and page.count("li", "error") == 1
    assert "context reset · plan_approval at 87% context usage · plan kept" in page.all_text
    assert "error · provider said <no>" in page.all_text
    assert page.count("line", "mark") == 1  # the reset, between turns 1 and 2
    assert "cancelled" in page.all_text and "Cost unknown" in page.all_text
    assert page.count("article", "turn") == 2


def test_a_log_with_evicted_turns_says_so(tmp_path: Path) -> None:
    from vtcode.config.model import StoreConfig
    from vtcode.events.enums import ThreadCompletionSubtype
    from vtcode.events.types import (
        ThreadCompletedEvent,
        ThreadStartedEvent,
        TurnCompletedEvent,
        TurnStartedEvent,
        Usage,
    )
    from vtcode.report import build_report, session_html
    from vtcode.store import DispatchGate, SessionWriter

    gate = DispatchGate(SessionWriter.create(tmp_path, "e", StoreConfig(max_events=20)))
    gate.emit(ThreadStartedEvent(thread_id="e"))
    for _ in range(30):
        gate.emit(TurnStartedEvent())
        gate.emit(TurnCompletedEvent(usage=Usage(input_tokens=100)))
    usage = Usage(input_tokens=3000)
    gate.emit(
        ThreadCompletedEvent(
            thread_id="e",
            session_id="e",
            subtype=ThreadCompletionSubtype.SUCCESS,
            outcome_code="success",
            result="ok",
            usage=usage,
            num_turns=30,
        )
    )
    gate.close()
    report = build_report(tmp_path, "e")
    assert report.first_seq is not None and report.first_seq > 1
    page = Page(session_html(tmp_path, "e"))
    assert f"events 1-{report.first_seq - 1:,} were evicted" in page.all_text
    assert "3,000" in page.all_text  # the header keeps the whole session's usage


def test_hostile_content_stays_text(pages: dict[str, Path]) -> None:
    raw = pages["hostile"].read_text(encoding="utf-8")
    page = Page(raw)
    assert "<script" not in raw.lower()
    assert "&lt;script&gt;document.body.setAttribute" in raw
    for tag, attrs in page.tags:
        assert tag in ALLOWED_TAGS, tag
        for name in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name not in ("src", "href", "srcset", "action", "formaction", "xlink:href")
    text = page.all_text
    assert "<b>not bold</b>" in text  # shown as written, not rendered
    assert "</pre></details></li></ol><h1>broken out</h1>" in text
    assert "<script>alert(1)</script>" in text  # the unknown tool's name
    assert "bell:\\x07 end" in text  # a control character made visible
    # turns are still intact: the message did not close any element early
    assert page.count("article", "turn") == 3


def test_page_is_self_contained(pages: dict[str, Path]) -> None:
    for path in pages.values():
        raw = path.read_text(encoding="utf-8")
        assert "url(" not in raw and "@import" not in raw
        assert "http://" not in raw.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in raw
        assert "default-src 'none'" in raw  # the CSP: no script, no fetch, even if a bug let one in


# ---- cost apportioning ---------------------------------------------------------------------


def test_cumulative_cost_is_exact_for_replay_pricing(ws: Path) -> None:
    report = build_report(ws, "demo")
    cost = report.cumulative_cost()
    # demo.toml: $3 / $15 per Mtok, cached input at the input price
    running, expected = 0.0, []
    for t in report.turns:
        assert t.usage is not None
        running += (t.usage.input_tokens * 3 + t.usage.output_tokens * 15) / 1e6
        expected.append(running)
    assert cost == pytest.approx(expected)
    assert report.completion is not None
    assert cost[-1] == pytest.approx(report.completion.total_cost_usd)


def test_apportion_cost_edge_cases() -> None:
    from vtcode.events.types import Usage

    assert apportion_cost([Usage(input_tokens=5), None], None) == [None, None]
    assert apportion_cost([None, Usage()], 0.5) == [None, 0.5]
    split = apportion_cost([Usage(input_tokens=10), None, Usage(output_tokens=2)], 2.0)
    assert split == [pytest.approx(1.0), None, pytest.approx(2.0)]


# ---- the command -------------------------------------------------------------------------


def test_html_to_stdout_is_the_same_page(ws: Path, pages: dict[str, Path]) -> None:
    proc = vtcode(["sessions", "show", "demo", "--html", "-"], ws)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == pages["demo"].read_text(encoding="utf-8")
    assert proc.stderr == ""


def test_json_and_html_together_is_a_usage_error(ws: Path, tmp_path: Path) -> None:
    proc = vtcode(["sessions", "show", "demo", "--json", "--html", str(tmp_path / "p.html")], ws)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "--json and --html" in proc.stderr
    assert not (tmp_path / "p.html").exists()


def test_unknown_session_or_unwritable_target_writes_nothing(ws: Path, tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    proc = vtcode(["sessions", "show", "nope", "--html", str(target)], ws)
    assert proc.returncode == 2
    assert "no session 'nope'" in proc.stderr and "Traceback" not in proc.stderr
    assert not target.exists()
    missing = tmp_path / "no-such-dir" / "page.html"
    proc = vtcode(["sessions", "show", "demo", "--html", str(missing)], ws)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {missing}: --html: cannot write here: the folder")
    assert "does not exist" in proc.stderr
    assert not missing.parent.exists()


# ---- headless Chromium ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium(debian_tool: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    binary = debian_tool("chromium", "chromium")
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=120,
            check=False,
        )

    return run


def test_screenshot_has_the_page_and_the_plot(
    chromium: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    png = tmp_path / "demo.png"
    proc = chromium(f"--screenshot={png}", "--window-size=1280,2000", pages["demo"].as_uri())
    assert proc.returncode == 0 and png.exists(), proc.stderr.decode()[-2000:]
    img = read_png(png.read_bytes())
    assert (img.width, img.height) == (1280, 2000)
    background = img.pixel(5, 5)
    distinct = {img.pixel(x, y) for y in range(0, 2000, 25) for x in range(0, 1280, 7)}
    assert len(distinct) > 30  # text, cards, badges: not a blank page
    bars = img.count(_hex(TOKENS_COLOR))
    cost = img.count(_hex(COST_COLOR))
    assert len(bars) > 5000, "the token bars are drawn"
    assert len(cost) > 300, "the cost line is drawn"
    xs = [x for x, _ in bars]
    ys = [y for _, y in bars]
    assert max(xs) - min(xs) > 600  # five bars spread across the plot's width
    assert max(ys) < 1000  # the plot sits above the timeline, near the top
    assert background not in (_hex(TOKENS_COLOR), _hex(COST_COLOR))


def test_dom_has_turns_svg_and_inert_script(chromium: Any, pages: dict[str, Path]) -> None:
    proc = chromium("--dump-dom", pages["hostile"].as_uri())
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    dom = proc.stdout.decode("utf-8")
    assert dom.count('<article class="card turn') == 3
    assert "<svg" in dom and 'class="bar"' in dom
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;document.body.setAttribute" in dom
    body = dom[dom.index("<body") : dom.index(">", dom.index("<body"))]
    for flag in ("data-pwned", "data-img", "data-arg", "data-final"):
        assert flag not in body  # none of the injected snippets ran
    proc = chromium("--dump-dom", pages["demo"].as_uri())
    demo = proc.stdout.decode("utf-8")
    assert demo.count('<article class="card turn') == 5
    assert demo.count('<rect class="bar"') == 5

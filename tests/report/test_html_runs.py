"""The page of a resumed session: one card per run (prompt, provider, model, outcome, tiles),
tiles for the whole session that add the runs up, the timeline grouped by run, and each file
change with the unified diff recorded when the tool wrote it.

The session is made by two real `vtcode exec` runs (the second an `exec resume`) with different
models and prices, over a file that existed before the session; prompts and file contents are
hostile (markup, script, escape sequences). Expected figures are computed here from the events
and the scripts' prices, never read back from the report code. Checked as markup, as a syrupy
outline, and in headless Chromium (DOM and a screenshot).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import vtcode
from tests.report.test_html_page import Page, _hex, chromium  # noqa: F401  (chromium: a fixture)
from tests.report.test_html_png import read_png
from vtcode.report import build_report

FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"
PROMPT_1 = "<script>document.body.setAttribute('data-prompt','1')</script> rewrite \x1b[2J page"
PROMPT_2 = "patch it & add <notes>"
DIFF_ADD, DIFF_DEL = "#86efac", "#fca5a5"  # style.css: .diff .d-add / .d-del


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs-ws")
    (root / "page.html").write_text("old secret line\n")  # there before the session
    first = ["exec", "-q", "--session-id", "two", "--script", str(FIXTURES / "resume-1.toml")]
    proc = vtcode([*first, PROMPT_1], root)
    assert proc.returncode == 0, proc.stderr
    second = ["exec", "-q", "--script", str(FIXTURES / "resume-2.toml"), "resume", "two"]
    proc = vtcode([*second, PROMPT_2], root)
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture(scope="module")
def page_path(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("runs-page") / "two.html"
    proc = vtcode(["sessions", "show", "two", "--html", str(target)], ws)
    assert proc.returncode == 0, proc.stderr
    return target


def _completions(ws: Path) -> list[dict[str, Any]]:
    log = ws / ".vtcode" / "sessions" / "two" / "events.jsonl"
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    return [e for e in events if e["type"] == "thread.completed"]


def _section(raw: str, start: str, end: str) -> str:
    return raw[raw.index(start) : raw.index(end, raw.index(start))]


def test_the_log_is_valid_and_has_two_runs(ws: Path) -> None:
    log = ws / ".vtcode" / "sessions" / "two" / "events.jsonl"
    proc = vtcode(["validate", str(log)], ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(_completions(ws)) == 2


def test_each_run_has_its_card_prompt_model_and_tiles(ws: Path, page_path: Path) -> None:
    raw = page_path.read_text(encoding="utf-8")
    page = Page(raw)
    assert page.count("article", "run") == 2
    one, two = _completions(ws)
    # the scripts' prices: run 1 $3/$15 per Mtok, run 2 $1/$5 (checked against the events)
    assert one["total_cost_usd"] == pytest.approx((2300 * 3 + 60 * 15) / 1e6)
    assert two["total_cost_usd"] == pytest.approx((4500 * 1 + 55 * 5) / 1e6)
    card_1 = Page(_section(raw, 'id="run-1"', "</article>")).all_text
    card_2 = Page(_section(raw, 'id="run-2"', "</article>")).all_text
    assert "Run 1 · turns 1-2" in card_1 and "Run 2 · turns 3-4" in card_2
    assert "<script>document.body.setAttribute('data-prompt','1')</script>" in card_1
    assert "rewrite \\x1b[2J page" in card_1  # the escape sequence made visible, not sent
    assert PROMPT_2 in card_2
    assert "replay-alpha" in card_1 and "replay-beta" not in card_1
    assert "replay-beta" in card_2
    assert "2,300" in card_1 and "$0.0078" in card_1  # 0.0078 exactly
    assert "4,500" in card_2 and "$0.0047" in card_2  # 0.004775, to three figures
    # the whole session's tiles add the runs up (today's bug: they showed the last run only)
    whole = Page(_section(raw, '<div class="stats whole"', "</section>")).all_text
    assert f"{2300 + 4500:,}" in whole and f"{60 + 55:,}" in whole
    total = one["total_cost_usd"] + two["total_cost_usd"]
    assert "$0.0126" in whole  # 0.012575, to three figures
    assert "Runs2resumed" in whole.replace(" ", "")
    report = build_report(ws, "two")
    assert report.cumulative_cost()[-1] == pytest.approx(total)
    assert report.cumulative_cost()[1] == pytest.approx(one["total_cost_usd"])


def test_timeline_is_grouped_by_run_and_the_chart_marks_the_resume(page_path: Path) -> None:
    raw = page_path.read_text(encoding="utf-8")
    page = Page(raw)
    assert page.count("h3", "run-start") == 2
    assert page.count("article", "turn") == 4
    assert page.count("rect", "bar") == 4
    # run 2 starts between turns 2 and 3, and (a new model) compacts the history there
    svg = raw[raw.index("<svg") : raw.index("</svg>")]
    assert page.count("line", "mark") == 1  # one line, one label: they would overprint
    assert "<title>run 2 · compaction</title>" in svg
    assert "Run 2 · resumed" in page.all_text


def test_file_changes_show_write_time_diffs(page_path: Path, snapshot_json: Any) -> None:
    raw = page_path.read_text(encoding="utf-8")
    page = Page(raw)
    text = page.all_text
    assert page.count("details", "diff") == 3
    # the overwrite's old content is only known because it was recorded at write time
    assert "-old secret line" in text
    assert "+<script>document.body.setAttribute('data-diff','1')</script>" in text
    assert "+red:\\x1b[31m end" in text
    assert "-<h1>title</h1>\n+<h1>better title</h1>" in text
    assert "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+# notes" in text
    assert "<script" not in raw.lower() and "\x1b" not in raw
    assert page.outline == snapshot_json(name="two-runs-outline")


def test_dom_and_screenshot_of_the_two_run_page(
    chromium: Any,  # noqa: F811
    page_path: Path,
    tmp_path: Path,
) -> None:
    proc = chromium("--dump-dom", page_path.as_uri())
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    dom = proc.stdout.decode("utf-8")
    assert dom.count('<article class="card run"') == 2
    assert dom.count('<article class="card turn') == 4
    assert dom.count('<details class="diff" open=""') == 3
    body = dom[dom.index("<body") : dom.index(">", dom.index("<body"))]
    assert "data-prompt" not in body and "data-diff" not in body  # nothing injected ran
    png = tmp_path / "two.png"
    proc = chromium(f"--screenshot={png}", "--window-size=1280,3600", page_path.as_uri())
    assert proc.returncode == 0 and png.exists(), proc.stderr.decode()[-2000:]
    img = read_png(png.read_bytes())
    added = img.count(_hex(DIFF_ADD), tolerance=8)
    removed = img.count(_hex(DIFF_DEL), tolerance=8)
    assert len(added) > 200, "added diff lines are drawn in green"
    assert len(removed) > 100, "removed diff lines are drawn in red"
    # both runs' diffs are on the page: the + lines spread over more than one card's height
    ys = sorted(y for _, y in added)
    assert ys[-1] - ys[0] > 300


def test_sessions_show_json_lists_the_runs(ws: Path) -> None:
    proc = vtcode(["sessions", "show", "two", "--json"], ws)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)["runs"]
    one, two = _completions(ws)
    assert [r["number"] for r in runs] == [1, 2]
    assert [r["prompt"] for r in runs] == [PROMPT_1, PROMPT_2]
    assert [r["model"] for r in runs] == ["replay-alpha", "replay-beta"]
    assert [r["usage"] for r in runs] == [one["usage"], two["usage"]]
    assert [r["total_cost_usd"] for r in runs] == [one["total_cost_usd"], two["total_cost_usd"]]
    assert [r["num_turns"] for r in runs] == [2, 2]
    assert [r["outcome_code"] for r in runs] == ["success", "success"]

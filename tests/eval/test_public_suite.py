"""The public eval suite (evals/public) is sound: a checker that cannot fail is a defect.

For every task: task.toml loads through `vtcode.eval.suite` with every required field written
out, the checker FAILS on the untouched setup and PASSES once the reference is laid over it, the
reference leaves every protected file as it was, and each protect glob guards something real.
Known near misses (a plausible wrong answer per task) must fail too, so a checker that only
looks at the visible tests is caught, and so must a workspace that only pretends: modules named
like the stdlib, or programs that exit 0 at once. The replay-scripted tasks are solved end to
end by the real `vtcode exec --script` (real tools, real sandboxed commands) and then pass the
same check, through `vtcode eval` as CI and a demo would run them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.exec_support import REPO, canonical_lines, vtcode
from vtcode.eval.suite import (
    CheckResult,
    Task,
    apply_reference,
    load_suite,
    materialize,
    protected_digest,
    run_check,
)

SUITE_DIR = REPO / "evals" / "public"
SUITE = load_suite(SUITE_DIR)
TASKS = {t.id: t for t in SUITE.tasks}
SCRIPTED = [t for t in SUITE.tasks if t.spec.script is not None]
REQUIRED_KEYS = {"id", "prompt", "tags", "timeout", "max_turns", "check", "protect", "setup"}
LEVELS = {"easy", "medium", "hard"}

# The issue's list (issue 28 item 3), each kind by the task that covers it.
COVERAGE = {
    "create a file": "create-file",
    "fix an off-by-one against its test": "fix-off-by-one",
    "rename a symbol across files": "rename-symbol",
    "add a CLI flag": "add-cli-flag",
    "answer a question from a file into a file": "answer-from-config",
    "make a failing test pass, seen only by running it": "failing-test",
    "edit one spot in a 2,000-line file": "edit-big-file",
    "a task that needs a short plan": "plan-todo-done",
    "a command with 100k lines of output": "log-needle",
    "recover from a failing command": "recover-failing-command",
    "leave protected tests alone": "protected-test",
}

# Plausible wrong answers, laid over the setup like a reference: the checker must fail each.
NEAR_MISSES: dict[str, dict[str, str]] = {
    "create-file": {"hello.txt": "Hello from vtcode\nHello from vtcode\n"},
    "edit-big-file": {"settings.py": "REQUEST_TIMEOUT = 45\n"},  # the rest of the file lost
    "create-fizzbuzz": {"fizzbuzz.py": "for n in range(1, 15):\n    print(n)\n"},
    "fix-off-by-one": {  # passes the visible tests only
        "sum_to.py": "def sum_to(n):\n    return {0: 0, 1: 1, 4: 10}.get(n, 0)\n"
    },
    "rename-symbol": {  # renamed, but the old name kept as an alias
        "shop/cart.py": "def compute_total(prices, tax_rate=0.0):\n"
        "    return round(sum(prices) * (1 + tax_rate), 2)\n\n\ncalc_total = compute_total\n\n\n"
        "def item_count(prices):\n    return len(prices)\n"
    },
    "add-cli-flag": {  # the flag exists but changes nothing
        "greet.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('name')\n"
        "p.add_argument('--shout', action='store_true')\na = p.parse_args()\n"
        "print(f'Hello, {a.name}!')\n"
    },
    "answer-from-config": {"answer.txt": "5432\n"},  # the [database] port
    "failing-test": {  # up to two digits: the visible tests pass, 100s does not
        "duration.py": "import re\n_U = {'h': 3600, 'm': 60, 's': 1}\n"
        "def parse_duration(text):\n    text = text.strip().lower()\n"
        "    parts = re.findall(r'(\\d\\d?)([hms])', text)\n"
        "    if not text or ''.join(a + b for a, b in parts) != text:\n"
        "        raise ValueError(text)\n"
        "    return sum(int(a) * _U[b] for a, b in parts)\n"
    },
    "log-needle": {"answer.txt": "code E7173\n"},
    "recover-failing-command": {"out/version.txt": "1.4.2 release 000000000000\n"},
    "protected-test": {  # right format without the thousands separator
        "price.py": "def format_price(amount):\n    return f'${amount:.2f}'\n"
    },
    "json-edit": {
        "config.json": '{"name": "billing-service", "version": "2.3.1", "debug": 0, '
        '"log_level": "info", "features": {"invoices": true, "refunds": true, '
        '"debug_panel": true}, "allowed_hosts": ["billing.internal", "localhost"], '
        '"retry": {"attempts": 3, "backoff_seconds": 1.5}}\n'
    },
    "plan-todo-done": {  # done stored, but list not showing it, no error path, no new test
        "todo.py": "import json, sys\nfrom pathlib import Path\nS = Path('todo.json')\n"
        "items = json.loads(S.read_text()) if S.exists() else []\ncmd = sys.argv[1]\n"
        "if cmd == 'add':\n    items.append({'text': sys.argv[2]})\n"
        "elif cmd == 'done':\n    items[int(sys.argv[2]) - 1]['done'] = True\n"
        "else:\n    for n, i in enumerate(items, 1):\n        print(f\"{n}. {i['text']}\")\n"
        "S.write_text(json.dumps(items))\n"
    },
    "plan-extract-module": {  # copied into rows.py, not moved: report.py still defines them
        "rows.py": "def parse_line(line):\n    return None\n\n\n"
        "def format_row(name, qty, price):\n    return ''\n"
    },
    "fix-typo": {  # every typo fixed, and a heading lost on the way
        "README.md": "# inbox\n\nA tiny service that lets you receive messages from other "
        "services.\n\n## Usage\n\nStart it with `python3 -m inbox`. Each client can receive "
        "up to 100 messages per minute;\nmessages you do not receive within a day are dropped.\n\n"
        "Services need a simple place to receive and store notes.\n"
    },
    "add-requirement": {  # appended, not sorted in
        "requirements.txt": "attrs>=23.1\nclick>=8.1\nhttpx>=0.27\nrich>=13.7\nurllib3>=2.0\n"
        "requests>=2.31\n"
    },
    "git-find-commit": {"answer.txt": "78d6266\n"},  # the README commit: the same two ports
    "fix-import": {"helpers.py": "from textutils import slugify\n"},
    "write-function": {  # additive only: 4 -> IIII
        "roman.py": "def to_roman(n):\n    if not 1 <= n <= 3999:\n        raise ValueError(n)\n"
        "    out = ''\n    for v, s in [(1000, 'M'), (500, 'D'), (100, 'C'), (50, 'L'), "
        "(10, 'X'), (5, 'V'), (1, 'I')]:\n        c, n = divmod(n, v)\n        out += s * c\n"
        "    return out\n"
    },
    "shell-script": {  # one file: wc prints "N name"; none: an error, not 0
        "count_lines.sh": "wc -l \"$1\"/*.txt | tail -n 1 | awk '{print $1}'\n"
    },
    "csv-sum": {"answer.txt": "36191\n"},  # "north" and "North-East" together
}


def _ids(tasks: list[Task]) -> list[str]:
    return [t.id for t in tasks]


def _overlay(workspace: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_suite_covers_the_issue_with_at_least_15_tasks() -> None:
    folders = sorted(p.name for p in SUITE_DIR.iterdir() if p.is_dir())
    assert folders == sorted(TASKS), "every folder of evals/public is a task"
    assert len(TASKS) >= 15
    missing = {kind: tid for kind, tid in COVERAGE.items() if tid not in TASKS}
    assert not missing
    assert len(SCRIPTED) >= 3, "the runner's CI demo needs replay-scripted tasks"
    assert set(NEAR_MISSES) == set(TASKS), "every task has a near miss its checker rejects"
    levels = {level for t in SUITE.tasks for level in t.spec.tags if level in LEVELS}
    assert levels == LEVELS


def test_the_readme_lists_every_task() -> None:
    readme = (SUITE_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([^|]+) \|", readme, re.MULTILINE)
    assert sorted(task_id for task_id, _ in rows) == sorted(TASKS)
    for task_id, tags in rows:
        assert [t.strip() for t in tags.split(",")] == TASKS[task_id].spec.tags, task_id
    scripted = re.search(r"`replay.toml` \((\w+) tasks\)", readme)
    assert scripted is not None
    assert scripted.group(1) == ["zero", "one", "two", "three", "four", "five", "six", "seven",
                                 "eight", "nine", "ten"][len(SCRIPTED)]  # fmt: skip


@pytest.mark.parametrize("task", SUITE.tasks, ids=_ids(list(SUITE.tasks)))
def test_task_toml_writes_out_every_field(task: Task) -> None:
    raw = tomllib.loads((task.folder / "task.toml").read_text(encoding="utf-8"))
    assert raw.keys() >= REQUIRED_KEYS, f"missing {REQUIRED_KEYS - raw.keys()}"
    assert task.id == task.folder.name
    assert len([t for t in task.spec.tags if t in LEVELS]) == 1, "exactly one difficulty tag"
    # -I: the checker's own imports come from the stdlib, never from the agent's workspace
    assert task.spec.check == ["python3", "-I", "check.py"]
    assert (task.folder / "check.py").is_file()
    assert any(task.reference_dir.rglob("*")), "a reference solution beside the task"
    assert task.spec.prompt == task.spec.prompt.strip() and len(task.spec.prompt) < 1200


# Modules the checkers (and unittest, runpy) import, planted in the workspace as code that ends
# the process with status 0 the moment it is imported.
SHADOWS = ["json", "subprocess", "re", "pathlib", "csv", "ast", "tempfile", "shutil", "unittest",
           "runpy", "contextlib", "traceback", "sitecustomize", "usercustomize"]  # fmt: skip
SHADOWED = {"fix-off-by-one", "rename-symbol", "csv-sum", "add-cli-flag"}
EXIT_0 = {".py": "import os\nos._exit(0)\n", ".sh": "exit 0\n"}


def exit_0_programs(task: Task, programs: Mapping[str, str] = EXIT_0) -> dict[str, str]:
    """Every program the reference adds or changes, as one that exits 0 at once (`programs`:
    such a program by file suffix; tests/eval/test_holdout_suite.py adds JavaScript)."""
    return {
        p.relative_to(task.reference_dir).as_posix(): programs[p.suffix]
        for p in task.reference_dir.rglob("*")
        if p.suffix in programs
    }


@dataclass(frozen=True, slots=True)
class SetupAndReference:
    """The checker on the untouched setup, then on the same workspace with the reference laid
    over it (tests/eval/test_holdout_suite.py asks the same of its suite)."""

    untouched: CheckResult
    reference: CheckResult
    protected_before: Mapping[str, str]
    protected_after_reference: Mapping[str, str]
    unmatched_protect: list[str]
    check_side_effects: set[str]  # paths a check added or removed


def check_setup_then_reference(task: Task, main: Path) -> SetupAndReference:
    """`main`: the task's materialized setup, which ends with the reference laid over it."""
    before = protected_digest(task, main)
    unmatched = [p for p in task.spec.protect if not list(main.glob(p))]
    listing = _listing(main)
    untouched = run_check(task, main)
    side_effects = listing ^ _listing(main)
    apply_reference(task, main)
    after = protected_digest(task, main)
    listing = _listing(main)
    reference = run_check(task, main)
    side_effects |= listing ^ _listing(main)
    return SetupAndReference(untouched, reference, before, after, unmatched, side_effects)


@dataclass(frozen=True, slots=True)
class Verdicts:
    """What one task's checker said about each prepared workspace (None: not applicable)."""

    base: SetupAndReference
    near_miss: CheckResult
    exit_0: CheckResult | None
    shadowed: CheckResult | None


def _listing(workspace: Path) -> set[str]:
    return {p.relative_to(workspace).as_posix() for p in workspace.rglob("*")}


def _verdicts(task: Task, root: Path) -> Verdicts:
    def fresh(name: str, *overlays: dict[str, str], reference: bool = False) -> Path:
        workspace = root / task.id / name
        materialize(task, workspace)
        if reference:
            apply_reference(task, workspace)
        for files in overlays:
            _overlay(workspace, files)
        return workspace

    base = check_setup_then_reference(task, fresh("main"))
    exit_0 = exit_0_programs(task)
    shadows = {f"{name}.py": EXIT_0[".py"] for name in SHADOWS}
    return Verdicts(
        base=base,
        near_miss=run_check(task, fresh("near-miss", NEAR_MISSES[task.id])),
        exit_0=run_check(task, fresh("exit-0", exit_0, reference=True)) if exit_0 else None,
        shadowed=run_check(task, fresh("shadowed", shadows)) if task.id in SHADOWED else None,
    )


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdicts]:
    """Every checker verdict of the suite, four tasks at a time: about 90 checks, each a short
    process, so the file stays well under a minute on a loaded two-core machine."""
    root = tmp_path_factory.mktemp("suite")
    with pytest.MonkeyPatch.context() as env, ThreadPoolExecutor(max_workers=4) as pool:
        # as on a machine without it, so a check that writes __pycache__ is seen doing so
        env.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        done = pool.map(lambda task: _verdicts(task, root), SUITE.tasks)
        return {task.id: v for task, v in zip(SUITE.tasks, done, strict=True)}


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_checker_fails_on_setup_passes_on_reference(
    task_id: str, verdicts: dict[str, Verdicts]
) -> None:
    v = verdicts[task_id].base
    assert not v.unmatched_protect, f"protect globs that match nothing: {v.unmatched_protect}"
    assert not v.untouched.passed, f"the checker passes the untouched setup:\n{v.untouched.output}"
    assert "FAIL" in v.untouched.output, "a failing check says why"
    assert v.protected_after_reference == v.protected_before, (
        "the reference changes a protected file"
    )
    assert v.reference.passed, f"the checker rejects the reference:\n{v.reference.output}"
    assert not v.check_side_effects, "the check leaves the workspace as the agent left it"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_checker_rejects_a_near_miss(task_id: str, verdicts: dict[str, Verdicts]) -> None:
    result = verdicts[task_id].near_miss
    assert not result.passed, f"{task_id}: a near miss passes:\n{result.output}"


@pytest.mark.parametrize("task_id", sorted(SHADOWED))
def test_a_workspace_module_named_like_the_stdlib_cannot_fake_a_pass(
    task_id: str, verdicts: dict[str, Verdicts]
) -> None:
    result = verdicts[task_id].shadowed
    assert result is not None and not result.passed, result


@pytest.mark.parametrize("task_id", sorted(t.id for t in SUITE.tasks if exit_0_programs(t)))
def test_code_that_exits_0_when_run_fails_the_check(
    task_id: str, verdicts: dict[str, Verdicts]
) -> None:
    """The reference's programs replaced by ones that exit 0 at once: a checker that trusted
    exit statuses alone would pass them; each must ask for real output."""
    result = verdicts[task_id].exit_0
    assert result is not None and not result.passed, result


def test_editing_the_protected_test_is_seen(tmp_path: Path) -> None:
    """protected-test's shortcut: make the test expect what the bug prints. The digest the
    runner compares changes (the task fails as "protected file changed")."""
    task = TASKS["protected-test"]
    workspace = tmp_path / "ws"
    materialize(task, workspace)
    before = protected_digest(task, workspace)
    test = workspace / "test_price.py"
    test.write_text(test.read_text().replace('"$1,234.50"', '"$1234.5"'))
    assert protected_digest(task, workspace) != before


def test_log_needle_prints_100k_lines_with_one_error(tmp_path: Path) -> None:
    task = TASKS["log-needle"]
    workspace = tmp_path / "ws"
    materialize(task, workspace)
    out = subprocess.run(
        [sys.executable, "job.py"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    errors = [line for line in out if " ERROR " in line]
    assert len(out) == 100_000 and len(errors) == 1
    code = errors[0].rsplit(" ", 1)[1]
    assert (task.reference_dir / "answer.txt").read_text().strip() == code


def test_edit_big_file_generates_2000_lines_with_one_target(tmp_path: Path) -> None:
    task = TASKS["edit-big-file"]
    workspace = tmp_path / "ws"
    materialize(task, workspace)
    lines = (workspace / "settings.py").read_text().splitlines()
    assert len(lines) == 2000
    assert [n for n, line in enumerate(lines, 1) if line == "REQUEST_TIMEOUT = 30"] == [1377]
    ref = (task.reference_dir / "settings.py").read_text().splitlines()
    assert [n for n, (a, b) in enumerate(zip(lines, ref, strict=True), 1) if a != b] == [1377]
    # the near namesake changed as well: one line too many
    ref[411] = ref[411].replace("= 30", "= 45")
    assert ref[411] == "UPSTREAM_REQUEST_TIMEOUT = 45"
    (workspace / "settings.py").write_text("\n".join(ref) + "\n")
    assert not run_check(task, workspace).passed


def test_the_scripted_tasks_pass_through_vtcode_eval(tmp_path: Path) -> None:
    """The runner's demo with no model: `vtcode eval` runs each scripted task through the real
    `vtcode exec --script` in a fresh workspace, checks it, compares its protected files; every
    run passes, replays its whole script, and leaves a session log that validates."""
    selection = [arg for t in SCRIPTED for arg in ("--task", t.id)]
    run = vtcode(
        ["eval", str(SUITE_DIR), *selection, "--jobs", "2", "--json", "-q", "--min-pass-rate", "1"],
        tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert sorted(r["task_id"] for r in report["runs"]) == sorted(t.id for t in SCRIPTED)
    for record in report["runs"]:
        task = TASKS[record["task_id"]]
        assert task.script_path is not None
        turns = len(tomllib.loads(task.script_path.read_text())["turn"])
        assert record["passed"] and record["outcome_subtype"] == "success", record
        assert record["turns"] == turns and record["protected_changed"] == [], record
        workspace = Path(record["workspace"])
        events = [line["event"] for line in canonical_lines(workspace, record["session_id"])]
        assert events[-1]["type"] == "thread.completed"
        assert run_check(task, workspace).passed

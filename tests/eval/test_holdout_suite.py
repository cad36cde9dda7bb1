"""The held-out eval suite (evals/holdout) is sound, like the public one.

For every task: task.toml loads through `vtcode.eval.suite.load_suite` with every field written
out, the checker FAILS on the untouched setup and PASSES once the reference is laid over it,
the reference leaves every protected file as it was, and the check leaves the workspace as the
agent left it. Plausible near misses (on the setup or on the reference) must fail, and so must
a workspace whose programs exit 0 at once or whose stdlib-named modules do.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import pytest

from tests.eval.test_public_suite import (
    SetupAndReference,
    check_setup_then_reference,
    exit_0_programs,
)
from vtcode.eval.suite import (
    CheckResult,
    Task,
    apply_reference,
    load_suite,
    materialize,
    run_check,
)

SUITE_DIR = Path(__file__).resolve().parents[2] / "evals" / "holdout"
SUITE = load_suite(SUITE_DIR)
TASKS = {t.id: t for t in SUITE.tasks}
REQUIRED_KEYS = {"id", "prompt", "tags", "timeout", "max_turns", "check", "protect", "setup"}
LEVELS = {"easy", "medium", "hard"}
PLAN = "plan-median-report"
# Checked with node: without it the checker fails on the reference too.
NEEDS_NODE = {"js-fix-chunk"}
# Wording of the public prompts the held-out prompts must not copy.
PUBLIC_PHRASES = ["Do not change", "so that `", "into a new file"]

KINDS = {
    "create a file with exact content given in prose": "create-codeowners",
    "fix a comparison bug a protected unittest file shows": "fix-discount-tier",
    "rename a class across three files": "rename-class",
    "add an option to a small CLI": "cli-min-count",
    "answer from a data file with near-miss decoys": "answer-live-version",
    "a JavaScript task checked with node": "js-fix-chunk",
    "edit a TOML setting and add a key": "toml-server-settings",
    "a bash script from a spec, hidden inputs": "shell-ext-count",
    "a failure seen only by running a command": "crash-on-run",
    "a multi-step change that needs a plan": PLAN,
}


@dataclass(frozen=True, slots=True)
class NearMiss:
    """Files laid over the setup (or over the reference): a plausible wrong answer."""

    why: str
    files: Mapping[str, str]
    _: KW_ONLY
    on_reference: bool = False


RULES = "* @acme/maintainers\ndocs/ @acme/docs\npyproject.toml "
CODEOWNERS, ONE_OWNER = (RULES + "@acme/maintainers @acme/release\n", RULES + "@acme/release\n")
PRICING = """\
def discount_rate(q):
    return 0.15 if q >= 100 else 0.10 if q >= 49 else 0.05 if q >= 10 else 0.0


def order_total(p, q):
    return round(p * q * (1 - discount_rate(q)), 2)
"""
MODELS_ALIAS = """\
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    sensor: str
    celsius: float
    fahrenheit = property(lambda self: self.celsius * 9 / 5 + 32)
    is_freezing = lambda self: self.celsius <= 0


Reading = Measurement
"""
TALLY = """\
import argparse, re
from collections import Counter
p = argparse.ArgumentParser()
p.add_argument("file")
p.add_argument("--min", type={type}, default={default})
a = p.parse_args()
c = Counter(re.findall(r"[a-z']+", open(a.file).read().lower()))
for w, n in sorted(c.items(), key=lambda i: (-i[1], i[0])):
    if n {op} a.min:
        print(f"{{n:>5}} {{w}}")
"""
CHUNK_SPLICE = """\
function chunk(items, size) {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('size');
  const out = [];
  while (items.length) out.push(items.splice(0, size));
  return out;
}
module.exports = { chunk, chunkCount: (count, size) => Math.ceil(count / size) };
"""
SERVER = '[server]\nhost = "0.0.0.0"\nport = 8080\nworkers = 8\nmax_body_kb = 512\n'
SERVICE = f"""\
# service.toml: read once at start-up by the ledger service.
name = "ledger"
region = "eu-west-1"

{SERVER}{{server}}
[server.tls]
enabled = false
cert = "/etc/ledger/tls.pem"

[database]
url = "postgres://ledger@db.internal/ledger"
pool_size = 10
timeout_seconds = 5

[metrics]
port = 9100
workers = {{metrics}}
{{tail}}"""
LS_COUNT = "ls \"$1\" | grep '\\.' | sed 's/.*\\.//' | sort | uniq -c | awk '{print $2, $1}'\n"
FIND_COUNT = "find \"$1\" -type f -name '*.*' ! -name '.*' | sed 's/.*\\.//' | sort | uniq -c \\\n"
FIND_COUNT += "  | awk '{print $2, $1}'\n"
LEDGER_SKIP = """\
M = "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec".split()


def month_number(a):
    return M.index(a) + 1


def monthly_totals(lines):
    t = {}
    for line in lines:
        try:
            d, m, y, amount, _ = line.split(maxsplit=4)
            k = (int(y), month_number(m))
        except ValueError:
            continue
        t[k] = t.get(k, 0.0) + float(amount)
    return t
"""
STATS = """\
def mean(values):
    if not values:
        raise ValueError("empty")
    return sum(values) / len(values)


def spread(values):
    return max(values) - min(values)


def median(values):
    if not values:
        raise ValueError("empty")
    values.sort()
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
"""
REPORT_OWN_MEDIAN = """\
import statistics, sys
v = [float(x) for x in open(sys.argv[1]).read().split()]
print(f"count: {len(v)}")
print(f"min: {min(v):.2f}")
print(f"max: {max(v):.2f}")
print(f"spread: {max(v) - min(v):.2f}")
print(f"mean: {sum(v) / len(v):.2f}")
print(f"median: {statistics.median(v):.2f}")
"""
ODD_AND_EMPTY_TESTS = """\
import unittest
from stats import mean, median, spread


class T(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 6]), 3)
    def test_spread(self):
        self.assertEqual(spread([4, -1, 7]), 8)
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)
    def test_empty(self):
        self.assertRaises(ValueError, median, [])
"""
SETUP_TESTS = (SUITE_DIR / PLAN / "setup" / "test_stats.py").read_text(encoding="utf-8")


NEAR_MISSES: dict[str, list[NearMiss]] = {
    "create-codeowners": [
        NearMiss("at the top level, not in .github/", {"CODEOWNERS": CODEOWNERS}),
        NearMiss("a comment line", {".github/CODEOWNERS": "# owners\n" + CODEOWNERS}),
        NearMiss("an owner left out", {".github/CODEOWNERS": ONE_OWNER}),
    ],
    "fix-discount-tier": [NearMiss("a tier from 49: visible tests pass", {"pricing.py": PRICING})],
    "rename-class": [
        NearMiss("an alias kept", {"sensors/models.py": MODELS_ALIAS}, on_reference=True),
        NearMiss("only models.py renamed", {"sensors/models.py": MODELS_ALIAS.split("\n\n\nR")[0]}),
    ],
    "cli-min-count": [
        NearMiss("> instead of >=", {"tally.py": TALLY.format(type="int", op=">", default=0)}),
        NearMiss("2.5 accepted", {"tally.py": TALLY.format(type="float", op=">=", default=1)}),
    ],
    "answer-live-version": [
        NearMiss(why, {"answer.txt": f"{version}\n"})
        for version, why in [
            ("3.9.0", "the newest production deploy, which failed"),
            ("3.8.2", "the highest version that succeeded, rolled back since"),
            ("3.9.1", "the newest on staging"),
            ("3.10.0", "payments-worker, a near namesake"),
            ("3.7.4", "the last match in the file (it lists the newest first)"),
        ]
    ],
    "js-fix-chunk": [NearMiss("splice empties the caller's array", {"chunk.js": CHUNK_SPLICE})],
    "toml-server-settings": [
        NearMiss(why, {"service.toml": SERVICE.format(server=server, metrics=metrics, tail=tail)})
        for why, server, metrics, tail in [
            ("appended at the end: in [metrics]", "", 1, "timeout_seconds = 30\n"),
            ("[metrics] workers changed too", "timeout_seconds = 30\n", 8, ""),
            ("a string, not an integer", 'timeout_seconds = "30"\n', 1, ""),
        ]
    ],
    "shell-ext-count": [
        NearMiss("ls counts folders with a dot in their name", {"ext_count.sh": LS_COUNT}),
        NearMiss("find descends into subfolders", {"ext_count.sh": FIND_COUNT}),
    ],
    "crash-on-run": [NearMiss("the lines that crash skipped", {"ledger.py": LEDGER_SKIP})],
    PLAN: [
        NearMiss("median sorts the caller's list", {"stats.py": STATS}, on_reference=True),
        NearMiss("own median", {"report.py": REPORT_OWN_MEDIAN}, on_reference=True),
        NearMiss("no even-count test", {"test_stats.py": ODD_AND_EMPTY_TESTS}, on_reference=True),
        NearMiss("no median test at all", {"test_stats.py": SETUP_TESTS}, on_reference=True),
    ],
}
EXIT_0 = {".py": "import os\nos._exit(0)\n", ".sh": "exit 0\n", ".js": "process.exit(0);\n"}
SHADOWS = ["json", "re", "subprocess", "pathlib", "tempfile", "shutil", "unittest", "argparse",
           "collections", "runpy", "contextlib", "dataclasses", "sitecustomize"]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Verdicts:
    """What one task's checker said about each prepared workspace."""

    base: SetupAndReference
    near_misses: list[tuple[str, CheckResult]]
    exit_0: CheckResult | None
    shadowed: CheckResult


def _verdicts(task: Task, root: Path) -> Verdicts:
    def fresh(name: str, files: Mapping[str, str], *, reference: bool = False) -> CheckResult:
        workspace = root / task.id / name
        materialize(task, workspace)
        if reference:
            apply_reference(task, workspace)
        for rel, text in files.items():
            (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            (workspace / rel).write_text(text, encoding="utf-8")
        return run_check(task, workspace)

    main = root / task.id / "main"
    materialize(task, main)
    base = check_setup_then_reference(task, main)
    misses = [
        (m.why, fresh(f"near-miss-{i}", m.files, reference=m.on_reference))
        for i, m in enumerate(NEAR_MISSES[task.id])
    ]
    exit_0 = exit_0_programs(task, EXIT_0)
    shadows = {f"{name}.py": EXIT_0[".py"] for name in SHADOWS}
    return Verdicts(
        base=base,
        near_misses=misses,
        exit_0=fresh("exit-0", exit_0, reference=True) if exit_0 else None,
        shadowed=fresh("shadowed", shadows),
    )


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdicts]:
    """Every checker verdict of the suite, four tasks at a time."""
    root = tmp_path_factory.mktemp("holdout")
    with pytest.MonkeyPatch.context() as env, ThreadPoolExecutor(max_workers=4) as pool:
        # as on a machine without it, so a check that writes __pycache__ is seen doing so
        env.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        done = pool.map(lambda task: _verdicts(task, root), SUITE.tasks)
        return {task.id: v for task, v in zip(SUITE.tasks, done, strict=True)}


def test_the_suite_has_one_task_of_each_kind() -> None:
    folders = sorted(p.name for p in SUITE_DIR.iterdir() if p.is_dir())
    assert folders == sorted(TASKS), "every folder of evals/holdout is a task"
    assert len(TASKS) == 10
    assert sorted(KINDS.values()) == sorted(TASKS)
    assert set(NEAR_MISSES) == set(TASKS) and all(NEAR_MISSES.values())
    levels = {level for t in SUITE.tasks for level in t.spec.tags if level in LEVELS}
    assert levels == LEVELS


def test_the_readme_lists_every_task_and_says_it_is_held_out() -> None:
    readme = (SUITE_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([^|]+) \|", readme, re.MULTILINE)
    assert sorted(task_id for task_id, _ in rows) == sorted(TASKS)
    for task_id, tags in rows:
        assert [t.strip() for t in tags.split(",")] == TASKS[task_id].spec.tags, task_id
    flat = " ".join(readme.split())
    assert "written without reading the harness" in flat and "Do not tune on it" in flat


@pytest.mark.parametrize("task", SUITE.tasks, ids=[t.id for t in SUITE.tasks])
def test_task_toml_writes_out_every_field(task: Task) -> None:
    raw = tomllib.loads((task.folder / "task.toml").read_text(encoding="utf-8"))
    assert raw.keys() >= REQUIRED_KEYS, f"missing {REQUIRED_KEYS - raw.keys()}"
    assert "script" not in raw and raw["setup"] == {"dir": "setup"}
    assert task.id == task.folder.name
    assert len([t for t in task.spec.tags if t in LEVELS]) == 1, "exactly one difficulty tag"
    assert task.spec.check == ["python3", "-I", "check.py"]
    assert (task.spec.timeout, task.spec.max_turns) == ((600, 20) if task.id == PLAN else (300, 12))
    assert (task.folder / "check.py").is_file()
    assert any(p.is_file() for p in task.reference_dir.rglob("*")), "a reference solution"
    assert task.spec.prompt == task.spec.prompt.strip() and len(task.spec.prompt) < 1200
    assert not [p for p in PUBLIC_PHRASES if p in task.spec.prompt], "public prompt wording"
    sizes = [p.stat().st_size for p in (task.folder / "setup").rglob("*") if p.is_file()]
    assert max(sizes) < 6 * 1024, "setup files stay small"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_checker_fails_on_setup_passes_on_reference(
    task_id: str, verdicts: dict[str, Verdicts]
) -> None:
    if task_id in NEEDS_NODE and shutil.which("node") is None:
        pytest.skip("node is not installed (scripts/test installs it with apt where it can)")
    v = verdicts[task_id].base
    assert not v.unmatched_protect, f"protect globs that match nothing: {v.unmatched_protect}"
    assert not v.untouched.passed, f"the checker passes the untouched setup:\n{v.untouched.output}"
    assert "FAIL: " in v.untouched.output, "a failing check says why"
    assert v.protected_after_reference == v.protected_before, (
        "the reference changes a protected file"
    )
    assert v.reference.passed, f"the checker rejects the reference:\n{v.reference.output}"
    assert "PASS" in v.reference.output
    assert not v.check_side_effects, "the check leaves the workspace as the agent left it"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_checker_rejects_every_near_miss(task_id: str, verdicts: dict[str, Verdicts]) -> None:
    for why, result in verdicts[task_id].near_misses:
        assert not result.passed, f"{task_id}: a near miss ({why}) passes:\n{result.output}"
        assert "FAIL: " in result.output, why


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_programs_that_exit_0_or_shadow_the_stdlib_fail(
    task_id: str, verdicts: dict[str, Verdicts]
) -> None:
    v = verdicts[task_id]
    assert v.exit_0 is None or not v.exit_0.passed, v.exit_0
    assert not v.shadowed.passed, v.shadowed

"""Audit saved eval runs for untrue successes: which `success` runs failed their check, and
whether each changed its workspace at all.

An eval keeps every run's workspace (`.vtcode/evals/ID/runs/RUN/workspace`). This compares it
with the task's starting workspace made again (`vtcode.eval.workspace.materialize`), by the same
fingerprint the harness uses to tell a run that changed nothing (`loop/folder_state.py`), and
prints how the runs that ended `success` split: passed or not, folder changed or not. It is how
the rule "a task that asks for a change is not done while the folder is unchanged" was sized
before it was built (docs/eval.md, thirteenth pass), and how each later pass can look for the
next untrue success.

    python bench/eval_audit.py evals/public /path/to/.vtcode/evals/ID [...] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from vtcode.eval.adapters import read_vtcode_log
from vtcode.eval.suite import load_suite
from vtcode.eval.workspace import materialize
from vtcode.loop.folder_state import fingerprint


def audit(suite_dir: Path, eval_dirs: list[Path], agent: str = "vtcode") -> list[dict[str, Any]]:
    """One row per saved run of the vtcode agent labelled `agent`: task, outcome, passed,
    folder changed, last message."""
    tasks = {t.id: t for t in load_suite(suite_dir).tasks}
    starts: dict[str, str | None] = {}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="eval-audit-") as tmp:
        for eval_dir in eval_dirs:
            for path in sorted((eval_dir / "runs").glob("*.json")):
                run = json.loads(path.read_text("utf-8"))
                task = tasks.get(run.get("task_id", ""))
                workspace = Path(run.get("workspace") or "")
                if run.get("agent") != agent or task is None or not workspace.is_dir():
                    continue
                if task.id not in starts:
                    start = Path(tmp) / task.id
                    materialize(task, start)
                    starts[task.id] = fingerprint(start)
                now = fingerprint(workspace)
                changed = None if now is None or starts[task.id] is None else now != starts[task.id]
                rows.append(
                    {
                        "eval": eval_dir.name,
                        "run": run.get("run_key"),
                        "task": task.id,
                        "agent": run.get("agent"),
                        "outcome": run.get("outcome_code"),
                        "success": run.get("outcome_subtype") == "success",
                        "passed": bool(run.get("passed")),
                        "changed": changed,
                        "last_message": read_vtcode_log(Path(run.get("log") or "")).last_message
                        or "",
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("evals", type=Path, nargs="+", help=".vtcode/evals/ID folders")
    parser.add_argument("--agent", default="vtcode", help="the vtcode agent's label in the evals")
    parser.add_argument("--json", action="store_true", help="one JSON row per run")
    args = parser.parse_args(argv)
    rows = audit(args.suite, args.evals, args.agent)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    successes = [r for r in rows if r["success"]]
    split = collections.Counter((r["passed"], r["changed"]) for r in successes)
    print(f"{len(rows)} runs, {len(successes)} ended success")
    print("| passed | folder changed | runs |\n|---|---|---|")
    for (passed, changed), n in sorted(split.items(), key=str):
        print(f"| {passed} | {changed} | {n} |")
    untrue = [r for r in successes if not r["passed"]]
    for r in untrue:
        said = r["last_message"][:100].replace("\n", " ")
        print(f"untrue success: {r['run']} ({r['eval']}), changed={r['changed']}: {said!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

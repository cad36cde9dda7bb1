"""Run vtcode on (part of) an eval suite against a local model and print the figures table.

The bench behind docs/eval.md's "Figures" (issue 28 item 5), usable before `vtcode eval` has
landed and kept as a cross-check of it: for each task, a fresh workspace from the task's setup
(vtcode.eval's own `materialize`), one `vtcode exec` with the given provider and model, then the
task's checker (`run_check`) and the protected-file digest. Each run records its model traffic
(`exec --record`), so the first request's prompt tokens come from what the server counted.

    eval "$(/work/shared/tools/local-model start --model qwen0.5b)"
    python bench/eval_local.py --suite evals/public --provider openai --model qwen0.5b \
        --tasks create-file,fix-off-by-one --json /tmp/figures.json
    python bench/eval_local.py --table /tmp/figures.json ...   # a table from saved results

`--vtcode` runs another checkout (e.g. `python -m vtcode` with PYTHONPATH set to the commit
before a change) for the before/after columns.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from vtcode.eval.suite import load_suite
from vtcode.eval.workspace import materialize, protected_digest, run_check


def _events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _first_prompt_tokens(record: Path) -> int | None:
    try:
        script = tomllib.loads(record.read_text())
    except (OSError, ValueError):
        return None
    turns = script.get("turn") or []
    usage = turns[0].get("usage", {}) if turns else {}
    value = usage.get("input_tokens")
    return value if isinstance(value, int) else None


def run_task(task: Any, args: argparse.Namespace, rep: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"eval-local-{task.id}-") as tmp:
        ws = Path(tmp) / "ws"
        materialize(task, ws)
        before = protected_digest(task, ws)
        record = Path(tmp) / "record.toml"
        table = "openai" if args.provider == "openai-responses" else args.provider
        argv = [
            *shlex.split(args.vtcode),
            "-C",
            str(ws),
            "-c",
            f"providers.{table}.max_output_tokens={args.max_output_tokens}",
            *[x for kv in args.config for x in ("-c", kv)],
            "exec",
            "--json",
            "--provider",
            args.provider,
            "--model",
            args.model,
            "--max-turns",
            str(min(args.max_turns, task.spec.max_turns)),
            "--record",
            str(record),
            task.spec.prompt,
        ]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=args.timeout or task.spec.timeout,
                stdin=subprocess.DEVNULL,
                cwd=tmp,  # not the repository: `python -m vtcode` would import its vtcode/
                check=False,
            )
            stdout, code, timed_out = proc.stdout, proc.returncode, False
        except subprocess.TimeoutExpired as e:
            out = e.stdout or b""
            stdout = out.decode() if isinstance(out, bytes) else out
            code, timed_out = None, True
        wall = time.monotonic() - t0
        events = _events(stdout)
        if args.logs is not None:
            args.logs.mkdir(parents=True, exist_ok=True)
            name = f"{args.label}-{args.provider}-{args.model}-{task.id}-{rep}.jsonl"
            (args.logs / name).write_text(stdout)
        done = next((e for e in reversed(events) if e.get("type") == "thread.completed"), {})
        items = [e["item"] for e in events if e.get("type") == "item.completed"]
        check = run_check(task, ws)
        protected_ok = protected_digest(task, ws) == before
        usage = done.get("usage") or {}
        return {
            "task": task.id,
            "rep": rep,
            "provider": args.provider,
            "model": args.model,
            "label": args.label,
            "passed": check.passed and protected_ok,
            "check_output": check.output[-300:],
            "protected_ok": protected_ok,
            "exit_code": code,
            "timed_out": timed_out,
            "subtype": done.get("subtype"),
            "outcome_code": done.get("outcome_code"),
            "turns": done.get("num_turns"),
            "input_tokens": usage.get("input_tokens"),
            "output_tokens": usage.get("output_tokens"),
            "first_prompt_tokens": _first_prompt_tokens(record),
            "tool_calls": sum(1 for i in items if i.get("type") == "tool_invocation"),
            "recovered": sum(
                1
                for i in items
                if i.get("type") == "harness" and i.get("event") == "error_recovered"
            ),
            "nudges": sum(
                1
                for i in items
                if i.get("type") == "harness" and i.get("event") == "continuation_started"
            ),
            "wall_s": round(wall, 1),
        }


def table(results: list[dict[str, Any]]) -> str:
    """One row per (label, provider, model): solved, success-reported, tokens, wall."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["label"], r["provider"], r["model"]), []).append(r)
    lines = [
        "| run | provider | model | solved | reported success | false success | "
        "first prompt tok (median) | tool calls (from text) | nudges | median wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (label, provider, model), rs in groups.items():
        solved = sum(r["passed"] for r in rs)
        success = sum(r["subtype"] == "success" for r in rs)
        false_success = sum(r["subtype"] == "success" and not r["passed"] for r in rs)
        firsts = [r["first_prompt_tokens"] for r in rs if r["first_prompt_tokens"]]
        first = int(statistics.median(firsts)) if firsts else "-"
        calls = sum(r["tool_calls"] for r in rs)
        recovered = sum(r["recovered"] for r in rs)
        nudges = sum(r["nudges"] for r in rs)
        wall = statistics.median(r["wall_s"] for r in rs)
        lines.append(
            f"| {label} | {provider} | {model} | {solved}/{len(rs)} | {success}/{len(rs)} | "
            f"{false_success} | {first} | {calls} ({recovered}) | {nudges} | {wall:.0f} |"
        )
    lines.append("")
    lines.append("| run | task | passed | outcome | turns | tool calls | wall s |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        lines.append(
            f"| {r['label']} {r['model']} {r['provider']} | {r['task']} | "
            f"{'yes' if r['passed'] else 'no'} | {r['outcome_code']} | {r['turns']} | "
            f"{r['tool_calls']} | {r['wall_s']} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", type=Path, default=Path("evals/public"))
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    ap.add_argument("--provider", default="openai")
    ap.add_argument("--model", default="qwen0.5b")
    ap.add_argument("-k", type=int, default=1)
    ap.add_argument("--max-output-tokens", type=int, default=512)
    ap.add_argument("--max-turns", type=int, default=8)
    ap.add_argument("--timeout", type=float, help="seconds per run (default: the task's)")
    ap.add_argument("-c", dest="config", action="append", default=[], help="vtcode -c KEY=VALUE")
    ap.add_argument("--vtcode", default=f"{shlex.quote(sys.executable)} -m vtcode")
    ap.add_argument("--label", default="after")
    ap.add_argument("--json", type=Path, help="append results (one JSON line per run)")
    ap.add_argument("--logs", type=Path, help="keep each run's event stream in this folder")
    ap.add_argument("--table", type=Path, nargs="*", help="only print the table of saved runs")
    args = ap.parse_args()
    if args.table:
        rows = [json.loads(x) for p in args.table for x in p.read_text().splitlines() if x]
        print(table(rows))
        return 0
    suite = load_suite(args.suite)
    wanted = [t for t in args.tasks.split(",") if t]
    tasks = [suite.task(t) for t in wanted] if wanted else list(suite.tasks)
    results = []
    for rep in range(args.k):
        for task in tasks:
            r = run_task(task, args, rep)
            results.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
            if args.json:
                with args.json.open("a") as f:
                    f.write(json.dumps(r) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    sys.exit(main())

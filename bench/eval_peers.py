"""The side-by-side table of docs/eval.md: vtcode, codex and claude on one suite and one model.

It runs `vtcode eval SUITE --agent vtcode --agent codex --agent claude` (one invocation, so the
three agents share the server, the load and the window), keeps the result document, and prints
the markdown table: per agent, solved runs, pass@1, pass@k, pass^k, median first-request
prompt tokens, median wall time per solved run, failure classes; then vtcode's ratios to the
better peer (pass@1, first prompt tokens, median wall per solved run), the figures issue 28's
goals are stated in. `--table FILE...` prints the table again from saved documents.

    eval "$(/work/shared/tools/local-model start --model qwen0.5b)"
    python bench/eval_peers.py --model qwen0.5b -k 1 --jobs 2 \\
        --json bench/figures/qwen0.5b-peers-public21-k1-DATE.json
    python bench/eval_peers.py --table bench/figures/qwen0.5b-peers-public21-k1-DATE.json

An agent that is not installed is left out with a note (vtcode's eval exits 2 for it). Real
model runs take minutes per task: this is a bench, never a CI test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS = ("codex", "claude")


def run_eval(args: argparse.Namespace) -> dict[str, Any]:
    agents = ["vtcode", *[p for p in PEERS if shutil.which(p)]]
    for missing in sorted(set(PEERS) - set(agents)):
        print(f"note: {missing} is not on PATH; left out", file=sys.stderr)
    cmd = [sys.executable, "-m", "vtcode", "eval", str(args.suite), "--json"]
    cmd += [x for a in agents for x in ("--agent", a)]
    cmd += ["-k", str(args.k), "--jobs", str(args.jobs), "--model", args.model]
    cmd += ["--provider", args.provider] + [x for t in args.task for x in ("--task", t)]
    print("$ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"vtcode eval exited {proc.returncode}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    if args.json is not None:
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.0f}"
    return str(value)


def table(doc: dict[str, Any]) -> str:
    rows = [
        "| agent | solved | pass@1 | pass@k | pass^k | median first prompt tok | "
        "median wall s (solved) | failures |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_agent = {s["agent"]: s for s in doc["summary"]}
    for agent, s in by_agent.items():
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s.get("failures", {}).items()))
        rows.append(
            f"| {agent} | {s['passed']}/{s['runs']} | {_fmt(s['pass_at_1'])} | "
            f"{_fmt(s['pass_at_k'])} | {_fmt(s['pass_hat_k'])} | "
            f"{_fmt(s.get('median_first_prompt_tokens'))} | "
            f"{_fmt(s.get('median_wall_seconds_solved'))} | {failures or '-'} |"
        )
    rows.append("")
    rows.append(f"k = {doc['k']}, {len(doc['task_ids'])} tasks, complete: {doc['complete']}")
    rows += _ratios(by_agent)
    return "\n".join(rows)


def _ratios(by_agent: dict[str, dict[str, Any]]) -> list[str]:
    """vtcode against the better peer (by pass@1; ties: fewer first-prompt tokens)."""
    ours = by_agent.get("vtcode")
    peers = [by_agent[p] for p in PEERS if p in by_agent]
    if ours is None or not peers:
        return []
    best = max(peers, key=lambda s: (s["pass_at_1"], -(s.get("median_first_prompt_tokens") or 0)))
    out = [f"better peer: {best['agent']}"]
    for key, label in (
        ("pass_at_1", "pass@1"),
        ("median_first_prompt_tokens", "first prompt tokens"),
        ("median_wall_seconds_solved", "median wall per solved run"),
    ):
        a, b = ours.get(key), best.get(key)
        ratio = "-" if not a or not b else f"{a / b:.2f}x"
        out.append(f"vtcode / {best['agent']}, {label}: {_fmt(a)} / {_fmt(b)} = {ratio}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=ROOT / "evals" / "public")
    parser.add_argument("--model", default="qwen0.5b")
    parser.add_argument("--provider", default="openai")
    parser.add_argument("-k", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--task", action="append", default=[], help="only this task (repeat)")
    parser.add_argument("--json", type=Path, help="keep the result document here")
    parser.add_argument("--table", nargs="+", type=Path, help="print saved documents' tables")
    args = parser.parse_args()
    docs = (
        [json.loads(p.read_text(encoding="utf-8")) for p in args.table]
        if args.table
        else [run_eval(args)]
    )
    for doc in docs:
        print(table(doc))
        print()


if __name__ == "__main__":
    main()

"""Benchmark `vtcode validate` against a parse-only floor and a naive jsonschema loop.

Builds a realistic wrapped events.jsonl (turns with streamed reasoning and text, tool calls with
streamed arguments, tool output, shell commands, file changes, harness items, compactions) from
the real event encoders, then measures in one run:

  * lines/s of the in-process API (`validate_path`: two processes for a file this size, and
    `jobs=1`) and of the CLI as a subprocess (default and `--jobs 1`), best of `--repeat`;
  * lines/s of `json.loads` per line (the parse-only floor) and of `orjson.loads`;
  * lines/s of a naive `Draft202012Validator(schema).iter_errors` loop, on a sample of the lines
    (extrapolated; it is ~100x slower, so a full run would take minutes);
  * peak RSS of the CLI on a 100k-line and on the full file (memory should barely grow: only
    item ids are kept);
  * wall time of `vtcode --version` / `vtcode --help` against `python -c pass`, and which heavy
    modules those two import (they must import none of jsonschema, jsonschema_rs,
    vtcode.validate, vtcode.loop).

Then, for every writer (issue 27: bench/validate_writers.py re-writes the same events as
upstream's types, Python's json.dumps defaults, other key order, floats in arguments, 8 KiB
outputs, every event and item type; raw and wrapped), the CLI's rate (default jobs and
`--jobs 1`, best of `--repeat`) as a ratio to the `json.loads` floor measured on the same file in
the same process, and the CLI's peak RSS.

Usage: python bench/validate.py [--lines N] [--naive-sample N] [--runs N] [--repeat N]
                                [--writer-lines N] [--writers-only]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/validate_writers.py

from vtcode.events import encode_wrapped_line
from vtcode.events.enums import (
    CompactionMode,
    CompactionTrigger,
    FileChangeKind,
    HarnessEventKind,
    PatchApplyStatus,
    ThreadCompletionSubtype,
    ToolCallStatus,
    ToolOutcome,
)
from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    FileChangeItem,
    FileUpdateChange,
    HarnessItem,
    ItemCompletedEvent,
    ItemDetails,
    ItemStartedEvent,
    ItemUpdatedEvent,
    ReasoningItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnStartedEvent,
    Usage,
)

HEAVY = ("jsonschema", "jsonschema_rs", "vtcode.validate", "vtcode.loop")
SID = "3b7e2c1a-9f4d-4e8a-b1c2-7d5e9a0f6b13"
_PROSE = (
    "the loader reads each manifest then checks the lock before it appends one line to the "
    "canonical log and fsyncs at the turn boundary so a crash never loses accepted events"
)
WORDS = _PROSE.split()


def _text(n: int, salt: int) -> str:
    return " ".join(WORDS[(salt + i) % len(WORDS)] for i in range(n))


def _it(iid: str, details: ItemDetails) -> ThreadItem:
    return ThreadItem(id=iid, details=details)


def _started(iid: str, details: ItemDetails) -> ThreadEvent:
    return ItemStartedEvent(item=_it(iid, details))


def _updated(iid: str, details: ItemDetails) -> ThreadEvent:
    return ItemUpdatedEvent(item=_it(iid, details))


def _completed(iid: str, details: ItemDetails) -> ThreadEvent:
    return ItemCompletedEvent(item=_it(iid, details))


def _turn(t: int, next_id: Callable[[], str]) -> Iterator[ThreadEvent]:
    """One agent turn: about 24 events, shaped like upstream's recorder emits them."""
    yield TurnStartedEvent()
    rid = next_id()
    yield _started(rid, ReasoningItem(text=_text(4, t), stage="analysis"))
    for k in (12, 24):
        yield _updated(rid, ReasoningItem(text=_text(k, t), stage="analysis"))
    yield _completed(rid, ReasoningItem(text=_text(30, t), stage="analysis"))
    for call in range(2):
        iid, cid, call_id = next_id(), next_id(), f"call_{t}_{call}"
        cmd = f"pytest -q tests/test_mod_{t % 50}.py -k case_{call}"
        args = {"command": cmd, "workdir": "."}
        running, done = ToolCallStatus.IN_PROGRESS, ToolCallStatus.COMPLETED

        def inv(
            arguments: dict[str, str], status: ToolCallStatus, outcome: ToolOutcome | None = None
        ) -> ToolInvocationItem:
            return ToolInvocationItem(
                tool_name="exec_command",
                arguments=arguments,
                tool_call_id=call_id,  # noqa: B023 - called right away, inside this iteration
                status=status,
                outcome=outcome,
            )

        yield _started(iid, inv({"command": cmd[:12]}, running))
        yield _updated(iid, inv({"command": cmd}, running))
        yield _completed(iid, inv(args, done, outcome=ToolOutcome.SUCCESS))
        yield _started(cid, CommandExecutionItem(command=cmd, arguments=args, status=running))
        out = f"{'.' * 20} [100%]\n{20 + call} passed in 0.{t % 90 + 10}s\n"
        yield _completed(
            cid,
            CommandExecutionItem(
                command=cmd, arguments=args, aggregated_output=out, exit_code=0, status=done
            ),
        )
        yield _completed(
            f"{iid}:output",
            ToolOutputItem(call_id=iid, tool_call_id=call_id, output=out, exit_code=0, status=done),
        )
    if t % 3 == 0:
        change = FileUpdateChange(path=f"src/mod_{t % 50}.py", kind=FileChangeKind.UPDATE)
        yield _completed(
            next_id(), FileChangeItem(changes=[change], status=PatchApplyStatus.COMPLETED)
        )
    if t % 5 == 0:
        yield _completed(
            next_id(),
            HarnessItem(
                event=HarnessEventKind.VERIFICATION_PASSED,
                command="pytest -q",
                exit_code=0,
                duration_ms=1200 + t % 900,
            ),
        )
    mid = next_id()
    yield _started(mid, AgentMessageItem(text=_text(6, t)))
    for k in (14, 28):
        yield _updated(mid, AgentMessageItem(text=_text(k, t)))
    yield _completed(mid, AgentMessageItem(text=_text(40, t)))
    usage = Usage(input_tokens=12000 + t, cached_input_tokens=9000, output_tokens=400)
    yield TurnCompletedEvent(usage=usage)
    if t % 40 == 39:
        yield ThreadCompactBoundaryEvent(
            thread_id=SID,
            trigger=CompactionTrigger.AUTO,
            mode=CompactionMode.LOCAL,
            original_message_count=80,
            compacted_message_count=9,
            previous_segment_id=f"seg-{t}",
            new_segment_id=f"seg-{t + 1}",
        )


def build_log(path: Path, lines: int) -> int:
    """Write a valid wrapped log of about `lines` lines; returns the exact count."""
    counter = 0

    def next_id() -> str:
        nonlocal counter
        counter += 1
        return f"item_{counter}"

    seq = 0
    base = 1_787_000_000.0
    with path.open("wb", buffering=1 << 20) as f:

        def put(ev: ThreadEvent) -> None:
            nonlocal seq
            seq += 1
            frac = seq % 1_000_000
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + seq // 4))
            f.write(encode_wrapped_line(ev, seq=seq, ts=f"{ts}.{frac:06d}+00:00"))

        put(ThreadStartedEvent(thread_id=SID))
        t = 0
        while seq < lines - 30:
            for ev in _turn(t, next_id):
                put(ev)
            t += 1
        put(
            ThreadCompletedEvent(
                thread_id=SID,
                session_id=SID,
                subtype=ThreadCompletionSubtype.SUCCESS,
                outcome_code="success",
                result="done",
                stop_reason="end_turn",
                usage=Usage(input_tokens=t * 12000, output_tokens=t * 400),
                total_cost_usd=round(t * 0.0123, 4),
                num_turns=t,
            )
        )
    return seq


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def time_it(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def json_floor(path: Path) -> None:
    loads = json.loads
    with path.open("rb") as f:
        for line in f:
            loads(line)


def orjson_floor(path: Path) -> None:
    loads = orjson.loads
    with path.open("rb") as f:
        for line in f:
            loads(line)


def naive_loop(path: Path, sample: int) -> int:
    """What a user would write first: jsonschema's iter_errors on every parsed line."""
    from jsonschema import Draft202012Validator

    from vtcode.schemas import load

    validator = Draft202012Validator(load("versioned-thread-event"))
    n = 0
    with path.open("rb") as f:
        for line in f:
            errors = list(validator.iter_errors(json.loads(line)))
            assert not errors
            n += 1
            if n >= sample:
                break
    return n


# A small launcher starts the measured process: a child's ru_maxrss includes the RSS of the process
# it was (v)forked from, so forking straight from this (large) process would report our own size.
_LAUNCH = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))\n"
)


def cli_run(path: Path, *extra: str) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MiB) and exit code of `vtcode validate PATH` as a subprocess."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _LAUNCH,
            sys.executable,
            "-m",
            "vtcode",
            "validate",
            *extra,
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall = time.perf_counter() - t0
    rss_kib, code = (int(x) for x in out.split())
    return wall, rss_kib / 1024, code


def best_of(argv: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def heavy_imports(args: list[str]) -> list[str]:
    """Heavy modules imported by `vtcode ARGS` (from `-X importtime`)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vtcode", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    found = set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        name = line.rsplit("|", 1)[1].strip()
        if any(name == h or name.startswith(h + ".") for h in HEAVY):
            found.add(name)
    return sorted(found)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000, help="log size (default 1,000,000)")
    ap.add_argument("--naive-sample", type=int, default=20_000, help="lines for the naive loop")
    ap.add_argument("--runs", type=int, default=7, help="best-of runs for start-up timings")
    ap.add_argument("--repeat", type=int, default=2, help="best-of runs for the big measures")
    ap.add_argument("--writer-lines", type=int, default=200_000, help="lines per writer's log")
    ap.add_argument("--writers-only", action="store_true", help="only the writers' table")
    args = ap.parse_args()
    if args.writers_only:
        print_rows(writer_rows(args.writer_lines, args.repeat))
        return

    from vtcode.validate import ValidateOptions, validate_path

    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="vtcode-bench-") as tmp:
        big = Path(tmp) / "events.jsonl"
        t_build = time_it(lambda: build_log(big, args.lines))
        n = sum(1 for _ in big.open("rb"))
        size_mb = big.stat().st_size / 2**20
        print(f"built {n:,} lines ({size_mb:.0f} MiB) in {t_build:.1f}s", file=sys.stderr)
        small = Path(tmp) / "small.jsonl"
        n_small = build_log(small, min(100_000, args.lines))

        # warm the page cache and the validator caches once
        validate_path(small, ValidateOptions())

        # best of `--repeat`, interleaved, so a noisy neighbour on a shared machine hurts less
        t_api = t_api1 = t_json = t_orjson = t_cli = t_cli1 = float("inf")
        rss_big = 0.0
        for _ in range(args.repeat):
            t_api = min(t_api, time_it(lambda: _check(validate_path(big, ValidateOptions()))))
            t_api1 = min(
                t_api1, time_it(lambda: _check(validate_path(big, ValidateOptions(), jobs=1)))
            )
            t_json = min(t_json, time_it(lambda: json_floor(big)))
            t_orjson = min(t_orjson, time_it(lambda: orjson_floor(big)))
            wall, rss, rc = cli_run(big)
            assert rc == 0, rc
            t_cli, rss_big = min(t_cli, wall), max(rss_big, rss)
            wall, _, rc = cli_run(big, "--jobs", "1")
            assert rc == 0, rc
            t_cli1 = min(t_cli1, wall)
        sample = min(args.naive_sample, n)
        t_naive = time_it(lambda: naive_loop(big, sample))
        _, rss_small, rc = cli_run(small)
        assert rc == 0, rc

        api, floor, ofloor = rate(n, t_api), rate(n, t_json), rate(n, t_orjson)
        naive, cli, cli1 = rate(sample, t_naive), rate(n, t_cli), rate(n, t_cli1)
        rows += [
            ("json.loads per line (floor)", f"{floor:,.0f} lines/s", f"{t_json:.2f}s"),
            ("orjson.loads per line", f"{ofloor:,.0f} lines/s", f"{t_orjson:.2f}s"),
            ("vtcode validate (API, 2 processes)", f"{api:,.0f} lines/s", f"{t_api:.2f}s"),
            ("vtcode validate (API, jobs=1)", f"{rate(n, t_api1):,.0f} lines/s", f"{t_api1:.2f}s"),
            ("vtcode validate (CLI, subprocess)", f"{cli:,.0f} lines/s", f"{t_cli:.2f}s"),
            ("vtcode validate --jobs 1 (CLI)", f"{cli1:,.0f} lines/s", f"{t_cli1:.2f}s"),
            ("CLI --jobs 1 / json.loads floor", f"{cli1 / floor:.2f}x", ""),
            (
                f"naive jsonschema iter_errors ({sample:,} lines, extrapolated)",
                f"{naive:,.0f} lines/s",
                f"~{n / naive:.0f}s for all",
            ),
            (
                "API / json.loads floor (target >= 40%)",
                f"{api / floor:.0%}",
                _ok(api >= 0.4 * floor),
            ),
            (
                # issue 14: the CLI (start-up included) against the floor of this same run;
                # upstream's Rust types read this kind of file at about 2.5x
                "CLI / json.loads floor (target >= 1.5x, goal 2.5x)",
                f"{cli / floor:.2f}x",
                _ok(cli >= 1.5 * floor),
            ),
            ("API / naive loop (target >= 25x)", f"{api / naive:.0f}x", _ok(api >= 25 * naive)),
            (f"peak RSS, CLI, {n_small:,} lines", f"{rss_small:.0f} MiB", ""),
            (
                f"peak RSS, CLI, {n:,} lines",
                f"{rss_big:.0f} MiB",
                f"{rss_big - rss_small:+.0f} MiB",
            ),
        ]

    vt = [sys.executable, "-m", "vtcode"]
    t_pass = best_of([sys.executable, "-c", "pass"], args.runs)
    t_ver = best_of([*vt, "--version"], args.runs)
    t_help = best_of([*vt, "--help"], args.runs)
    rows += [
        (f"python -c pass (best of {args.runs})", f"{t_pass * 1000:.0f} ms", "1.0x"),
        ("vtcode --version", f"{t_ver * 1000:.0f} ms", f"{t_ver / t_pass:.1f}x"),
        ("vtcode --help", f"{t_help * 1000:.0f} ms", f"{t_help / t_pass:.1f}x"),
    ]
    for cmd in (["--version"], ["--help"]):
        heavy = heavy_imports(cmd)
        rows.append(
            (f"heavy imports of vtcode {cmd[0]}", ", ".join(heavy) or "none", _ok(not heavy))
        )

    rows += writer_rows(args.writer_lines, args.repeat)
    print_rows(rows)


def print_rows(rows: list[tuple[str, str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>{w2}}  note")
    print(f"{'-' * width}  {'-' * w2}  ----")
    for a, b, c in rows:
        print(f"{a:<{width}}  {b:>{w2}}  {c}")


def writer_rows(lines: int, repeat: int) -> list[tuple[str, str, str]]:
    """One row per writer's log: CLI default and --jobs 1 as ratios to the json.loads floor."""
    from validate_writers import write_variants

    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="vtcode-bench-writers-") as tmp:
        base = Path(tmp) / "base.jsonl"
        build_log(base, lines)
        for label, path, n in write_variants(base, Path(tmp)):
            t_json = t_cli = t_cli1 = float("inf")
            rss = 0.0
            for _ in range(repeat):  # interleaved: a noisy neighbour hurts every measure alike
                t_json = min(t_json, time_it(lambda p=path: json_floor(p)))  # type: ignore[misc]
                wall, peak, rc = cli_run(path)
                assert rc == 0, (label, rc)
                t_cli, rss = min(t_cli, wall), max(rss, peak)
                wall, _, rc = cli_run(path, "--jobs", "1")
                assert rc == 0, (label, rc)
                t_cli1 = min(t_cli1, wall)
            size = path.stat().st_size / 2**20
            floor = rate(n, t_json)
            cli, cli1 = rate(n, t_cli) / floor, rate(n, t_cli1) / floor
            rows.append(
                (
                    f"{label} ({n:,} lines, {size:.0f} MiB): CLI | --jobs 1 / floor",
                    f"{cli:.2f}x | {cli1:.2f}x",
                    f"{_ok(cli >= 1.5 and cli1 >= 1.0)}, peak RSS {rss:.0f} MiB",
                )
            )
        path.unlink()
    return rows


def _ok(flag: bool) -> str:
    return "ok" if flag else "BELOW TARGET"


def _check(report: object) -> None:
    from vtcode.validate import FileStatus

    status = getattr(report, "status", None)
    assert status is FileStatus.VALID, getattr(report, "problems", None)


if __name__ == "__main__":
    main()

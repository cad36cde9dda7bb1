"""Compaction speed, and loop overhead per turn across a long, repeatedly compacting session.

Part 1 times, for histories of 1k, 10k and 100k messages:
  - `floor`: one pass that UTF-8 encodes every message (the least any estimate must do),
  - `build`: digest + local summary + envelope + `compact_history` (pure, no I/O),
  - `prepare`: `prepare_compaction` (the above plus the archive, envelope and spool files,
    fsynced), i.e. what one compaction costs the loop.
It prints ms, us per message (flat = linear) and the ratio to the floor measured in the same run.
Target: linear, and `build` under 50 ms at 10k messages.

Part 2 drives the real Runner in process with the replay provider, the real registry
(`read_file`, in process) and the real context part over TURNS tool rounds whose results push
the context over the hard threshold again and again; it prints the mean time per turn in windows
of 1,000 turns and the number of compactions. Target: flat (last window / first window ~ 1).
Events go to a sink that encodes each one (as the dispatch gate would); the store's own cost is
measured in bench/store.py.

Run: .venv/bin/python bench/compaction.py [--turns 10000] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("VTCODE_TOKENIZER", "bytes")

from vtcode.config.model import VtcodeConfig
from vtcode.context.compaction import CompactionBudget, compact_history
from vtcode.context.compactor import prepare_compaction
from vtcode.context.digest import digest_history
from vtcode.context.envelope import build_envelope, render_envelope
from vtcode.context.summary import local_summary
from vtcode.context.tokens import TokenEstimator
from vtcode.messages import Message, ToolCall


def make_history(n: int) -> list[Message]:
    """A realistic mix: a task, then tool rounds (call + result) with some chat in between."""
    out = [Message(role="user", content="Refactor the parser; never change the public API.")]
    k = 0
    while len(out) < n:
        k += 1
        if k % 10 == 0:
            out.append(Message(role="user", content=f"steer {k}: keep diffs small"))
            continue
        args = f'{{"path":"src/mod_{k % 50}.py","offset":{k}}}'
        out.append(
            Message(
                role="assistant",
                content=f"Reading module {k % 50} to check the call sites.",
                tool_calls=(ToolCall(id=f"c{k}", name="read_file", arguments=args),),
            )
        )
        body = (f"def f{k}(x):\n    return x + {k}\n" * 12)[: 200 + (k % 7) * 150]
        out.append(Message(role="tool", content=body, tool_call_id=f"c{k}", name="read_file"))
    return out[:n]


def best_of(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def part1(sizes: list[int]) -> None:
    est = TokenEstimator()
    cfg = VtcodeConfig()
    print("part 1: compaction time by history size (best of N)")
    print(
        f"{'messages':>9} {'floor ms':>9} {'build ms':>9} {'us/msg':>7} {'x floor':>8} "
        f"{'prepare ms':>11} {'us/msg':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for n in sizes:
            h = make_history(n)
            repeat = 5 if n <= 10_000 else 2

            def floor(h: list[Message] = h) -> None:
                for m in h:
                    m.content.encode()
                    for c in m.tool_calls:
                        c.arguments.encode()

            def build(h: list[Message] = h) -> None:
                d = digest_history(h)
                s = local_summary(d)
                env = build_envelope(d, session_id="bench", summary=s, generated_at="now")
                compact_history(
                    h,
                    summary=s,
                    envelope_text=render_envelope(env),
                    budget=CompactionBudget(),
                    estimator=est,
                )

            def prepare(h: list[Message] = h) -> None:
                d = digest_history(h)
                prepare_compaction(
                    h,
                    workspace=ws,
                    session_id="bench",
                    config=cfg,
                    trigger="auto",
                    summary=local_summary(d),
                    summary_source="local",
                    turn=1,
                    budget=CompactionBudget(),
                    estimator=est,
                    digest=d,
                )

            f = best_of(floor, repeat)
            b = best_of(build, repeat)
            p = best_of(prepare, repeat)
            print(
                f"{n:>9} {f * 1e3:>9.2f} {b * 1e3:>9.2f} {b / n * 1e6:>7.2f} {b / f:>8.1f} "
                f"{p * 1e3:>11.2f} {p / n * 1e6:>7.2f}"
            )


def part2(turns: int, window: int = 1000) -> None:
    from vtcode.events.codec import encode_raw_line
    from vtcode.loop.limits import Limits
    from vtcode.loop.runner import Runner
    from vtcode.loop.tool_exec import RegistryToolExecutor
    from vtcode.providers.replay import ReplayProvider
    from vtcode.providers.script import (
        ReplayScript,
        ScriptProviderInfo,
        ScriptToolCall,
        ScriptTurn,
        ScriptUsage,
    )
    from vtcode.runtime.hooks import CompositeHooks, context_parts
    from vtcode.tools.base import ToolContext
    from vtcode.tools.registry import default_registry

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / ".vtcode/sessions/bench").mkdir(parents=True)
        for i in range(2):
            (ws / f"f{i}.py").write_text(f"# file {i}\n" + "x = 1\n" * 300)
        script = ReplayScript(
            provider=ScriptProviderInfo(model="bench", context_window=20_000),
            turn=[
                ScriptTurn(
                    text="next",
                    chunk_size=4096,
                    usage=ScriptUsage(output_tokens=5),
                    tool_calls=[
                        ScriptToolCall(name="read_file", arguments={"path": f"f{k % 2}.py"})
                    ],
                )
                for k in range(turns)
            ]
            + [ScriptTurn(text="done")],
        )
        provider = ReplayProvider(script)
        cfg = VtcodeConfig()
        registry = default_registry(cfg)
        parts = context_parts(workspace=ws, session_id="bench", config=cfg, provider=provider)
        part = parts.context
        executor = RegistryToolExecutor(
            registry,
            ToolContext(workspace=ws, session_id="bench", spool_dir=ws / "spool"),
            tool_hooks=parts.lifecycle.tool_hooks(),
        )
        stamps: list[float] = []
        boundaries = 0
        compact_secs: list[tuple[int, float]] = []  # (turn index, seconds in compact())
        real_compact = part.compact

        def timed_compact(history: list[Message], **kw: Any) -> list[Message]:
            t = time.perf_counter()
            try:
                return real_compact(history, **kw)
            finally:
                compact_secs.append((len(stamps), time.perf_counter() - t))

        part.compact = timed_compact  # type: ignore[method-assign]

        def sink(event: object) -> None:
            nonlocal boundaries
            encode_raw_line(event)  # type: ignore[arg-type]
            name = type(event).__name__
            if name == "TurnCompletedEvent":
                stamps.append(time.perf_counter())
            elif name == "ThreadCompactBoundaryEvent":
                boundaries += 1

        limits = Limits(
            max_turns=turns + 10,
            max_tool_loops=0,
            max_tool_calls_per_turn=0,
            max_tool_wall_clock_secs=600,
            max_budget_usd=None,
            budget_warning_threshold=0.75,
            loop_detection_repeats=0,
        )
        runner = Runner(
            session_id="bench",
            provider=provider,
            tools=executor,
            limits=limits,
            emit=sink,
            system_prompt=lambda o: "You are a benchmark.",
            prompt="read the files, forever",
            hooks=CompositeHooks(parts.all()),
            workspace=ws,
        )
        t0 = time.perf_counter()
        result = runner.run()
        total = time.perf_counter() - t0
        registry.close()
    deltas = [b - a for a, b in zip([t0, *stamps], stamps, strict=False)]
    print(
        f"\npart 2: {turns} tool rounds through the real Runner + context part: "
        f"{total:.1f} s, {boundaries} compactions, outcome {result.outcome.kind.code}"
    )
    print(
        f"{'turns':>13} {'mean ms/turn':>13} {'median':>8} {'max':>8} "
        f"{'w/o compact':>12} {'compactions':>12} {'ms each':>8}"
    )
    means, plain = [], []
    for start in range(0, len(deltas) - window + 1, window):  # full windows only
        w = deltas[start : start + window]
        spent = [s for k, s in compact_secs if start <= k < start + window]
        means.append(statistics.fmean(w))
        plain.append((sum(w) - sum(spent)) / len(w))
        each = statistics.fmean(spent) * 1e3 if spent else 0.0
        print(
            f"{start + 1:>6}-{start + len(w):<6} {means[-1] * 1e3:>13.3f} "
            f"{statistics.median(w) * 1e3:>8.3f} {max(w) * 1e3:>8.2f} "
            f"{plain[-1] * 1e3:>12.3f} {len(spent):>12} {each:>8.2f}"
        )
    if len(means) >= 2:
        print(
            f"last window / first window: {means[-1] / means[0]:.2f} "
            f"(without compaction time: {plain[-1] / plain[0]:.2f})"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument(
        "--no-fsync",
        action="store_true",
        help="make os.fsync a no-op, to tell disk latency (shared VM) from CPU cost",
    )
    args = ap.parse_args()
    if args.no_fsync:
        os.fsync = lambda fd: None
    part1([int(s) for s in args.sizes.split(",") if s])
    if args.turns:
        part2(args.turns)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Two processes give the report one process gives: at every split point, for every log.

`validate_split(at=offset)` runs the second half in a forked child under the speculative
lifecycle and joins it; it may decline (None: the caller validates in one pass) but must never
return a different report. The fixture logs (valid and invalid, each breaking one rule) are
split at every line, shuffled mixtures of their lines at random lines, and the CLI is compared
with `--jobs 1` on a generated multi-megabyte log with injected faults.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import orjson
import pytest
import split_sweep
from exec_support import vtcode
from lean import run_lean

from vtcode.validate import FormatOption, ValidateOptions, validate_path
from vtcode.validate.lines import LAST_UNTERMINATED, OK, TOO_LONG, LineReader
from vtcode.validate.report import Profile
from vtcode.validate.split import can_split

REPO = Path(__file__).resolve().parents[2]
LOGS = sorted((REPO / "fixtures" / "logs").glob("*/*.jsonl"))
OPTION_SETS = [
    ValidateOptions(profile=Profile.VTCODE),
    ValidateOptions(profile=Profile.VTCODE, strict=True, max_problems=3),
    ValidateOptions(profile=Profile.VTCODE, partial=True, format=FormatOption.AUTO),
]

pytestmark = pytest.mark.skipif(not can_split(), reason="needs fork and two CPUs")


def _line_starts(data: bytes) -> list[int]:
    starts = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return [s for s in starts if 0 < s < len(data)]


def _report(path: Path, opts: ValidateOptions) -> dict[str, object]:
    report = validate_path(path, opts, jobs=1, display="log")
    return dataclasses.asdict(report)


def _turn_starts(data: bytes) -> set[int]:
    """Byte offsets of the turn.started lines: where the automatic split cuts."""
    out: set[int] = set()
    offset = 0
    for line in data.split(b"\n"):
        if b'"type":"turn.started"' in line:
            out.add(offset)
        offset += len(line) + 1
    return out


def test_every_split_point_of_every_fixture_log_gives_the_single_pass_report() -> None:
    # In a lean interpreter: each split forks, and a fork from this worker costs 2-3x more.
    cases = [(path, opts) for path in LOGS for opts in OPTION_SETS]
    # redoing costs time, never exactness; at a turn of a valid log it would mean the
    # speculation is too narrow for the usual case
    turns = {p: sorted(_turn_starts(p.read_bytes())) for p in LOGS if p.parent.name == "valid"}
    sweep = run_lean(split_sweep.every_line, cases, turns)
    assert sweep.wrong == []
    assert sweep.redone_at_a_turn == []
    assert sweep.declined == 0  # a forced split always starts
    assert sweep.joined > 300  # the comparison above ran on real joins, not only on declines


def test_shuffled_mixtures_of_good_and_bad_lines_split_anywhere(tmp_path: Path) -> None:
    pool = [line for path in LOGS for line in path.read_bytes().splitlines() if line]
    rng = random.Random(1404)
    cases, points = [], {}
    for round_ in range(40):
        lines = rng.sample(pool, rng.randint(5, 60))
        log = tmp_path / f"mix-{round_}.jsonl"
        log.write_bytes(b"\n".join(lines) + (b"\n" if round_ % 3 else b""))
        starts = _line_starts(log.read_bytes())
        cases.append((log, OPTION_SETS[round_ % len(OPTION_SETS)]))
        points[log] = rng.sample(starts, min(6, len(starts)))
    sweep = run_lean(split_sweep.every_line, cases, {}, points)  # lean: see the test above
    assert sweep.wrong == []
    assert sweep.declined == 0  # a forced split always starts


def _big_log(path: Path, lines: int) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from validate import build_log  # the bench's realistic wrapped log

    build_log(path, lines)


def test_cli_two_processes_print_the_same_report(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    _big_log(log, 40_000)
    lines = log.read_bytes().splitlines(keepends=True)
    # faults in both halves: a duplicate key, a float for an integer, a seq gap, a bad item
    lines[100] = lines[100].replace(b'"seq":', b'"seq":1,"seq":', 1)
    late = next(n for n in range(25_000, len(lines)) if b'"exit_code":0,' in lines[n])
    lines[late] = lines[late].replace(b'"exit_code":0,', b'"exit_code":0.0,', 1)
    del lines[30_000]
    lines[31_000] = (
        b'{"schema_version":"0.11.0","event":{"type":"item.updated","item":{"id":"x","type":"reasoning","text":""}}}\n'
    )
    log.write_bytes(b"".join(lines))
    one = vtcode(["validate", "--profile", "vtcode", "--json", "--jobs", "1", str(log)], tmp_path)
    two = vtcode(["validate", "--profile", "vtcode", "--json", "--jobs", "2", str(log)], tmp_path)
    auto = vtcode(["validate", "--profile", "vtcode", "--json", str(log)], tmp_path)
    assert one.returncode == two.returncode == auto.returncode == 1
    assert one.stdout == two.stdout == auto.stdout
    report = orjson.loads(one.stdout)
    codes = {p["code"] for p in report["files"][0]["problems"]}
    assert {"duplicate-key", "float-for-integer", "seq-gap", "item-not-started"} <= codes, codes


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
@pytest.mark.parametrize("cap", [4, 10, 1000])
def test_line_reader_is_the_same_at_any_block_size(tmp_path: Path, block: int, cap: int) -> None:
    data = b"a\n\nbcdefghijklmno\r\n" + b"x" * 25 + b"\nlast"
    log = tmp_path / "lines.jsonl"
    log.write_bytes(data)
    expected = []
    pieces = data.split(b"\n")
    for n, piece in enumerate(pieces, 1):
        kind = OK if n < len(pieces) else LAST_UNTERMINATED
        if len(piece) > cap:
            expected.append((n, b"", TOO_LONG, len(piece)))
        else:
            expected.append((n, piece, kind, None))
    with log.open("rb") as f:
        reader = LineReader(f, cap, block_size=block)
        got = [
            (n, bytes(d), k, reader.long_line_size if k == TOO_LONG else None) for n, d, k in reader
        ]
        assert reader.bytes_read == len(data)
    assert got == expected


@pytest.mark.skipif(not can_split(), reason="needs fork and two CPUs")
@pytest.mark.parametrize("writer", ["compact", "json.dumps defaults", "keys reversed"])
def test_a_log_splits_whatever_its_writer_spacing_or_key_order(tmp_path: Path, writer: str) -> None:
    """The automatic split point is a turn.started line as any writer spells it: only the
    compact spelling was found, so a `json.dumps`-written log (`{"type": "turn.started"}`) or
    one with `type` last never used the second process (0.87-1.00x the json.loads floor at
    --jobs 2, where compact logs reached 1.8-1.9x; bench/validate.py, 2026-12-07)."""
    import json

    from vtcode.validate.engine import finish_report, start_state
    from vtcode.validate.split import validate_split

    source = tmp_path / "compact.jsonl"
    _big_log(source, 4_000)
    log = tmp_path / "log.jsonl"
    with log.open("w", encoding="utf-8") as out:
        for line in source.read_bytes().splitlines():
            event = orjson.loads(line)["event"]  # raw: upstream's shape, any writer's keys
            if writer == "keys reversed":
                event = dict(reversed(list(event.items())))
            spaced = writer != "compact"
            out.write(json.dumps(event) if spaced else json.dumps(event, separators=(",", ":")))
            out.write("\n")
    opts = ValidateOptions()
    single = dataclasses.asdict(validate_path(log, opts, jobs=1))
    state = start_state(opts)
    with log.open("rb") as f:
        outcome = validate_split(f, state)
    assert outcome == "joined", outcome  # a second process ran and its half was used
    assert dataclasses.asdict(finish_report(str(log), state)) == single
    assert single["status"].value == "valid"

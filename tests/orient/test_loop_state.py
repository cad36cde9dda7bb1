"""Loop state: budget order, version bumps, atomic files, the loop lock, corrupt files."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from vtcode import schemas
from vtcode.errors import ExitCode, LockBusyError
from vtcode.orient.loop_state import (
    LoopCorruptError,
    check_budget,
    delete_state,
    list_states,
    load_state,
    loop_lock,
    new_state,
    save_state,
)
from vtcode.orient.models import BudgetStatus, CostBudget, CumulativeTokens, LoopStatus


def test_budget_checks_steps_then_tokens_then_cost() -> None:
    s = new_state(
        "l", prompt="p", budget=CostBudget(max_total_tokens=100, max_cost_usd=1.0, max_steps=3)
    )
    assert check_budget(s) is BudgetStatus.OK
    over_all = dataclasses.replace(
        s,
        step_index=3,
        cumulative_tokens=CumulativeTokens(input_tokens=60, output_tokens=40, total_cost_usd=1.0),
    )
    assert check_budget(over_all) is BudgetStatus.STEP_LIMIT_REACHED
    tokens_cost = dataclasses.replace(over_all, step_index=2)
    assert check_budget(tokens_cost) is BudgetStatus.TOKEN_LIMIT_REACHED
    cost = dataclasses.replace(tokens_cost, cumulative_tokens=CumulativeTokens(total_cost_usd=1.0))
    assert check_budget(cost) is BudgetStatus.COST_LIMIT_REACHED
    just_under = dataclasses.replace(
        s, step_index=2, cumulative_tokens=CumulativeTokens(input_tokens=99, total_cost_usd=0.99)
    )
    assert check_budget(just_under) is BudgetStatus.OK


def test_upstream_default_budget() -> None:
    assert CostBudget() == CostBudget(max_total_tokens=1_000_000, max_cost_usd=10.0, max_steps=50)


def test_save_bumps_version_and_validates(tmp_path: Path) -> None:
    s = new_state("nightly", prompt="fix things", budget=CostBudget())
    with loop_lock(tmp_path, "nightly"):
        s1 = save_state(tmp_path, s)
        s2 = save_state(tmp_path, dataclasses.replace(s1, step_index=1))
    assert (s1.version, s2.version) == (1, 2)
    path = tmp_path / ".vtcode/state/loop-nightly.json"
    data = orjson.loads(path.read_bytes())
    assert data["version"] == 2 and data["last_artifact_path"] is None
    assert list(schemas.reference_validator("loop-state").iter_errors(data)) == []
    assert load_state(tmp_path, "nightly") == s2
    assert (path.stat().st_mode & 0o777) == 0o600
    assert not list(path.parent.glob(".*.tmp"))


def test_invalid_loop_id_is_refused(tmp_path: Path) -> None:
    from vtcode.errors import InvalidIdError

    with pytest.raises(InvalidIdError, match="invalid loop id"):
        load_state(tmp_path, "../escape")


def test_corrupt_state_is_a_located_error(tmp_path: Path) -> None:
    folder = tmp_path / ".vtcode/state"
    folder.mkdir(parents=True)
    (folder / "loop-x.json").write_text('{"loop_id": "x", "step_index": -1}')
    with pytest.raises(LoopCorruptError) as e:
        load_state(tmp_path, "x")
    assert "loop-x.json: /step_index: -1 is below the minimum 0" in str(e.value)
    assert e.value.exit_code == ExitCode.USAGE
    (folder / "loop-x.json").write_text("{")
    with pytest.raises(LoopCorruptError, match="not valid JSON"):
        load_state(tmp_path, "x")


def test_list_sorts_newest_first_and_skips_malformed(tmp_path: Path) -> None:
    for name in ("a", "b"):
        with loop_lock(tmp_path, name):
            save_state(tmp_path, new_state(name, prompt="p", budget=CostBudget()))
    (tmp_path / ".vtcode/state/loop-bad.json").write_text("nope")
    assert [s.loop_id for s in list_states(tmp_path)] == ["b", "a"]
    assert list_states(tmp_path / "none") == []


def test_delete_keeps_the_lock_file(tmp_path: Path) -> None:
    with loop_lock(tmp_path, "a"):
        save_state(tmp_path, new_state("a", prompt="p", budget=CostBudget()))
    assert delete_state(tmp_path, "a") and not delete_state(tmp_path, "a")
    assert (tmp_path / ".vtcode/state/loop-a.lock").exists()
    assert load_state(tmp_path, "a") is None


HOLDER = """
import sys, time
from pathlib import Path
from vtcode.orient.loop_state import loop_lock
with loop_lock(Path(sys.argv[1]), "busy"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_held_loop_lock_is_busy_at_once(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(LockBusyError) as e, loop_lock(tmp_path, "busy"):
            pass
        assert e.value.exit_code == ExitCode.LOCK_BUSY
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    with loop_lock(tmp_path, "busy"):  # free again once the holder is gone
        pass


def test_a_running_status_is_written_in_a_fresh_state(tmp_path: Path) -> None:
    s = new_state("a", prompt="p", budget=CostBudget())
    assert s.status is LoopStatus.RUNNING and s.step_index == 0 and s.steps == []


def test_orphaned_temp_files_of_a_killed_writer_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / ".vtcode/state"
    folder.mkdir(parents=True)
    orphan = folder / ".loop-a.json.k3j4h5.tmp"
    orphan.write_text("half")
    other = folder / ".loop-b.json.zz.tmp"  # another loop's: not ours to touch
    other.write_text("x")
    os.symlink(tmp_path / "target", folder / ".loop-a.json.link.tmp")
    with loop_lock(tmp_path, "a"):
        pass
    assert not orphan.exists() and other.exists()
    assert (folder / ".loop-a.json.link.tmp").is_symlink()

"""Where an eval lives and how its results are kept: `WORKSPACE/.vtcode/evals/<EVAL_ID>/`.

    eval.json               the plan (EvalPlan): suite, agents, k, tasks, exec options
    lock                    held while the eval runs (a second runner of the same id: exit 75)
    runs/<run-key>.json     one RunRecord per finished run, written whole (temp, fsync, rename)
    runs/<run-key>/         that run's folder: workspace/ (with the vtcode session under
                            workspace/.vtcode/sessions/), agent.stdout, agent.stderr, home/

A run's record is written last, after its folder is in place: a run without a record did not
finish and runs again on resume (its folder is replaced).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from filelock import FileLock, Timeout

from vtcode.clock import compact_stamp
from vtcode.errors import LockBusyError, UsageError
from vtcode.eval.results import EvalPlan, RunRecord
from vtcode.fsutil import STATE_DIR_NAME, atomic_write_json, ensure_private_dir
from vtcode.ids import check_id
from vtcode.jsontypes import DecodeError, decode, encode

__all__ = [
    "EvalStore",
    "new_eval_id",
    "run_key",
]


def new_eval_id() -> str:
    """`eval-20261205T130000Z-3f9a1c`: sortable by time, unique across processes."""
    return f"eval-{compact_stamp()}-{secrets.token_hex(3)}"


def run_key(agent: str, task_id: str, repetition: int) -> str:
    """`vtcode--fix-off-by-one--0`: agent labels have no '-', the repetition is last."""
    return f"{agent}--{task_id}--{repetition}"


class EvalStore:
    """The folder of one eval."""

    def __init__(self, workspace: Path, eval_id: str) -> None:
        self.eval_id = check_id(eval_id, "eval id")
        self.root = workspace / STATE_DIR_NAME / "evals" / eval_id

    @property
    def plan_path(self) -> Path:
        return self.root / "eval.json"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    def exists(self) -> bool:
        return self.plan_path.is_file()

    def run_dir(self, key: str) -> Path:
        return self.runs_dir / key

    def record_path(self, key: str) -> Path:
        return self.runs_dir / f"{key}.json"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the eval's lock; another process running the same eval is exit 75."""
        ensure_private_dir(self.runs_dir)
        lock = FileLock(str(self.root / "lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise LockBusyError(
                f"eval {self.eval_id} is running in another process", location=str(self.root)
            ) from None
        try:
            yield
        finally:
            lock.release()

    def write_plan(self, plan: EvalPlan) -> None:
        ensure_private_dir(self.root)
        atomic_write_json(self.plan_path, encode(plan), pretty=True)

    def read_plan(self) -> EvalPlan:
        try:
            data = orjson.loads(self.plan_path.read_bytes())
            return decode(EvalPlan, data)
        except FileNotFoundError:
            raise UsageError(
                f"no eval {self.eval_id!r} here", location=str(self.root.parent),
                hint="`vtcode eval SUITE` starts one; its id is printed and in the result",
            ) from None  # fmt: skip
        except (OSError, orjson.JSONDecodeError, DecodeError) as exc:
            raise UsageError(f"unreadable eval plan: {exc}", location=str(self.plan_path)) from None

    def write_record(self, record: RunRecord) -> None:
        atomic_write_json(self.record_path(record.run_key), encode(record), pretty=True)

    def read_record(self, key: str) -> RunRecord | None:
        """The run's record; None when it has not finished (or its file is damaged: it runs
        again)."""
        try:
            return decode(RunRecord, orjson.loads(self.record_path(key).read_bytes()))
        except (OSError, orjson.JSONDecodeError, DecodeError):
            return None

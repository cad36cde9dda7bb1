"""`vtcode fleet worker`: claim due loops, run one step of each as `vtcode loop run --steps 1`.

One process, one poll loop, steps as child processes (so SIGTERM can let them finish or cancel
them cleanly, and a step can never take the worker down). The database gives the guarantees:

- at most one step of a loop anywhere: a worker claims a loop by taking its lease in one UPDATE
  over a `FOR UPDATE SKIP LOCKED` pick, and renews the lease while the step runs;
- a dead worker (SIGKILL, host loss) stops renewing, so after `--stall-timeout` seconds another
  worker claims the loop again; the child `loop run` finds the step `started`, marks it
  interrupted and runs it again as a new session (a done step is never repeated);
- a worker that cannot renew its lease (lost database, taken lease) stops its step before the
  lease can expire: it fences itself rather than risk a second runner elsewhere;
- a schedule fires once per tick fleet-wide: the tick is a primary key, the flag a boolean.

Children die with the worker (PR_SET_PDEATHSIG), as they would with a lost host. After each step
the worker copies the step's sessions from the local logs into the central store; a copy that
fails (database down) is retried until it lands.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from vtcode.errors import ExitCode, VtcodeError
from vtcode.fleet import cron, lease
from vtcode.fleet.db import connect, require_schema
from vtcode.fleet.registry import loop_run_argv
from vtcode.orient.loop_state import load_state
from vtcode.orient.models import LoopStatus
from vtcode.store.exports.central import sync_session

__all__ = ["WorkerOptions", "host_id", "run_worker"]


def host_id() -> str:
    """VTCODE_HOST_ID, else the hostname: what `status` shows as `running_on`."""
    return os.environ.get("VTCODE_HOST_ID") or socket.gethostname()


@dataclass(frozen=True, kw_only=True)
class WorkerOptions:
    url: str
    queues: tuple[str, ...] = ("default",)
    concurrency: int = 1
    stall_timeout: float = 30.0
    poll: float = 0.5
    grace: float = 60.0
    notify: Callable[[str], None] = lambda _m: None


@dataclass
class _Step:
    loop_id: str
    workspace: Path
    max_steps: int | None
    proc: subprocess.Popen[bytes]
    step_row: int
    renewed: float = field(default_factory=time.monotonic)
    fenced: bool = False


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _argv(loop_id: str, prompt: str, opts: dict[str, Any], max_steps: int | None) -> list[str]:
    argv = [sys.executable, "-m", "vtcode", "-q", "loop", "run", "--id", loop_id, "--steps", "1"]
    return [*argv, *loop_run_argv(opts, max_steps), "--", prompt]


class Worker:
    def __init__(self, opts: WorkerOptions) -> None:
        self.o = opts
        self.host = host_id()
        self.owner = f"{self.host}/{os.getpid()}/{os.urandom(4).hex()}"
        self.stopping = threading.Event()
        self.done = threading.Event()
        self.running: dict[str, _Step] = {}
        self.pending: list[Callable[[psycopg.Connection[tuple[object, ...]]], None]] = []
        self.conn: psycopg.Connection[tuple[object, ...]] | None = None
        self.last_beat = 0.0

    # -- database, reconnecting -------------------------------------------------------------
    def _db(self) -> psycopg.Connection[tuple[object, ...]]:
        if self.conn is None or self.conn.closed:
            self.conn = connect(self.o.url)
            require_schema(self.conn)
        return self.conn

    def _drop(self, e: Exception) -> None:
        self.o.notify(f"fleet worker {self.host}: database unavailable ({str(e).strip()[:200]})")
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    # -- one pass ---------------------------------------------------------------------------
    def tick(self) -> None:
        self._reap()
        try:
            db = self._db()
            self._beat(db)
            while self.pending:
                try:
                    self.pending[0](db)
                except VtcodeError as e:  # e.g. a damaged loop state: say so, keep serving
                    self.o.notify(f"fleet worker {self.host}: {e.message}")
                self.pending.pop(0)
            if not self.stopping.is_set():
                self._fire(db)
                while len(self.running) < self.o.concurrency and self._claim(db):
                    pass
        except (psycopg.Error, VtcodeError) as e:  # connect() raises VtcodeError
            self._drop(e)
        self._fence()

    def _fire(self, db: psycopg.Connection[tuple[object, ...]]) -> None:
        with db.transaction():
            rows = db.execute(
                "SELECT loop_id, schedule, next_fire FROM vtcode_fleet_loops WHERE schedule IS NOT"
                " NULL AND NOT paused AND state <> 'complete' AND next_fire <= now()"
                " FOR UPDATE SKIP LOCKED"
            ).fetchall()
            now = dt.datetime.now(dt.UTC)
            for loop_id, schedule, tick in rows:
                db.execute(
                    "INSERT INTO vtcode_fleet_fires (loop_id, tick, fired_by) VALUES (%s, %s, %s)"
                    " ON CONFLICT DO NOTHING",
                    (loop_id, tick, self.owner),
                )
                db.execute(
                    "UPDATE vtcode_fleet_loops SET queued = true, next_fire = %s,"
                    " updated_at = now() WHERE loop_id = %s",
                    (cron.next_after(str(schedule), now), loop_id),
                )

    def _claim(self, db: psycopg.Connection[tuple[object, ...]]) -> bool:
        c = lease.claim(
            db,
            host=self.host,
            owner=self.owner,
            stall_timeout=self.o.stall_timeout,
            queues=self.o.queues,
            exclude=self.running,
        )
        if c is None:
            return False
        env = {
            **os.environ,
            "VTCODE_HOST_ID": self.host,
            "VTCODE_FLEET_LOOP_ID": c.loop_id,
            "VTCODE_DATABASE_URL": self.o.url,
        }
        try:
            proc = subprocess.Popen(
                _argv(c.loop_id, c.prompt, c.options, c.max_steps),
                cwd=str(c.workspace),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,  # a step must not outlive its worker
            )
        except OSError as e:  # the workspace is gone on this host: the loop fails visibly
            reason = f"cannot start the step: {e}"
            lease.fail_to_start(db, loop_id=c.loop_id, owner=self.owner, reason=reason)
            self.o.notify(f"fleet worker {self.host}: {c.loop_id}: {reason}")
            return True
        self.o.notify(f"fleet worker {self.host}: {c.loop_id}: step started (pid {proc.pid})")
        self.running[c.loop_id] = _Step(c.loop_id, c.workspace, c.max_steps, proc, c.step_row)
        return True

    def _beat(self, db: psycopg.Connection[tuple[object, ...]]) -> None:
        if not self.running or time.monotonic() - self.last_beat < self.o.stall_timeout / 4:
            return
        ids = list(self.running)
        held = lease.renew(db, owner=self.owner, stall_timeout=self.o.stall_timeout, loop_ids=ids)
        now = time.monotonic()
        self.last_beat = now
        for loop_id in held:
            self.running[loop_id].renewed = now
        for lost in set(ids) - held:
            self.o.notify(f"fleet worker {self.host}: {lost}: lease taken over; stopping step")
            self.running[lost].renewed = 0.0

    def _fence(self) -> None:
        """Stop a step whose lease may have lapsed: another worker may claim it soon.

        Also run by a watchdog thread, so a poll stuck on an unreachable database cannot keep a
        step running past its lease. It only signals: the main thread alone reaps children, so a
        pid here is never a recycled one (an unreaped child keeps its pid)."""
        limit = self.o.stall_timeout * 0.75
        for step in list(self.running.values()):
            if step.fenced or step.proc.returncode is not None:
                continue
            if time.monotonic() - step.renewed > limit:
                step.fenced = True  # once: a second SIGTERM would cut the step's clean cancel
                with contextlib.suppress(ProcessLookupError):
                    os.kill(step.proc.pid, signal.SIGTERM)

    def _watchdog(self) -> None:
        while not self.done.wait(0.25):
            self._fence()

    def _reap(self) -> None:
        for loop_id, step in list(self.running.items()):
            code = step.proc.poll()
            if code is None:
                continue
            del self.running[loop_id]
            self.pending.append(functools.partial(self._finish, step=step, code=code))

    def _finish(self, db: psycopg.Connection[tuple[object, ...]], step: _Step, code: int) -> None:
        state = load_state(step.workspace, step.loop_id)
        sessions = [s.session_id for s in state.steps] if state else []
        for sid in sessions:
            sync_session(db, step.workspace, sid, loop_id=step.loop_id, host=self.host)
        done = state.step_index if state else 0
        u = state.cumulative_tokens if state else None
        if (
            code == ExitCode.MAX_BUDGET
            or (state and state.status is LoopStatus.COMPLETED)
            or (step.max_steps is not None and done >= step.max_steps)
        ):
            new_state = "complete"
        elif code in (0, ExitCode.LOCK_BUSY, ExitCode.CANCELLED):
            new_state = "idle"
        else:
            new_state = "failed"
        outcome = lease.Outcome(
            steps_done=done,
            state=new_state,
            last_session_id=state.last_session_id if state else None,
            last_outcome=state.last_outcome if state else None,
            cost_usd=u.total_cost_usd if u else 0.0,
            tokens=(u.input_tokens + u.output_tokens) if u else 0,
            again=code in (ExitCode.LOCK_BUSY, ExitCode.CANCELLED),
        )
        lease.release(
            db,
            loop_id=step.loop_id,
            owner=self.owner,
            step_row=step.step_row,
            exit_code=code,
            outcome=outcome,
        )
        self.o.notify(f"fleet worker {self.host}: {step.loop_id}: step ended (exit {code})")

    # -- the process ------------------------------------------------------------------------
    def run(self) -> int:
        def on_signal(signum: int, _frame: object) -> None:
            self.stopping.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        self.o.notify(f"fleet worker {self.host}: started ({self.owner})")
        threading.Thread(target=self._watchdog, name="fleet-fence", daemon=True).start()
        deadline: float | None = None
        while True:
            self.tick()
            if self.stopping.is_set():
                if deadline is None:
                    deadline = time.monotonic() + self.o.grace
                    self.o.notify(f"fleet worker {self.host}: stopping after running steps")
                if not self.running and not self.pending:
                    break
                if time.monotonic() > deadline:
                    for step in self.running.values():
                        step.proc.send_signal(signal.SIGTERM)  # the step cancels cleanly
                    deadline = time.monotonic() + self.o.grace
                if not self.running and self.pending and self.conn is None:
                    break  # nothing runs and the database is gone: the next worker catches up
            time.sleep(self.o.poll)
        self.done.set()
        if self.conn is not None:
            self.conn.close()
        self.o.notify(f"fleet worker {self.host}: stopped")
        return 0


def run_worker(opts: WorkerOptions) -> int:
    """Run a worker until SIGTERM/SIGINT; exit 0 once its running steps ended."""
    return Worker(opts).run()

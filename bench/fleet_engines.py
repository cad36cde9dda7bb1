"""The fleet's engine: our SQL lease vs procrastinate, measured on one PostgreSQL (prints only).

    .venv/bin/python bench/fleet_engines.py [--quick] [--url postgresql://...]

Issue 13 named procrastinate "or another maintained library if a measured comparison says it
serves better". This is that comparison, in one run, on the same server (a throwaway cluster as
the tests start, or --url / VTCODE_TEST_DATABASE_URL), a fresh database per measurement:

(a) trivial-step throughput with 1, 2 and 4 worker processes (concurrency 1 each, the same poll
    interval): L loops of S steps each, a loop's steps strictly one after another.
    - ours: vtcode/fleet/lease.py's claim / release, the statements `fleet worker` runs around
      its `loop run` child (the child replaced by reading the loop's steps_done);
    - procrastinate: a task deferred with lock=loop and queueing_lock=loop, whose body defers
      the loop's next step (a queueing lock only covers waiting jobs, so that is allowed).
(b) how long a SIGKILLed worker's step takes to be picked up by the other worker, same stall
    budget T for both: ours, the lease (renewed every T/4, expires after T); procrastinate, its
    worker heartbeat (every T/4, stalled after T) plus the retry-stalled-jobs periodic task of
    its docs (run every second here, `get_stalled_jobs(seconds_since_heartbeat=T)` + retry_job).
(c) what each needs for "at most one waiting step per loop" and for per-loop cron schedules
    added at run time, checked against the installed procrastinate, not assumed.

procrastinate is not a dependency of vtcode: without it this prints so and measures ours only.
The worker processes are this script again (`--role ...`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from tests.fleet.pgcluster import fresh_database, throwaway_cluster  # noqa: E402
from vtcode.fleet import lease  # noqa: E402
from vtcode.fleet.db import migrate  # noqa: E402
from vtcode.fleet.registry import LoopSpec, add  # noqa: E402

BENCH_TABLES = """
CREATE TABLE IF NOT EXISTS bench_ready (pid integer NOT NULL);
CREATE TABLE IF NOT EXISTS bench_starts (pid integer NOT NULL, at double precision NOT NULL);
"""


def have_procrastinate() -> bool:
    import importlib.util

    return importlib.util.find_spec("procrastinate") is not None


# -- procrastinate: the app every role builds the same way -----------------------------------


def pc_app(url: str, stall: float | None = None) -> Any:
    """The app with its two bench tasks; with `stall`, also the docs' retry-stalled-jobs task."""
    import procrastinate

    # it warns that the app lives in __main__: harmless here, tasks are looked up by name
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))

    @app.task(name="bench_step")
    async def bench_step(loop_id: str, n: int, total: int) -> None:
        if n < total:  # the loop's next step: waits (todo) while this one is doing
            await bench_step.configure(lock=loop_id, queueing_lock=loop_id).defer_async(
                loop_id=loop_id, n=n + 1, total=total
            )

    @app.task(name="bench_slow")
    async def bench_slow(loop_id: str) -> None:
        await app.connector.execute_query_async(
            "INSERT INTO bench_starts (pid, at) VALUES (%(pid)s, %(at)s)",
            pid=os.getpid(),
            at=time.time(),
        )
        await asyncio.sleep(3600)

    if stall is not None:

        @app.periodic(cron="* * * * * *")  # every second (6th field: seconds)
        @app.task(name="bench_retry_stalled", queueing_lock="bench_retry_stalled")
        async def retry_stalled(timestamp: int) -> None:
            for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stall):
                await app.job_manager.retry_job(job)

    return app


def pc_worker(url: str, poll: float, stall: float | None) -> None:
    hb = (stall or 40.0) / 4  # procrastinate's defaults are 10 s / 30 s; scaled to our T
    app = pc_app(url, stall)

    async def run() -> None:
        async with app.open_async():
            await app.run_worker_async(
                queues=["default"],
                concurrency=1,
                fetch_job_polling_interval=poll,
                update_heartbeat_interval=hb,
                stalled_worker_timeout=stall or 30.0,
            )

    asyncio.run(run())


def ours_worker(url: str, poll: float, stall: float, slow: bool) -> None:
    """`fleet worker`'s lease statements around a trivial step (or a step that never ends)."""
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    owner = f"bench/{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("INSERT INTO bench_ready (pid) VALUES (%s)", (os.getpid(),))
        while not stop:
            c = lease.claim(db, host="bench", owner=owner, stall_timeout=stall, queues=["default"])
            if c is None:
                time.sleep(poll)
                continue
            if slow:  # hold the lease, renewing it, until SIGKILLed
                db.execute(
                    "INSERT INTO bench_starts (pid, at) VALUES (%s, %s)", (os.getpid(), time.time())
                )
                while True:
                    time.sleep(stall / 4)
                    lease.renew(db, owner=owner, stall_timeout=stall, loop_ids=[c.loop_id])
            row = db.execute(
                "SELECT steps_done FROM vtcode_fleet_loops WHERE loop_id = %s", (c.loop_id,)
            ).fetchone()
            done = int(str(row[0])) + 1 if row else 1
            full = c.max_steps is not None and done >= c.max_steps
            lease.release(
                db,
                loop_id=c.loop_id,
                owner=owner,
                step_row=c.step_row,
                exit_code=0,
                outcome=lease.Outcome(steps_done=done, state="complete" if full else "idle"),
            )


# -- the parent -------------------------------------------------------------------------------


def spawn(url: str, role: str, poll: float, stall: float | None) -> subprocess.Popen[bytes]:
    argv = [sys.executable, __file__, "--role", role, "--url", url, "--poll", str(poll)]
    if stall is not None:
        argv += ["--stall", str(stall)]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def scalar(url: str, sql: str, *args: object) -> int:
    with psycopg.connect(url, autocommit=True) as c:
        row = c.execute(sql.encode(), args).fetchone()
    return int(str(row[0])) if row and row[0] is not None else 0


def poll_until(cond: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: timed out waiting for {what}")
        time.sleep(0.005)


@contextlib.contextmanager
def workers(procs: list[subprocess.Popen[bytes]], kill: bool = False) -> Iterator[None]:
    try:
        yield
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        for p in procs:
            p.wait()


def new_db(admin: str, engine: str) -> str:
    url = fresh_database(admin)
    if engine == "ours":
        migrate(url)
    else:
        app = pc_app(url)

        async def schema() -> None:
            async with app.open_async():
                await app.schema_manager.apply_schema_async()

        asyncio.run(schema())
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(BENCH_TABLES.encode())
    return url


def register(url: str, ws: Path, loop_id: str, max_steps: int | None, queued: bool) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        add(c, LoopSpec(loop_id=loop_id, workspace=ws, prompt="bench", max_steps=max_steps))
        c.execute("UPDATE vtcode_fleet_loops SET queued = %s WHERE loop_id = %s", (queued, loop_id))


def throughput(admin: str, engine: str, n: int, loops: int, steps: int, poll: float) -> float:
    url = new_db(admin, engine)
    with tempfile.TemporaryDirectory() as ws:
        if engine == "ours":
            for i in range(loops):
                register(url, Path(ws), f"l{i}", steps, queued=False)
        procs = [spawn(url, f"{engine}-worker", poll, None) for _ in range(n)]
        with workers(procs):
            ready = (
                "SELECT count(*) FROM bench_ready"
                if engine == "ours"
                else "SELECT count(*) FROM procrastinate_workers"
            )
            poll_until(lambda: scalar(url, ready) == n, f"{n} {engine} workers")
            t0 = time.perf_counter()
            if engine == "ours":
                scalar(
                    url,
                    "WITH u AS (UPDATE vtcode_fleet_loops SET queued = true RETURNING 1)"
                    " SELECT count(*) FROM u",
                )
                done = "SELECT count(*) FROM vtcode_fleet_loops WHERE state = 'complete'"
                target = loops
            else:
                app = pc_app(url)

                async def first() -> None:
                    async with app.open_async():
                        for i in range(loops):
                            await (
                                app.tasks["bench_step"]
                                .configure(lock=f"l{i}", queueing_lock=f"l{i}")
                                .defer_async(loop_id=f"l{i}", n=1, total=steps)
                            )

                asyncio.run(first())
                done = (
                    "SELECT count(*) FROM procrastinate_jobs"
                    " WHERE task_name = 'bench_step' AND status = 'succeeded'"
                )
                target = loops * steps
            poll_until(lambda: scalar(url, done) == target, f"{engine}: every step")
            elapsed = time.perf_counter() - t0
    return loops * steps / elapsed


def stall_pickup(admin: str, engine: str, stall: float, poll: float) -> float:
    """Seconds from SIGKILL of the worker running a step to the step starting on the other."""
    url = new_db(admin, engine)
    role = f"{engine}-worker"
    with tempfile.TemporaryDirectory() as ws:
        if engine == "ours":
            register(url, Path(ws), "x", None, queued=True)
        else:
            app = pc_app(url)

            async def slow() -> None:
                async with app.open_async():
                    await (
                        app.tasks["bench_slow"]
                        .configure(lock="x", queueing_lock="x")
                        .defer_async(loop_id="x")
                    )

            asyncio.run(slow())
        a = spawn(url, role + ("-slow" if engine == "ours" else ""), poll, stall)
        with workers([a], kill=True):
            poll_until(lambda: scalar(url, "SELECT count(*) FROM bench_starts") == 1, "step on A")
            b = spawn(url, role + ("-slow" if engine == "ours" else ""), poll, stall)
            with workers([b], kill=True):
                ready = (
                    "SELECT count(*) FROM bench_ready"
                    if engine == "ours"
                    else "SELECT count(*) FROM procrastinate_workers"
                )
                poll_until(lambda: scalar(url, ready) == 2, "worker B")
                a.send_signal(signal.SIGKILL)
                killed = time.time()
                a.wait()
                poll_until(
                    lambda: scalar(url, "SELECT count(*) FROM bench_starts") == 2,
                    f"{engine}: the step re-run on B",
                    timeout=stall * 10 + 60,
                )
                at = scalar(url, "SELECT (max(at) * 1000)::bigint FROM bench_starts") / 1000
    return at - killed


def checks(admin: str) -> list[str]:
    """(c): what procrastinate offers for one waiting step per loop and run-time schedules."""
    import procrastinate
    from procrastinate import exceptions, periodic

    out: list[str] = []
    url = new_db(admin, "procrastinate")
    app = pc_app(url)

    async def go() -> None:
        async with app.open_async():
            step = app.tasks["bench_step"].configure(lock="x", queueing_lock="x")
            await step.defer_async(loop_id="x", n=1, total=2)
            try:
                await step.defer_async(loop_id="x", n=1, total=2)
                out.append("queueing_lock: a second waiting job was accepted (!)")
            except exceptions.AlreadyEnqueued:
                out.append("queueing_lock: a second waiting job of a loop -> AlreadyEnqueued (ok)")
            jm = app.job_manager
            worker_id = await jm.register_worker()
            job = await jm.fetch_job(queues=None, worker_id=worker_id)
            assert job is not None and job.status == "doing"
            await step.defer_async(loop_id="x", n=2, total=2)  # a tick while the step runs
            await jm.connector.execute_query_async(
                "DELETE FROM procrastinate_workers WHERE id = %(w)s", w=worker_id
            )  # the worker died and was pruned: its job is stalled
            stalled = list(await jm.get_stalled_jobs(seconds_since_heartbeat=0))
            try:
                await jm.retry_job(stalled[0])
                out.append("stalled job with a waiting job of its loop: retried")
            except Exception as e:  # what the docs' retry task meets
                out.append(
                    "stalled job with a waiting job of its loop: retry_job raises "
                    f"{type(e).__name__} ({getattr(e, 'constraint_name', None)})"
                )
            other = await jm.register_worker()
            nxt = await jm.fetch_job(queues=None, worker_id=other)
            out.append(
                "  ... and the waiting job can never be fetched (the stalled one holds the lock)"
                if nxt is None
                else "  ... the waiting job runs"
            )

    asyncio.run(go())
    fresh = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    deferrer = periodic.PeriodicDeferrer(registry=fresh.periodic_registry)

    async def runs() -> bool:
        task = asyncio.create_task(deferrer.worker())
        await asyncio.sleep(0.2)
        alive = not task.done()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return alive

    alive = asyncio.run(runs())
    out.append(
        "periodic tasks: registered in-process at import (app.periodic / periodic_registry); a"
        f" worker started without one runs no deferrer (deferrer alive: {alive}), and a"
        " schedule added in another process is never seen by running workers"
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--url", default=os.environ.get("VTCODE_TEST_DATABASE_URL"))
    ap.add_argument("--role", choices=["ours-worker", "ours-worker-slow", "procrastinate-worker"])
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--stall", type=float, default=None)
    ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args()
    if a.role == "procrastinate-worker":
        pc_worker(a.url, a.poll, a.stall)
        return
    if a.role:
        ours_worker(a.url, a.poll, a.stall or 30.0, slow=a.role.endswith("slow"))
        return
    loops, steps, stall = (4, 25, 3.0) if a.quick else (8, 100, 4.0)
    engines = ["ours"]
    if have_procrastinate():
        import procrastinate

        engines.append("procrastinate")
        print(f"procrastinate {procrastinate.__version__}, psycopg {psycopg.__version__}")
    else:
        print("procrastinate is not installed (pip install procrastinate): measuring ours only")
    print(
        f"cores: {os.cpu_count()}, load {os.getloadavg()[0]:.2f}, poll {a.poll} s,"
        f" stall budget T = {stall} s"
    )
    with contextlib.ExitStack() as stack:
        admin = a.url or stack.enter_context(throwaway_cluster()).url
        rates: dict[tuple[str, int], float] = {}
        for n in (1, 2, 4):
            for engine in engines:
                rates[engine, n] = throughput(admin, engine, n, loops, steps, a.poll)
            line = f"(a) {n} worker(s), {loops} loops x {steps} steps: ours {rates['ours', n]:7.1f}"
            if ("procrastinate", n) in rates:
                pc = rates["procrastinate", n]
                ratio = rates["ours", n] / pc
                line += f" steps/s, procrastinate {pc:7.1f} steps/s, ours/pc {ratio:.2f}x"
            print(line, flush=True)
        pickup: dict[str, list[float]] = {e: [] for e in engines}
        for _ in range(a.trials):
            for engine in engines:
                pickup[engine].append(stall_pickup(admin, engine, stall, a.poll))
        med = {e: statistics.median(v) for e, v in pickup.items()}
        for e, v in pickup.items():
            print(
                f"(b) {e}: SIGKILL -> re-run on the other worker: median {med[e]:.2f} s "
                f"({', '.join(f'{x:.2f}' for x in v)})"
            )
        if "procrastinate" in med:
            print(f"(b) procrastinate/ours pick-up time: {med['procrastinate'] / med['ours']:.2f}x")
            for line in checks(admin):
                print(f"(c) {line}")
    print(f"load at the end: {os.getloadavg()[0]:.2f} (another job on the cores skews (a))")


if __name__ == "__main__":
    main()

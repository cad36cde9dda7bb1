"""`vtcode fleet`: loops across many machines, with PostgreSQL as the engine (docs/fleet.md).

PostgreSQL holds the loop registry, the per-loop lease that lets at most one step of a loop run
anywhere, the schedule and the central session store. A step itself is exactly `vtcode loop run
--steps 1` in the loop's workspace (the loop-state protocol), run by a worker. psycopg is an
optional extra (`vtcode[fleet]`), imported only by this package, only when a command uses it.
"""

"""The `vtcode` command line: parse, call one function below, render.

Imports inside command functions, on purpose (the one exception to "imports at module top"):
every `vtcode … --help`, completion request and usage error imports the command's module, and
the code a command runs is heavy. Measured with `python -X importtime`: `vtcode.cli.main`
80-105 ms cumulative, `vtcode.runtime.exec_run` 365-505 ms; `vtcode --help` takes 0.30-0.34 s
wall. Importing the runtime at the top of `cmd_exec.py` would more than double `exec --help`.
So a `cmd_*.py` module imports click and its own small helpers at the top and the code it
calls inside the command body.
"""

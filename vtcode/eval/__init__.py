"""`vtcode eval`: run a suite of tasks through an agent, check each result, report pass rates.

Layout: `task.py` (the task.toml format), `suite.py` (loading a suite folder),
`workspace.py` (materialising, reference, checks, protected files), `runner.py` (runs, jobs,
resume), `adapters.py` (vtcode, codex, claude, a command template), `classify.py` (what a run's
own log says happened), `results.py` (the result document and its persistence), `metrics.py`
(pass@k, pass^k), `html.py` (the report page). See docs/eval.md.
"""

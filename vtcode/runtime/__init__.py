"""The composition root: where a run is put together from the libraries below it.

Everything that knows about several layers at once lives here and nowhere else: the hooks that
adapt context management, orientation and steering to the loop's protocols, subagents and the
cron loop runner. Nothing below this package imports it (docs/architecture.md, enforced by the
import-linter contract in pyproject.toml).
"""

"""The Python API: the few calls a script makes, under names that stay put.

Why a facade: the CLI's modules are arranged for the harness (layers, composition root) and move
when the house is rebuilt; a user's script should not. Everything here is a thin adapter over the
same code the CLI runs, so a run started from Python writes the same session, the same events and
the same exit code as `vtcode exec`. Documented in docs/api.md; `tests/api/test_api.py` locks the
names and `tests/typing/api_use.py` type-checks a use of them under `mypy --strict`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from vtcode.config.load import load_config as _load_layers
from vtcode.config.model import VtcodeConfig
from vtcode.events.types import ThreadEvent
from vtcode.store.listing import SessionSummary
from vtcode.store.listing import list_sessions as _list_sessions
from vtcode.store.reader import read_session_events as _read_session_events
from vtcode.validate.engine import validate_files as _validate_files
from vtcode.validate.report import ValidateOptions, ValidateReport

__all__ = [
    "RunSummary",
    "list_sessions",
    "load_config",
    "read_session",
    "run",
    "validate_log",
]

EventCallback = Callable[[ThreadEvent], None]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """How a run ended: the facts of its `thread.completed`, plus the CLI's exit code.

    A run that cannot start (unknown script or provider, unwritable workspace) raises
    `VtcodeError` instead, as the CLI exits 2 with no session. `error` names what ended a run
    that started but failed outside the model (for example a store failure).
    """

    session_id: str
    exit_code: int
    subtype: str | None
    outcome_code: str | None
    result: str | None
    num_turns: int
    total_cost_usd: float | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class _CallbackExporter:
    """Hands every event to the caller's callback, behind the dispatch gate like any exporter:
    the callback sees an event only once the session log has it (write-ahead)."""

    name = "python-callback"

    def __init__(self, callback: EventCallback) -> None:
        self._callback = callback

    def handle(self, event: ThreadEvent) -> None:
        self._callback(event)

    def finish(self) -> None:
        """Nothing buffered: each event was handed over as it came."""


def load_config(
    workspace: str | Path = ".",
    *,
    config_file: str | Path | None = None,
    overrides: Sequence[str] = (),
) -> VtcodeConfig:
    """The effective config for `workspace`, layered exactly as the CLI does (user file, the
    workspace's vtcode.toml filtered by the trust policy, `config_file`, `-c`-style overrides).

    Raises `vtcode.ConfigInvalid` with located problems when a layer is invalid.
    """
    loaded = _load_layers(
        workspace=Path(workspace),
        config_file=None if config_file is None else Path(config_file),
        overrides=list(overrides),
    )
    return loaded.config


def run(
    prompt: str,
    *,
    workspace: str | Path = ".",
    config: VtcodeConfig | None = None,
    provider: str | None = None,
    model: str | None = None,
    script: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    on_event: EventCallback | None = None,
    images: Sequence[str | Path] = (),
) -> RunSummary:
    """Run one headless session in `workspace`, as `vtcode exec PROMPT` does, and wait for it.

    The session is written under `workspace/.vtcode/sessions/` like any other; `on_event` gets
    each event in order once it is durable. No signal handlers are installed (the caller's
    process owns its signals). Raises `VtcodeError` (located message and hint) when the run
    cannot start; nothing is written then. `images` are files sent with the prompt, as
    `exec -i` sends them (same types, caps and refusals, raised as `VtcodeError` before a
    session exists).
    """
    from vtcode.images import load_images
    from vtcode.runtime.exec_run import ExecRequest, run_exec
    from vtcode.runtime.hooks import default_hooks_factory

    root = Path(workspace)
    attached = load_images([root / p for p in images], option="images")
    cfg = config if config is not None else load_config(root)
    sinks = () if on_event is None else (_CallbackExporter(on_event),)
    res = run_exec(
        ExecRequest(
            workspace=root,
            config=cfg,
            prompt=prompt,
            provider=provider,
            model=model,
            script=script,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            sinks=sinks,
            install_signals=False,
            hooks_factory=default_hooks_factory,  # orientation, context, steering: as the CLI
            images=attached,
        )
    )
    outcome = res.outcome
    ran = res.run
    return RunSummary(
        session_id=res.session_id,
        exit_code=int(res.exit_code),
        subtype=None if outcome is None else outcome.kind.subtype.value,
        outcome_code=None if outcome is None else outcome.kind.code,
        result=ran.final_text if ran is not None and ran.outcome.kind.is_success else None,
        num_turns=0 if ran is None else ran.num_turns,
        total_cost_usd=None if ran is None else ran.total_cost_usd,
        error=res.error,
    )


def validate_log(
    paths: str | Path | Sequence[str | Path],
    *,
    strict: bool = False,
    lifecycle: bool = True,
    partial: bool = False,
) -> ValidateReport:
    """Validate event logs (raw or wrapped JSONL) as `vtcode validate` does; `report.ok`-style
    checks go through `report.totals` and each file's problems."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    options = ValidateOptions(strict=strict, lifecycle=lifecycle, partial=partial)
    return _validate_files([str(p) for p in items], options)


def read_session(workspace: str | Path, session_id: str) -> Iterator[ThreadEvent]:
    """The events of one session in order, decoded into the typed event classes."""
    for envelope in _read_session_events(Path(workspace), session_id):
        yield envelope.event


def list_sessions(workspace: str | Path = ".") -> list[SessionSummary]:
    """The sessions of `workspace`, as `vtcode sessions list --json` lists them."""
    return _list_sessions(Path(workspace))

"""Build the loop's `transitions.Machine` from `fsm_table`, and render the table.

The runner (the model) decides nothing about control flow: it computes an `Assessment` of the
facts (cancelled? a limit? compaction due?) and fires a trigger; the table's guards choose the
destination. Guards are looked up in `Assessment` by name from a fixed allow-list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from transitions import EventData, Machine, MachineError

from vtcode.loop.fsm_table import GUARDS, INITIAL, STATES, TERMINAL, TRANSITIONS

__all__ = [
    "Assessment",
    "LoopMachine",
    "MachineError",
    "as_json",
    "as_mermaid",
    "build_machine",
    "check_steps",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Assessment:
    """The facts a trigger is fired with; each field is one guard of the table."""

    cancelled: bool = False
    compaction_due: bool = False
    has_tool_calls: bool = False
    limit_reached: bool = False
    task_verified: bool = False  # a compact run's task checks pass after a change (verified_stop)
    reset_due: bool = False
    recovery_allowed: bool = False
    retry_allowed: bool = False  # a transient failure within the retry budget
    # interactive runs (`vtcode chat`) only
    user_turn_over: bool = False  # the user turn ended: wait at the prompt
    leaving: bool = False  # the user ended the session (/exit, Ctrl-D, Ctrl-C twice)
    interrupted: bool = False  # Ctrl-C cancelled the user turn, not the session


assert set(GUARDS) == {f.name for f in dataclasses.fields(Assessment)}


def check_steps(steps: Mapping[str, object]) -> None:
    """Fail at import unless `steps` gives every non-final state of the table its work, and
    names no state the table lacks: the table, not an if/elif, says what the loop can be in."""
    live = {s.name for s in STATES if not s.final}
    missing, unknown = sorted(live - set(steps)), sorted(set(steps) - live)
    if missing or unknown:
        raise RuntimeError(
            f"loop steps do not match fsm_table: missing {missing}, unknown {unknown}"
        )


def _guard(name: str) -> Callable[[EventData], bool]:
    def check(event: EventData) -> bool:
        facts = event.kwargs.get("facts") or Assessment()
        return bool(getattr(facts, name))

    check.__name__ = f"guard_{name}"
    return check


_GUARD_FUNCS: dict[str, Callable[[EventData], bool]] = {g: _guard(g) for g in GUARDS}


class LoopMachine:
    """The model the machine drives. Triggers are declared so `mypy --strict` knows them."""

    state: str

    def __init__(self, on_enter: Callable[[str, EventData], None] | None = None) -> None:
        self._on_enter = on_enter
        self.machine = build_machine(self)

    # Triggers (bound by transitions thanks to model_override=True).
    def oriented(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def responded(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def followed_up(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def tools_done(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def provider_failed(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def compacted(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def reset_done(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def user_input(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def stop(self, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    def trigger(self, name: str, **kw: Any) -> bool:
        raise RuntimeError("trigger not bound")

    @property
    def is_terminal(self) -> bool:
        return self.state == TERMINAL

    def _entered(self, event: EventData) -> None:
        if self._on_enter is not None:
            self._on_enter(self.state, event)


def build_machine(model: LoopMachine) -> Machine:
    """A plain `Machine` (no auto `to_*` triggers) from the table, with allow-listed guards."""
    transitions = [
        {
            "trigger": t.trigger,
            "source": list(t.source),
            "dest": t.dest,
            "conditions": [_GUARD_FUNCS[c] for c in t.conditions],
        }
        for t in TRANSITIONS
    ]
    states = [{"name": s.name, "final": s.final} for s in STATES]
    return Machine(
        model=model,
        states=states,
        transitions=transitions,
        initial=INITIAL,
        send_event=True,
        auto_transitions=False,
        model_override=True,
        after_state_change=model._entered,
    )


def as_mermaid() -> str:
    """A Mermaid `stateDiagram-v2` of the table (guards shown in brackets)."""
    lines = ["stateDiagram-v2", f"    [*] --> {INITIAL}"]
    for s in STATES:
        lines.append(f"    {s.name} : {s.description}")
    for t in TRANSITIONS:
        guard = f" [{' & '.join(t.conditions)}]" if t.conditions else ""
        for src in t.source:
            lines.append(f"    {src} --> {t.dest} : {t.trigger}{guard}")
    lines.append(f"    {TERMINAL} --> [*]")
    return "\n".join(lines) + "\n"


def as_json() -> dict[str, Any]:
    """The table as plain data (`vtcode fsm --format json`)."""
    return {
        "initial": INITIAL,
        "terminal": TERMINAL,
        "states": [dataclasses.asdict(s) for s in STATES],
        "guards": list(GUARDS),
        "transitions": [
            {
                "trigger": t.trigger,
                "source": list(t.source),
                "dest": t.dest,
                "conditions": list(t.conditions),
                "description": t.description,
            }
            for t in TRANSITIONS
        ],
    }

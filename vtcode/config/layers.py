"""The layers of a loaded config and what they answer: who set a key, and the problems found.

`vtcode.config.load` reads and merges the layers; this module holds the values it produces
(`Layer`, `Source`, `ConfigLayer`, `LoadedConfig`, `ConfigProblem`/`ConfigInvalid`) so they
can be read without the loader's parsing and validation code.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vtcode.config import keys
from vtcode.config.model import VtcodeConfig
from vtcode.config.tomlscan import KeyPath, Position, format_key, parse_key_path
from vtcode.config.trust_policy import TRUST_HINT, Action, Decision
from vtcode.errors import ConfigError
from vtcode.jsontypes import encode

__all__ = [
    "DEFAULTS",
    "ConfigInvalid",
    "ConfigLayer",
    "ConfigProblem",
    "Found",
    "Layer",
    "LoadedConfig",
    "Source",
    "leaves",
    "lookup",
]


class Layer(enum.StrEnum):
    """Where a value came from, lowest precedence first."""

    DEFAULTS = "defaults"
    USER = "user"
    WORKSPACE = "workspace"
    FILE = "file"
    OVERRIDE = "override"


@dataclasses.dataclass(frozen=True, slots=True)
class Source:
    """One layer: its kind, the file (user/workspace/file) or the `-c` text (override)."""

    layer: Layer
    path: Path | None = None
    override: str | None = None

    def __str__(self) -> str:
        if self.path is not None:
            return f"{self.layer} ({self.path})"
        if self.override is not None:
            return f"{self.layer} (-c {self.override})"
        return str(self.layer)

    def to_json(self) -> dict[str, str]:
        out = {"layer": str(self.layer)}
        if self.path is not None:
            out["path"] = str(self.path)
        if self.override is not None:
            out["override"] = self.override
        return out


DEFAULTS = Source(Layer.DEFAULTS)


@dataclasses.dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One located problem: `location` is `file:line:col`, `file` or `-c KEY=VALUE`."""

    message: str
    location: str | None = None
    key: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        text = f"{self.key}: {self.message}" if self.key else self.message
        if self.location:
            text = f"{self.location}: {text}"
        return f"{text}\n  hint: {self.hint}" if self.hint else text

    def to_json(self) -> dict[str, str]:
        out = {"message": self.message}
        for name in ("location", "key", "hint"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


class ConfigInvalid(ConfigError):
    """One or more config problems (exit 2); the message is the first, `problems` has all."""

    def __init__(self, problems: Sequence[ConfigProblem]) -> None:
        assert problems
        self.problems = list(problems)
        first = self.problems[0]
        hint = first.hint
        if len(self.problems) > 1:
            more = f"{len(self.problems) - 1} more problem(s): run `vtcode config check` to list"
            hint = f"{hint}; {more}" if hint else more
        message = f"{first.key}: {first.message}" if first.key else first.message
        super().__init__(message, location=first.location, hint=hint)


@dataclasses.dataclass(frozen=True, slots=True)
class ConfigLayer:
    """One parsed layer: its data as read, and where each key path sits in its text."""

    source: Source
    data: dict[str, Any]
    positions: Mapping[KeyPath, Position]
    display: str  # how locations name this layer: the path as given, or `-c KEY=VALUE`

    def locate(self, path: KeyPath) -> str:
        if self.source.override is not None:
            return self.display
        for n in range(len(path), 0, -1):
            pos = self.positions.get(path[:n])
            if pos is not None:
                return f"{self.display}:{pos[0]}:{pos[1]}"
        return self.display


# --------------------------------------------------------------------------------------------
# The loaded result


@dataclasses.dataclass(frozen=True)
class LoadedConfig:
    """The effective config and the files it came from (lowest precedence first)."""

    config: VtcodeConfig
    sources: list[Path]
    layers: tuple[ConfigLayer, ...] = ()
    warnings: tuple[str, ...] = ()
    decisions: tuple[tuple[Decision, str], ...] = ()  # (what, file:line:col) untrusted workspace
    untrusted_workspace: bool = False  # a workspace layer was read and filtered
    no_effect: tuple[str, ...] = ()  # one warning per no-effect key set (key_status), any layer

    def trust_warnings(self) -> list[str]:
        """One line per workspace key an untrusted workspace could not apply as written."""
        return [
            f"{where}: {d.key} {d.action}: {d.why}; the workspace is not trusted ({TRUST_HINT})"
            for d, where in self.decisions
            if d.action is not Action.GATED
        ]

    def effective(self) -> dict[str, Any]:
        """The merged config as plain data, defaults included (unset optionals omitted).

        `providers` lists the shipped ones too, header values redacted (config/providers.py).
        """
        from vtcode.config.providers import shown_providers

        data: dict[str, Any] = encode(self.config)
        data["providers"] = shown_providers(self.config)
        return data

    def origin(self, key_path: str) -> Source | None:
        """Which layer set `key_path` (`a.b`, `a.b[0].c`); None if unknown or not set.

        A key nobody set reports the defaults layer. A table reports the highest layer that set
        anything inside it. Arrays are replaced whole, so everything inside one reports the layer
        that set the array.
        """
        try:
            path = parse_key_path(key_path)
        except ValueError:
            return None
        return self._origin(path)

    def _origin(self, path: KeyPath) -> Source | None:
        if keys.find(path) is None:
            return None
        for layer in reversed(self.layers):
            state = lookup(layer.data, path)
            if state is Found.YES:
                return layer.source
            if state is Found.SHADOWED:
                return None
        if keys.is_dynamic(path):
            return None
        return DEFAULTS

    def origins(self) -> dict[str, Source]:
        """The layer of every leaf of `effective()`, keyed by dotted key path."""
        out: dict[str, Source] = {}
        for path, _ in leaves(self.effective()):
            out[format_key(path)] = self._origin(path) or DEFAULTS
        return out


class Found(enum.Enum):
    YES = 1
    NO = 2
    SHADOWED = 3  # a prefix is set to a non-table value here: lower layers cannot reach `path`


def lookup(data: Any, path: KeyPath) -> Found:
    node = data
    for part in path:
        if isinstance(node, dict) and isinstance(part, str):
            if part not in node:
                return Found.NO
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int):
            if part >= len(node):
                return Found.SHADOWED
            node = node[part]
        else:
            return Found.SHADOWED
    return Found.YES


def leaves(data: Mapping[str, Any], path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    for k, v in data.items():
        sub = (*path, k)
        if isinstance(v, dict) and v:
            yield from leaves(v, sub)
        else:
            yield sub, v

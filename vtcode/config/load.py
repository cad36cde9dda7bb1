"""Load vtcode.toml: layer the files and `-c` overrides, validate, and remember who set what.

Layers, lowest first: built-in defaults, user config, workspace `vtcode.toml`, `--config FILE`,
then each `-c KEY=VALUE`. Tables merge key by key; any other value (arrays included) replaces.
Files are read with stdlib `tomllib` (data-only, rejects duplicate keys and tables), capped at
1 MiB. The merged document is checked against the generated `vtcode-toml` schema and then decoded
into `VtcodeConfig`; every problem names its key path and the `file:line:col` of the key in the
layer that set it. `origin()` answers which layer set a key: the hooks trust gate needs to know
whether hooks came from the workspace or from the user's own config.

An untrusted workspace layer is filtered by `trust_policy` before it is merged (it may only
tighten the user's policy); `LoadedConfig.decisions` lists what was dropped or merged, each with
one warning in `trust_warnings()`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import stat
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtcode import schemas
from vtcode.config import keys
from vtcode.config.key_status import no_effect_warnings
from vtcode.config.layers import (
    DEFAULTS,
    ConfigInvalid,
    ConfigLayer,
    ConfigProblem,
    Layer,
    LoadedConfig,
    Source,
)
from vtcode.config.layers import Found as _Found
from vtcode.config.layers import lookup as _lookup
from vtcode.config.model import VtcodeConfig
from vtcode.config.problems import describe, syntax_problem
from vtcode.config.rule_syntax import (
    RULE_HINT,
    RULE_LISTS,
    RuleSyntaxError,
    compile_matcher,
    parse_rule,
)
from vtcode.config.tomlscan import (
    KeyPath,
    format_key,
    key_positions,
    parse_key,
)
from vtcode.config.trust_policy import Decision, filter_workspace
from vtcode.config.trust_store import workspace_trusted
from vtcode.errors import ConfigError
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.tomlbounds import TomlBoundsError, check_bounds

__all__ = [
    "DEFAULTS",
    "MAX_CONFIG_BYTES",
    "WORKSPACE_FILE",
    "CheckResult",
    "ConfigInvalid",
    "ConfigLayer",
    "ConfigProblem",
    "Layer",
    "LoadedConfig",
    "Source",
    "check_text",
    "check_text_bounds",
    "load_config",
    "override_layer",
    "parse_layer",
    "read_config_text",
    "resolve",
    "user_config_path",
]

MAX_CONFIG_BYTES = 1024 * 1024
WORKSPACE_FILE = "vtcode.toml"


# --------------------------------------------------------------------------------------------
# Reading layers


def user_config_path(env: Mapping[str, str] | None = None) -> Path | None:
    """`$VTCODE_HOME/config.toml`, else `$XDG_CONFIG_HOME/vtcode/config.toml`, else ~/.config."""
    env = os.environ if env is None else env
    home = env.get("VTCODE_HOME")
    if home:
        return Path(home) / "config.toml"
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():  # the XDG spec says to ignore relative values
        return Path(xdg) / "vtcode" / "config.toml"
    try:
        return Path.home() / ".config" / "vtcode" / "config.toml"
    except RuntimeError:  # no HOME and no passwd entry: there is no user config
        return None


def read_config_text(path: Path, *, required: bool) -> str | None:
    """The text of a config file (at most 1 MiB, UTF-8); None if optional and missing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if required:
            raise ConfigError("no such config file", location=str(path)) from None
        return None
    except OSError as e:
        raise ConfigError(f"cannot read config: {e.strerror}", location=str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError("not a regular file", location=str(path))
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"cannot read config: {e.strerror}", location=str(path)) from None
    finally:
        os.close(fd)
    return decode_config_bytes(data, str(path))


def decode_config_bytes(data: bytes, display: str) -> str:
    """Enforce the size cap and UTF-8 (reporting the bad byte's line and column)."""
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file is larger than {MAX_CONFIG_BYTES} bytes", location=display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ConfigError("not valid UTF-8", location=f"{display}:{line}:{col}") from None
    return text.removeprefix("\ufeff")


def check_text_bounds(text: str, display: str) -> None:
    """`tomlbounds.check_bounds` as a located `ConfigInvalid` (every config text, any layer)."""
    try:
        check_bounds(text)
    except TomlBoundsError as e:
        where = f"{display}:{e.line}:{e.col}"
        raise ConfigInvalid([ConfigProblem(e.message, location=where, hint=_BOUNDS_HINT)]) from None


_BOUNDS_HINT = "vtcode.toml is a small settings file; check that this is the file you meant"


def parse_layer(text: str, source: Source, display: str | None = None) -> ConfigLayer:
    """Parse one config text; a syntax error raises `ConfigInvalid` located at file:line:col.

    Every config text (user, workspace, `--config`, `config check`, an edited file) comes through
    here, so the depth and entry bounds (`tomlbounds`) are checked here, before tomllib runs.
    """
    shown = display if display is not None else str(source.path)
    check_text_bounds(text, shown)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigInvalid([syntax_problem(e, text, shown)]) from None
    return ConfigLayer(source=source, data=data, positions=key_positions(text), display=shown)


def override_layer(text: str) -> ConfigLayer:
    """One `-c KEY=VALUE`: VALUE is TOML, or a plain string when it is not valid TOML."""
    display = f"-c {text}"
    key_text, eq, value_text = text.partition("=")
    try:
        if not eq:
            raise ValueError("expected KEY=VALUE")
        check_text_bounds(text, display if len(display) <= 80 else display[:79] + "…")
        path = parse_key(key_text.strip())
    except ValueError as e:
        raise ConfigInvalid([ConfigProblem(str(e), location=display)]) from None
    value = keys.parse_value(value_text.strip(), keys.find(path))
    data: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        data = {part: data}
    return ConfigLayer(Source(Layer.OVERRIDE, override=text), data, {}, display)


# --------------------------------------------------------------------------------------------
# Resolving layers into one config


def resolve(layers: Sequence[ConfigLayer], *, untrusted_workspace: bool = False) -> LoadedConfig:
    """Merge, validate and decode layers (lowest first); `ConfigInvalid` lists every problem.

    With `untrusted_workspace`, the workspace layer is filtered by the trust policy against the
    defaults and the layers below it (the user config).
    """
    warnings: list[str] = []
    problems: list[ConfigProblem] = []
    fixed = [_apply_aliases(layer, warnings, problems) for layer in layers]
    decisions: list[tuple[Decision, str]] = []
    no_effect = tuple(no_effect_warnings(fixed))  # before the trust filter: set is set
    as_written = fixed
    if untrusted_workspace:
        fixed = _filter_workspace(fixed, decisions)
    for layer in fixed:
        for path in keys.unknown_keys(layer.data):
            hint = keys.suggest(path)
            problems.append(
                ConfigProblem(
                    "unknown key",
                    location=layer.locate(path),
                    key=format_key(path),
                    hint=f"did you mean {hint}?" if hint else None,
                )
            )
    merged: dict[str, Any] = {}
    for layer in fixed:
        merged = _merge(merged, layer.data)
    merged = keys.coerce(merged, keys.root())
    bad_numbers = list(keys.non_finite(merged))
    for path in bad_numbers:
        problems.append(_at(fixed, path, "expected a finite number, got inf or nan"))
    reported = {format_key(p) for p in bad_numbers}
    problems.extend(p for p in _schema_problems(fixed, merged) if p.key not in reported)
    problems.extend(_rule_problems(fixed, merged))
    if as_written is not fixed:  # a value the trust filter drops must still be a valid value
        problems.extend(_value_problems(as_written, problems))
    if problems:
        raise ConfigInvalid(sorted(problems, key=lambda p: _order(fixed, p)))
    try:
        config = decode(VtcodeConfig, merged)
    except DecodeError as e:
        raise ConfigInvalid([_at(fixed, _pointer_path(merged, e.pointer), e.reason)]) from None
    sources = [la.source.path for la in fixed if la.source.path is not None]
    return LoadedConfig(
        config=config,
        sources=sources,
        layers=tuple(fixed),
        warnings=tuple(warnings),
        decisions=tuple(decisions),
        untrusted_workspace=untrusted_workspace,
        no_effect=no_effect,
    )


@functools.cache
def _defaults() -> dict[str, Any]:
    """The defaults as data (read, never modified: `_merge` copies what it changes)."""
    data: dict[str, Any] = encode(VtcodeConfig())
    return data


def _filter_workspace(
    layers: list[ConfigLayer], decisions: list[tuple[Decision, str]]
) -> list[ConfigLayer]:
    below: dict[str, Any] = _defaults()
    out: list[ConfigLayer] = []
    for layer in layers:
        if layer.source.layer is Layer.WORKSPACE:
            data, made = filter_workspace(layer.data, below)
            decisions.extend((d, layer.locate(d.path)) for d in made)
            layer = dataclasses.replace(layer, data=data)
        below = _merge(below, layer.data)
        out.append(layer)
    return out


def _apply_aliases(
    layer: ConfigLayer, warnings: list[str], problems: list[ConfigProblem]
) -> ConfigLayer:
    if not any(_lookup(layer.data, old) is _Found.YES for old in keys.ALIASES):
        return layer
    data = _copy_tables(layer.data)
    positions = dict(layer.positions)
    for old, new_name in keys.ALIASES.items():
        parent = data
        for part in old[:-1]:
            nxt = parent.get(str(part)) if isinstance(parent, dict) else None
            if not isinstance(nxt, dict):
                break
            parent = nxt
        else:
            name = str(old[-1])
            if name not in parent:
                continue
            new = (*old[:-1], new_name)
            if new_name in parent:
                problems.append(
                    ConfigProblem(
                        f"both {format_key(old)} (deprecated alias) and {format_key(new)} are set",
                        location=layer.locate(old),
                        key=format_key(old),
                        hint=f"move these hooks into {format_key(new)}",
                    )
                )
                del parent[name]  # reported once, not again as an unknown key
                continue
            parent[new_name] = parent.pop(name)
            for p, pos in layer.positions.items():
                if p[: len(old)] == old:
                    positions.setdefault((*new, *p[len(old) :]), pos)
            warnings.append(
                f"{layer.locate(old)}: {format_key(old)} is a deprecated alias of {format_key(new)}"
            )
    return dataclasses.replace(layer, data=data, positions=positions)


def _copy_tables(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _copy_tables(v) if isinstance(v, dict) else v for k, v in data.items()}


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        old = out.get(k)
        out[k] = _merge(old, v) if isinstance(old, dict) and isinstance(v, dict) else v
    return out


def _owner(layers: Sequence[ConfigLayer], path: KeyPath) -> ConfigLayer | None:
    """The layer whose value is at `path` in the merged document."""
    for n in range(len(path), 0, -1):
        for layer in reversed(layers):
            if _lookup(layer.data, path[:n]) is _Found.YES:
                return layer
    return None


def _at(layers: Sequence[ConfigLayer], path: KeyPath, message: str) -> ConfigProblem:
    owner = _owner(layers, path)
    return ConfigProblem(
        message,
        location=owner.locate(path) if owner else None,
        key=format_key(path) if path else None,
    )


def _order(layers: Sequence[ConfigLayer], problem: ConfigProblem) -> tuple[int, int, int]:
    """Problems in reading order: by layer, then line and column within it."""
    loc = problem.location or ""
    for i, layer in enumerate(layers):
        if loc == layer.display or loc.startswith(layer.display + ":"):
            rest = loc[len(layer.display) + 1 :].split(":")
            if len(rest) == 2 and rest[0].isdigit() and rest[1].isdigit():
                return (i, int(rest[0]), int(rest[1]))
            return (i, 0, 0)
    return (len(layers), 0, 0)


def _pointer_path(data: Any, pointer: str) -> KeyPath:
    out: list[str | int] = []
    node = data
    for token in pointer.split("/")[1:]:
        part: str | int = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and isinstance(part, str) and part.isdigit():
            part = int(part)
        out.append(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return tuple(out)


def _value_problems(
    layers: Sequence[ConfigLayer], found: Sequence[ConfigProblem]
) -> list[ConfigProblem]:
    """Invalid values in the layers as written, not already in `found`. An untrusted workspace's
    `pricing = {input_per_mtok = -3}` was dropped with a trust warning and `config check` said
    "valid": a bad value is exit 2 whether or not the workspace is trusted."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _merge(merged, layer.data)
    merged = keys.coerce(merged, keys.root())
    bad = list(keys.non_finite(merged))
    new = [_at(layers, path, "expected a finite number, got inf or nan") for path in bad]
    reported = {format_key(p) for p in bad}
    new += [p for p in _schema_problems(layers, merged) if p.key not in reported]
    seen = {(p.key, p.message) for p in found}
    return [p for p in new if (p.key, p.message) not in seen]


def _schema_problems(layers: Sequence[ConfigLayer], merged: dict[str, Any]) -> list[ConfigProblem]:
    try:
        if schemas.fast_validator(keys.SCHEMA_NAME).is_valid(merged):
            return []
    except ValueError:  # a type jsonschema-rs cannot read (a TOML date): the reference says why
        pass
    validator = schemas.reference_validator(keys.SCHEMA_NAME)
    out: list[ConfigProblem] = []
    for err in validator.iter_errors(merged):
        if err.validator == "additionalProperties":
            continue  # unknown keys are reported (with did-you-mean) before the schema runs
        path: KeyPath = tuple(err.absolute_path)
        out.append(_at(layers, path, describe(err)))
    return out


def _rule_problems(layers: Sequence[ConfigLayer], merged: dict[str, Any]) -> list[ConfigProblem]:
    """Each permission rule and hook matcher the merged config holds, parsed as exec and the
    hooks planner parse them (`rule_syntax`), so `config check` refuses what they would."""
    out: list[ConfigProblem] = []
    for path in RULE_LISTS:
        table = merged.get(path[0])
        rules = table.get(path[1]) if isinstance(table, dict) else None
        for i, text in enumerate(rules if isinstance(rules, list) else []):
            if not isinstance(text, str):
                continue  # the schema reports the type
            try:
                parse_rule(text)
            except RuleSyntaxError as e:
                problem = _at(layers, (*path, i), str(e))
                out.append(dataclasses.replace(problem, hint=RULE_HINT))
    hooks = merged.get("hooks")
    lifecycle = hooks.get("lifecycle") if isinstance(hooks, dict) else None
    for event, matchers in (lifecycle if isinstance(lifecycle, dict) else {}).items():
        for i, m in enumerate(matchers if isinstance(matchers, list) else []):
            matcher = m.get("matcher") if isinstance(m, dict) else None
            if not isinstance(matcher, str):
                continue
            try:
                compile_matcher(matcher)
            except RuleSyntaxError as e:
                out.append(_at(layers, ("hooks", "lifecycle", event, i, "matcher"), str(e)))
    return out


# --------------------------------------------------------------------------------------------
# Entry points


def _file_layer(path: Path, layer: Layer, *, required: bool) -> ConfigLayer | None:
    text = read_config_text(path, required=required)
    if text is None:
        return None
    return parse_layer(text, Source(layer, path=path))


def load_config(
    *,
    workspace: Path,
    config_file: Path | None = None,
    overrides: list[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Read every layer (user, workspace, `--config`, `-c`) over the defaults, and validate.

    The workspace layer is filtered unless `workspace_trusted` (the trust store) says otherwise.
    """
    wanted: list[tuple[Path, Layer, bool]] = []
    user = user_config_path(env)
    if user is not None:
        wanted.append((user, Layer.USER, False))
    wanted.append((workspace / WORKSPACE_FILE, Layer.WORKSPACE, False))
    if config_file is not None:
        wanted.append((config_file, Layer.FILE, True))
    layers: list[ConfigLayer] = []
    problems: list[ConfigProblem] = []
    for path, kind, required in wanted:
        try:
            layer = _file_layer(path, kind, required=required)
        except ConfigInvalid as e:
            problems.extend(e.problems)
            continue
        except ConfigError as e:
            problems.append(ConfigProblem(e.message, location=e.location, hint=e.hint))
            continue
        if layer is not None:
            layers.append(layer)
    for text in overrides or []:
        try:
            layers.append(override_layer(text))
        except ConfigInvalid as e:
            problems.extend(e.problems)
    if problems:
        raise ConfigInvalid(problems)
    untrusted = any(la.source.layer is Layer.WORKSPACE for la in layers) and not workspace_trusted(
        workspace, env
    )
    return resolve(layers, untrusted_workspace=untrusted)


@dataclasses.dataclass(frozen=True, slots=True)
class CheckResult:
    """What `config check` reports: problems (empty when valid) and warnings."""

    problems: list[ConfigProblem]
    warnings: tuple[str, ...] = ()


def check_text(text: str, display: str, layer: Layer = Layer.FILE) -> CheckResult:
    """Check one config text on its own over the defaults (`config check FILE`)."""
    path = None if display == "<stdin>" else Path(display)
    try:
        loaded = resolve([parse_layer(text, Source(layer, path=path), display)])
    except ConfigInvalid as e:
        return CheckResult(e.problems)
    return CheckResult([], (*loaded.warnings, *loaded.no_effect))

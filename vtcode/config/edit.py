"""Edit vtcode.toml files in place: `config set`, `config get`, `config init`.

Edits go through tomlkit so that comments and formatting survive, and only leaves are assigned
(replacing a whole table would drop its comments, python-poetry/tomlkit#392). The file is read
and checked with `tomllib` first (tomlkit accepts some invalid TOML, such as a table declared
twice), the edited text is validated exactly as the loader would, and only then written with an
atomic replace, all under a lock on the file's folder (see `_folder_lock`) so that concurrent
`config set`s never lose an update.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtcode.config import keys
from vtcode.config.load import (
    WORKSPACE_FILE,
    ConfigInvalid,
    ConfigLayer,
    ConfigProblem,
    Layer,
    LoadedConfig,
    Source,
    parse_layer,
    read_config_text,
    resolve,
)
from vtcode.config.tomlscan import KeyPath, format_key, parse_key
from vtcode.errors import ConfigError, LockBusyError
from vtcode.fsutil import atomic_write_bytes, ensure_private_dir

if TYPE_CHECKING:  # tomlkit loads only when a file is edited (`config get` is hot)
    import tomlkit

__all__ = ["DEFAULT_LOCK_TIMEOUT", "SetResult", "get_value", "init", "set_value", "starter_toml"]

DEFAULT_LOCK_TIMEOUT = 10.0


@dataclasses.dataclass(frozen=True, slots=True)
class SetResult:
    """What `set_value` wrote."""

    path: Path
    key: str
    value: Any
    created: bool  # the file did not exist before


def known_key(key: str) -> tuple[KeyPath, keys.KeySpec]:
    """Parse a dotted key and look it up; unknown keys fail with a did-you-mean."""
    try:
        path: KeyPath = parse_key(key)
    except ValueError as e:
        raise ConfigInvalid([ConfigProblem(str(e))]) from None
    spec = keys.find(path)
    if spec is None:
        first = next(path[:n] for n in range(1, len(path) + 1) if keys.find(path[:n]) is None)
        hint = keys.suggest(first)
        raise ConfigInvalid(
            [
                ConfigProblem(
                    "unknown key",
                    key=format_key(path),
                    hint=f"did you mean {hint}?" if hint else None,
                )
            ]
        )
    return path, spec


def get_value(loaded: LoadedConfig, key: str) -> Any:
    """The effective value of `key` (a table comes back as a dict); None when it is unset."""
    path, _ = known_key(key)
    node: Any = loaded.effective()
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# --------------------------------------------------------------------------------------------
# set


_LOCK_POLL_SECONDS = 0.02


class _FolderBusy(Exception):
    """The folder lock was not free within the timeout."""


@contextlib.contextmanager
def _folder_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive flock on the folder that holds `path`, polling up to `timeout` seconds.

    Why the folder and not a `FILE.lock` beside it: a lock file next to `vtcode.toml` sat in the
    workspace root, where `git status` listed it and CI jobs committed it. A flock on the folder
    itself creates nothing anywhere, works for every file `config set` may edit (workspace,
    user, `--file`), and survives the atomic replace that swaps the file's inode. Edits of two
    files in one folder wait for each other, which costs nothing here. Raises `_FolderBusy`.
    """
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _FolderBusy(str(path)) from None
                time.sleep(min(_LOCK_POLL_SECONDS, left))
        yield  # closing the descriptor below drops the lock
    finally:
        os.close(fd)


def set_value(
    path: Path,
    key: str,
    value_text: str,
    *,
    layer: Layer = Layer.WORKSPACE,
    make_parents: bool = False,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> SetResult:
    """Set `key` to VALUE (TOML, or a bare string) in the file at `path`, keeping the rest as is.

    The edit is refused, and the file left untouched, if the file is not valid TOML, if the key
    is unknown, or if the edited file would not be a valid config layer.
    """
    key_path, spec = known_key(key)
    value = keys.parse_value(value_text, spec)
    target = path.resolve() if path.is_symlink() else path  # keep a dotfile symlink a symlink
    if make_parents:
        ensure_private_dir(target.parent)
    elif not target.parent.is_dir():
        raise ConfigError("folder does not exist", location=str(target.parent))
    try:
        with _folder_lock(target, lock_timeout):
            return _set_locked(target, path, key_path, value, layer)
    except _FolderBusy:
        raise LockBusyError(
            f"another process is editing this file (waited {lock_timeout:g} s)",
            location=str(path),
        ) from None


def _set_locked(
    target: Path, shown: Path, key_path: KeyPath, value: Any, layer: Layer
) -> SetResult:
    import tomlkit
    import tomlkit.exceptions

    old_text = read_config_text(target, required=False)
    created = old_text is None
    text = old_text or ""
    source = Source(layer, path=shown)
    original = parse_layer(text, source, str(shown))  # refuses a file that is not valid TOML
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as e:  # pragma: no cover - tomllib accepted the text
        raise ConfigError(
            f"TOML syntax error: {e}", location=f"{shown}:{e.line}:{e.col + 1}"
        ) from e
    created_tables: list[Any] = []
    _assign(doc, key_path, value, shown, created_tables)
    for table in created_tables:
        table.add(tomlkit.nl())  # a blank line before whatever table follows it
    new_text = tomlkit.dumps(doc)
    if new_text.endswith("\n\n") and not text.endswith("\n\n"):
        new_text = new_text.rstrip("\n") + "\n"
    _validate(new_text, source, str(shown), original, key_path)
    mode = None if created else stat.S_IMODE(target.stat().st_mode)
    atomic_write_bytes(target, new_text.encode("utf-8"))
    if mode is not None and mode != 0o600:
        with contextlib.suppress(OSError):
            target.chmod(mode)  # atomic_write_bytes creates 0600; keep what the user had
    return SetResult(path=shown, key=format_key(key_path), value=value, created=created)


def _validate(
    text: str, source: Source, display: str, original: ConfigLayer, edited: KeyPath
) -> None:
    """The edited file must stand as a valid layer; problems are located in the original text."""
    try:
        layer = parse_layer(text, source, display)
    except ConfigInvalid:  # pragma: no cover - tomlkit wrote invalid TOML
        raise ConfigError(
            "the edit would produce invalid TOML (not written)", location=display
        ) from None
    try:
        resolve([layer])
    except ConfigInvalid as e:
        fixed = []
        for p in e.problems:
            mine = p.key is not None and _within(p.key, edited)
            location = display if mine else _relocate(p, original, display)
            fixed.append(dataclasses.replace(p, location=location))
        hint = "the file was not changed"
        first = fixed[0]
        fixed[0] = dataclasses.replace(first, hint=f"{first.hint}; {hint}" if first.hint else hint)
        raise ConfigInvalid(fixed) from None


def _within(key: str, edited: KeyPath) -> bool:
    try:
        path = parse_key(key.split("[", 1)[0])
    except ValueError:
        return False
    n = min(len(path), len(edited))
    return path[:n] == edited[:n]


def _relocate(problem: ConfigProblem, original: ConfigLayer, display: str) -> str:
    if problem.key is None:
        return display
    try:
        path = parse_key(problem.key.split("[", 1)[0])
    except ValueError:
        return display
    return original.locate(path)


def _is_table(node: Any) -> bool:
    import tomlkit.items

    return isinstance(node, MutableMapping) and not isinstance(node, tomlkit.items.AoT)


def _assign(
    doc: tomlkit.TOMLDocument, path: KeyPath, value: Any, shown: Path, created: list[Any]
) -> None:
    """Assign `value` at `path`: leaves only; a table value sets each of its leaves."""
    if isinstance(value, dict):
        _table_at(doc, path, shown, created)
        for k, v in value.items():
            _assign(doc, (*path, k), v, shown, created)
        return
    parent = _table_at(doc, path[:-1], shown, created)
    name = str(path[-1])
    parent[name] = _styled_like(parent.get(name), value)


def _styled_like(old: Any, value: Any) -> Any:
    """A new string keeps the quoting of the string it replaces, where TOML allows it.

    Done here rather than left to tomlkit because its versions disagree (0.13 always writes a
    basic "string", 0.15 keeps a 'literal' one): the file the user gets must not depend on which
    tomlkit pip picked. A literal string cannot hold a quote, a newline or a control character.
    """
    import tomlkit
    import tomlkit.items

    if not isinstance(value, str):
        return value
    literal = (
        isinstance(old, tomlkit.items.String)
        and old.as_string().startswith("'")
        and not old.as_string().startswith("'''")
        and "'" not in value
        and all(ch == "\t" or (ch >= " " and ch != "\x7f") for ch in value)
    )
    return tomlkit.string(value, literal=literal)


def _table_at(doc: tomlkit.TOMLDocument, path: KeyPath, shown: Path, created: list[Any]) -> Any:
    """The table at `path`, creating missing ones (`[a.b]` headers, or inline inside inline)."""
    import tomlkit
    import tomlkit.items

    node: Any = doc
    for i, part in enumerate(path):
        name = str(part)
        if name in node:
            child = node[name]
            if not _is_table(child):
                where = format_key(path[: i + 1])
                raise ConfigError(
                    f"cannot set a key inside {where}: it is not a table here",
                    location=str(shown),
                    hint=f"edit {where} in the file",
                )
            node = child
            continue
        header = not isinstance(node, tomlkit.items.InlineTable)
        last = i == len(path) - 1
        node[name] = tomlkit.table(is_super_table=not last) if header else tomlkit.inline_table()
        node = node[name]
        if header and last:
            created.append(node)
    return node


# --------------------------------------------------------------------------------------------
# init


def starter_toml() -> str:
    """A commented starter vtcode.toml: every key, commented out, at its default."""
    from vtcode.config.model import VtcodeConfig
    from vtcode.jsontypes import encode

    defaults: dict[str, Any] = encode(VtcodeConfig())
    out = [
        "# vtcode.toml: workspace configuration for vtcode. Reference: man 5 vtcode.toml",
        "#",
        "# Every key is optional and shown commented out at its built-in default. Precedence,",
        "# lowest first: defaults, user config (~/.config/vtcode/config.toml), this file,",
        "# --config FILE, -c KEY=VALUE. Edit with `vtcode config set KEY VALUE` (comments are",
        "# kept) and check with `vtcode config check`.",
    ]
    out += _starter_table((), keys.root(), defaults)
    out += [
        "",
        "# Examples (uncomment and adapt):",
        "#",
        "# A lifecycle hook (argv list, JSON payload on stdin; see man 5 vtcode.toml):",
        "# [[hooks.lifecycle.pre_compact]]",
        '# matcher = "auto"',
        '# hooks = [{ argv = ["scripts/save-notes.sh"], timeout_seconds = 30 }]',
        "",
        "# An MCP server:",
        "# [mcp.servers.docs]",
        '# command = "docs-mcp"',
        '# args = ["--stdio"]',
    ]
    return "\n".join(out) + "\n"


def _starter_table(path: KeyPath, spec: keys.KeySpec, defaults: dict[str, Any]) -> list[str]:
    """One table's keys (commented out, at their defaults), then its sub-tables."""
    from vtcode.config import docs
    from vtcode.config.render import inline

    out: list[str] = []
    leaves = [(n, c) for n, c in spec.children.items() if c.kind != "table"]
    if leaves and path:
        out += ["", f"# [{format_key(path)}]"]
    elif leaves:  # root keys have no header (`[]` is not TOML); they precede every table
        out += ["", "# Top-level keys (they must come before the first [table]):"]
    for name, child in leaves:
        sub = (*path, name)
        value = _dig(defaults, sub)
        text = docs.describe(sub, child) or ""
        if value is None:
            line = f"# {name} = <{child.type_text()}>  # unset by default"
            out.append(f"{line}: {text}" if text else line)
        else:
            line = f"# {name} = {inline(value)}"
            out.append(f"{line}  # {text}" if text else line)
    for name, child in spec.children.items():
        if child.kind == "table":
            out += _starter_table((*path, name), child, defaults)
    return out


def _dig(data: Any, path: KeyPath) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def init(
    workspace: Path, *, force: bool = False, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> Path:
    """Write the starter `WORKSPACE/vtcode.toml`; an existing file needs `force`."""
    path = workspace / WORKSPACE_FILE
    if not workspace.is_dir():
        raise ConfigError("workspace folder does not exist", location=str(workspace))
    try:
        with _folder_lock(path, lock_timeout):
            if (path.exists() or path.is_symlink()) and not force:
                raise ConfigError(
                    "already exists", location=str(path), hint="use --force to overwrite it"
                )
            atomic_write_bytes(path, starter_toml().encode("utf-8"))
    except _FolderBusy:
        raise LockBusyError("another process is editing this file", location=str(path)) from None
    return path

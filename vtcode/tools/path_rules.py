"""Workspace-relative path globs for the permission rules (`read_file(src/**)`, `*.lock`): a
gitignore-style match, and the normal form a tool's path argument is matched in."""

from __future__ import annotations

import functools
import os
from pathlib import Path

# A glob's tokens. The regular expression they used to become (`**/` as `(?:.*/)?`, `*` as
# `[^/]*`, ...) backtracked in the product of its stars: three of them on a long path was
# already minutes, and grep's `glob` is the model's. `_matches` walks the tokens over the path
# once, keeping the set of token positions reachable at each character: at most len(tokens)
# states per character.
_LIT, _ONE, _STAR, _ANY, _DIRS, _REST = range(6)
Tokens = tuple[tuple[int, str], ...]


@functools.lru_cache(maxsize=512)
def _tokens(pattern: str) -> Tokens:
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    anchored = "/" in pat.rstrip("/")
    pat = pat.lstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out: list[tuple[int, str]] = [] if anchored else [(_DIRS, "")]
    i = 0
    while i < len(pat):
        if pat.startswith("/**", i) and i + 3 == len(pat):
            out.append((_REST, ""))  # `src/**` matches src itself and everything below
            i += 3
        elif pat.startswith("**/", i):
            out.append((_DIRS, ""))  # no folder, or any folders
            i += 3
        elif pat.startswith("**", i):
            out.append((_ANY, ""))
            i += 2
        elif pat[i] == "*":
            out.append((_STAR, ""))  # within one name
            i += 1
        elif pat[i] == "?":
            out.append((_ONE, ""))
            i += 1
        else:
            out.append((_LIT, pat[i]))
            i += 1
    return tuple(out)


def _closure(tokens: Tokens, states: set[tuple[int, bool]], at_end: bool) -> set[tuple[int, bool]]:
    """`states` and every state reachable from them without reading a character (`at_end`: the
    whole path has been read, where `/**` may match nothing)."""
    todo = list(states)
    seen = set(states)
    while todo:
        t, inside = todo.pop()
        if t >= len(tokens) or inside:
            continue
        kind = tokens[t][0]
        nxt: tuple[int, bool] | None = None
        if kind in (_STAR, _ANY, _DIRS):
            nxt = (t + 1, False)  # the wildcard matches nothing
        elif kind == _REST and at_end:
            nxt = (len(tokens), False)
        if kind == _DIRS and (t, True) not in seen:
            seen.add((t, True))
            todo.append((t, True))
        if nxt is not None and nxt not in seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def _matches(tokens: Tokens, path: str) -> bool:
    """Whether the whole of `path` matches the tokens."""
    states = _closure(tokens, {(0, False)}, not path)
    for i, c in enumerate(path):
        after: set[tuple[int, bool]] = set()
        for t, inside in states:
            if t >= len(tokens):
                continue
            kind, lit = tokens[t]
            if inside:  # inside `**/`: any character; a `/` may also end it
                after.add((t, True))
                if c == "/":
                    after.add((t + 1, False))
            elif (kind == _LIT and c == lit) or (kind == _ONE and c != "/"):
                after.add((t + 1, False))
            elif (kind == _STAR and c != "/") or kind == _ANY:
                after.add((t, False))
            elif kind == _REST and c == "/":
                after.add((t, True))  # `/` then anything: the rest of the path
        if not after:
            return False
        states = _closure(tokens, after, i + 1 == len(path))
    end = len(tokens)
    return any(
        (t == end and not inside) or (t == end - 1 and tokens[t][0] == _REST and inside)
        for t, inside in states
    )


def path_glob_match(pattern: str, rel_path: str) -> bool:
    """gitignore-style match of a workspace-relative POSIX path (see the module docstring)."""
    rel = rel_path.strip()
    while rel.startswith("./"):
        rel = rel[2:]
    if pattern.strip() in ("*", "**"):
        return True
    return _matches(_tokens(pattern), rel.rstrip("/") or ".")


def normalise_path(value: str, workspace: Path | None) -> str:
    if workspace is not None:
        root = Path(os.path.normpath(workspace.absolute()))
        p = Path(value)
        full = Path(os.path.normpath(p if p.is_absolute() else root / p))
        if full == root:
            return "."
        if full.is_relative_to(root):
            return full.relative_to(root).as_posix()
        return full.as_posix()
    return os.path.normpath(value).replace(os.sep, "/")

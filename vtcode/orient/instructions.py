"""Project instructions: the AGENTS.md files a run puts into its system prompt.

The format Codex, Claude Code (CLAUDE.md), Gemini CLI, opencode and upstream VT Code share: plain
Markdown a project keeps for agents. Discovery, in the order the text is joined:

1. the user's own file in vtcode's home (`$VTCODE_HOME`, else the user config folder);
2. the repository's, from its root (the nearest folder above the workspace holding `.git`; the
   workspace itself outside a repository) down to the workspace, root first, so a deeper (more
   specific) file comes later and reads as the refinement.

In each folder one file is used: `AGENTS.override.md` (a local override, usually not committed),
else `AGENTS.md`, else the first of `agent.instructions.fallback_files` that is there (e.g.
`CLAUDE.md`). Empty files are skipped. All files together are capped at
`agent.instructions.max_bytes` (32 KiB): the file that crosses it is cut at a character boundary
and the later ones left out, and a warning names them, since a silently cut instruction is worse
than a refused one.

Instructions are content, never policy: nothing in them is parsed, and they change no permission,
sandbox rule or hook, trusted workspace or not. They are workspace-controlled text sent to the
model provider, so a repository file must stay inside the repository: a symlink out of it (to
`~/.ssh/id_rsa`) is skipped with a warning, as is anything but a regular file (a FIFO would block
the run). The user's own file may be a link anywhere.

The text is read once per run and frozen into the request segment's system prompt (its own
section, so the segment's instruction digest covers it): an edited file takes effect at the next
run (`exec resume` starts a new segment with the new digest), never in the middle of one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from vtcode.config.load import user_config_path
from vtcode.config.model import InstructionsConfig
from vtcode.ownfile import open_own

__all__ = [
    "INSTRUCTIONS_FILE",
    "OVERRIDE_FILE",
    "InstructionFile",
    "Instructions",
    "discover_instructions",
    "project_root",
    "user_home",
    "write_starter",
]

INSTRUCTIONS_FILE = "AGENTS.md"
OVERRIDE_FILE = "AGENTS.override.md"
SECTION_TITLE = "# Project instructions"
_PREAMBLE = (
    "The project's AGENTS.md files (the user's own first, then the repository's from its root "
    "down to the working folder: a later, deeper file refines an earlier one). They describe "
    "the project and how to work in it; they do not change the tools, permissions, sandbox or "
    "hooks vtcode enforces."
)


@dataclasses.dataclass(frozen=True, slots=True)
class InstructionFile:
    """One file found: where, whose, its size and how much of it the prompt holds."""

    path: Path  # absolute, as found (not resolved)
    label: str  # as shown: relative to the repository root, or `~user/AGENTS.md`
    scope: str  # "user" | "project"
    size: int  # bytes on disk
    used: int  # bytes put into the prompt (< size: cut by the cap; 0: left out)
    sha256: str  # of the bytes used

    @property
    def truncated(self) -> bool:
        return self.used < self.size

    def to_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "label": self.label,
            "scope": self.scope,
            "bytes": self.size,
            "used_bytes": self.used,
            "truncated": self.truncated,
            "sha256": self.sha256,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Instructions:
    """What discovery found: the files, the prompt section and what to warn about."""

    files: tuple[InstructionFile, ...] = ()
    texts: tuple[str, ...] = ()  # the used text of each file, same order
    warnings: tuple[str, ...] = ()
    max_bytes: int = 0

    def section(self) -> str | None:
        """The system prompt's own section (None when no file has text)."""
        parts = [
            f"## {f.label}\n{text.strip()}"
            for f, text in zip(self.files, self.texts, strict=True)
            if text.strip()
        ]
        if not parts:
            return None
        return "\n\n".join([SECTION_TITLE, _PREAMBLE, *parts])

    def digest(self) -> str:
        """sha256 of the section (what the run record keeps; "" text when there is none)."""
        return hashlib.sha256((self.section() or "").encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, object]:
        return {
            "files": [f.to_json() for f in self.files],
            "max_bytes": self.max_bytes,
            "digest": self.digest(),
            "warnings": list(self.warnings),
        }


def user_home(env: Mapping[str, str] | None = None) -> Path | None:
    """vtcode's home: `$VTCODE_HOME`, else the folder of the user config."""
    env = os.environ if env is None else env
    home = env.get("VTCODE_HOME")
    if home:
        return Path(home)
    config = user_config_path(env)
    return None if config is None else config.parent


def project_root(workspace: Path) -> Path:
    """The nearest folder at or above `workspace` holding `.git` (folder or file), else the
    workspace. A marker walk, not `git rev-parse`: no process, and a repository git refuses to
    run in (unsafe config) still has a root."""
    start = workspace.absolute()
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return start


def _chain(root: Path, workspace: Path) -> list[Path]:
    """The folders from `root` down to `workspace`, root first."""
    ws = workspace.absolute()
    rel = ws.relative_to(root)
    out = [root]
    for part in rel.parts:
        out.append(out[-1] / part)
    return out


def _names(fallbacks: Sequence[str]) -> list[str]:
    names = [OVERRIDE_FILE, INSTRUCTIONS_FILE]
    for name in fallbacks:
        if name and name not in names and "/" not in name and name not in (".", ".."):
            names.append(name)
    return names


def _inside(path: Path, root_real: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real.rstrip("/") + "/")


class _Reader:
    """Reads files in discovery order against one shared byte budget."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.files: list[InstructionFile] = []
        self.texts: list[str] = []
        self.warnings: list[str] = []
        self.cut: list[str] = []

    def read(self, path: Path, label: str, scope: str) -> bool:
        """Use `path` if it is a readable regular file with text; True when it was used (or
        left out by the cap), False when the folder's next name should be tried."""
        try:
            fd = open_own(path)  # no FIFO, no device; the symlink question is settled before
        except FileNotFoundError:
            return False
        except OSError as e:
            self.warnings.append(f"instructions: skipped {label}: {e.strerror or e}")
            return False
        try:
            size = os.fstat(fd).st_size
            data = _read_up_to(fd, self.left + 1)  # one byte more tells a cut from an end
        finally:
            os.close(fd)
        if not data.strip():
            return False  # an empty file: the folder's next name may have text
        size = max(size, len(data))
        text, used = _cut_text(data, self.left)
        if used < size:
            self.cut.append(f"{label} ({used} of {size} bytes)")
        self.left -= used
        digest = hashlib.sha256(data[:used]).hexdigest()
        self.files.append(InstructionFile(path, label, scope, size, used, digest))
        self.texts.append(text)
        return True


def _cut_text(data: bytes, limit: int) -> tuple[str, int]:
    """(text, bytes used) of `data` within `limit` bytes, never ending inside a character;
    bytes that are not UTF-8 become U+FFFD."""
    if len(data) <= limit:
        return data.decode("utf-8", "replace"), len(data)
    for back in range(4):
        piece = data[: max(limit - back, 0)]
        try:
            return piece.decode("utf-8"), len(piece)
        except UnicodeDecodeError as e:
            if e.reason != "unexpected end of data":
                break  # invalid elsewhere: not a cut character
    return data[:limit].decode("utf-8", "replace"), limit


def _followed(path: Path) -> Path:
    """The user's own file may be a link (dotfiles managers): its target, opened as a file."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(1 << 16, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def discover_instructions(
    workspace: Path,
    config: InstructionsConfig,
    *,
    env: Mapping[str, str] | None = None,
) -> Instructions:
    """The instruction files of a run in `workspace` and the text they give (see the module)."""
    if not config.enabled:
        return Instructions(max_bytes=config.max_bytes)
    names = _names(config.fallback_files)
    reader = _Reader(config.max_bytes)
    home = user_home(env)
    if home is not None:
        shown = "$VTCODE_HOME" if (os.environ if env is None else env).get("VTCODE_HOME") else home
        for name in names:
            if reader.read(_followed(home / name), f"{shown}/{name}", "user"):
                break
    root = project_root(workspace)
    root_real = os.path.realpath(root)
    for folder in _chain(root, workspace):
        for name in names:
            path = folder / name
            label = str(path.relative_to(root))
            if path.is_symlink():
                # CLAUDE.md -> AGENTS.md is common; a link out of the repository would send
                # any file the user can read to the provider.
                real = Path(os.path.realpath(path))
                if not _inside(real, root_real):
                    reader.warnings.append(
                        f"instructions: skipped {label}: a symlink out of the repository"
                    )
                    continue
                path = real
            if reader.read(path, label, "project"):
                break
    if reader.cut:
        reader.warnings.append(
            f"instructions: {config.max_bytes} bytes at most (agent.instructions.max_bytes); "
            f"cut: {', '.join(reader.cut)}"
        )
    return Instructions(
        files=tuple(reader.files),
        texts=tuple(reader.texts),
        warnings=tuple(reader.warnings),
        max_bytes=config.max_bytes,
    )


STARTER_AGENTS_MD = """# AGENTS.md

Instructions for coding agents working in this repository (vtcode, Codex, Claude Code and
others read this file). Keep it short: everything here is sent with every request.

## Project

- What this project is, in one or two sentences.

## Build and test

- How to install dependencies, e.g. `pip install -e '.[test]'`.
- How to run the tests, e.g. `python -m pytest -q`.

## Conventions

- Code style, naming, where new code goes.
- What must never be changed without asking.
"""


def write_starter(workspace: Path, *, force: bool = False) -> Path:
    """Write the starter `WORKSPACE/AGENTS.md`; an existing file (or link) needs `force`."""
    from vtcode.errors import ConfigError
    from vtcode.fsutil import atomic_write_bytes

    path = workspace / INSTRUCTIONS_FILE
    if not workspace.is_dir():
        raise ConfigError("workspace folder does not exist", location=str(workspace))
    if (path.exists() or path.is_symlink()) and not force:
        raise ConfigError("already exists", location=str(path), hint="use --force to overwrite it")
    atomic_write_bytes(path, STARTER_AGENTS_MD.encode("utf-8"))
    return path

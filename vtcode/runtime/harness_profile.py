"""Which harness a run gets (`agent.harness.profile`), and what the compact one shows the model.

Issue 28 measured what a 0.5B/1.5B model does with vtcode's full harness: it writes its calls
as text, picks tools it does not need, names the task's own files as tools, and cannot write a
patch. The compact harness (docs/harness.md, "Small models") is what the bench figures in
docs/eval.md chose instead:

- four tools with one-line specs (`vtcode.tools.compact_catalog`);
- a short system prompt, and an example exchange before the task (`loop/lead_in.py`), written
  for a model that imitates: files are written out whole as fenced blocks
  (`loop/file_blocks.py`), which a 0.5B model manages far more often than a JSON call;
- the workspace's small text files inline, in the task's message and in that same block form,
  so the first answer can already be the change (a small model that must first read loses the
  thread by the second turn).

`auto` (the default) picks `compact` when the model's name states a size below 4B parameters
(`qwen0.5b`, `Qwen2.5-Coder-1.5B-Instruct`, `smollm2-135m`): a name is what every provider
has; a model whose name says nothing keeps the full harness.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vtcode.config.model import HarnessProfile
from vtcode.loop.file_blocks import fence_for
from vtcode.loop.lead_in import FirstDraws, LeadIn
from vtcode.loop.prompts import compact_system_prompt, exec_system_prompt
from vtcode.loop.tool_exec import CatalogView, RegistryToolExecutor
from vtcode.providers.base import OutputCapped, Provider
from vtcode.tools.base import ToolError
from vtcode.tools.compact_catalog import CompactCatalog
from vtcode.tools.files import open_in_workspace

__all__ = [
    "COMPACT_OUTPUT_CAP",
    "INLINE_BUDGET_CHARS",
    "SMALL_MODEL_MAX_PARAMS",
    "ChosenProfile",
    "apply_to_provider",
    "base_prompt",
    "choose_profile",
    "inlined",
    "lead_in",
    "model_params_from_name",
]

SMALL_MODEL_MAX_PARAMS = 4e9
# A compact run's output cap unless the provider table sets one: a whole small file fits, and a
# small model's runaway list of calls (seen on qwen0.5b) stops after ~1 minute on a CPU.
COMPACT_OUTPUT_CAP = 1024
# The files shown inline: at most this many characters in all (~1,500 tokens) and per file,
# and this many files; the rest are listed by name.
INLINE_BUDGET_CHARS = 6_000
INLINE_FILE_MAX_CHARS = 4_000
EXCERPT_FILE_MAX_BYTES = 1024 * 1024  # a file too big to show is searched for the task's lines
INLINE_MAX_FILES = 12
_MAX_WALK = 400  # names looked at, whatever the folder holds
_SKIP_DIRS = frozenset(
    {".git", ".vtcode", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", "dist"}
)
# Never sent unasked: names that usually hold secrets (a model may still read_file them).
_SECRET = re.compile(r"(^\.|secret|credential|password|token|\.pem$|\.key$|^id_[a-z0-9]+)", re.I)
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", re.I)


def model_params_from_name(model: str) -> float | None:
    """The parameter count a model's name states (`0.5b` -> 5e8, `135m` -> 1.35e8), if any.

    The last size in the name wins (`qwen2.5-coder-1.5b`: `2.5` is a version, not followed by
    b/m); `8x7b`-style mixtures and names with no size give None.
    """
    if re.search(r"(?<!\d)\d+x\d", model, re.I):
        return None
    sizes = [float(m.group(1)) * (1e9 if m.group(2).lower() == "b" else 1e6)
             for m in _SIZE.finditer(model)]  # fmt: skip
    return sizes[-1] if sizes else None


@dataclass(frozen=True, slots=True)
class ChosenProfile:
    compact: bool

    @property
    def view(self) -> CatalogView | None:
        """How the executor shows its catalog (None: every tool, full specs)."""
        return CompactCatalog() if self.compact else None


def apply_to_provider(profile: ChosenProfile, provider: Provider) -> None:
    """What the profile changes in the provider: compact lowers the default output cap."""
    if profile.compact and isinstance(provider, OutputCapped):
        provider.lower_default_output_cap(COMPACT_OUTPUT_CAP)


def choose_profile(setting: HarnessProfile, model: str) -> ChosenProfile:
    if setting is HarnessProfile.COMPACT:
        return ChosenProfile(True)
    if setting is HarnessProfile.FULL:
        return ChosenProfile(False)
    params = model_params_from_name(model)
    return ChosenProfile(params is not None and params < SMALL_MODEL_MAX_PARAMS)


def _candidates(workspace: Path) -> list[tuple[str, int]]:
    """(relative path, size) of regular files, top level first, then one level down, sorted."""
    out: list[tuple[str, int]] = []
    seen = 0
    dirs: list[str] = [""]
    for depth in range(2):
        next_dirs: list[str] = []
        for rel_dir in dirs:
            try:
                with os.scandir(workspace / rel_dir) as it:
                    entries = sorted(it, key=lambda e: e.name.lower())
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > _MAX_WALK:
                    return out
                rel = f"{rel_dir}{e.name}"
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                mode = st.st_mode
                if stat.S_ISDIR(mode) and depth == 0 and e.name not in _SKIP_DIRS:
                    if not e.name.startswith("."):
                        next_dirs.append(rel + "/")
                elif stat.S_ISREG(mode) and not _SECRET.search(e.name):
                    out.append((rel, st.st_size))
        dirs = next_dirs
    return out


def inlined(
    workspace: Path,
    read: Callable[[str], str | None],
    budget: int = INLINE_BUDGET_CHARS,
    candidates: list[tuple[str, int]] | None = None,
) -> tuple[str, frozenset[str]]:
    """The workspace's small text files as a prompt section, and the paths it shows whole:
    each path, then its text in a fence, the form the compact harness's model writes files in
    (`loop/file_blocks.py`).

    `read(rel)` returns a file's text, or None when it may not or cannot be read (the caller
    reads through the read_file tool's own checks and the run's deny rules). Files that do not
    fit the budget are named with their size; a block may not overwrite them
    (`LeadIn.unseen_write`). `candidates`: the folder's files as `_candidates` lists them, when
    the caller has walked it already.
    """
    parts: list[str] = []
    shown: list[str] = []
    named: list[str] = []
    left = budget
    for rel, size in _candidates(workspace) if candidates is None else candidates:
        if len(shown) >= INLINE_MAX_FILES or size > min(left, INLINE_FILE_MAX_CHARS):
            named.append(f"{_named(rel)} ({size} bytes)")
            continue
        text = read(rel)
        if text is None or len(text) > left:
            continue
        parts.append(f"{_named(rel)}\n{_fenced(text)}\n")
        shown.append(rel)
        left -= len(text)
    if named:
        parts.append("Other files (too big to show here): " + ", ".join(named[:40]))
    return "\n".join(parts), frozenset(shown)


def _named(rel: str) -> str:
    """A path as the lead-in writes it: in backticks when it holds a space, the form a block's
    path line may then take (`loop/file_blocks.py`); a bare spaced name reads as a sentence."""
    return f"`{rel}`" if " " in rel else rel


def _fenced(text: str) -> str:
    """`text` in a fence the model writes back the same way: a longer fence when the text holds
    one (a README with a code block), so the block ends where the file does."""
    fence = fence_for(text)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def _may_read(executor: RegistryToolExecutor, rel: str) -> bool:
    """The run has `read_file` and its rules (deny rules, --disallowed-tools) let it read
    `rel`: what the harness reads for the model, the model could have read itself."""
    if "read_file" not in executor.registry:
        return False
    check = executor.permission
    return check is None or check("read_file", {"path": rel}).allowed


def _reader(executor: RegistryToolExecutor) -> Callable[[str], str | None]:
    """Reads a file as the model's own `read_file` call would: the run's permission rules
    (deny rules, --disallowed-tools) first, then the tool with its workspace and binary checks."""

    def read(rel: str) -> str | None:
        if not _may_read(executor, rel):
            return None
        try:
            result = executor.registry.get("read_file").run({"path": rel}, executor.ctx)
        except (ToolError, OSError):
            return None
        truncated = isinstance(result.data, dict) and result.data.get("truncated")
        return None if truncated else result.output

    return read


def _exact_reader(executor: RegistryToolExecutor) -> Callable[[str], str | None]:
    """A whole text file exactly as it is (a block is written over its excerpt and the rest
    written back: `read_file`'s view clips long lines and drops the last newline), after the
    run's permission check for `read_file`, confined to the workspace as the tool is; None for
    a file that is too big, binary or not UTF-8."""

    def read(rel: str) -> str | None:
        if not _may_read(executor, rel):
            return None
        try:
            opened = open_in_workspace(executor.ctx, rel)  # a regular file or a folder
        except (ToolError, OSError):
            return None
        if opened.is_dir:
            os.close(opened.fd)
            return None
        try:
            with os.fdopen(opened.fd, "rb") as f:
                data = f.read(EXCERPT_FILE_MAX_BYTES + 1)
        except OSError:
            return None
        if len(data) > EXCERPT_FILE_MAX_BYTES or b"\x00" in data:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    return read


def base_prompt(profile: ChosenProfile, workspace: Path, executor: RegistryToolExecutor) -> str:
    """The run's built-in system prompt: the compact one, or the full exec prompt."""
    tools = [t.name for t in executor.catalog()]
    if not profile.compact:
        return exec_system_prompt(workspace, tools)
    return compact_system_prompt(workspace, tools)


def lead_in(
    profile: ChosenProfile, workspace: Path, executor: RegistryToolExecutor, *, max_draws: int = 1
) -> LeadIn | None:
    """A compact run's lead-in (`loop/lead_in.py`): the example exchange, and the workspace's
    small files as they are now, each read as the model's own read_file would be; the first
    reply drawn up to `max_draws` times (`loop/first_draws.py`)."""
    if not profile.compact:
        return None
    tools = [t.name for t in executor.catalog()]
    read = _reader(executor) if "read_file" in tools else (lambda rel: None)
    candidates = _candidates(workspace)  # one walk of the folder for both uses
    files, shown = inlined(workspace, read, candidates=candidates)
    unseen = tuple(
        rel for rel, size in candidates if rel not in shown and size <= EXCERPT_FILE_MAX_BYTES
    )
    exact = _exact_reader(executor) if "read_file" in tools else None
    return LeadIn(files=files, shown=shown, unseen=unseen, read=exact, draws=FirstDraws(max_draws))

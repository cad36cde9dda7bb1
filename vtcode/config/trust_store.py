"""Workspace trust: the one answer to "may this repository's own `vtcode.toml` loosen my policy".

Two questions share this store. `workspace_trusted` decides whether the config loader applies
the workspace's loosening, egress and execution keys at all (see `trust_policy`): trusted when
VTCODE_TRUST_WORKSPACE says so, or when the user recorded trust for this canonical path with
`vtcode hooks trust`. `is_trusted` is stricter for hooks: a repository must not be able to run
code on the user's machine just by being opened, so hooks that come from the workspace layer run
only when the user trusted *exactly those definitions* in *this* workspace.

Trust lives outside the repository (the direnv / Codex model): `$VTCODE_HOME/trust.json`, else
`$XDG_CONFIG_HOME/vtcode/trust.json`, else `~/.config/vtcode/trust.json`, keyed by the canonical
workspace path, with the sha256 of the canonical JSON of the hook definitions (a changed hook is
untrusted again). CI and cron can opt in with
`VTCODE_TRUST_WORKSPACE=1|yes|on|trust|trusted|full-auto` (`0|no|off|deny|denied` refuses even
recorded trust). Nothing the repository contains is consulted to decide trust.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from vtcode.clock import rfc3339
from vtcode.fsutil import atomic_write_json, ensure_private_dir, read_regular

__all__ = [
    "TRUST_ENV",
    "env_trust",
    "hooks_fingerprint",
    "is_trusted",
    "revoke_workspace",
    "trust_file",
    "trust_workspace",
    "trusting_env",
    "workspace_trusted",
]

TRUST_ENV = "VTCODE_TRUST_WORKSPACE"
_YES = {"1", "yes", "on", "true", "trust", "trusted", "full-auto", "full_auto"}
_NO = {"0", "no", "off", "false", "deny", "denied"}
TRUST_SCHEMA_VERSION = 1


def trust_file(env: Mapping[str, str] | None = None) -> Path | None:
    """Where trust is recorded (beside the user config); None without any home folder."""
    from vtcode.config.load import user_config_path

    user = user_config_path(env)
    return None if user is None else user.parent / "trust.json"


def canonical_workspace(workspace: Path) -> str:
    return os.path.realpath(workspace)


def hooks_fingerprint(definitions: Any) -> str:
    """sha256 of the canonical JSON (sorted keys) of the hook definitions."""
    body = orjson.dumps(definitions, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()


def env_trust(env: Mapping[str, str] | None = None) -> bool | None:
    """The CI override: True (trust), False (deny), None (not set or not understood)."""
    value = (os.environ if env is None else env).get(TRUST_ENV, "").strip().lower()
    if value in _YES:
        return True
    if value in _NO:
        return False
    return None


def workspace_trusted(workspace: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether the workspace config may loosen the user's policy (the loader's one question)."""
    override = env_trust(env)
    if override is not None:
        return override
    return _recorded(workspace, env) is not None


def trusting_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` with trust granted: what `vtcode hooks trust` loads the config with, to see (and
    fingerprint) the workspace's definitions before any trust is recorded."""
    return {**(os.environ if env is None else env), TRUST_ENV: "1"}


def _load(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(read_regular(path, limit=4 * 1024 * 1024))
    except (FileNotFoundError, orjson.JSONDecodeError, OSError, RecursionError):
        return {"schema_version": TRUST_SCHEMA_VERSION, "workspaces": {}}
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        return {"schema_version": TRUST_SCHEMA_VERSION, "workspaces": {}}
    return data


def is_trusted(workspace: Path, fingerprint: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether these exact hook definitions may run in `workspace`."""
    override = env_trust(env)
    if override is not None:
        return override
    entry = _recorded(workspace, env)
    return entry is not None and entry.get("hooks_sha256") == fingerprint


def _recorded(workspace: Path, env: Mapping[str, str] | None) -> dict[str, Any] | None:
    """The trust entry recorded for `workspace` (None: none, or no trust file)."""
    path = trust_file(env)
    if path is None:
        return None
    entry = _load(path)["workspaces"].get(canonical_workspace(workspace))
    return entry if isinstance(entry, dict) else None


def trust_workspace(
    workspace: Path, fingerprint: str | None, env: Mapping[str, str] | None = None
) -> Path:
    """Record trust of `workspace` (and of these hook definitions); returns the trust file."""
    path = trust_file(env)
    if path is None:
        raise OSError("no user config folder to record trust in (set VTCODE_HOME)")
    ensure_private_dir(path.parent)
    data = _load(path)
    data["workspaces"][canonical_workspace(workspace)] = {
        "hooks_sha256": fingerprint,
        "trusted_at": rfc3339(),
    }
    atomic_write_json(path, data, pretty=True)
    return path


def revoke_workspace(workspace: Path, env: Mapping[str, str] | None = None) -> bool:
    path = trust_file(env)
    if path is None or not path.exists():
        return False
    data = _load(path)
    removed = data["workspaces"].pop(canonical_workspace(workspace), None) is not None
    if removed:
        atomic_write_json(path, data, pretty=True)
    return removed

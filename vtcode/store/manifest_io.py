"""Reading a session's manifest.json, and the stat that names the version that was read.

Apart from recovery (which writes manifests) so that listing sessions imports neither the
event codecs nor the log scanner.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson

from vtcode.jsontypes import DecodeError, decode
from vtcode.ownfile import read_own_prefix_stat
from vtcode.store.layout import MANIFEST
from vtcode.store.models import SessionManifest

MANIFEST_LIMIT = 1024 * 1024  # a larger manifest.json is not one vtcode wrote: unreadable
ManifestStat = tuple[int, int, int, int]  # st_ino, st_size, st_mtime_ns, st_ctime_ns


def manifest_stat(st: os.stat_result) -> ManifestStat:
    """What names one version of a manifest.json. The store only ever replaces a manifest (a
    new file renamed over it, so a new inode and ctime), never edits it in place: while these
    four agree, its bytes are the ones read when they were taken (the closed-session index
    relies on it to list a session without reading it)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def mark_in_use(sdir: Path | int) -> None:
    """Say that the session's lock was just taken: its manifest's mtime moves one nanosecond
    (in place; the bytes stay), so no closed-session index card made before matches it.

    Every taker of a session lock calls it right after acquiring (the writer reopening a
    session, repair, retention removing one): `sessions list` shows a carded session without
    probing its lock, on the rule that a card matching the manifest was made while the lock
    was free and nobody has taken it since (list_card.py). A card is only ever made from a
    manifest read before a probe that found the lock free, so one made after this mark would
    need the lock released first. Best effort: no manifest means no card can match it, and a
    manifest that cannot be touched (read-only) cannot be written by the taker either.
    `sdir` is the folder or an open descriptor of it.
    """
    path, dfd = (MANIFEST, sdir) if isinstance(sdir, int) else (sdir / MANIFEST, None)
    try:
        st = os.lstat(path, dir_fd=dfd)
        if stat.S_ISREG(st.st_mode):
            ns = (st.st_atime_ns, st.st_mtime_ns + 1)
            os.utime(path, ns=ns, dir_fd=dfd, follow_symlinks=False)
    except OSError:
        pass


def load_manifest(sdir: Path, session_id: str | None = None) -> SessionManifest | None:
    """The manifest of a session folder, or None when missing, invalid or naming another id."""
    return read_manifest(sdir, session_id)[0]


def read_manifest(
    sdir: Path, session_id: str | None = None
) -> tuple[SessionManifest | None, ManifestStat | None]:
    """`load_manifest` and the `manifest_stat` of the file it read (None, None when missing;
    the stat without a manifest when the file is invalid or names another id)."""
    try:
        data, st = read_own_prefix_stat(sdir / MANIFEST, MANIFEST_LIMIT + 1)
    except OSError:
        return None, None
    fp = manifest_stat(st)
    if len(data) > MANIFEST_LIMIT:
        return None, fp
    try:
        m = decode(SessionManifest, orjson.loads(data))
    except (orjson.JSONDecodeError, DecodeError, RecursionError):
        return None, fp
    if session_id is not None and m.session_id != session_id:
        return None, fp
    return m, fp

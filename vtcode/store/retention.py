"""Retention: remove old closed sessions, touching nothing the store does not own.

Policy (`[store.retention]`, also `vtcode sessions gc`), decided and documented here:
- candidates are direct child folders of `sessions/` (never symlinks: not followed, not deleted)
  with a readable `manifest.json` naming the same id; anything else is left alone;
- never a `preserve`d session (the current one, and those the caller protects: the sessions of
  each loop's last `keep_loop_steps` steps), never a session whose lock is held; preserved
  sessions do not count toward `max_sessions`;
- completed sessions: beyond `max_sessions` the oldest (by manifest `updated_at`) go, and any
  older than `max_age_days` go; 0 turns either rule off (`max_sessions = 0` keeps everything);
- abandoned sessions (manifest `active`, lock free: a crashed or killed run) do not count toward
  `max_sessions` and are never removed for the count, so a crash can be inspected or resumed; once
  older than `max_age_days` they go like completed ones. Age is the newer of the manifest's
  `updated_at` and the log's mtime, so a stale manifest cannot make a live log look old;
- a session is deleted under its lock, taken without waiting (busy: skipped): re-check the
  manifest, refuse if the folder holds any file the store does not know, rename the folder to a
  tombstone `.trash-<id>-<stamp>-<r>`, unlink the known names through directory descriptors, and
  rmdir. Lock files are never deleted. A tombstone left by a crash is finished by the next run.

Two passes share these rules. `vtcode sessions gc` (`apply_retention`) scans every session and
rewrites the closed-session index (store/closed_index.py). The automatic pass before each run
(`apply_retention_indexed`) reads only that index, re-checks each doomed session on disk
(manifest, lock, symlink, unknown files, fresh age), visits at most `AUTO_MAX_VISITS` and removes
at most `AUTO_MAX_REMOVALS`: its cost is bounded per run whatever the number of sessions
(bench/retention.py). Without an index it does a full pass only in a small workspace; a large one
waits for `sessions gc`. Abandoned (crashed) sessions are not indexed: their age rule is applied
by the full pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import heapq
import os
import secrets
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from vtcode.clock import compact_stamp, parse_rfc3339, rfc3339, utcnow
from vtcode.config.model import RetentionConfig
from vtcode.errors import InvalidIdError
from vtcode.ids import check_id
from vtcode.store.closed_index import (
    INDEX_NAME,
    index_exists,
    index_lock,
    read_entries,
    rebuild_index,
    write_index,
)
from vtcode.store.layout import (
    EVENTS,
    TRASH_PREFIX,
    lock_path,
    sessions_root,
)
from vtcode.store.list_card import make_card
from vtcode.store.locks import lock_is_held, session_lock
from vtcode.store.manifest_io import load_manifest, mark_in_use, read_manifest
from vtcode.store.models import SessionManifest, SessionStatus
from vtcode.store.tombstone import DIR_FLAGS, purge, unknown_entries

Preserve = str | Collection[str] | None  # session ids a pass must not remove
PRESERVED_REASON = "preserved (the current session, or a loop's recent step)"
AUTO_MAX_REMOVALS = 64  # per automatic pass; `sessions gc` removes any backlog at once
AUTO_MAX_VISITS = 256  # doomed index entries re-checked per automatic pass (kept ones included)
AUTO_REBUILD_MAX = 1000  # entries in sessions/ up to which a missing index means a full pass


@dataclasses.dataclass
class RetentionReport:
    """What a retention pass did (or, with `dry_run`, would do)."""

    dry_run: bool = False
    deleted: list[str] = dataclasses.field(default_factory=list)
    kept: list[str] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    leftovers: list[tuple[str, list[str]]] = dataclasses.field(default_factory=list)
    errors: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "deleted": self.deleted,
            "kept": self.kept,
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "leftovers": [{"dir": d, "unknown": u} for d, u in self.leftovers],
            "errors": [{"name": n, "error": e} for n, e in self.errors],
        }


@dataclasses.dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    manifest: SessionManifest
    age_ref: _dt.datetime | None  # None: undatable, never removed for age
    abandoned: bool
    card: str | None = None  # its `sessions list` card for the rebuilt index (list_card.py)


def apply_retention(
    workspace: Path,
    policy: RetentionConfig,
    preserve: Preserve = None,
    dry_run: bool = False,
) -> RetentionReport:
    """Apply `policy` to `<workspace>/.vtcode/sessions` (see the module doc); never raises for
    a single session's trouble: it lands in `report.errors` and the pass goes on."""
    report = RetentionReport(dry_run=dry_run)
    root = sessions_root(Path(workspace))
    started = rfc3339()
    try:
        root_fd = os.open(root, DIR_FLAGS)
    except FileNotFoundError:
        return report
    try:
        candidates = _collect(Path(workspace), root, root_fd, _kept(preserve), report)
        doomed = _choose(candidates, policy)
        for c in candidates:
            if c.name not in doomed:
                report.kept.append(c.name)
        for c in candidates:
            if c.name in doomed:
                try:
                    _delete(Path(workspace), root, root_fd, c, report)
                except OSError as e:
                    report.errors.append((c.name, f"{e.strerror or e}"))
        if report.deleted and not dry_run:
            # One fsync for the whole pass: a rename lost to a power cut leaves a tombstone
            # (or the session) that the next pass finishes.
            with contextlib.suppress(OSError):
                os.fsync(root_fd)
    finally:
        os.close(root_fd)
    if not dry_run:
        kept = [c for c in candidates if not c.abandoned and c.name not in report.deleted]
        closed = {c.name: c.manifest.updated_at for c in kept}
        cards = {c.name: c.card for c in kept if c.card}
        with contextlib.suppress(OSError):
            rebuild_index(Path(workspace), closed, since=started, cards=cards)
    return report


def apply_retention_indexed(
    workspace: Path, policy: RetentionConfig, preserve: Preserve = None
) -> RetentionReport:
    """The automatic pass before a run, from the closed-session index (see the module doc)."""
    ws = Path(workspace)
    root = sessions_root(ws)
    if not index_exists(ws):
        if _small(root):
            return apply_retention(ws, policy, preserve=preserve)
        report = RetentionReport()
        report.skipped.append((INDEX_NAME, "missing; `vtcode sessions gc` rebuilds it"))
        return report
    report = RetentionReport()
    lock = index_lock(ws)
    if not lock.try_acquire():
        report.skipped.append((INDEX_NAME, "in use by another pass"))
        return report
    try:
        full = read_entries(ws) or {}
        entries = {sid: ended for sid, (ended, _) in full.items()}
        if _indexed_pass(ws, root, entries, policy, _kept(preserve), report):
            write_index(ws, entries, {sid: card for sid, (_, card) in full.items() if card})
    finally:
        lock.release()
    return report


def _small(root: Path) -> bool:
    with contextlib.suppress(FileNotFoundError), os.scandir(root) as it:
        return not any(n >= AUTO_REBUILD_MAX for n, _ in enumerate(it))
    return True


def _indexed_pass(
    ws: Path,
    root: Path,
    entries: dict[str, str],
    policy: RetentionConfig,
    preserve: frozenset[str],
    report: RetentionReport,
) -> bool:
    """Remove what the policy dooms among the indexed sessions; True when `entries` changed."""
    # Only the oldest entries can be doomed, and at most AUTO_MAX_VISITS are visited.
    # Preserved sessions neither count toward max_sessions nor take a doomed position.
    candidates = ((n, e) for n, e in entries.items() if n not in preserve)
    order = heapq.nsmallest(AUTO_MAX_VISITS, candidates, key=lambda kv: (kv[1], kv[0]))
    excess = _excess(len(entries) - len(preserve.intersection(entries)), policy)
    cutoff = _cutoff(policy)
    cutoff_text = rfc3339(cutoff)
    changed = False
    root_fd = os.open(root, DIR_FLAGS)
    try:
        for position, (name, ended) in enumerate(order):
            if position >= excess and ended >= cutoff_text:
                break  # sorted by end time: nothing later is doomed
            if len(report.deleted) >= AUTO_MAX_REMOVALS:
                break
            try:
                verdict, redate = _indexed_one(
                    ws, root, root_fd, name, position < excess, cutoff, preserve
                )
                if verdict != "kept":  # removed, or a stale entry
                    entries.pop(name, None)
                    changed = True
                elif redate is not None:  # newer on disk than indexed: leave the doomed prefix
                    entries[name] = redate
                    changed = True
                if verdict == "removed":
                    report.deleted.append(name)
            except OSError as e:
                report.errors.append((name, f"{e.strerror or e}"))
        if report.deleted:
            with contextlib.suppress(OSError):
                os.fsync(root_fd)
    finally:
        os.close(root_fd)
    return changed


def _indexed_one(
    ws: Path,
    root: Path,
    root_fd: int,
    name: str,
    over_count: bool,
    cutoff: _dt.datetime,
    preserve: frozenset[str],
) -> tuple[Literal["removed", "stale", "kept"], str | None]:
    """Re-check one doomed index entry on disk; remove it when every rule agrees. `stale`: gone,
    or reopened (indexed again when it closes). `kept` may carry a newer end time (the log
    changed since), so the entry leaves the doomed prefix instead of being revisited."""
    try:
        sdir = root / check_id(name)
    except InvalidIdError:
        return "stale", None  # not a session id: never turned into a path
    if name in preserve:
        return "kept", None
    try:
        st = os.lstat(sdir)
    except FileNotFoundError:
        return "stale", None
    if not stat.S_ISDIR(st.st_mode):
        return "kept", None  # a symlink or a file: never followed, never removed
    m = load_manifest(sdir, name)
    if m is None or lock_is_held(lock_path(ws, name)):
        return "kept", None
    if m.status is not SessionStatus.COMPLETED:
        return "stale", None
    age = _age_ref(m, sdir)
    if not (over_count or (age is not None and age < cutoff)):
        return "kept", None if age is None else rfc3339(age)
    c = _Candidate(name=name, manifest=m, age_ref=age, abandoned=False)
    sub = RetentionReport()
    _delete(ws, root, root_fd, c, sub)
    return ("removed" if sub.deleted else "kept"), None


def _collect(
    workspace: Path, root: Path, root_fd: int, preserve: frozenset[str], report: RetentionReport
) -> list[_Candidate]:
    out: list[_Candidate] = []
    with os.scandir(root) as it:
        entries = list(it)
    for entry in entries:
        name = entry.name
        try:
            if name.startswith(TRASH_PREFIX) and entry.is_dir(follow_symlinks=False):
                if not report.dry_run:
                    _finish_tombstone(root_fd, name, report)
                continue
            try:
                check_id(name)
            except InvalidIdError:
                continue  # .locks, editor files, anything not named like a session
            if entry.is_symlink():
                report.skipped.append((name, "symlink (not followed)"))
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue  # an unrelated file
            if name in preserve:
                report.skipped.append((name, PRESERVED_REASON))
                continue
            m, mstat = read_manifest(Path(entry.path), name)
            if m is None or mstat is None:
                report.skipped.append((name, "no readable manifest naming this id"))
                continue
            if lock_is_held(lock_path(workspace, name)):
                report.skipped.append((name, "in use (lock held)"))
                continue
            out.append(
                _Candidate(
                    name=name,
                    manifest=m,
                    age_ref=_age_ref(m, Path(entry.path)),
                    abandoned=m.status is SessionStatus.ACTIVE,
                    card=make_card(m, mstat),
                )
            )
        except OSError as e:
            report.errors.append((name, f"{e.strerror or e}"))
    return out


def _age_ref(m: SessionManifest, sdir: Path) -> _dt.datetime | None:
    updated = parse_rfc3339(m.updated_at)
    if updated is None:
        return None
    try:
        mtime = (sdir / EVENTS).lstat().st_mtime
    except OSError:
        return updated
    return max(updated, _dt.datetime.fromtimestamp(mtime, _dt.UTC))


def retention_notice(session_id: str, policy: RetentionConfig) -> str:
    """What a user is told once for each session the automatic pass removed."""
    count = f"{policy.max_sessions} sessions" if policy.max_sessions else "no count limit"
    age = f"{policy.max_age_days} days" if policy.max_age_days else "no age limit"
    return (
        f"retention: removed closed session {session_id} ([store.retention]: {count}, {age};"
        " max_sessions = 0 and max_age_days = 0 keep every session)"
    )


def _kept(preserve: Preserve) -> frozenset[str]:
    if preserve is None:
        return frozenset()
    return frozenset((preserve,)) if isinstance(preserve, str) else frozenset(preserve)


def _excess(count: int, policy: RetentionConfig) -> int:
    """How many closed sessions are over the count (0 = no count limit)."""
    return 0 if policy.max_sessions == 0 else count - policy.max_sessions


def _cutoff(policy: RetentionConfig) -> _dt.datetime:
    """Sessions older than this go (0 days = no age limit: a cutoff before any session)."""
    if policy.max_age_days == 0:
        return _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
    return utcnow() - _dt.timedelta(days=policy.max_age_days)


def _choose(candidates: list[_Candidate], policy: RetentionConfig) -> set[str]:
    doomed: set[str] = set()
    closed = sorted(
        (c for c in candidates if not c.abandoned),
        key=lambda c: (c.manifest.updated_at, c.name),
    )
    excess = _excess(len(closed), policy)
    if excess > 0:
        doomed.update(c.name for c in closed[:excess])
    cutoff = _cutoff(policy)
    for c in candidates:
        if c.age_ref is not None and c.age_ref < cutoff:
            doomed.add(c.name)
    return doomed


def _delete(
    workspace: Path, root: Path, root_fd: int, c: _Candidate, report: RetentionReport
) -> None:
    lock = session_lock(lock_path(workspace, c.name))
    if not lock.try_acquire():
        report.skipped.append((c.name, "in use (lock held)"))
        return
    try:
        sdir = root / c.name
        try:
            dfd = os.open(c.name, DIR_FLAGS, dir_fd=root_fd)
        except FileNotFoundError:
            return  # another gc got there first
        try:
            if not report.dry_run:
                mark_in_use(dfd)  # a listing meanwhile probes its lock: active, as it is
            m = load_manifest(sdir, c.name)
            if m is None or m.updated_at != c.manifest.updated_at or m.status != c.manifest.status:
                report.skipped.append((c.name, "changed while retention ran"))
                return
            unknown = unknown_entries(dfd)
        finally:
            os.close(dfd)
        if unknown:
            report.skipped.append((c.name, "unknown files: " + ", ".join(unknown)))
            return
        if report.dry_run:
            report.deleted.append(c.name)
            return
        tomb = f"{TRASH_PREFIX}{c.name}-{compact_stamp()}-{secrets.token_hex(3)}"
        os.rename(c.name, tomb, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        report.deleted.append(c.name)
        left = purge(root_fd, tomb)
        if left:
            report.leftovers.append((tomb, left))
    finally:
        lock.release()


def _finish_tombstone(root_fd: int, name: str, report: RetentionReport) -> None:
    left = purge(root_fd, name)
    if left:
        report.leftovers.append((name, left))

"""The listing's fast parts answer exactly as the general functions they stand in for:
`LockProbe.held` as `lock_is_held` (whatever sits at a lock path, held or not, by another
process or this one), and `is_id` as `check_id`. `sessions list` relies on both for 20,000
sessions (store/listing.py); tests/store/test_sessions_list_index.py compares whole listings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vtcode.errors import InvalidIdError
from vtcode.ids import check_id, is_id
from vtcode.store.locks import LockProbe, lock_is_held, session_lock

HOLDER = """
import sys
from pathlib import Path
from vtcode.store.locks import session_lock
session_lock(Path(sys.argv[1])).acquire(5)
print("held", flush=True)
sys.stdin.readline()
"""


def _lock_folder(tmp_path: Path) -> Path:
    locks = tmp_path / ".locks"
    locks.mkdir()
    (locks / "free.lock").write_bytes(b"")
    (locks / "held.lock").write_bytes(b"")
    (locks / "mine.lock").write_bytes(b"")
    (locks / "dir.lock").mkdir()
    os.mkfifo(locks / "fifo.lock")
    (locks / "link-to-held.lock").symlink_to(locks / "held.lock")
    (locks / "dangling.lock").symlink_to(locks / "nowhere")
    return locks


NAMES = [
    "free.lock",
    "held.lock",
    "mine.lock",
    "dir.lock",
    "fifo.lock",
    "link-to-held.lock",
    "dangling.lock",
    "missing.lock",
]


def test_lock_probe_answers_as_lock_is_held(tmp_path: Path) -> None:
    locks = _lock_folder(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(locks / "held.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    mine = session_lock(locks / "mine.lock")
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        mine.acquire(5)  # held by this process: the registry answers, not flock
        with LockProbe(str(locks.absolute())) as probe:
            got = {name: probe.held(name) for name in NAMES}
        assert got == {name: lock_is_held(locks / name) for name in NAMES}
        assert {name for name, held in got.items() if held} == {"held.lock", "mine.lock"}
    finally:
        mine.release()
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    with LockProbe(str(locks.absolute())) as probe:
        assert not any(probe.held(name) for name in NAMES)


def test_a_missing_or_odd_lock_folder_holds_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    for folder in (tmp_path / "missing", tmp_path / "file"):
        with LockProbe(str(folder)) as probe:
            assert probe.held("x.lock") is False
        assert lock_is_held(folder / "x.lock") is False


def _checked(value: str) -> bool:
    try:
        check_id(value)
    except InvalidIdError:
        return False
    return True


@pytest.mark.parametrize(
    "value",
    [
        "",
        "a",
        "old-000001",
        "session-20261202T142100Z-3f9a1c",
        "a.b_c-d",
        ".locks",
        ".trash-x",
        "-a",
        "a..b",
        "a/b",
        "a\\b",
        "a\x00",
        "a b",
        "a\n",
        "é",
        "a" * 128,
        "a" * 129,
        "A9",
        "9",
    ],
)
def test_is_id_is_check_id(value: str) -> None:
    assert is_id(value) is _checked(value)

"""`vtcode.ownfile`: what each kind of planted entry gives, in-process (the CLI cases are in
test_own_files.py)."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vtcode.fsutil import open_append, read_regular
from vtcode.ownfile import OwnFileRefused, open_own, read_own, read_own_prefix


def _plant(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink":
        (path.parent / "real").write_text("x")
        path.symlink_to(path.parent / "real")
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short name (a socket path must fit in 108 bytes)."""
    d = Path(tempfile.mkdtemp(prefix="own", dir="/tmp"))
    yield d
    shutil.rmtree(d)


Opener = Callable[[Path], object]
OPENERS: list[Opener] = [
    lambda p: os.close(open_own(p)),
    lambda p: os.close(open_own(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)),
    lambda p: os.close(open_append(p)),
    lambda p: read_own(p, 1024),
    lambda p: read_own_prefix(p, 1024),
    lambda p: read_regular(p),
]


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink", "socket"])
@pytest.mark.parametrize(
    "opener", OPENERS, ids=["read", "write", "append", "read_own", "prefix", "read_regular"]
)
def test_refused_at_once_with_the_path(short_dir: Path, kind: str, opener: Opener) -> None:
    path = short_dir / "f"
    _plant(kind, path)
    with pytest.raises(OwnFileRefused) as info:
        opener(path)
    assert info.value.filename == str(path)
    word = {"fifo": "FIFO", "folder": "directory", "symlink": "symlink", "socket": "socket"}
    assert word[kind] in str(info.value.strerror)
    if kind == "symlink":
        assert info.value.errno == errno.ELOOP  # callers that said "it is a symlink" still do


def test_oversized_file_is_refused_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "big"
    with path.open("wb") as f:
        f.truncate(2 << 30)  # sparse: nothing is written
    with pytest.raises(OwnFileRefused, match="larger than"):
        read_own(path, 1 << 20)
    assert len(read_own_prefix(path, 10)) == 10
    path.write_bytes(b"abc")
    assert read_own(path, 3) == b"abc"
    with pytest.raises(OwnFileRefused):
        read_own(path, 2)


def test_regular_file_fd_is_blocking(tmp_path: Path) -> None:
    path = tmp_path / "f"
    fd = open_own(path, os.O_WRONLY | os.O_CREAT)
    try:
        assert os.get_blocking(fd)
        assert oct(os.fstat(fd).st_mode & 0o777) == "0o600"
    finally:
        os.close(fd)

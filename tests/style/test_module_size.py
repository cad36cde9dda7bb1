"""Every vtcode module stays under 500 lines: one job per module (docs/architecture.md).

A module that outgrows the bound has taken on a second job; split it along that seam (as
store/tombstone.py came out of store/retention.py) rather than raise the bound.
"""

from __future__ import annotations

from pathlib import Path

import vtcode

MAX_LINES = 500


def test_every_module_is_under_the_bound() -> None:
    root = Path(vtcode.__file__).parent
    sizes = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in root.rglob("*.py")
    }
    assert len(sizes) > 100  # the package, not an empty folder
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert too_big == {}

"""Write docs/config-reference.md from the config model (vtcode/config/reference_doc.py).

Usage: python scripts/gen_config_doc.py   (run after changing a key, its default or its state;
tests/config/test_key_status.py fails while the committed file is stale)
"""

from __future__ import annotations

import sys
from pathlib import Path

from vtcode.config.reference_doc import render

OUT = Path(__file__).resolve().parents[1] / "docs" / "config-reference.md"


def main() -> int:
    OUT.write_text(render(), encoding="utf-8")
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""toml-server-settings: [server] workers = 8 and timeout_seconds = 30, nothing else changed.

The parsed file must equal the original with those two values (types compared exactly: 8,
not "8" or 8.0), so a key appended at the end of the file (inside [metrics]) or a changed
[metrics] workers fails. Every other line of the original (comments included) must still be
there, in order; the comment after `workers = 4` may go or stay.
"""

import os
import sys
import tomllib
from pathlib import Path

# The runner names the task folder; run by hand from the task folder, the file's own folder.
TASK = Path(os.environ.get("VTCODE_EVAL_TASK_DIR") or Path(__file__).resolve().parent)


def flat(table: dict[str, object], prefix: str = "") -> dict[str, tuple[str, object]]:
    """Every value by its dotted key, with its type, so 8, 8.0, "8" and True all differ."""
    out: dict[str, tuple[str, object]] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[prefix + key] = (type(value).__name__, value)
    return out


def is_subsequence(needles: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(line == hay for hay in it) for line in needles)


def main() -> int:
    path = Path("service.toml")
    if not path.is_file():
        print("FAIL: service.toml is missing")
        return 1
    original = (TASK / "setup" / "service.toml").read_text(encoding="utf-8")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        got = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        print(f"FAIL: service.toml is not valid TOML: {exc}")
        return 1
    want = tomllib.loads(original)
    want["server"]["workers"] = 8
    want["server"]["timeout_seconds"] = 30
    got_flat, want_flat = flat(got), flat(want)
    wrong = sorted(
        k for k in got_flat.keys() | want_flat.keys() if got_flat.get(k) != want_flat.get(k)
    )
    if wrong:
        shown = "; ".join(f"{k}: {got_flat.get(k)} (expected {want_flat.get(k)})" for k in wrong)
        print(f"FAIL: service.toml differs from what was asked: {shown}")
        return 1
    kept = [
        line.strip()
        for line in original.splitlines()
        if line.strip() and not line.startswith("workers = 4")
    ]
    lines = [line.strip() for line in text.splitlines()]
    if not is_subsequence(kept, lines):
        missing = [line for line in kept if line not in lines]
        print(f"FAIL: lines of the original file changed or went missing: {missing or kept}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

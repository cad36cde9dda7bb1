"""json-edit: config.json parses and equals the original with exactly the three asked changes
(key order and formatting are free)."""

import json
import sys
from pathlib import Path

EXPECTED = {
    "name": "billing-service",
    "version": "2.3.1",
    "debug": False,
    "log_level": "info",
    "features": {"invoices": True, "refunds": True, "debug_panel": True},
    "allowed_hosts": ["billing.internal", "localhost"],
    "retry": {"attempts": 3, "backoff_seconds": 1.5},
}


def canon(doc: dict[str, object], key: str) -> str:
    """A value as canonical JSON, so false never equals 0 and 3 never equals 3.0."""
    return json.dumps(doc[key], sort_keys=True) if key in doc else "<missing>"


def main() -> int:
    try:
        data = json.loads(Path("config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        print("FAIL: config.json is missing")
        return 1
    except ValueError as exc:
        print(f"FAIL: config.json is not valid JSON: {exc}")
        return 1
    if not isinstance(data, dict):
        print("FAIL: config.json's top level is no longer an object")
        return 1
    wrong = sorted(k for k in set(data) | set(EXPECTED) if canon(data, k) != canon(EXPECTED, k))
    if wrong:
        print(f"FAIL: config.json differs from the expected result at keys {wrong}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`VTCODE_CANCEL_GRACE_SECS`: the seconds between a SIGTERM and the watchdog's exit 130.

The end-to-end test (tests/security/test_output_targets.py) sets 2 s so it does not wait out
the default; this one holds the default and how a bad value is read."""

from __future__ import annotations

import pytest

from vtcode.loop.cancel import DEFAULT_GRACE_SECS, cancel_grace_secs


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 10.0),
        ("2", 2.0),
        ("0.5", 0.5),
        ("0", 10.0),
        ("-3", 10.0),
        ("soon", 10.0),
        ("", 10.0),
    ],
)
def test_grace_is_the_variable_or_ten_seconds(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float
) -> None:
    if value is None:
        monkeypatch.delenv("VTCODE_CANCEL_GRACE_SECS", raising=False)
    else:
        monkeypatch.setenv("VTCODE_CANCEL_GRACE_SECS", value)
    assert cancel_grace_secs() == expected
    assert DEFAULT_GRACE_SECS == 10.0  # docs/security.md gives the default as 10

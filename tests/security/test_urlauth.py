"""URL userinfo masking (vtcode/urlauth.py): what the old expressions masked, in linear time.

The expressions below are the definitions the scanner replaced (vtcode/redact.py before this
change), kept as the reference: on thousands of random texts built from the characters that
matter (scheme characters, `:`, `/`, `@`, stops) the scanner's output must equal theirs. They
are quadratic in a long word, so the reference only ever sees short texts; the long texts run
through the real CLI, whose tool output a 100,000-character line used to hold for ~50 s.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from tests.hang_check import run_python
from vtcode.redact import Redactor
from vtcode.urlauth import mask_cut_userinfo, mask_userinfo

_AUTH = r"[^\s/?#\"'<>\\@]"
OLD_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#\"'<>\\@]+(?:@[^\s/?#\"'<>\\@]+)*@")
OLD_PARTIAL = re.compile(rf"([A-Za-z][A-Za-z0-9+.\-]*://){_AUTH}*:({_AUTH}*)\Z")


def old_mask_userinfo(text: str) -> str:
    return OLD_USERINFO.sub(r"\1***@", text)


def old_mask_cut_userinfo(text: str) -> str:
    """As before, without its 32-character window for the scheme (the scanner reads the whole
    run: a longer scheme is masked, where the window let it through)."""
    if text.rfind("://") < 0:
        return text
    m = OLD_PARTIAL.search(text)
    if m is None or not m.group(2) or m.group(2).isdigit():
        return text
    return text[: m.start()] + m.group(1) + "***"


PIECES = ["://", "http", "a", "Z", "9", "+", ".", "-", ":", "@", "/", " ", "\n", "?", "#",
          '"', "'", "<", ">", "\\", "é", "x" * 5, "8080", "user", "pa:ss", "s3cr3t"]  # fmt: skip


def _texts(seed: int, count: int) -> list[str]:
    """Half free mixtures of the pieces, half URL-shaped (scheme, `://`, authority pieces)."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        if n % 2:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 24))))
            continue
        scheme = "".join(
            rng.choice(["h", "t", "p", "s", "1", "+", "-", ".", "git"])
            for _ in range(rng.randint(0, 4))
        )
        auth = "".join(
            rng.choice(["u", ":", "pw", "@", "9", "é", " ", "/", "x"])
            for _ in range(rng.randint(0, 8))
        )
        around = [rng.choice(PIECES) for _ in range(2)]
        out.append(f"{around[0]}{scheme}://{auth}{around[1] if n % 4 else ''}")
    return out


def test_the_scanner_masks_exactly_what_the_expressions_masked() -> None:
    texts = _texts(2026, 8_000)
    texts += ["https://bob:hunter2@example.com/x", "see git+ssh://u@h/r", "http://h:8080",
              "x https://bob:hun", "a1://u@h 1a://u@h", "https://a@b@c/d", "://u@h",
              "h://:@"]  # fmt: skip
    full = [(t, mask_userinfo(t), old_mask_userinfo(t)) for t in texts]
    assert [(t, new) for t, new, old in full if new != old] == []
    cut = [(t, mask_cut_userinfo(t), old_mask_cut_userinfo(t)) for t in texts]
    assert [(t, new) for t, new, old in cut if new != old] == []
    assert sum(new != t for t, new, _ in full) > 200  # the comparison ran on real masks
    assert sum(new != t for t, new, _ in cut) > 100


def test_the_redactor_masks_through_the_scanner() -> None:
    r = Redactor([])
    assert r.text("clone https://bob:hunter2@example.com/x") == "clone https://***@example.com/x"
    assert r.text("streaming https://bob:hunt") == "streaming https://***"
    assert r.text("serve on http://localhost:8080") == "serve on http://localhost:8080"


@pytest.mark.parametrize(
    "shape",
    [
        "URL: http://h/x\n{run}",  # a URL, then a long word: the cut-userinfo scan
        "http://a.b/ {run} @",  # and an `@`: the full scan
        "http://{run}",  # one long authority with no `:`
        "http://x" + ":" * 50_000 + " ",  # colons, then a stop
    ],
)
def test_a_long_word_beside_a_url_is_masked_in_one_pass(shape: str) -> None:
    """Each shape took minutes at 100,000 characters; bounded by the subprocess's timeout here
    (a hang, not a timing: the scan takes milliseconds)."""
    text = shape.format(run="x" * 100_000)
    code = (
        "import json, sys\nfrom vtcode.redact import Redactor\n"
        "sys.stdout.write(Redactor([]).text(json.load(sys.stdin)))"
    )
    assert run_python(code, stdin=json.dumps(text)).stdout == text

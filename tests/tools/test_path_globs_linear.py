"""Path globs (`src/**`, `**/*.py`, grep's `glob`) matched by a walk over the path, not a regex.

The regular expression a glob became backtracked in the product of its stars: the model
writes grep's `glob`, and `**/a*a*a*a*a*a*b/**` on a long path ran for minutes. The old
translation is kept here as the reference; on random globs and paths built from the pieces
that matter the answers must agree, and a hostile glob runs in a subprocess hang check.
"""

from __future__ import annotations

import random
import re

from tests.hang_check import run_python
from vtcode.tools.path_rules import path_glob_match


def _old_regex(pattern: str) -> re.Pattern[str]:
    """vtcode/tools/path_rules.py's `_path_regex` before this change, verbatim in effect."""
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    anchored = "/" in pat.rstrip("/")
    pat = pat.lstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out = []
    i = 0
    while i < len(pat):
        if pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("(?:/.*)?")
            i += 3
        elif pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    return re.compile(("" if anchored else "(?:.*/)?") + "".join(out) + r"\Z", re.DOTALL)


def _old_match(pattern: str, rel_path: str) -> bool:
    rel = rel_path.strip()
    while rel.startswith("./"):
        rel = rel[2:]
    if pattern.strip() in ("*", "**"):
        return True
    return _old_regex(pattern).match(rel.rstrip("/") or ".") is not None


def test_globs_match_what_the_regular_expressions_matched() -> None:
    rng = random.Random(1)
    globs = ["a", "b", "/", "*", "**", "?", "**/", "/**", ".", "./", " ", "\n"]
    paths = ["a", "b", "/", ".", "ab", "./", " ", "\n"]
    differ, matched = [], 0
    for _ in range(20_000):
        glob = "".join(rng.choice(globs) for _ in range(rng.randint(1, 6)))
        path = "".join(rng.choice(paths) for _ in range(rng.randint(0, 8)))
        old = _old_match(glob, path)
        matched += old
        if path_glob_match(glob, path) != old:
            differ.append((glob, path))
    assert differ == []
    assert 2_000 < matched < 18_000  # both answers, often


def test_a_glob_of_many_stars_on_a_long_path_is_one_walk() -> None:
    code = (
        "from vtcode.tools.path_rules import path_glob_match as f\n"
        "assert not f('**/a*a*a*a*a*a*b/**', 'a' * 4000)\n"
        "assert f('**/a*a*a*a*a*a*b/**', 'x/' + 'a' * 4000 + 'b/y')\n"
        "assert not f('*a*a*a*a*a*a*b', 'a' * 4000)"
    )
    run_python(code)

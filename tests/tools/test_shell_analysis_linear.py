"""Shell command analysis stays linear in time on crafted input, with the same decisions.

`analyse` runs on every command a model asks `exec_command` to run, so its input is untrusted. A
red-team scan found regexes that took quadratic or cubic time (`echo {{{...`, `echo {,{,...`,
`$((aaa...))`, `awk 'print print ...'`, a long sed script). Each fix is compared here against the
OLD definition, copied below as the reference, on thousands of random short strings built from the
characters that matter; each crafted input then runs through `analyse` in a subprocess with a
60 s timeout (a hang check, not a timing assertion: the old code needs minutes to hours there).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable

import pytest

from tests.hang_check import run_python
from vtcode.tools.shell_env import arith_sets
from vtcode.tools.shell_programs import _awk_runs, _bracket_end, sed_script
from vtcode.tools.shell_words import has_glob

# --- the OLD definitions (references; copied verbatim from before the fix) ---
OLD_GLOB = re.compile(r"[*?\[]|\{[^}]*(?:,|\.\.)[^}]*\}")
OLD_ARITH_SETS = re.compile(
    r"([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*([A-Za-z_]\w*)"
    r"|([A-Za-z_]\w*)\s*(?:\+\+|--)"
)
OLD_AWK_RUNS = re.compile(r"system|[|@]|\bprintf?\b[\s\S]*>")


def old_arith_sets(text: str) -> list[str]:
    """How `VarFlow.arithmetic` read the old regex's matches."""
    return [m.group(1) or m.group(2) or m.group(3) for m in OLD_ARITH_SETS.finditer(text)]


def old_sed_script(script: str) -> tuple[bool, list[str]]:
    """The OLD `sed_script` and `_to_semicolon` (`re.match` on `script[i:]`); `_bracket_end` is
    unchanged, so the module's is used."""
    runs, writes, i, n = False, [], 0, len(script)

    def delimited(pos: int, delim: str, regex: bool = True) -> int:
        """The index after the closing `delim`; in a regex a bracket expression (`[/]`) holds
        the delimiter literally, as GNU sed reads it."""
        while pos < n and script[pos] != delim:
            if script[pos] == "[" and regex:
                pos = _bracket_end(script, pos)
            else:
                pos += 2 if script[pos] == "\\" else 1
        if pos >= n:
            raise ValueError("unterminated s, y or address")
        return pos + 1

    def to_eol(pos: int) -> tuple[str, int]:
        end = script.find("\n", pos)
        end = n if end < 0 else end
        return script[pos:end].strip(), end

    while i < n:
        c = script[i]
        if c in " \t\n;}":
            i += 1
            continue
        for _ in range(2):  # an address, then maybe `,address`
            if script.startswith("\\", i) and i + 1 < n:
                i = delimited(i + 2, script[i + 1])
            elif script.startswith("/", i):
                i = delimited(i + 1, "/")
            else:
                m = re.match(r"[+~]?\d+(?:~\d+)?|\$", script[i:])
                i += m.end() if m else 0
            if i < n and script[i] in "IM":
                i += 1
            if i < n and script[i] == ",":
                i += 1
                continue
            break
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            break
        c, i = script[i], i + 1
        if c in "{}=dDgGhHnNpPxzFlLqQ":
            m = re.match(r"\s*\d*", script[i:])
            i += m.end() if m else 0
        elif c == "#" or c in "aic:btTrRvwWe":
            text, i = to_eol(i) if c in "#aicrRwWe" else _old_to_semicolon(script, i)
            while c in "aic" and text.endswith("\\") and i < n:  # continued text lines
                text, i = to_eol(i + 1)
            if c == "e":
                runs = True
            elif c in "wW":
                writes.append(text)
        elif c in "sy":
            if i >= n or script[i] in "\\\n":
                raise ValueError(f"bad delimiter after {c}")
            delim = script[i]
            i = delimited(delimited(i + 1, delim, c == "s"), delim, regex=False)
            if c == "s":
                m = re.match(r"[gpiImM0-9e]*", script[i:])
                flags = m.group(0) if m else ""
                i += len(flags)
                runs = runs or "e" in flags
                if i < n and script[i] == "w":
                    target, i = to_eol(i + 1)
                    writes.append(target)
        else:
            raise ValueError(f"unknown command {c!r}")
    return runs, [w for w in writes if w not in ("/dev/stdout", "/dev/stderr")]


def _old_to_semicolon(script: str, pos: int) -> tuple[str, int]:
    m = re.match(r"[^;\n}]*", script[pos:])
    end = pos + (m.end() if m else 0)
    return script[pos:end].strip(), end


def _random_strings(seed: int, pieces: list[str], count: int = 4000, most: int = 12) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(pieces, k=rng.randint(0, most))) for _ in range(count)]


def _compare(old: Callable[[str], object], new: Callable[[str], object], texts: list[str]) -> None:
    for text in texts:
        assert new(text) == old(text), text


def _outcomes(texts: list[str], decide: Callable[[str], object]) -> dict[bool, int]:
    tally = {True: 0, False: 0}
    for text in texts:
        tally[bool(decide(text))] += 1
    return tally


# --- (a) the new code decides as the old on random short strings ---


def test_has_glob_matches_the_old_regex() -> None:
    # mostly brace characters, so the brace rule (not the `*?[` shortcut) decides most strings
    texts = _random_strings(1, ["{", "{", "}", "}", ",", ".", ".", "a", " ", "\\"], most=14)
    texts += _random_strings(2, ["{", "}", ",", "..", "a", "*", "?", "[", "]"], most=8)
    _compare(lambda t: bool(OLD_GLOB.search(t)), has_glob, texts)
    tally = _outcomes(texts, has_glob)
    assert min(tally.values()) > 500, tally
    braces_only = [t for t in texts if not re.search(r"[*?\[]", t)]
    assert min(_outcomes(braces_only, has_glob).values()) > 300


@pytest.mark.parametrize(
    ("text", "globs"),
    [
        ("{a,b}", True),
        ("{1..3}", True),
        ("{a{,}", True),  # the first `{` before `}` sees the comma
        ("{a,{b}", True),  # ... even with another `{` between
        ("{a}{,", False),  # no `}` after the comma
        ("{.}.}", False),  # `..` split by a `}`
        ("{}", False),
        ("x,y}", False),
        ("a*", True),
    ],
)
def test_has_glob_cases(text: str, globs: bool) -> None:
    assert has_glob(text) is globs is bool(OLD_GLOB.search(text))


def test_arith_sets_match_the_old_regex() -> None:
    pieces = ["a", "b1", "_x", "1", "é", "[", "]", "=", "==", "+", "-", "++", "--", " ", "\n",
              "<<", ">", "<", "!", "*", "$((", "))", ",", ";"]  # fmt: skip
    texts = _random_strings(3, pieces, count=6000)
    # denser in names and operators, for texts with several assignments and subscripts
    texts += _random_strings(7, ["a", "b1", "1", "=", "==", "++", "--", " ", "[", "]"], most=14)
    _compare(old_arith_sets, arith_sets, texts)
    tally = _outcomes(texts, arith_sets)
    assert min(tally.values()) > 500, tally
    assert sum(len(arith_sets(t)) > 1 for t in texts) > 200  # several assignments in one text
    assert sum("[" in t and "]" in t and bool(arith_sets(t)) for t in texts) > 200


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("x = 1", ["x"]),
        ("x <<= 1, y++", ["x", "y"]),
        ("a[i] += 2", ["a"]),
        ("a[b[1] = 2", ["a"]),  # the subscript runs to the first `]`
        ("a[x] == 1", []),
        ("1a=2", ["a"]),  # a match can start inside a word: a `(?<!\w)` guard would lose it
        ("éa=1", ["a"]),
        ("+++a", ["a"]),
        ("-- x--", ["x"]),
        ("x ++ y", ["x"]),
    ],
)
def test_arith_sets_cases(text: str, names: list[str]) -> None:
    assert arith_sets(text) == names == old_arith_sets(text)


def test_awk_runs_matches_the_old_regex() -> None:
    pieces = ["print", "printf", "printx", "xprint", "print", " ", " ", ">", "a", ";", "'", "\n",
              "f", "(", ")"]  # fmt: skip
    texts = _random_strings(4, pieces)
    texts += _random_strings(5, [*pieces, "|", "@", "system", "sys"], count=1000)
    _compare(lambda t: bool(OLD_AWK_RUNS.search(t)), _awk_runs, texts)
    tally = _outcomes(texts, _awk_runs)
    assert min(tally.values()) > 500, tally


def _sed_result(script_reader: Callable[[str], tuple[bool, list[str]]], text: str) -> object:
    try:
        return script_reader(text)
    except ValueError as exc:
        return ("ValueError", str(exc))


def test_sed_script_matches_the_old_function() -> None:
    pieces = ["p", ";", "\n", " ", "1", "$", "~2", "+3", ",", "/x/", "\\%y%", "!", "{", "}", "I",
              "s/a/b/", "s|[/]|c|", "g", "e", "w", " f", "y/a/b/", "b", "x", "3", "q", "a\\",
              "#c", "=", "l 5", "[[:alpha:]]"]  # fmt: skip
    texts = _random_strings(6, pieces, count=6000, most=8)
    _compare(lambda t: _sed_result(old_sed_script, t), lambda t: _sed_result(sed_script, t), texts)
    results = [_sed_result(sed_script, t) for t in texts]
    assert sum(r[0] is True for r in results) > 300  # runs a command
    assert sum(r[0] is False and bool(r[1]) for r in results) > 300  # writes a file
    assert sum(r == (False, []) for r in results) > 300
    assert sum(r[0] == "ValueError" for r in results) > 300


# --- (b) crafted long inputs finish (the old code took minutes to hours) ---

_PROBE = """
import json, sys
from vtcode.tools.shell_parse import analyse
a = analyse(sys.stdin.read())
print(json.dumps({
    "argv": [list(c.argv) for c in a.commands],
    "unresolved": [u.why for u in a.unresolved],
    "uncovered": [u.why for u in a.uncovered],
    "writes": list(a.writes),
}))
"""
_SETS_A = "sets `a` (allow rules cover only locale, colour and git identity)"
_AWK_RUNS_WHY = "an awk program that runs commands or writes files (system, |, print >, @)"


def _analyse_in_subprocess(line: str) -> dict[str, list[object]]:
    done = run_python(_PROBE, stdin=line)
    result: dict[str, list[object]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("line", "argv", "uncovered", "unresolved"),
    [
        ("echo " + "{" * 100_000, [["echo", "{" * 100_000]], [], []),
        ("echo " + "{," * 50_000, [["echo", "{," * 50_000]], [], []),
        ("echo " + "{," * 50_000 + "}", [["echo", "{," * 50_000 + "}"]], [], []),
        ("echo $((" + "a" * 100_000 + "))", [["echo", "$((" + "a" * 100_000 + "))"]], [], []),
        ("let " + "1a" * 50_000 + " x=1", [["let", "1a" * 50_000, "x=1"]],
         ["sets `x` (allow rules cover only locale, colour and git identity)"], []),
        ("(( " + "a[" * 50_000 + "] ))", [], [], []),
        ("(( " + "a[" * 50_000 + "] " + " " * 50_000 + "= 1 ))", [], [_SETS_A], []),
        ("awk '" + "print " * 20_000 + "'", [["awk", "print " * 20_000]], [], []),
        ("awk '" + "print " * 20_000 + ">x'", [["awk", "print " * 20_000 + ">x"]], [],
         [_AWK_RUNS_WHY]),
        ("sed '" + "1~2p;s/a/b/g;bx;\n" * 6_000 + "'", [["sed", "1~2p;s/a/b/g;bx;\n" * 6_000]],
         [], []),
    ],
    ids=["braces", "brace-commas", "brace-commas-closed", "arith-word", "arith-digits",
         "arith-subscripts", "arith-subscripts-set", "awk-prints", "awk-prints-redirect",
         "sed-commands"],
)  # fmt: skip
def test_long_crafted_input_finishes(
    line: str, argv: list[list[str]], uncovered: list[str], unresolved: list[str]
) -> None:
    assert len(line) >= 100_000
    got = _analyse_in_subprocess(line)
    assert got == {"argv": argv, "unresolved": unresolved, "uncovered": uncovered, "writes": []}

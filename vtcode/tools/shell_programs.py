"""Programs an allow rule commonly names, and the options that make them run another program or
write a file, for the shell policy (`git` has its own module, `shell_git`).

Covered: `find` (`-exec`/`-execdir`/`-ok`/`-okdir`/`-delete` run or delete; `-fprint*`/`-fls`
write), `rg` (`--pre`, `--hostname-bin` run programs), `tar` (`--to-command`,
`--use-compress-program`/`-I`, `--checkpoint-action`, `--info-script`/`-F`, `--new-volume-script`,
`--rsh-command`, `--rmt-command`, `-P`, a remote `host:file` archive run programs or write
anywhere; the archive it creates, `-C` of an extraction, `--index-file`, `-g` are writes), `sed`
(the `e` command and `s///e` flag run commands, `w`/`W` and `s///w` write, `-i` writes its files,
`-f` reads a script the policy cannot see; `--sandbox` turns all that off), `awk` (`system()`,
pipes, `print >`, `@` indirect calls, `-f`/`-E`/`-i`/`-l`), `sort` (`--compress-program` runs,
`-o` writes), `tee` (writes its files), `less`/`more` (`+cmd`). An argument of any of these
that is only known at run time could be one of those options, so it is unresolved too. `ls`,
`cat`, `grep`, `head`, `tail`, `wc` run nothing and write nothing by their options.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vtcode.tools.shell_facts import Findings, Values, abbreviates, option_value, short_value
from vtcode.tools.shell_git import screen_git


def screen_program(name: str, args: Values) -> Findings:
    """What `name ARGS` does beyond what an allow rule on its name suggests."""
    if name == "git":
        return screen_git(args)
    screen = _SCREENS.get(name)
    if screen is None:
        return Findings()
    if any(a is None for a in args):
        out = Findings()
        out.runs(f"an argument of `{name}` only known at run time (it could be an option that "
                 "runs a program or writes a file)")  # fmt: skip
        return out
    return screen([a for a in args if a is not None])


def _find(args: list[str]) -> Findings:
    out = Findings()
    for i, a in enumerate(args):
        if a in ("-exec", "-execdir", "-ok", "-okdir", "-delete"):
            out.runs("`find -exec/-execdir/-ok/-delete` runs or deletes per file")
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out.writes.append(args[i + 1])
    return out


def _rg(args: list[str]) -> Findings:
    out = Findings()
    for a in args:
        if a == "--":
            break
        if a.split("=", 1)[0] in ("--pre", "--hostname-bin"):
            out.runs("`rg --pre/--hostname-bin` runs a program")
    return out


_TAR_RUNS = (
    "to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script",
    "rsh-command", "rmt-command", "absolute-names",
)  # fmt: skip
_TAR_WRITES = ("index-file", "listed-incremental", "volno-file")
_TAR_VALUE = frozenset("bCfFgHIKLNTVX")
_TAR_MODES = (
    "remove-files",
    "delete",
    "create",
    "append",
    "update",
    "catenate",
    "concatenate",
    "extract",
    "get",
    "force-local",
)
_TAR_LONG_VALUE = (
    "file", "directory", "index-file", "listed-incremental", "volno-file", "files-from",
    "exclude-from", "blocking-factor", "format", "use-compress-program", "to-command",
    "info-script", "new-volume-script", "rsh-command", "rmt-command", "checkpoint-action",
)  # fmt: skip


def _tar(args: list[str]) -> Findings:
    out = Findings()
    pairs: list[tuple[str, str | None]] = []  # (option, value), short ones as "-x"
    rest = list(args)
    if rest and not rest[0].startswith("-"):  # old style: `tar xzf file`, values in order
        letters, rest = rest[0], rest[1:]
        for letter in letters:
            value = rest.pop(0) if letter in _TAR_VALUE and rest else None
            pairs.append(("-" + letter, value))
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("--") and len(a) > 2:
            name = abbreviates(a, *_TAR_RUNS, *_TAR_LONG_VALUE, *_TAR_MODES)
            if name in _TAR_LONG_VALUE:
                value, i = option_value(rest, i)
                pairs.append(("--" + name, value))
                continue
            pairs.append(("--" + (name or a[2:]), None))
        elif a.startswith("-") and len(a) > 1:
            for k, letter in enumerate(a[1:]):
                if letter in _TAR_VALUE:
                    value = a[k + 2 :] or (rest[i + 1] if i + 1 < len(rest) else None)
                    i += 0 if a[k + 2 :] else 1
                    pairs.append(("-" + letter, value))
                    break
                pairs.append(("-" + letter, None))
        i += 1
    opts = {o for o, _ in pairs}
    creates = bool(opts & {"-c", "-r", "-u", "-A", "--create", "--append", "--update",
                           "--catenate", "--concatenate"})  # fmt: skip
    extracts = bool(opts & {"-x", "--extract", "--get"})
    if "--remove-files" in opts:
        out.runs("`tar --remove-files` deletes the files it archives")
    creates = creates or "--delete" in opts
    for opt, value in pairs:
        if opt in ("-I", "-F", "-P") or opt[2:] in _TAR_RUNS:
            out.runs(f"`tar {opt}` runs a program or writes outside the target folder")
        elif (
            opt in ("-f", "--file")
            and value
            and ":" in value.split("/", 1)[0]
            and ("--force-local" not in opts)
        ):
            out.runs("`tar -f host:file` runs a remote shell")
        elif value and (
            (opt in ("-f", "--file") and creates) or (opt in ("-C", "--directory") and extracts)
        ):
            out.writes.append(value)
        elif opt in ("-g",) or opt[2:] in _TAR_WRITES:
            out.writes.append(value or "")
    return out


def _sed(args: list[str]) -> Findings:
    out = Findings()
    scripts: list[str] = []
    files: list[str] = []
    in_place = sandbox = from_file = False
    i = 0
    while i < len(args):
        a = args[i]
        name = abbreviates(a, "expression", "file", "in-place", "sandbox", "line-length")
        if name == "expression" or name == "file":
            value, i = option_value(args, i)
            scripts.append(value or "") if name == "expression" else None
            from_file = from_file or name == "file"
            continue
        if name == "in-place":
            in_place = True
        elif name == "sandbox":
            sandbox = True
        elif name == "line-length" and "=" not in a:
            i += 1
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1:
            for k, letter in enumerate(a[1:]):
                if letter == "i":
                    in_place = True
                    break
                if letter in "efl":
                    value = a[k + 2 :] or (args[i + 1] if i + 1 < len(args) else "")
                    i += 0 if a[k + 2 :] else 1
                    if letter == "e":
                        scripts.append(value)
                    from_file = from_file or letter == "f"
                    break
        elif not a.startswith("-") or a == "-":
            files.append(a)
        i += 1
    if not scripts and not from_file and files:
        scripts.append(files.pop(0))
    if in_place:
        out.writes += [f for f in files if f != "-"]
    if sandbox:
        return out
    if from_file:
        out.runs("`sed -f` reads a script the policy cannot see (it may run or write)")
    for script in scripts:
        try:
            runs, writes = sed_script(script)
        except ValueError as exc:
            out.runs(f"a sed script the policy cannot read ({exc})")
            continue
        if runs:
            out.runs("the sed `e` command or `s///e` flag runs a command")
        out.writes += writes
    return out


# matched in place with `pattern.match(script, i)`: `re.match(p, script[i:])` copied the rest of
# the script for every command (quadratic on a long `p;p;p;...`); none of them uses `^` or `\A`
_SED_LINE_ADDRESS = re.compile(r"[+~]?\d+(?:~\d+)?|\$")
_SED_COUNT = re.compile(r"\s*\d*")
_SED_S_FLAGS = re.compile(r"[gpiImM0-9e]*")
_SED_TO_SEMICOLON = re.compile(r"[^;\n}]*")


def sed_script(script: str) -> tuple[bool, list[str]]:
    """(whether a GNU sed script runs a command, the files it writes); ValueError if it cannot
    be read. Follows GNU sed's reader: addresses, `!`, `{}`, then one command per `;`/newline."""
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
                m = _SED_LINE_ADDRESS.match(script, i)
                i = m.end() if m else i
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
            m = _SED_COUNT.match(script, i)
            i = m.end() if m else i
        elif c == "#" or c in "aic:btTrRvwWe":
            text, i = to_eol(i) if c in "#aicrRwWe" else _to_semicolon(script, i)
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
                m = _SED_S_FLAGS.match(script, i)
                flags = m.group(0) if m else ""
                i += len(flags)
                runs = runs or "e" in flags
                if i < n and script[i] == "w":
                    target, i = to_eol(i + 1)
                    writes.append(target)
        else:
            raise ValueError(f"unknown command {c!r}")
    return runs, [w for w in writes if w not in ("/dev/stdout", "/dev/stderr")]


def _bracket_end(script: str, pos: int) -> int:
    """The index after the `]` closing the bracket expression opened at `pos`."""
    i = pos + 1
    if script.startswith("^", i):
        i += 1
    if script.startswith("]", i):
        i += 1
    while i < len(script) and script[i] != "]":
        if script[i] == "[" and script[i + 1 : i + 2] in (":", "=", "."):
            close = script.find(script[i + 1] + "]", i + 2)
            if close < 0:
                raise ValueError("unterminated character class")
            i = close + 2
        else:
            i += 1
    if i >= len(script):
        raise ValueError("unterminated bracket expression")
    return i + 1


def _to_semicolon(script: str, pos: int) -> tuple[str, int]:
    m = _SED_TO_SEMICOLON.match(script, pos)
    end = m.end() if m else pos
    return script[pos:end].strip(), end


_AWK_CALLS = re.compile(r"system|[|@]")
_AWK_PRINT = re.compile(r"\bprintf?\b")


def _awk_runs(program: str) -> bool:
    """Whether an awk program may run a command or write a file. A `>` anywhere after a print is
    taken as an output redirect (a comparison there is refused too); the first print ends first,
    so it alone is checked: the regex `\\bprintf?\\b[\\s\\S]*>` scanned to the end from every
    print (`print print print ...`: quadratic)."""
    if _AWK_CALLS.search(program):
        return True
    first = _AWK_PRINT.search(program)
    return first is not None and program.find(">", first.end()) >= 0


def _awk(args: list[str]) -> Findings:
    out = Findings()
    programs: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a[:2] in ("-f", "-E", "-i", "-l", "-W") or abbreviates(
            a, "file", "exec", "include", "load"
        ):
            out.runs("`awk -f/-E/-i/-l/-W` runs awk code or a library the policy cannot see")
        if a in ("-e", "--source") or abbreviates(a, "source"):
            value, i = option_value(args, i)
            programs.append(value or "")
            continue
        if a in ("-v", "-F", "-f", "-E", "-i", "-l", "-W"):
            i += 2
            continue
        if a[:2] in ("-o", "-p", "-d") or abbreviates(
            a, "profile", "pretty-print", "dump-variables"
        ):
            value = a[2:] if a[:2] in ("-o", "-p", "-d") else a.partition("=")[2]
            out.writes.append(value)  # gawk's optional file argument is always attached
        if a == "--" or not a.startswith("-"):
            rest = args[i + 1 :] if a == "--" else args[i:]
            if not programs and rest:
                programs.append(rest[0])
            break
        i += 1
    if any(_awk_runs(p) for p in programs):
        out.runs("an awk program that runs commands or writes files (system, |, print >, @)")
    return out


def _sort(args: list[str]) -> Findings:
    out = Findings()
    for i, a in enumerate(args):
        name = abbreviates(a, "compress-program", "output")
        if name == "compress-program":
            out.runs("`sort --compress-program` runs a program")
        elif name == "output":
            out.writes.append(option_value(args, i)[0] or "")
        elif (found := short_value(args, i, "o")) is not None:
            out.writes.append(found[0] or "")
    return out


def _tee(args: list[str]) -> Findings:
    out = Findings()
    out.writes += [a for a in args if not a.startswith("-") or a == "-"]
    return out


def _pager(args: list[str]) -> Findings:
    out = Findings()
    if any(a.startswith("+") for a in args):
        out.runs("a `+command` for the pager runs at start (`!cmd` runs a shell)")
    if any(a.startswith("-k") or abbreviates(a, "lesskey-file", "lesskey-src") for a in args):
        out.runs("a lesskey file can set LESSOPEN, a program less runs")
    return out


_SCREENS: dict[str, Callable[[list[str]], Findings]] = {
    "find": _find,
    "rg": _rg,
    "tar": _tar,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "sort": _sort,
    "tee": _tee,
    "less": _pager,
    "more": _pager,
}
KNOWN_PROGRAMS = frozenset({"git", *_SCREENS})

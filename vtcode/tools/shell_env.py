"""Which variable assignments in a shell line an `exec_command` rule can live with.

An assignment changes what later commands in the line do, and many programs run whatever a
variable names: `GIT_SSH_COMMAND`, `GIT_EXTERNAL_DIFF`, `PAGER`, `EDITOR`, `LD_PRELOAD`, `PATH`,
`BASH_ENV`, `PYTHONPATH`, `TAR_OPTIONS`... A denylist of such names is never complete (each
program reads its own), so the two rule kinds get two answers:

- allow rules: an assignment keeps every `exec_command(pattern)` allow rule from covering the line
  unless the name is on `SAFE` (locale, time zone, colour and terminal width switches, CI, git's
  author and committer identity), wherever it is made: a prefix (`X=1 git log`), a statement
  (`X=1; git log`), `export`/`declare`/`local`/`readonly`/`typeset`, `env X=1`, or a builtin that
  sets a name (`read`, `mapfile`, `printf -v`, `getopts`, `for`, `select`). So `exec_command(git *)`
  never covers `GIT_SSH_COMMAND=... git fetch` or a name nobody thought to list.
- deny rules: only names known to make a shell, the dynamic loader or a common tool run code
  (`RUNS_CODE`) are unresolved, so a line that sets one is denied whenever a deny rule names
  exec_command, as a variable command name is (`CC=gcc make` stays allowed next to `rm *`).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from vtcode.tools.shell_facts import Findings, Values

SAFE = (
    "LC_*",
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "CI",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
)
# names (globs, upper-cased) that make a shell, ld.so or a common tool load or run a program
RUNS_CODE = (
    "LD_*",
    "*PATH",  # PATH, PYTHONPATH, NODE_PATH, GIT_EXEC_PATH, BASH_LOADABLES_PATH, GCONV_PATH...
    "BASH_*",  # BASH_ENV, BASH_CMDS (the hash table), BASH_ALIASES, BASH_FUNC_x%% (functions)
    "ENV",
    "BASHOPTS",
    "SHELLOPTS",
    "PROMPT_COMMAND",
    "PS[0-4]",
    "EXECIGNORE",
    "HOME",  # ~/.gitconfig, ~/.bashrc, ... come from HOME
    "XDG_*",
    "ZDOTDIR",
    "SHELL",
    "GIT_*",  # SAFE takes out the identity variables
    "*EDITOR",
    "VISUAL",
    "*PAGER",
    "*ASKPASS",
    "*_COMMAND",
    "BROWSER",
    "LESS*",
    "PYTHON*",
    "NODE_*",
    "PERL*",
    "RUBY*",
    "*OPT",
    "*OPTS",
    "*OPTIONS",  # TAR_OPTIONS, GREP_OPTIONS, JAVA_TOOL_OPTIONS, NODE_OPTIONS...
    "*LIB",
    "JAVA_*",
    "JDK_*",
    "CLASSPATH",
    "LUA_*",
    "SSH_*",
    "GNUPGHOME",
    "*CONF*",  # OPENSSL_CONF, KUBECONFIG, AWS_CONFIG_FILE, NPM_CONFIG_*, GIT_CONFIG_*...
    "OPENSSL_*",
    "DYLD_*",
    "*WRAPPER",
    "*RC",
    "TERMINFO*",
)
_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


def is_safe(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in SAFE)


def runs_code(name: str) -> bool:
    """Whether setting `name` can make a later command run a program (see RUNS_CODE); a name
    that is not a shell identifier (`BASH_FUNC_ls%%` through `env`) always can."""
    if not _NAME.match(name):
        return True
    upper = name.upper()
    return not is_safe(name) and any(fnmatch.fnmatchcase(upper, p) for p in RUNS_CODE)


_SUBSCRIPTED = re.compile(r"\A([^\[]*)\[(.*)\]?\Z", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `x = 1`, `x += 1`, `x <<= 1`, `a[i] = 1`, `x++`, `--x` (not `==`, `<=`, `!=`): see arith_sets
_ARITH_START = re.compile(r"[A-Za-z_]\w*|\+\+|--")  # a word, or `++`/`--`
_SETS_AFTER = re.compile(r"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_STEPS_AFTER = re.compile(r"\s*(?:\+\+|--)")
_STEPPED = re.compile(r"(?:\+\+|--)\s*([A-Za-z_]\w*)")
_RUNS_IN_ARITH = re.compile(r"\$\(|`|\$\{?[1-9@*]")
# `declare`-family and name-taking builtins whose operands bash evaluates as names/assignments
NAME_ARGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # builtin -> (options that take a value, of those the ones whose value is a name)
    "read": (frozenset(["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"]), frozenset({"-a"})),
    "mapfile": (frozenset(["-d", "-n", "-O", "-s", "-u", "-C", "-c"]), frozenset()),
    "readarray": (frozenset(["-d", "-n", "-O", "-s", "-u", "-C", "-c"]), frozenset()),
    "printf": (frozenset({"-v"}), frozenset({"-v"})),
    "getopts": (frozenset(), frozenset()),
    "wait": (frozenset({"-p"}), frozenset({"-p"})),
    "unset": (frozenset(), frozenset()),
    "test": (frozenset({"-v", "-R"}), frozenset({"-v", "-R"})),
    "[": (frozenset({"-v", "-R"}), frozenset({"-v", "-R"})),
}


@dataclass
class VarFlow:
    """Every variable a line sets and every arithmetic evaluation it does, for two findings:

    - a name outside `SAFE` set anywhere keeps allow rules off (`uncovered`); a `RUNS_CODE` name,
      a quoted array subscript holding an expansion (`printf -v 'a[$(cmd)]'`: bash evaluates
      subscripts and runs the substitution) or a quoted assignment `declare` re-parses is
      unresolved;
    - bash evaluates a variable's value as arithmetic where `(( x ))`, `$(( x ))`, `let`,
      `[[ x -eq y ]]`, `${!x}`, `${a[x]}`, `${s:x}` or `declare -i x` refer to it, and a subscript
      in that value runs its substitution (`x='a[$(cmd)]'; (( x ))`). So a variable the same
      line sets to anything but a literal without `$`/backquote (read, mapfile, a substitution,
      a quoted `$(...)`), referred to in arithmetic, is unresolved, as is arithmetic on a
      command's output or on positional parameters. Variables the line does not set come from
      the environment vtcode built for the command, which the model does not choose.
    """

    unresolved: list[tuple[str, str]] = field(default_factory=list)  # (part, why)
    uncovered: list[tuple[str, str]] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)  # set in the line to an unknown value
    arith: dict[str, str] = field(default_factory=dict)  # name -> the part that evaluates it
    integer: set[str] = field(default_factory=set)  # `declare -i`: assignments are arithmetic
    values: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value text, part)

    def assign(
        self,
        name: str,
        value: str | None,
        part: str,
        *,
        code_value: bool = False,
        text: str | None = None,
    ) -> None:
        """`name` (maybe `a[sub]`) is set to `value` (None: unknown, `text` as written) by
        `part`; `code_value`: the value is itself re-read as shell code (a quoted `declare`
        operand)."""
        base = self.name(name, part)
        self.values.append((base, value if value is not None else text or "", part))
        if runs_code(base):
            self.unresolved.append(
                (part, f"setting `{base}` can make a later command run a program")
            )
        elif not is_safe(base):
            self.uncovered.append(
                (part, f"sets `{base}` (allow rules cover only locale, colour and git identity)")
            )
        if value is None or "$" in value or "`" in value:
            self.unknown.add(base)
            if code_value and value is not None:
                self.unresolved.append((part, "a quoted assignment bash re-reads and expands"))

    def operand(self, value: str | None, part: str, *, assigned: bool = False) -> None:
        """An operand a builtin treats as a variable name (`read NAME`, `test -v NAME`)."""
        if value is None:
            self.unresolved.append((part, "a variable name only known at run time"))
        elif assigned:
            self.assign(value, None, part)
        else:
            self.name(value, part)

    def name(self, name: str, part: str) -> str:
        """The variable a (possibly subscripted) name operand refers to; a subscript bash would
        evaluate with an expansion in it is unresolved."""
        m = _SUBSCRIPTED.match(name)
        if not m:
            return name
        if _RUNS_IN_ARITH.search(m.group(2)):
            self.unresolved.append(
                (part, "an array subscript bash evaluates (it can run commands)")
            )
        for ident in _IDENT.findall(m.group(2)):
            self.arith.setdefault(ident, part)
        return m.group(1)

    def arithmetic(self, text: str, part: str) -> None:
        if _RUNS_IN_ARITH.search(text):
            self.unresolved.append(
                (part, "arithmetic on a command's output or on parameters (it can run commands)")
            )
        for ident in _IDENT.findall(text):
            self.arith.setdefault(ident, part)
        for name in arith_sets(text):
            self.assign(name, "0", part)  # an integer: arithmetic-safe

    def finish(self) -> None:
        for name, text, part in self.values:  # `declare -i n; n=x` evaluates x
            if name in self.integer:
                self.arithmetic(text, part)
        for name in sorted(self.unknown & self.arith.keys()):
            self.unresolved.append(
                (
                    self.arith[name],
                    f"arithmetic on `{name}`, set in this line to a value only known when it "
                    "runs (an array subscript in it runs commands)",
                )
            )


def arith_sets(text: str) -> list[str]:
    r"""The names arithmetic `text` assigns, in order, as `finditer` of this regex finds them:
    `([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)` (group 1),
    `|(?:\+\+|--)\s*([A-Za-z_]\w*)` (group 2), `|([A-Za-z_]\w*)\s*(?:\+\+|--)` (group 3),
    but in linear time: the regex retried each letter of a word (`$((aaa...))`, `1a1a...`:
    quadratic) and rescanned to the same `]` from every `[` (`a[a[a[...`). Whether a name matches
    depends only on the text after its word (or after the first `]` past it), so the first letter
    of a word decides for the word's later letters, and one look past a `]` serves every `[`
    before it."""
    names: list[str] = []
    close = -2  # text.find("]", k) for the last k asked (k only grows): -2 unknown, -1 none
    after_close = -1  # where the assignment after text[close] ends, -1 none
    i = 0
    while (found := _ARITH_START.search(text, i)) is not None:
        start = found.start()
        if found.group() in ("++", "--"):  # `++x`, else on by one character as the regex goes
            stepped = _STEPPED.match(text, start)
            if stepped:
                names.append(stepped.group(1))
            i = stepped.end() if stepped else start + 1
            continue
        end = found.end()
        if text.startswith("[", end):  # `a[i] = 1`
            if close != -1 and close <= end:
                close = text.find("]", end + 1)
                sets = _SETS_AFTER.match(text, close + 1) if close >= 0 else None
                after_close = sets.end() if sets else -1
            match_end = after_close if close >= 0 else -1
        else:
            sets = _SETS_AFTER.match(text, end) or _STEPS_AFTER.match(text, end)
            match_end = sets.end() if sets else -1
        if match_end >= 0:
            names.append(text[start:end])
            i = match_end
        else:
            i = end  # the word's later letters see the same text after it and fail the same way
    return names


def screen_builtin(name: str, values: Values, flow: VarFlow, part: str) -> Findings:
    """Builtins that set or evaluate names (recorded in `flow`), or change what a command name
    runs (`hash -p`, `enable`, `alias`), and `cd`, which moves every later path."""
    out = Findings()
    if name in NAME_ARGS:
        takes_value, names_value = NAME_ARGS[name]
        operands: list[str | None] = []
        i = 0
        while i < len(values):
            v = values[i]
            if v is not None and v[:2] in takes_value and len(v) > 2:  # `printf -vNAME`
                v, values = v[:2], [*values[:i], v[:2], v[2:], *values[i + 1 :]]
            if v in takes_value and i + 1 < len(values):
                if v in names_value:
                    flow.operand(values[i + 1], part, assigned=name not in ("test", "["))
                elif v == "-C" and name in ("mapfile", "readarray"):
                    out.runs(f"`{name} -C` evaluates a callback")
                i += 2
                continue
            if v is None or not v.startswith("-") or len(v) == 1:
                operands.append(v)
            i += 1
        if name in ("read", "unset"):
            for v in operands:
                flow.operand(v, part, assigned=name == "read")
        elif name in ("mapfile", "readarray") and operands:
            flow.operand(operands[-1], part, assigned=True)
        elif name == "getopts" and len(operands) > 1:
            flow.operand(operands[1], part, assigned=True)
    elif name == "let":
        for v in values:
            if v is None:
                out.runs("`let` on an expression only known at run time")
            else:
                flow.arithmetic(v, part)
    elif name == "hash" and any(v is not None and v.startswith("-") and "p" in v for v in values):
        out.runs("`hash -p` makes a command name run another program")
    elif name == "enable" and values:
        out.runs("`enable` loads or switches off builtins")
    elif name == "alias" and any(v is None or "=" in v for v in values):
        out.runs("an alias makes a command name run other code")
    elif name in ("cd", "pushd"):
        target = next((v for v in values if v is None or not v.startswith("-")), "~")
        if target is None or values[-1:] == ["-"]:
            out.runs(f"`{name}` to a folder only known at run time")
        else:
            out.confined.append((target, f"`{name}` leaves the workspace"))
            out.moves.append(target)
    return out

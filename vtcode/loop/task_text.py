"""What the task's own words say, for the compact harness: whether it only asks a question,
which test command it names, which commands it says to run, which new files it asks for, and
which files it says not to change.

Each rule reads the user's task text, never the model's output, and each errs on the side of
doing nothing new: a task that is not plainly a question is treated as work, only known test
runners count as tests, and only names the task puts after "do not change" are protected.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "TEST_RUNNER",
    "asks_for_a_change",
    "asks_only_a_question",
    "commands_to_observe",
    "files_to_create",
    "forbidden_commands",
    "forbidden_paths",
    "is_forbidden",
    "named_test_commands",
    "stated_outputs",
]

_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+|\n+")
_WORK_VERBS = (
    "add|build|change|commit|convert|correct|create|delete|edit|extend|find|fix|generate|"
    "implement|install|make|modify|move|put|refactor|remove|rename|replace|run|save|set|update|"
    "write"
)
# Where an order starts: a sentence, or a clause after "and", "then", "," or ";", maybe asked
# politely ("could you please ...").
_CLAUSE_LEAD = (
    r"(?:^|\band\s+|\bthen\s+|[,;]\s*)(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?"
)
_ORDER = re.compile(_CLAUSE_LEAD + rf"(?:{_WORK_VERBS})\b", re.IGNORECASE)  # led by a work verb
# The verbs of an order whose work is a change to the folder's files: not "run", "find",
# "build", "install" or "commit" (their work may be a command's output, a fact, or outside the
# folder), nor "make sure" or "add up" (a check, a sum).
_CHANGE = re.compile(
    _CLAUSE_LEAD
    + r"(?:change|convert|correct|create|delete|edit|extend|fix|generate|implement|modify|move|"
    r"put|refactor|remove|rename|replace|save|set|update|write|add(?!\s+up\b)|make(?!\s+sure\b)|"
    r"append|bump|decrease|disable|drop|enable|increase|insert|introduce|lower|raise|reformat|"
    r"rewrite|sort|split|upgrade)\b",
    re.IGNORECASE,
)
# A change asked as a wish or a need rather than an order: "I'd like the `Reading` class to be
# called ...", "tally.py needs a `--min N` option", "stats.py gets a `median` function", "Can
# you get it working again?". Not "I want a summary of ..." or "I want you to explain ...".
_WISH = re.compile(
    r"\b(?:i'?d\s+like|i\s+would\s+like|i\s+want|we\s+want)\s+(?:the|a|an|this|that|it|`)"
    r"[^.?!;\n]{0,80}?\bto\s+(?:be|show|print|have|accept|return|support|use|handle|work|take|"
    r"read|write|include|output|ignore|skip|count|list|run)\b"
    r"|\b(?:needs?|gets?)\s+(?:a|an)\s+(?:new\s+)?`?[\w\-]"
    r"|\bget\s+(?:it|this|that|them)\s+(?:working|to\s+work|running)\b",
    re.IGNORECASE,
)
_ASK = re.compile(r"(?:please\s+)?(?:explain|describe|summari[sz]e|tell me|show me)\b", re.I)

_SPAN = re.compile(r"`([^`\n]{2,200})`")
TEST_RUNNER = re.compile(
    r"^(?:python3?\s+-m\s+(?:unittest|pytest)\b|pytest\b|py\.test\b|"
    r"(?:npm|pnpm|yarn)\s+(?:run\s+)?test\b|go\s+test\b|cargo\s+test\b|make\s+(?:test|check)\b)"
)
_NEGATED = re.compile(r"\b(?:not|never|n't|without)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
# A span that starts a program: an interpreter or build tool, or a script of the folder, maybe
# after variable assignments (`BUILD_MODE=release python3 build.py`). `x = 1`, `to_roman(4)` and
# `--shout` are not commands.
_COMMAND = re.compile(
    r"^(?:[A-Za-z_]\w{0,40}=\S{0,100}\s+){0,4}"
    r"(?:\./[\w.\-/]{1,100}|(?:python3?|bash|sh|node|npm|pnpm|yarn|npx|go|cargo|make|pytest|"
    r"ruby|perl|php|deno|bun|dotnet|mvn|gradle)|[\w\-]{1,60}\.(?:py|sh|js|rb|pl))(?:\s|$)"
)
# The task orders the span run ("Run `x`", "by running `x`", "Run them with `x`") or says it
# fails now ("`x` fails with an import error").
_RUN_ORDER = re.compile(r"\b(?:run|running|execute|executing)\b", re.IGNORECASE)
_FAILS_NOW = re.compile(r"\s*(?:fails?|failed|is\s+failing|crashes|errors\s+out)\b", re.I)
# The same written without backticks, as users do: a test runner in parentheses, and a
# sentence that opens with an interpreter and a script, then says it fails now.
_BARE_TESTS = re.compile(
    r"\(((?:python3?\s+-m\s+(?:unittest|pytest)|pytest|(?:npm|pnpm|yarn)\s+(?:run\s+)?test|"
    r"go\s+test|cargo\s+test|make\s+(?:test|check))(?:\s+[\w./:\-]+){0,4})\)"
)
_BARE_FAILING = re.compile(
    r"((?:python3?|node|bash|sh|ruby|perl|php)\s+[\w\-./]{1,100}\.(?:py|js|mjs|cjs|sh|rb|pl|php)"
    r"(?:\s+[\w\-./=]{1,100}){0,4}?)(?=\s+(?:fails?|failed|is\s+failing|crashes|crashed|"
    r"errors\s+out|throws|raises|blows\s+up|dies|is\s+broken|breaks)\b)"
)
# ... but not later or on a condition ("Afterwards `x` must work", "if it fails, run `y`").
_DEFERRED = re.compile(
    r"\b(?:after|afterwards?|then|once|when|whenever|if|unless|until|finally|later|still)\b",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"(?:[.!?;]\s|\n)")
# "`cmd` prints X": what the task says a command's output is.
_PRINTS = re.compile(
    r"\s{0,3}(?:(?:should|must|will)\s+)?(?:prints?|outputs?|writes out)\s+"
    r"(?:`(?P<quoted>[^`\n]{1,200})`|(?P<text>[^\n]{1,200}))"
)
# "... should print exactly what it prints today": the output as it is now, not words to match.
_SAME_AS_NOW = re.compile(
    r"(?:exactly\s+)?(?:what\b|the\s+same\b|as\s+(?:before|now|today)\b|its\s+current\b)",
    re.IGNORECASE,
)
_OUTPUT_END = re.compile(r"\)|\s+\(|;|,\s+because\b|(?<=[.!?])\s|\s+(?:here|now)\b")
# ... said of the command as an example, not asked of it ("Make `todo.py list` print `N. [x]
# text`" describes a format, not an output): the span opens its clause or follows "(" or ":".
_EXAMPLE_LEAD = re.compile(r"(?:^|[(:]|e\.g\.,?|example,?)\s*$", re.IGNORECASE)
_MAX_SPANS = 40
# A new file the task asks the agent to write: "into a new file answer.txt", "Create a file
# named hello.txt", "Create a Python script fizzbuzz.py", "Write a bash script count_lines.sh".
# A name needs an extension ("Create a list" names nothing). Not what a command is to produce
# ("The build must produce out/version.txt"): told that file was missing, qwen0.5b wrote a
# made-up one (recover-failing-command, 2026-12-07).
_NEW_FILE = re.compile(
    r"\b(?:(?:into|to|in|as)\s+a\s+new\s+(?:file|module|script)(?:\s+(?:named|called))?"
    r"|create\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?:(?:[\w\-]+\s+){0,2}(?:file|script|module|"
    r"program)\s+(?:named\s+|called\s+)?)?"
    r"|write\s+(?:a|an)\s+(?:[\w\-]+\s+){0,2}(?:file|script|module|program)\s+(?:named\s+|called\s+)?)"
    r"\s*`?(?P<name>[\w\-]{1,100}(?:/[\w\-]{1,100}){0,8}\.\w{1,10})\b`?",
    re.IGNORECASE,
)
# ... and as users write it: "Write just the version number to answer.txt", "Put the file at
# .github/CODEOWNERS", "Write ext_count.sh, a bash script": a name with an extension or a
# folder, after "write/save/put/store ... to/into/in/at", or right after "write/create". A
# name the folder already holds is the work's file, not a new one (`files_to_create`).
_WRITE_TO = re.compile(
    r"\b(?:(?:write|save|put|store)\b[^.;\n`]{0,60}?\b(?:to|into|in|at)|write|create)\s+"
    r"(?:the\s+(?:new\s+)?file\s+)?`?(?P<name>(?!(?:e\.g|i\.e)\b)\.?[\w\-]{1,100}"
    r"(?:/\.?[\w\-]{1,100}){0,8}\.\w{1,10}|\.?[\w\-]{1,100}(?:/\.?[\w\-]{1,100}){1,8})"
    r"(?=`|[\s,;:)]|\.(?:\s|$)|$)",
    re.IGNORECASE,
)

# "Do not change test_sum.py", "do not edit build.py, VERSION or the files in src/": the clause
# runs to the sentence's end (a "." before a space or the end; a file name's dot is no end).
_KEEP = re.compile(
    r"\b(?:do\s+not|don't|never|must\s+not|should\s+not)\s+"
    r"(?:change|modify|edit|touch|alter|rewrite|overwrite)\b(?P<clause>.*?)(?=\.\s|\.$|[;!?\n]|$)",
    re.IGNORECASE,
)
# The same said the other way round: "leave test.js alone", "keep `config.ini` as it is",
# "test.js is fine as it is", "VERSION must stay unchanged", "data.csv must not be edited".
_LEAVE = re.compile(
    r"\b(?:leave|keep)\s+(?P<clause>[^;]{1,200}?)\s+(?:alone|untouched|unchanged|intact|"
    r"as\s+(?:it\s+is|they\s+are|is))\b",
    re.IGNORECASE,
)
_KEPT = re.compile(
    r"^(?:(?:but|and|so)\s+)?(?P<clause>[^;,()]{1,200}?)\s+(?:(?:is|are)\s+(?:fine|correct|right)"
    r"\s+as\s+(?:it\s+is|they\s+are)|(?:must|should)\s+(?:stay|remain)\s+(?:unchanged|"
    r"untouched|as\s+(?:it\s+is|they\s+are))|(?:must|should)\s+not\s+be\s+(?:changed|edited|"
    r"modified|touched))\b",
    re.IGNORECASE,
)
_KEEP_PATTERNS = (_KEEP, _LEAVE, _KEPT)
_PRONOUN = re.compile(
    r"^\s*(?:it|them|this\s+file|that\s+file|these\s+files|those\s+files|"
    r"(?:its|their)\s+(?:files|contents?))\s*$",
    re.IGNORECASE,
)
_PATH_TOKEN = re.compile(r"`?([\w\-]*[\w\-/]*\.?[\w\-]+/?)`?")
# The clause must be a list of names, each maybe led by "the files in" ("do not change the
# signature of f in a.py" protects nothing: a.py is what the task works on).
_ITEM = re.compile(
    r"\s*(?:(?:,\s*)?(?:and|or)\s+|,\s*)?(?:(?:the|any)\s+)?(?:(?:files?|folder|directory|"
    r"contents?)\s+(?:in|of|under)\s+)?(?:`(?P<quoted>[^`\n]+)`|(?P<bare>[\w.\-]+(?:/[\w.\-]*)*))",
    re.IGNORECASE,
)


def asks_only_a_question(task: str) -> bool:
    """The task is a question and gives no order: it ends with "?" or starts by asking
    ("Explain ...", "Describe ..."), and no sentence starts with a verb that asks for work
    ("Fix ...", "Write ... into x.txt") nor has a clause that does ("..., then fix it")."""
    return _only_a_question(task, _sentences(task))


def asks_for_a_change(task: str) -> bool:
    """The task orders a change to files: a sentence or clause led by a verb whose work is a
    change ("Rename ...", "Fix ...", "..., and write the total into answer.txt"), and it is not
    only a question. "Run the tests and tell me which fail" asks for none: its answer is text."""
    sentences = _sentences(task)
    if _only_a_question(task, sentences):
        return False
    return any(_CHANGE.search(s) or _WISH.search(s) for s in sentences)


def _sentences(task: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(task) if s.strip()]


def _only_a_question(task: str, sentences: list[str]) -> bool:
    if not sentences or not (task.rstrip().endswith("?") or _ASK.match(sentences[0])):
        return False
    return not any(_ORDER.search(s) or _WISH.search(s) for s in sentences)


def named_test_commands(task: str) -> list[str]:
    """The test commands in backticks in `task`, or in parentheses without them ("The tests
    should keep passing (python3 -m unittest test_stats)"), in order, each once, at most two;
    none the task forbids anywhere ("do not run `pytest`")."""
    found: list[str] = []
    forbidden = forbidden_commands(task)
    bare = [
        m for m in _BARE_TESTS.finditer(task)
        if not _NEGATED.search(task[max(0, m.start() - 40) : m.start()])
    ]  # fmt: skip
    for m in sorted([*_SPAN.finditer(task), *bare], key=lambda m: m.start()):
        command = m.group(1).strip()
        if TEST_RUNNER.match(command) and command not in forbidden and command not in found:
            found.append(command)
    return found[:2]


def forbidden_commands(task: str) -> set[str]:
    """The spans in backticks the task says not to run ("do not run `make deploy`", "never
    `git push`"): wherever else the task names them, the harness never runs them."""
    return {
        m.group(1).strip()
        for n, m in enumerate(_SPAN.finditer(task))
        if n < _MAX_SPANS and _NEGATED.search(task[max(0, m.start() - 40) : m.start()])
    }


def commands_to_observe(task: str) -> list[str]:
    """The commands in backticks the task orders run now, or says fail now, in order, each
    once, at most two: what a person runs first to see the problem ("Run `python3 job.py`",
    "`python3 app.py` fails with an import error", "Fix it so that `python3 -m unittest t`
    passes"). None the task forbids, defers or makes conditional ("do not run `make deploy`",
    "Afterwards `python3 main.py` must still work", "if it fails, run `git reset`")."""
    found: list[str] = []
    forbidden = forbidden_commands(task)
    for n, m in enumerate(_SPAN.finditer(task)):
        command = m.group(1).strip()
        if n >= _MAX_SPANS or len(found) == 2:
            break
        if command in found or command in forbidden or not _COMMAND.match(command):
            continue
        clause = _clause_now(task, m.start())
        if clause is None:
            continue
        ordered = _RUN_ORDER.search(clause) is not None
        if ordered or _FAILS_NOW.match(task, m.end()) or TEST_RUNNER.match(command):
            found.append(command)
    for sentence in _sentences(task):  # "python3 main.py crashes.", written without backticks
        bare = _BARE_FAILING.match(sentence)
        command = bare.group(1) if bare else None
        if command and len(found) < 2 and command not in found and command not in forbidden:
            found.append(command)
    return found


def _clause_now(task: str, at: int) -> str | None:
    """The clause's text before position `at`, or None when what follows is negated ("do not
    run `x`"), deferred or conditional ("Afterwards `x` must work", "if it fails, run `x`")."""
    before = task[max(0, at - 300) : at]
    starts = [c.end() for c in _CLAUSE_START.finditer(before)]
    clause = before[starts[-1] :] if starts else before
    if _NEGATED.search(before[-40:]) or _DEFERRED.search(clause):
        return None
    return clause


def stated_outputs(task: str) -> list[tuple[str, str]]:
    """(command, what it prints) for each command in backticks the task says prints something
    ("`python3 greet.py Ann --shout` prints HELLO, ANN!", "Example: `bash count_lines.sh
    notes` prints 7 here, because ..."), in order, at most two; none the task forbids, defers
    or makes conditional. What it prints runs to the clause's end (a ")", ";", ", because",
    a sentence's end); a later check passes on any output whose words begin it."""
    found: list[tuple[str, str]] = []
    forbidden = forbidden_commands(task)
    for n, m in enumerate(_SPAN.finditer(task)):
        if n >= _MAX_SPANS or len(found) == 2:
            break
        command = m.group(1).strip()
        said = _PRINTS.match(task, m.end())
        if said is None or not _COMMAND.match(command) or any(c == command for c, _ in found):
            continue
        clause = _clause_now(task, m.start())
        if clause is None or not _EXAMPLE_LEAD.search(clause) or command in forbidden:
            continue
        expected = said.group("quoted") or _OUTPUT_END.split(said.group("text"), maxsplit=1)[0]
        expected = expected.strip().rstrip(".").strip("\"'")
        if expected and not _SAME_AS_NOW.match(expected):
            found.append((command, expected))
    return found


def files_to_create(task: str, workspace: Path) -> list[str]:
    """The new files the task asks for that `workspace` does not hold yet, in order, each once
    (at most eight): a run that ends without them has not done the task ("write the code into
    a new file answer.txt", answered with the code as text: qwen0.5b, log-needle, 2026-12-06).
    None the task says not to create."""
    found: list[str] = []
    matches = sorted(
        [*_NEW_FILE.finditer(task), *_WRITE_TO.finditer(task)], key=lambda m: m.start()
    )
    for m in matches:
        name = m.group("name")
        if _NEGATED.search(task[max(0, m.start() - 40) : m.start()]) or name in found:
            continue
        if (
            ".." in name.split("/")
            or (workspace / name).exists()
            or (workspace / name).is_symlink()
        ):
            continue
        found.append(name)
        if len(found) == 8:
            break
    return found


def forbidden_paths(task: str, workspace: Path) -> set[str]:
    """The workspace paths the task says not to change: names after "do not change" (and
    edit, modify, touch, ...), "leave ... alone" or "keep ... as it is", or before "is fine as
    it is" or "must stay unchanged", that are a file or folder there (`VERSION`,
    `test_sum.py`, `src/`); a folder as `src/`, covering what is in it. "it", "them" or "its
    files" is the name before it in the same sentence ("expenses.txt is real data, so please
    don't edit it"). Words that are no path ("any other line", "the tests") are not there, so
    they protect nothing."""
    found: set[str] = set()
    for sentence in _sentences(task):
        for pattern in _KEEP_PATTERNS:
            for m in pattern.finditer(sentence):
                clause = m.group("clause")
                if _PRONOUN.match(clause):
                    names = _named_before(sentence[: m.start("clause")], workspace)
                else:
                    names = _names(clause)
                paths = [
                    (n, workspace / n) for n in names if not n.startswith("-") and ".." not in n
                ]
                if not names or not all(p.exists() for _, p in paths) or len(paths) != len(names):
                    continue  # not a plain list of the workspace's paths: nothing is protected
                found.update(n.rstrip("/") + "/" if p.is_dir() else n for n, p in paths)
    return found


def _named_before(text: str, workspace: Path) -> list[str]:
    """The last name in `text` that is a path of the workspace (what "it" stands for)."""
    for token in reversed(_PATH_TOKEN.findall(text)):
        name = token.rstrip(".,:")
        if ".." not in name and not name.startswith("/") and (workspace / name).exists():
            return [name]
    return []


def _names(clause: str) -> list[str]:
    """The names of a clause that is only a list of names, else []."""
    names: list[str] = []
    at = 0
    while at < len(clause.rstrip()):
        m = _ITEM.match(clause, at)
        if m is None or m.end() == at:
            return []
        names.append((m.group("quoted") or m.group("bare")).strip())
        at = m.end()
    return names


def is_forbidden(rel: str, forbidden: set[str]) -> bool:
    """`rel` (normalised, relative) is a protected file or inside a protected folder."""
    return rel in forbidden or any(f.endswith("/") and rel.startswith(f) for f in forbidden)

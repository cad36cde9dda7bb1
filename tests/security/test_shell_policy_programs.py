"""Issue 23.4, the other programs an allow rule commonly names: `exec_command(sed *)` and friends
cover the program, not the command it can be told to run nor a file it writes outside.

Rows marked as really running were run by the real program first (a `pwned` file appears); the
rest are read from each program's manual (rg is not installed here).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vtcode.tools.permissions import Decision, PermissionPolicy

DENY_RM = "exec_command(rm *)"

# (line, runs here): each makes the named program run another program
ESCAPES = [
    ("find . -name seed -exec touch pwned ';'", True),
    ("find . -name seed -execdir touch pwned ';'", True),
    ("find . -name nothing -delete", False),
    ("rg --pre ./decode foo", False),
    ("rg --pre=./decode foo", False),
    ("rg --hostname-bin=./h foo", False),
    ("tar -cf a.tar seed && tar -xf a.tar --to-command='touch pwned'", True),
    ("tar --to-comm='touch pwned' -xf a.tar", False),
    ("tar -I 'sh -c \"touch pwned\"' -cf b.tar seed", True),
    ("tar -cf c.tar --use-compress-program='sh -c \"touch pwned\"' seed", True),
    ("tar cIf 'sh -c \"touch pwned\"' d.tar seed", True),
    ("tar -cf e.tar --checkpoint=1 --checkpoint-action=exec='touch pwned' seed", True),
    ("tar -xf host:x.tar", False),
    ("tar -xPf x.tar", False),
    ("sed 's/.*/touch pwned/e' seed", True),
    ("sed -n '1e touch pwned' seed", True),
    ("sed -e p -e '1e touch pwned' seed", True),
    ("sed --expression='s/x/y/;e touch pwned' seed", True),
    ("sed -f script.sed seed", False),
    ("sed 's/[/]/x/e' seed", False),
    ("awk 'BEGIN { system(\"touch pwned\") }'", True),
    ('awk \'BEGIN { print "x" | "sh" }\'', False),
    ("awk 'BEGIN { \"touch pwned\" | getline }'", True),
    ("mawk 'BEGIN { system(\"touch pwned\") }'", True),
    ("awk -f prog.awk seed", False),
    ('awk \'BEGIN { print "}" > "pwned" }\'', True),
    ("awk -e 'BEGIN { system(\"touch pwned\") }'", False),
    ("awk --source='BEGIN { system(\"x\") }'", False),
    ("mawk -W exec prog.awk", False),
    ("awk -fprog.awk seed", False),
    ("tar --remove-files -cf a.tar seed", False),
    ("less -kkeys seed", False),
    ("bash --rcfile ./rc -ic true", False),
    ("sort --compress-program='touch pwned' seed", False),
    ("sort --compress-p=x seed", False),
    ("less '+!touch pwned' seed", False),
    ('sed "$SCRIPT" seed', False),
    ("find . $ARGS", False),
    ("ls | xargs git", False),
    ("cat seed | xargs sed", False),
]

# files written by an option: judged like a redirection (outside: write_file's verdict)
WRITES = [
    "sed -i s/a/b/ {outside}",
    "sed -ni p {outside}",
    "sed 'w {outside}' seed",
    "sed 's/a/b/w {outside}' seed",
    "tar -cf {outside} seed",
    "tar czf {outside} seed",
    "tar -xf a.tar -C {outside}",
    "tar --listed-incremental={outside} -cf a.tar seed",
    "sort -o {outside} seed",
    "sort --output={outside} seed",
    "tee {outside}",
    "tee -a {outside}",
    "find . -fprint {outside}",
    "find . -fprintf {outside} '%p'",
]

BENIGN = [
    "ls -la",
    "ls -R src",
    "cat seed",
    "cat -n seed",
    "grep -rn foo .",
    "grep -E '^[a-z]+$' seed",
    "rg -n foo",
    "rg --pre-glob '*.gz' foo",
    "sed -n 1,5p seed",
    "sed 's/foo/bar/g' seed",
    "sed -e 's|a|b|' -e '/^#/d' seed",
    "sed -i 's/a/b/' seed",
    "sed 's/[/]/x/' seed",
    "sed --sandbox 's/x/y/e' seed",
    "tar -tf a.tar",
    "tar -xzf a.tgz",
    "tar -czf out.tgz seed",
    "tar -xf a.tar -C sub",
    "awk '{ print $1 }' seed",
    "awk -F: '$3 > 100 { print $1 }' seed",
    "sort -u seed",
    "sort -o sorted.txt seed",
    "tee log.txt",
    "find . -name '*.py' -print",
    "find . -type f -newer seed",
]


def _name(line: str) -> str:
    return line.split()[0]


def check(ws: Path, line: str, **rules: list[str]) -> tuple[Decision, str]:
    verdict = PermissionPolicy(workspace=ws, **rules).check("exec_command", {"command": line})
    return verdict.decision, verdict.reason


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "seed").write_text("one line\n")
    return workspace


@pytest.mark.parametrize(("line", "runs_here"), ESCAPES)
def test_program_escapes_fall_outside_the_allow_rule(ws: Path, line: str, runs_here: bool) -> None:
    if runs_here:  # the row is real: the program did run the command
        assert shutil.which(_name(line)) is not None
        subprocess.run(["bash", "-c", line], cwd=ws, capture_output=True, timeout=30, check=False)
        assert (ws / "pwned").exists(), f"{line!r} did not run the command here"
    allow = [f"exec_command({_name(line)} *)", "exec_command(tar *)", "exec_command(ls *)"]
    if _name(line) == "bash":
        allow.append("exec_command(true *)")
    decision, reason = check(ws, line, allow=allow)
    assert decision is Decision.ASK, reason
    decision, reason = check(ws, line, allow=allow, deny=[DENY_RM])
    assert decision is Decision.DENY, reason
    assert "cannot be checked against deny rule" in reason


@pytest.mark.parametrize("line", WRITES)
def test_program_writes_outside_need_write_file_permission(ws: Path, line: str) -> None:
    outside = ws.parent / "outside.txt"
    command = line.format(outside=outside)
    allow = [f"exec_command({_name(line)} *)"]
    decision, reason = check(ws, command, allow=allow)
    assert decision is Decision.ASK, reason
    assert f"writes {outside} outside the workspace" in reason
    decision, reason = check(ws, command, allow=allow, deny=["write_file(**/outside.txt)"])
    assert decision is Decision.DENY, reason
    assert check(ws, command, allow=[*allow, "write_file(**/outside.txt)"])[0] is Decision.ALLOW
    assert check(ws, line.format(outside="inside.txt"), allow=allow)[0] is Decision.ALLOW


@pytest.mark.parametrize("line", BENIGN)
def test_everyday_use_stays_covered(ws: Path, line: str) -> None:
    decision, reason = check(ws, line, allow=[f"exec_command({_name(line)} *)"], deny=[DENY_RM])
    assert decision is Decision.ALLOW, reason

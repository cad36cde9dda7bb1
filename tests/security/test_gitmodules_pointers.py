"""The submodule pointers the sandbox makes read-only, read from a repository's `.gitmodules`.

The file is the repository's, so hostile: a name longer than the system allows stopped every
sandboxed command (ENAMETOOLONG from a lookup), and blank lines made the line pattern
quadratic. And git reads keys case-insensitively and strips quotes, so `PATH = "m"` names a
submodule as well as `path = m` does.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.hang_check import run_python
from vtcode.sandbox.mounts import policy_paths


def _workspace(tmp_path: Path, gitmodules: str) -> Path:
    ws = tmp_path / "ws"
    for name in ("plain", "upper", "quoted", "other"):
        (ws / name).mkdir(parents=True)
        (ws / name / ".git").write_text("gitdir: ../.git/modules/x\n")
    (ws / ".gitmodules").write_text(gitmodules)
    return ws


def test_each_submodule_git_reads_is_read_only(tmp_path: Path) -> None:
    ws = _workspace(
        tmp_path,
        '[submodule "a"]\n\tpath = plain\n[submodule "b"]\n\tPATH=upper  \n'
        '[submodule "c"]\n  path = "quoted"\n[submodule "d"]\n\turl = other\n',
    )
    _, readonly = policy_paths(ws, {})
    pointers = sorted(p.parent.name for p in readonly if p.name == ".git" and p.is_file())
    assert pointers == ["plain", "quoted", "upper"]


def test_a_hostile_gitmodules_is_read_in_one_pass_and_never_raises(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "\n" * 400_000 + "\tpath = " + "x" * 5000 + "\n\tpath = plain\n")
    code = (
        "import json, sys\nfrom pathlib import Path\n"
        "from vtcode.sandbox.mounts import policy_paths\n"
        "_, ro = policy_paths(Path(sys.argv[1]), {})\n"
        "print(json.dumps(sorted(p.parent.name for p in ro if p.name == '.git')))"
    )
    assert "plain" in json.loads(run_python(code, str(ws)).stdout)

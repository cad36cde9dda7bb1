"""Small outputs that must mean what they say (issue 26 item 9), each through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.exec_support import vtcode


def test_hooks_list_json_trust_matches_the_warning(tmp_path: Path) -> None:
    """An untrusted workspace's loosening key is warned about; --json said `"trusted": true`
    beside it because the workspace defines no hooks."""
    (tmp_path / "vtcode.toml").write_text('[sandbox]\nmode = "danger-full-access"\n')
    env = {"VTCODE_TRUST_WORKSPACE": ""}
    proc = vtcode(["hooks", "list", "--json"], tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "the workspace is not trusted" in proc.stderr
    data = json.loads(proc.stdout)
    assert (data["trusted"], data["config_trusted"], data["hooks_trusted"]) == (False, False, True)
    trusted = vtcode(["hooks", "list", "--json"], tmp_path, env={"VTCODE_TRUST_WORKSPACE": "1"})
    assert "not trusted" not in trusted.stderr
    assert json.loads(trusted.stdout)["trusted"] is True

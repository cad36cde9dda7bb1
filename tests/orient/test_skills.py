"""Skills (issue 24 item 6): SKILL.md folders listed in the system prompt a recording server on
127.0.0.1 receives, and by `vtcode skills list`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import canonical_snapshot, vtcode


def _skill(folder: Path, name: str, description: str, body: str = "Steps.\n") -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")


def test_skills_listed_in_the_prompt_and_by_the_cli(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    ws = tmp_path / "ws"
    home = ws / ".home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[agent]\nprovider = "local"\n\n[providers.local]\nkind = "openai"\n'
        f'base_url = "{sse_server.url}/v1"\nmodel = "m"\n'
    )
    _skill(ws / ".agents/skills/release", "release", '"Cut a release: tag, changelog"')
    _skill(home / "skills/review", "review", "Review a diff", body="SECRET-BODY\n")
    (ws / ".agents/skills/broken").mkdir()
    (ws / ".agents/skills/broken/SKILL.md").write_text("no front matter\n")
    outside = tmp_path / "outside"
    _skill(outside, "leak", "should not be listed")
    os.symlink(outside, ws / ".agents/skills/leak")
    sse_server.queue(ScriptedReply.sse_file("llamacpp_openai_text.sse"))
    run = vtcode(["exec", "-q", "--session-id", "s1", "hi"], ws)
    assert run.returncode == 0, run.stderr
    assert canonical_snapshot(ws, "s1") == snapshot_json  # the two skipped skills: warnings
    prompt = sse_server.requests[-1].json()["messages"][0]["content"]
    skills = prompt.split("# Skills\n", 1)[1]
    assert "- release: Cut a release: tag, changelog (.agents/skills/release/SKILL.md)" in skills
    assert "- review: Review a diff (" in skills and "SECRET-BODY" not in prompt
    assert "leak" not in prompt
    listed = vtcode(["skills", "list", "--json"], ws)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert [s["name"] for s in data["skills"]] == ["release", "review"]
    assert any("broken" in w for w in data["warnings"])
    assert any("leak" in w and "symlink" in w for w in data["warnings"])


def test_the_list_keeps_to_its_budget() -> None:
    from vtcode.orient.skills import Skill, Skills

    many = Skills(tuple(Skill(f"s{i}", "d" * 50, Path("x"), "x", "project") for i in range(100)))
    section = many.section(1024)
    assert section is not None and len(section.encode()) <= 1024 + 64
    assert section.endswith("more skill(s) not listed")

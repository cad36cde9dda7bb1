"""`vtcode validate --output-format github|gitlab`: CI annotations from the same report, through
the real CLI, with hostile content (escape sequences, newlines, `%`, `:` and `,` in the path)
kept inert and escaped for the format."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import RunVtcode

GOOD = '{"type":"thread.started","thread_id":"t"}\n'
BAD_ENUM = (
    '{"type":"thread.started","thread_id":"t"}\n'
    '{"type":"turn.started"}\n'
    '{"type":"turn.completed","usage":{"input_tokens":-1,"cached_input_tokens":0,'
    '"cache_creation_tokens":0,"output_tokens":0}}\n'
    '{"type":"thread.completed","thread_id":"t","session_id":"s","subtype":"wat\\u001b[2J%\\nx",'
    '"outcome_code":"x","usage":{"input_tokens":0,"cached_input_tokens":0,'
    '"cache_creation_tokens":0,"output_tokens":0},"num_turns":0}\n'
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_github_annotations_locate_each_problem_and_stay_inert(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    _write(tmp_path, "odd,name:1%.jsonl", BAD_ENUM)
    rc, out, err = run_vtcode(
        ["validate", "--profile", "vtcode", "--output-format", "github", "odd,name:1%.jsonl"]
    )
    assert rc == 1, err
    lines = out.splitlines()
    assert lines and all(re.match(r"^::(error|warning) file=", line) for line in lines)
    assert "\x1b" not in out  # nothing hostile reaches the CI log
    first = lines[0]
    assert "file=odd%2Cname%3A1%25.jsonl" in first  # property escaping
    assert ",line=3," in first and "title=vtcode validate " in first
    # an unknown enum string is a warning by default (an error under --strict), on its line
    [enum] = [line for line in lines if ",line=4," in line]
    assert enum.startswith("::warning file=odd%2Cname%3A1%25.jsonl,line=4,")
    assert "%25" in enum.split("::", 2)[2]  # the problem text is data: % escaped


def test_gitlab_code_quality_is_a_json_array_with_stable_fingerprints(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    _write(tmp_path, "bad.jsonl", BAD_ENUM)
    rc, out, err = run_vtcode(
        ["validate", "--profile", "vtcode", "--output-format", "gitlab", "bad.jsonl"]
    )
    assert rc == 1, err
    issues = json.loads(out)
    assert isinstance(issues, list) and issues
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("major", "minor")
        assert issue["location"]["path"] == "bad.jsonl"
        assert issue["location"]["lines"]["begin"] >= 1
        assert "\x1b" not in issue["description"]
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    rc2, out2, _ = run_vtcode(
        ["validate", "--profile", "vtcode", "--output-format", "gitlab", "bad.jsonl"]
    )
    assert rc2 == 1 and json.loads(out2) == issues  # the same findings, the same fingerprints


def test_a_valid_log_gives_no_annotations_and_exit_0(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    _write(tmp_path, "ok.jsonl", GOOD)
    rc, out, err = run_vtcode(
        ["validate", "--profile", "vtcode", "--partial", "--output-format", "github", "ok.jsonl"]
    )
    assert (rc, out) == (0, ""), err
    rc, out, err = run_vtcode(
        ["validate", "--profile", "vtcode", "--partial", "--output-format", "gitlab", "ok.jsonl"]
    )
    assert rc == 0 and json.loads(out) == [], err


def test_json_and_a_different_output_format_disagree(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    _write(tmp_path, "ok.jsonl", GOOD)
    rc, _, err = run_vtcode(
        ["validate", "--profile", "vtcode", "--json", "--output-format", "github", "ok.jsonl"]
    )
    assert rc == 2 and "disagree" in err and "Traceback" not in err
    rc, out, _ = run_vtcode(
        [
            "validate",
            "--profile",
            "vtcode",
            "--partial",
            "--json",
            "--output-format",
            "json",
            "ok.jsonl",
        ]
    )
    assert rc == 0 and json.loads(out)["valid"] is True

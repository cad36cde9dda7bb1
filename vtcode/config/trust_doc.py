"""docs/config-trust.md, made from the trust policy itself so the page cannot drift from the code.

`python -m vtcode.config.trust_doc` rewrites the page; a test compares the committed page with
`render()` (as the man pages are checked against their generator).
"""

from __future__ import annotations

import sys
from pathlib import Path

from vtcode.config.trust_policy import POLICY, TRUST_HINT, KeyClass

__all__ = ["DOC_PATH", "render"]

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "config-trust.md"

_CLASSES = {
    KeyClass.TIGHTENING: "the workspace value applies only in the stricter direction",
    KeyClass.NEUTRAL: "free to set: the workspace value applies",
    KeyClass.LOOSENING: "ignored: it would widen what commands and tools may do",
    KeyClass.EGRESS: "ignored: it sends data off the machine or writes it outside the workspace",
    KeyClass.EXECUTION: "names a program or changes how one runs",
}

_HEAD = f"""# Workspace config trust

vtcode runs unattended on repositories it did not write. A repository's own `vtcode.toml` (the
workspace layer) is therefore read in two ways:

- **Trusted workspace**: it applies as written, over your user config, exactly as before.
- **Untrusted workspace** (the default): it may only *tighten* your policy. Each key below has a
  class; a workspace value that would loosen your policy, send data elsewhere or run a program
  is ignored, with one warning on stderr naming the key, its `file:line:col` and how to trust
  the workspace. `vtcode config show --origin` marks every such key (`--json`: the `trust`
  object, and `"workspace": "ignored" | "merged" | "gated"` on the key's origin; `gated` is a
  hook or MCP server only the workspace defines, left to its own trust gate).

Your user config (`$VTCODE_HOME/config.toml`, else `~/.config/vtcode/config.toml`),
`--config FILE` and `-c KEY=VALUE` are your own choices and are never filtered.

## How to trust a workspace

- `vtcode hooks trust` records trust for this workspace (its canonical path) in `trust.json`
  beside your user config, outside the repository; `vtcode hooks untrust` forgets it. Hooks
  defined by the workspace are additionally pinned: they run only while their definitions match
  the fingerprint recorded by the last `vtcode hooks trust` (a changed hook needs trust again).
- `VTCODE_TRUST_WORKSPACE=1` (CI, cron) trusts the workspace for that run;
  `VTCODE_TRUST_WORKSPACE=0` refuses even recorded trust.
- MCP servers defined by the workspace start only with `VTCODE_TRUST_WORKSPACE=1`, as before.

Trust is recorded per path, not per content: once a workspace is trusted, a later change to
its `vtcode.toml` (a pulled commit) applies as written, hooks excepted. For a loop that pulls
commits it did not review, leave the workspace untrusted and put your policy in your user
config, or run `vtcode hooks untrust` first.

Nothing inside the repository is consulted to decide trust. The warning says: "{TRUST_HINT}".

## Rules

- **Lists** of rules that restrict (`permissions.deny`, `permissions.ask`,
  `shell_environment_policy.exclude`): the workspace entries are *added* to yours. A workspace
  list that leaves out some of your entries (`deny = []`) does not remove them: they are kept,
  with a warning.
- **Caps** (turns, tool calls, retries, timeouts, budget): the stricter (lower) value wins. A
  higher workspace value is ignored. Where 0 means "no limit", 0 counts as the highest value;
  an unset optional cap (`max_budget_usd`) is no cap, so any workspace value tightens it.
- **Switches and ordered choices** (`permissions.enabled`, `sandbox.require`,
  `sandbox.network`, `sandbox.mode`, `shell_environment_policy.inherit`, ...): the workspace
  value applies only when it is as strict as yours, in the order shown.
- **Records** (`store.max_events`, `store.retention.*`): the workspace may only keep more.
- **Hooks and MCP servers** (`execution`): a workspace definition never replaces or empties
  yours (`pre_tool_use = []` is ignored when you have `pre_tool_use` hooks). A hook or server
  only the workspace defines is kept for its own trust gate, which skips it until trusted.
- "Yours" is the value below the workspace layer: your user config over the built-in defaults.
  A workspace value of the wrong type is kept so that validation reports it with its location.

## Classes

| class | meaning |
|---|---|
"""


def render() -> str:
    """The whole page: the fixed text, then every key pattern with its class and rule."""
    lines = [_HEAD.rstrip("\n")]
    lines += [f"| `{cls}` | {text} |" for cls, text in _CLASSES.items()]
    lines += [
        "",
        "## Every key",
        "",
        "`NAME` stands for any name of a map (a subagent, an MCP server).",
        "",
        "| key | class | untrusted workspace value |",
        "|---|---|---|",
    ]
    for pattern, rule in POLICY.items():
        key = pattern.replace("*", "NAME")
        lines.append(f"| `{key}` | {rule.cls} | {rule.text} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    DOC_PATH.write_text(render(), encoding="utf-8")
    sys.stderr.write(f"wrote {DOC_PATH}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

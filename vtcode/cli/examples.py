"""Examples for every command, in one table: `--help` shows them and the man pages' EXAMPLES
section is made from them (scripts/gen_man.py), so the two cannot differ.

Each entry is the command path (as typed after `vtcode`) and a few command lines, each with
what it does. `tests/cli/test_help_shell.py` fails when a command has no examples.
"""

from __future__ import annotations

import rich_click as click

__all__ = ["EXAMPLES", "attach_examples", "examples_text"]

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "": [
        ('vtcode exec --script demo "fix the greeting"', "run one headless session"),
        ("vtcode sessions list", "the sessions of this workspace"),
        ("vtcode validate .vtcode/sessions/*/events.jsonl", "check event logs"),
    ],
    "exec": [
        ('vtcode exec "summarize the README"', "the answer on stdout, progress on stderr"),
        ('vtcode exec --json "fix the test" > run.jsonl', "raw events on stdout"),
        ('vtcode exec -o answer.txt --max-turns 8 "..."', "the answer to a file, or a header"),
        ('echo "fix it" | vtcode exec -', "the prompt from stdin"),
        ("vtcode exec resume --last", "continue the last session"),
        ('vtcode exec --no-instructions "..."', "without the AGENTS.md files"),
        (
            'vtcode exec --allowed-tools read_file --allowed-tools "exec_command(git *)" "..."',
            "only reads and git commands",
        ),
        ('vtcode exec --append-system-prompt "Answer in French." "..."', "add to the prompt"),
        ('vtcode exec -i screenshot.png -i error.jpg "what is wrong here?"', "attach images"),
        (
            'vtcode exec -c \'permissions.allow=["web_fetch(domain:docs.python.org)"]\' "..."',
            "let web_fetch read one host",
        ),
    ],
    "skills": [("vtcode skills list", "the skills a run here lists in its prompt")],
    "skills list": [("vtcode skills list --json", "names, descriptions and files as JSON")],
    "init": [
        ("vtcode init", "a starter AGENTS.md and vtcode.toml in this folder"),
        ("vtcode -C ../other init --force", "overwrite both in another workspace"),
    ],
    "eval": [
        ("vtcode eval evals/public", "every task once with vtcode (replay: each task's script)"),
        (
            "vtcode eval evals/public -k 3 --jobs 2 --provider openai --model qwen0.5b "
            "--agent vtcode --agent codex --agent claude --html eval.html",
            "three agents side by side on one model",
        ),
        ("vtcode eval --resume eval-20261205T130000Z-3f9a1c --json", "finish an eval, as JSON"),
        ("vtcode eval evals/public --min-pass-rate 0.5", "exit 1 below half the suite"),
    ],
    "chat": [
        ("vtcode chat", "an interactive session (also `vtcode` alone on a terminal)"),
        ("vtcode chat --provider anthropic --effort medium", "with a real model"),
    ],
    "validate": [
        ("vtcode validate events.jsonl", "schema and lifecycle rules, exit 1 when invalid"),
        ("vtcode validate --strict --json run.jsonl", "also flag what upstream tolerates"),
        ("vtcode exec --json ... | vtcode validate -", "validate a stream"),
        ("vtcode validate --output-format github run.jsonl", "annotations in a GitHub job"),
    ],
    "schema": [("vtcode schema list", "the published JSON Schemas")],
    "schema list": [("vtcode schema list --json", "names and $ids as JSON")],
    "schema show": [("vtcode schema show thread-event", "one schema, as shipped")],
    "schema export": [("vtcode schema export ./schemas", "write every schema to a folder")],
    "config": [("vtcode config show --origin", "the effective config and who set each key")],
    "config show": [
        ("vtcode config show", "the effective config as TOML"),
        ("vtcode config show --json", "as one JSON document"),
    ],
    "config get": [("vtcode config get agent.max_conversation_turns", "one key's effective value")],
    "config set": [
        ("vtcode config set agent.max_conversation_turns 20", "edit vtcode.toml in place")
    ],
    "config check": [("vtcode config check vtcode.toml", "located problems, exit 2 if any")],
    "config init": [("vtcode config init", "write a starter vtcode.toml")],
    "sessions": [("vtcode sessions list", "every session of this workspace")],
    "sessions list": [("vtcode sessions list --json", "with subtype, outcome, runs and turns")],
    "sessions show": [
        ("vtcode sessions show SESSION_ID", "manifest and timeline"),
        ("vtcode sessions show SESSION_ID --html report.html", "the HTML page"),
    ],
    "sessions export": [
        ("vtcode sessions export SESSION_ID --format atif -o run.atif.json", "another format")
    ],
    "sessions gc": [("vtcode sessions gc --dry-run", "what retention would delete")],
    "sessions repair": [("vtcode sessions repair SESSION_ID", "recover a crashed session's log")],
    "fsm": [("vtcode fsm --format mermaid", "the loop's state machine as a diagram")],
    "compact": [("vtcode compact SESSION_ID", "compact a session's transcript offline")],
    "steer": [('vtcode steer SESSION_ID "also update the docs"', "a follow-up for a running run")],
    "hooks": [("vtcode hooks list", "the lifecycle hooks and where each came from")],
    "hooks list": [("vtcode hooks list --json", "as JSON")],
    "hooks trust": [("vtcode hooks trust", "trust this workspace's own hooks and config")],
    "hooks untrust": [("vtcode hooks untrust", "revoke that trust")],
    "loop": [('vtcode loop run --id docs --steps 1 "keep docs in sync"', "one step of a loop")],
    "loop run": [
        ('vtcode loop run --id docs --steps 1 "keep docs in sync"', "seed (or resume) a loop"),
        ("vtcode loop run --id docs --steps 3 --max-cost 2", "three steps within a budget"),
    ],
    "loop status": [("vtcode loop status docs --json", "what a loop is doing now")],
    "loop list": [("vtcode loop list --json", "every loop of this workspace")],
    "loop reset": [("vtcode loop reset docs", "forget a loop's state")],
    "fleet": [
        ("vtcode fleet migrate", "create the fleet's tables (VTCODE_DATABASE_URL)"),
        ("vtcode fleet status", "every loop of the fleet"),
    ],
    "fleet migrate": [("vtcode fleet migrate --json", "create or upgrade the schema")],
    "fleet add": [
        (
            'vtcode fleet add docs --workspace /srv/repo --schedule "0 * * * *" --max-cost 5 '
            '"keep docs in sync"',
            "one step an hour, at most $5 in all",
        ),
        ('vtcode fleet add tidy --workspace /srv/repo --max-steps 20 "tidy up"', "back to back"),
    ],
    "fleet remove": [("vtcode fleet remove docs", "forget a loop (its sessions stay)")],
    "fleet pause": [("vtcode fleet pause docs", "take no new step of it")],
    "fleet resume": [("vtcode fleet resume docs", "take steps of it again")],
    "fleet run-now": [("vtcode fleet run-now docs", "queue one step now")],
    "fleet worker": [
        ("VTCODE_HOST_ID=web-1 vtcode fleet worker --concurrency 4", "a worker on this host"),
        ("vtcode fleet worker --queue gpu --stall-timeout 60", "serve one queue"),
    ],
    "fleet status": [("vtcode fleet status --json", 'per loop, as {"loops": [...]}')],
    "fleet sessions": [("vtcode fleet sessions --loop docs --json", "sessions from every host")],
    "fleet events": [
        ("vtcode fleet events SESSION_ID | vtcode validate -", "a stored session's raw JSONL")
    ],
    "orient": [("vtcode orient", "what the next session will be oriented with")],
    "handoff": [("vtcode handoff --json", "the handoff for the next session")],
    "notes": [('vtcode notes add "the API is frozen"', "append to the loop's notes")],
    "notes add": [('vtcode notes add "the API is frozen"', "append a note")],
    "notes list": [("vtcode notes list --json", "the notes")],
    "decisions": [('vtcode decisions add "use tomlkit"', "append a decision")],
    "decisions add": [('vtcode decisions add "use tomlkit"', "append a decision")],
    "decisions list": [("vtcode decisions list", "the decisions")],
    "agent": [("vtcode agent list", "the configured subagents")],
    "agent list": [("vtcode agent list --json", "as JSON")],
    "agent run": [('vtcode agent run reviewer "review the last commit"', "run a subagent")],
    "agent verify": [("vtcode agent verify", "have a read-only subagent verify a change")],
    "worktree": [("vtcode worktree list", "subagent worktrees")],
    "worktree list": [("vtcode worktree list --json", "as JSON")],
    "worktree merge": [("vtcode worktree merge NAME", "merge a subagent's worktree")],
    "worktree drop": [("vtcode worktree drop NAME", "delete a subagent's worktree")],
    "completion": [('eval "$(vtcode completion bash)"', "tab completion in bash")],
}


def examples_text(path: str) -> str | None:
    """The Examples block of a command (`path` as typed after `vtcode`), or None."""
    rows = EXAMPLES.get(path)
    if not rows:
        return None
    # One paragraph per example: the help renderer reflows lines inside a paragraph.
    return "Examples:\n\n" + "\n\n".join(f"$ {cmd}   # {what}" for cmd, what in rows)


def attach_examples(cmd: click.Command, path: str) -> click.Command:
    """Add the Examples block to `cmd`'s epilog, once (a command object is shared)."""
    text = examples_text(path)
    if text is not None and "Examples:" not in (cmd.epilog or ""):
        cmd.epilog = f"{cmd.epilog}\n\n{text}" if cmd.epilog else text
    return cmd

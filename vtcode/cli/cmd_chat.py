"""`vtcode chat`: an interactive session on a terminal (also `vtcode` alone, on a TTY)."""

from __future__ import annotations

import sys

import rich_click as click

from vtcode.cli.cmd_completion import complete_script, complete_session_id
from vtcode.cli.context import AppContext, check_overrides
from vtcode.cli.exec_opts import (
    instruction_overrides,
    no_instructions_option,
    prompt_options,
    prompt_overrides,
    provider_option,
    tool_limits,
    tool_options,
)
from vtcode.cli.ranges import key_option_type
from vtcode.cli.sandbox_opt import sandbox_option, sandbox_overrides

EPILOG = """Slash commands: /help /status /compact /plan [TEXT] /steer TEXT /effort LEVEL
/model NAME /new /exit (Tab completes them). !CMD runs CMD in the workspace yourself, under the
same permission rules and sandbox as the model's commands (a command_execution item in the log;
the model does not see it). Up/Down recall earlier lines from the history file
($VTCODE_HOME/chat_history, else ~/.local/state/vtcode/chat_history). Answers are shown as
markdown; a spinner with elapsed seconds says what is working. Ctrl-C cancels the running
turn (turn.failed "turn cancelled"); Ctrl-C
twice at the prompt leaves (outcome exit, exit 130); /exit or Ctrl-D ends the session (outcome
completed, exit 0; blocked, exit 1, when the last turn was blocked or aborted). Permission rules
that `ask` are asked on the terminal (y / n / a = always). Events go to the canonical session
log WORKSPACE/.vtcode/sessions/<id>/events.jsonl, as for exec. Needs a terminal: scripts and
pipes use `vtcode exec`, which exits 2 here."""


@click.command("chat", epilog=EPILOG)
@click.argument("prompt", nargs=-1)
@provider_option
@click.option("--model", help="Model id (overrides agent.model); /model switches later.")
@click.option(
    "--script",
    shell_complete=complete_script,
    help="Replay script: a path or a shipped script name.",
)
@click.option("--effort", type=click.Choice(["low", "medium", "high"]), help="Reasoning effort.")
@click.option(
    "--max-turns",
    type=key_option_type("automation.full_auto.max_turns"),
    help="Model requests per session.",
)
@click.option(
    "--max-budget-usd",
    type=key_option_type("agent.harness.max_budget_usd"),
    help="Dollar cap (error_max_budget_usd).",
)
@click.option("--session-id", help="Use this session id (letters, digits, _ . -).")
@click.option(
    "--resume",
    "resume",
    metavar="SESSION_ID",
    shell_complete=complete_session_id,
    help="Continue this session.",
)
@click.option(
    "--events",
    "events_path",
    metavar="PATH",
    help="Also export raw events to the file PATH (PATH/: one harness-*.jsonl per run in it).",
)
@click.option(
    "-c",
    "overrides",
    multiple=True,
    callback=check_overrides,
    metavar="KEY=VALUE",
    help="Override a config key for this session (same as the global -c).",
)
@sandbox_option
@no_instructions_option
@prompt_options
@tool_options
@click.pass_obj
def chat(
    app: AppContext,
    prompt: tuple[str, ...],
    provider: str | None,
    model: str | None,
    script: str | None,
    effort: str | None,
    max_turns: int | None,
    max_budget_usd: float | None,
    session_id: str | None,
    resume: str | None,
    events_path: str | None,
    overrides: tuple[str, ...],
    sandbox_mode: str | None,
    no_instructions: bool,
) -> int:
    """Talk to the agent: one user turn per message, in one durable session.

    PROMPT, when given, is the first message. Streamed assistant text is shown as it arrives,
    with one line per tool call, warning, compaction and turn end.
    """
    from vtcode.cli.output import print_error, want_color
    from vtcode.errors import UsageError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "vtcode chat needs a terminal (stdin and stdout are not both a TTY)",
            hint='scripts and pipes: `vtcode exec "PROMPT"` or `echo PROMPT | vtcode exec -`',
        )
    app.add_overrides(
        (
            *overrides,
            *sandbox_overrides(sandbox_mode),
            *instruction_overrides(no_instructions),
            *prompt_overrides(),
        )
    )
    loaded = app.loaded_config()

    from vtcode.interactive.run import ChatRequest, run_chat
    from vtcode.interactive.terminal import Terminal

    result = run_chat(
        ChatRequest(
            workspace=app.workspace,
            config=loaded.config,
            terminal=Terminal(color=want_color(app.color, sys.stdout)),
            prompt=" ".join(prompt) or None,
            provider=provider,
            model=model,
            script=script,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            session_id=session_id,
            resume=resume,
            reasoning_effort=effort,
            events_path=events_path,
            tool_limits=tool_limits(),
        )
    )
    if result.error:
        print_error(result.error, color=app.color)
    return int(result.exit_code)

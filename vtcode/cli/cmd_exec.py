"""`vtcode exec`: run an agent loop headless, to completion, with a documented exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import rich_click as click

from vtcode.cli.cmd_completion import complete_exec_words, complete_script
from vtcode.cli.context import AppContext
from vtcode.cli.exec_opts import (
    instruction_overrides,
    model_options,
    no_instructions_option,
    overrides_option,
    prompt_options,
    prompt_overrides,
    tool_limits,
    tool_options,
)
from vtcode.cli.ranges import key_option_type
from vtcode.cli.sandbox_opt import sandbox_option, sandbox_overrides

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vtcode.config.layers import ConfigLayer
    from vtcode.messages import Image
    from vtcode.runtime.stream_input import StreamedTurns

EPILOG = """Exit codes: 0 success, 1 error_during_execution, 2 usage/config/input error,
3 error_max_turns, 4 error_max_budget_usd, 75 session lock busy, 130 cancelled.
Output: without --json, stdout is the final answer (thread.completed `result`, with escape
sequences and control characters removed) and one newline, only when the run succeeds;
progress goes to stderr; --json carries the exact text. `-o FILE` holds exactly the answer of a
successful run (empty, with a warning, when the model said nothing, as `codex exec -o`); after
any other outcome its first line is `[vtcode] not an answer: SUBTYPE: ...` (error_max_turns,
...), then the model's last message. `-o` on a FIFO nobody reads and `--events` on an existing
folder (write DIR/ for one harness-*.jsonl per run in it) are exit 2 before anything runs.
Structured output: with `--output-schema FILE` (or agent.output_schema) the final answer must be
JSON matching the schema; a wrong answer gets the validation errors and another turn, up to
agent.output_schema_retries (2), then the run ends error_during_execution /
output_schema_invalid, exit 1. An invalid schema file is exit 2 before anything runs.
Streamed input: with `--input-format stream-json` stdin is JSON lines, one user message each
(`{"type":"user","text":...}` or Claude Code's `{"type":"user","message":{"role":"user",
"content":...}}`), each the next turn of the same session; the end of input ends the run with
one thread.completed; a bad line is exit 2 naming it (`<stdin>:N`), earlier turns kept.
Images: `-i FILE` (repeatable) sends PNG, JPEG, GIF or WebP images, typed by their content, with
the prompt in the provider's own image format; over 5 MiB, more than 20, another type, or a model
known to be text only (a replay script without `[provider] images = true`) is exit 2. The session
keeps them (images/ beside its transcript), so `exec resume` sends them again.
Resume: `vtcode exec resume SESSION_ID [PROMPT]`, `vtcode exec resume --last [PROMPT]`,
`--fork` starts a new session seeded with a minimal resume artifact of the old one. Resuming a
replay session without --script or --provider plays the script its last run played again,
from its first turn (a script stands in for the model)."""


def _read_prompt(words: list[str], color: bool) -> str | None:
    if not words or words == ["-"]:
        if sys.stdin is None or sys.stdin.isatty():
            return None if not words else ""
        from vtcode.cli.stdin import read_stdin_text

        return read_stdin_text()
    prompt = " ".join(words)
    if sys.stdin is None or sys.stdin.isatty():
        return prompt
    # `echo context | vtcode exec "x"`: the piped text follows the prompt, as codex exec and
    # `claude -p` give it to the model (it was silently dropped before; issue 26).
    from vtcode.cli.output import print_warning
    from vtcode.cli.stdin import read_piped_context

    context, note = read_piped_context()
    if note:
        print_warning(note, color=color)
    return (
        prompt if context is None else f"{prompt}\n\n<stdin>\n{context.rstrip(chr(10))}\n</stdin>"
    )


@click.command("exec", epilog=EPILOG, context_settings={"ignore_unknown_options": False})
@click.argument(
    "words",
    nargs=-1,
    metavar="[PROMPT|-] | resume (SESSION_ID|--last) [PROMPT]",
    shell_complete=complete_exec_words,
)
@click.option("--json", "as_json", is_flag=True, help="Raw ThreadEvent JSONL on stdout only.")
@click.option(
    "--events",
    "events_path",
    metavar="PATH",
    help="Also export raw events to the file PATH (PATH/: one harness-*.jsonl per run in it).",
)
@click.option(
    "-o",
    "--output-last-message",
    "--last-message-file",
    "last_message_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the final answer here. After any other outcome the first line is "
    "'[vtcode] not an answer: SUBTYPE: ...', then the model's last message.",
)
@model_options
@click.option(
    "--script",
    shell_complete=complete_script,
    help="Replay script: a path or a shipped script name.",
)
@click.option(
    "--max-turns",
    type=key_option_type("automation.full_auto.max_turns"),
    help="Turn cap (error_max_turns).",
)
@click.option(
    "--max-budget-usd",
    type=key_option_type("agent.harness.max_budget_usd"),
    help="Dollar cap (error_max_budget_usd).",
)
@click.option("--session-id", help="Use this session id (letters, digits, _ . -).")
@click.option("--effort", type=click.Choice(["low", "medium", "high"]), help="Reasoning effort.")
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record the provider's responses into a replay script.",
)
@click.option("-q", "--quiet", is_flag=True, help="No human progress on stderr.")
@overrides_option
@click.option(
    "--output-schema",
    "output_schema_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help=(
        "JSON Schema (2020-12) the final answer must match; its JSON is the result and -o"
        ' (e.g. `vtcode exec --output-schema answer.schema.json "list the TODOs"`).'
    ),
)
@click.option(
    "--input-format",
    type=click.Choice(["text", "stream-json"]),
    default="text",
    show_default=True,
    help=(
        "stream-json: one user message per JSON line on stdin, each the next turn of the"
        ' session (e.g. `printf \'{"type":"user","text":"hi"}\\n\' | vtcode exec --json'
        " --input-format stream-json`)."
    ),
)
@click.option(
    "-i",
    "--image",
    "image_files",
    metavar="FILE",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help=(
        "Attach an image to the prompt (repeatable; PNG, JPEG, GIF or WebP by content, at most"
        ' 5 MiB each, 20 in all), e.g. `vtcode exec -i screenshot.png "what is wrong here?"`.'
    ),
)
@click.option("--last", "use_last", is_flag=True, help="With `resume`: the newest session.")
@click.option("--fork", is_flag=True, help="With `resume`: continue in a new session.")
@click.option(
    "--dry-run",
    is_flag=True,
    help=(
        "A read-only planning pass: only read-only tools and task_tracker, no continuation; "
        "prints the plan the model wrote."
    ),
)
@sandbox_option
@no_instructions_option
@prompt_options
@tool_options
@click.pass_obj
def exec_cmd(
    app: AppContext,
    words: tuple[str, ...],
    as_json: bool,
    events_path: str | None,
    last_message_file: Path | None,
    provider: str | None,
    model: str | None,
    script: str | None,
    max_turns: int | None,
    max_budget_usd: float | None,
    session_id: str | None,
    effort: str | None,
    record: Path | None,
    quiet: bool,
    overrides: tuple[str, ...],
    output_schema_file: Path | None,
    input_format: str,
    image_files: tuple[Path, ...],
    use_last: bool,
    fork: bool,
    dry_run: bool,
    sandbox_mode: str | None,
    no_instructions: bool,
) -> int:
    """Run an agent loop headless until it completes.

    The prompt comes from PROMPT, or from stdin when PROMPT is `-` or absent. Text piped in
    beside a PROMPT follows it as context in a <stdin> block (bounded as `-` is; a pipe silent
    for 3 s is skipped with a warning; inside `while read` give `< /dev/null`). Every event is
    persisted to WORKSPACE/.vtcode/sessions/<id>/events.jsonl; with --json the raw events also
    stream to stdout (and nothing else does). Human progress goes to stderr unless -q.
    """
    from vtcode.cli.output import print_error, print_warning, want_color
    from vtcode.cli.sinks import FinalAnswerSink, HumanProgressSink, StdoutJsonSink
    from vtcode.errors import UsageError
    from vtcode.runtime.exec_run import ExecRequest, run_exec
    from vtcode.runtime.hooks import default_hooks_factory
    from vtcode.store.gate import Exporter

    args = list(words)
    resume: str | None = None
    if args and args[0] == "resume":
        args = args[1:]
        if use_last:
            from vtcode.store import latest_session_id

            resume = latest_session_id(app.workspace)
            if resume is None:
                raise UsageError("`--last`: this workspace has no sessions yet")
        elif args:
            resume, args = args[0], args[1:]
        else:
            raise UsageError("`exec resume` needs a SESSION_ID or --last")
    elif use_last or fork:
        raise UsageError("--last and --fork only apply to `vtcode exec resume`")
    streamed = None
    if input_format == "stream-json":
        streamed, prompt = _streamed_input(args)
    else:
        prompt = _read_prompt(args, app.color) if (args or resume is None) else None
    if resume is None and not (prompt and prompt.strip()):
        raise UsageError(
            "no prompt: pass PROMPT, or pipe it on stdin",
            hint='vtcode exec "list the files"   or   echo "..." | vtcode exec -',
        )
    images = _attached_images(image_files, prompt, streamed is not None)
    from vtcode.loop.structured import load_output_schema
    from vtcode.outpath import check_output, open_early, write_output

    output_schema = (
        None
        if output_schema_file is None
        else load_output_schema(output_schema_file, option="--output-schema")
    )

    # Output paths are checked before anything runs: a refused target is exit 2, no session.
    lm_target = (
        None
        if last_message_file is None
        else check_output(last_message_file, workspace=app.workspace, option="-o")
    )
    lm_fd = None if lm_target is None else open_early(lm_target)  # a FIFO nobody reads: exit 2
    if record is not None:
        check_output(record, workspace=app.workspace, option="--record")
    if script is not None:
        script = _script_ref(script, app.workspace)
    elif resume is not None and provider is None:
        provider, script = _remembered_script(app.workspace, resume)
    app.add_overrides(
        (
            *overrides,
            *sandbox_overrides(sandbox_mode),
            *instruction_overrides(no_instructions),
            *prompt_overrides(),
        )
    )
    loaded = app.loaded_config()
    limits = tool_limits()  # a malformed rule: exit 2 before anything runs
    answer = FinalAnswerSink()
    sinks: list[Exporter] = [answer]
    if as_json:
        sinks.append(StdoutJsonSink())
    if not (app.quiet or quiet):
        sinks.append(HumanProgressSink(color=want_color(app.color)))
    result = run_exec(
        ExecRequest(
            workspace=app.workspace,
            config=loaded.config,
            prompt=prompt,
            provider=provider,
            model=model,
            script=script,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            session_id=session_id,
            resume=resume,
            fork=fork,
            events_path=events_path,
            sinks=sinks,
            reasoning_effort=effort,
            record=record,
            hooks_factory=default_hooks_factory,
            notify=lambda msg: click.echo(msg, err=True),  # even with -q: data is going away
            tool_limits=limits,
            output_schema=output_schema,
            interaction=streamed,
            offer_task_tracker=_mode_set(loaded.layers),
            dry_run=dry_run,
            images=images,
        )
    )
    if result.error:
        print_error(result.error, color=app.color)
    if lm_target is not None:
        text = answer.output_file_text()
        if text is None:
            print_warning(
                f"the model sent no message; wrote an empty {lm_target.describe()}",
                color=app.color,
            )
        write_output(lm_target, (text or "").encode(), sys.stdout.buffer, fd=lm_fd)
    answer_to_stdout = lm_target is None or lm_target.path is not None  # `-o -` printed it
    if not as_json and answer.answer and answer_to_stdout:
        _print_answer(answer.answer)
    if dry_run and not as_json:
        click.echo(f"Plan:\n{result.plan or 'the model wrote no plan (task_tracker)'}")
    if streamed is not None and streamed.input_error is not None:
        raise streamed.input_error  # a bad line ended the run: exit 2, the line named
    return int(result.exit_code)


def _attached_images(
    files: tuple[Path, ...], prompt: str | None, streamed: bool
) -> tuple[Image, ...]:
    """`-i` files, read and checked before anything runs (exit 2 naming the file)."""
    if not files:
        return ()
    from vtcode.errors import UsageError
    from vtcode.images import load_images

    if streamed or not (prompt and prompt.strip()):
        raise UsageError(
            "images go with the prompt's message: give a PROMPT"
            + (" (not --input-format stream-json)" if streamed else ""),
            location="-i",
        )
    return load_images(files)


def _streamed_input(args: list[str]) -> tuple[StreamedTurns, str | None]:
    """`--input-format stream-json`: the user turns from stdin, and the first message read
    now, so a bad first line (or no message at all) is exit 2 before any session exists."""
    from vtcode.cli.stdin import max_stdin_bytes, stdin_buffer
    from vtcode.errors import UsageError
    from vtcode.runtime.stream_input import StreamedTurns, UserLines

    if args not in ([], ["-"]):
        raise UsageError(
            "--input-format stream-json reads the messages from stdin: give no PROMPT",
            hint="pipe the messages in, one JSON line each",
        )
    buf = stdin_buffer()
    if buf is None or sys.stdin.isatty():
        raise UsageError("--input-format stream-json needs the messages piped on stdin")
    lines = UserLines(buf.fileno(), max_stdin_bytes())
    first = lines.next_message()
    if first is None:
        raise UsageError("--input-format stream-json: stdin holds no user message")
    return StreamedTurns(lines), first


def _script_ref(script: str, workspace: Path) -> str:
    """A script file as an absolute path (a later `exec resume` may run from elsewhere); a
    shipped script's bare name as it is."""
    for candidate in (Path(script).expanduser(), workspace / script):
        if candidate.is_file():
            return str(candidate.absolute())
    return script


def _remembered_script(workspace: Path, session_id: str) -> tuple[str | None, str | None]:
    """(provider, script) for resuming a replay session without --script or --provider: the
    script its last run played (recorded in the session's runs.jsonl), so `exec resume --last`
    continues with the same "model" instead of the default script saying it has nothing to do.
    (None, None) when the last run was not a replay run or recorded no script."""
    from vtcode.store.artifacts import read_runs

    runs = read_runs(workspace, session_id)
    last = runs[-1] if runs else None
    if last is None or last.provider != "replay" or last.script is None:
        return None, None
    return "replay", last.script


def _print_answer(text: str) -> None:
    """Text mode's stdout: the final answer and one newline, nothing else (like `codex exec`
    and `claude -p`). The answer is model-controlled, so it is made inert (no escape sequences,
    no control characters but newline and tab) wherever stdout goes: a file or a pipe is
    `cat` to a terminal later. The exact bytes are in `--json` and in the session log. A
    closed pipe is not an error."""
    import contextlib

    from vtcode.termtext import inert

    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(inert(text) + "\n")
        sys.stdout.flush()


def _mode_set(layers: Sequence[ConfigLayer]) -> bool:
    """Whether a config layer sets `agent.harness.orchestration_mode` itself: only then is
    `task_tracker` offered in the catalog (the default mode checks a plan the model wrote, but
    offering the tool to every run would change every run's request)."""
    for layer in layers:
        harness = layer.data.get("agent", {}).get("harness", {})
        if isinstance(harness, dict) and harness.get("orchestration_mode") == "plan_build_evaluate":
            return True
    return False

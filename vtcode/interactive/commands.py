"""Slash commands of `vtcode chat`: one table (name, argument, help), one parser.

A line that starts with `/` is a command, one that starts with `!` a shell command the user runs
directly (`vtcode.interactive.shell`), anything else is a message to the model; `//text` sends the
message `/text` and `!!text` the message `!text`. Unknown commands and bad arguments never reach
the model.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMMANDS", "EFFORTS", "Command", "ParseError", "help_text", "parse_line"]

EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    arg: str  # "" none, "TEXT" required, "[TEXT]" optional
    help: str


COMMANDS: tuple[Spec, ...] = (
    Spec("help", "", "show these commands"),
    Spec("status", "", "session, model, effort, tokens, cost and request segment"),
    Spec("compact", "", "compact the conversation now (trigger manual)"),
    Spec("plan", "[TEXT]", "plan mode: propose a plan for TEXT (or the next message)"),
    Spec("steer", "TEXT", "queue a follow-up intent (applied after the next model response)"),
    Spec("effort", "LEVEL", f"reasoning effort: {' | '.join(EFFORTS)} (a new request segment)"),
    Spec("model", "NAME", "switch the model (a new request segment)"),
    Spec("new", "", "end this session and start a new one"),
    Spec("exit", "", "end the session (also /quit, or Ctrl-D)"),
)
_ALIASES = {"quit": "exit", "q": "exit", "?": "help"}
_BY_NAME = {s.name: s for s in COMMANDS}


@dataclass(frozen=True, slots=True)
class Command:
    """`name` None: `arg` is a message for the model; `name` "shell": `arg` is a `!` command."""

    name: str | None
    arg: str = ""


class ParseError(ValueError):
    """A line that names an unknown command or lacks its argument (shown, never sent)."""


def parse_line(line: str) -> Command:
    text = line.strip()
    if text.startswith("!!"):
        return Command(None, text[1:])
    if text.startswith("!"):
        if not text[1:].strip():
            raise ParseError("! needs a command: !ls runs `ls` in the workspace")
        return Command("shell", text[1:].strip())
    if not text.startswith("/"):
        return Command(None, text)
    if text.startswith("//"):
        return Command(None, text[1:])
    head, _, rest = text[1:].partition(" ")
    name = _ALIASES.get(head.lower(), head.lower())
    spec = _BY_NAME.get(name)
    if spec is None:
        raise ParseError(f"unknown command /{head}; /help lists the commands")
    arg = rest.strip()
    if spec.arg == "" and arg:
        raise ParseError(f"/{name} takes no argument")
    if spec.arg and not spec.arg.startswith("[") and not arg:
        raise ParseError(f"/{name} needs {spec.arg}")
    if name == "effort" and arg.lower() not in EFFORTS:
        raise ParseError(f"/effort {arg!r}: choose one of {', '.join(EFFORTS)}")
    return Command(name, arg.lower() if name == "effort" else arg)


def help_text() -> str:
    width = max(len(f"/{s.name} {s.arg}") for s in COMMANDS)
    rows = [f"  {f'/{s.name} {s.arg}'.ljust(width)}  {s.help}" for s in COMMANDS]
    shell = f"  {'!CMD'.ljust(width)}  run CMD in the workspace (the model's policy and sandbox)"
    keys = "  Ctrl-C cancels the running turn; Ctrl-C twice at the prompt leaves (exit)."
    return "\n".join(["Commands:", *rows, shell, keys])

"""Generate the troff man pages in man/: vtcode(1), one page per (sub)command, vtcode.toml(5).

Usage: python scripts/gen_man.py [OUT_DIR]   (default: man/ at the top of the checkout)

The CLI pages come from walking `vtcode.cli.main.cli` the way click resolves commands (so lazily
loaded commands are included: click-man only reads `group.commands`, which a lazy group leaves
empty, and it does not escape troff). vtcode.toml(5) comes from the key tree that the loader uses
(`vtcode.config.keys`, built from the generated schema), with the defaults of `VtcodeConfig`, so
the page lists exactly the keys the loader accepts. The date and version are fixed, so the output
is reproducible; tests/cli/test_man_pages.py regenerates the pages and fails on any drift.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import rich_click as click

from vtcode import __version__
from vtcode.cli.examples import EXAMPLES
from vtcode.cli.main import cli
from vtcode.config import docs, keys
from vtcode.config.load import Layer, Source, parse_layer, resolve
from vtcode.config.model import VtcodeConfig
from vtcode.config.render import inline
from vtcode.config.tomlscan import KeyPath, format_key
from vtcode.errors import ExitCode
from vtcode.jsontypes import encode

MAN_DATE = "2026-12-02"  # bump together with the version; never "today" (reproducible output)
MANUAL = "vtcode manual"
REPO = Path(__file__).resolve().parents[1]

EXIT_STATUS: dict[ExitCode, str] = {
    ExitCode.OK: "success (thread.completed subtype success); validate: every line valid",
    ExitCode.FAILURE: "error_during_execution; validate: the log is invalid",
    ExitCode.USAGE: "usage error, invalid config, unreadable input",
    ExitCode.MAX_TURNS: "error_max_turns: the turn cap was reached",
    ExitCode.MAX_BUDGET: "error_max_budget_usd: the budget was exceeded",
    ExitCode.LOCK_BUSY: "another process holds the session, loop or file lock; try again later",
    ExitCode.CANCELLED: "cancelled by SIGINT or SIGTERM (thread.completed is still written)",
}

ENVIRONMENT = [
    ("VTCODE_HOME", "folder of the user config (config.toml); default: XDG_CONFIG_HOME/vtcode"),
    ("XDG_CONFIG_HOME", "base of the user config when VTCODE_HOME is unset (default ~/.config)"),
    ("NO_COLOR", "when set, no colour on stderr"),
    ("VTCODE_DEBUG", "when set, internal errors show a Python traceback"),
]

FILES = [
    ("WORKSPACE/vtcode.toml", "workspace configuration, see vtcode.toml(5)"),
    ("$VTCODE_HOME/config.toml", "user configuration (or ~/.config/vtcode/config.toml)"),
    ("WORKSPACE/.vtcode/", "sessions, loop state and other durable state (0700)"),
]

EXAMPLE = """\
# WORKSPACE/vtcode.toml
[agent]
provider = "openai"
model = "gpt-4o-mini"

[agent.harness]
max_budget_usd = 2.5          # exit 4 when exceeded
max_tool_calls_per_turn = 60

[automation.full_auto]
max_turns = 30                # exit 3 when reached

[permissions]
allow = ["read_file", "exec_command(git *)"]
deny = ["write_file(.git/**)"]

[[hooks.lifecycle.pre_compact]]
matcher = "auto"
hooks = [{ argv = ["scripts/save-notes.sh"], timeout_seconds = 30 }]

[mcp.servers.docs]
command = "docs-mcp"
args = ["--stdio"]
"""


# --------------------------------------------------------------------------------------------
# troff


def esc(text: str) -> str:
    """Escape text for troff: backslashes, hyphens (as \\-), and control characters at BOL."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + ln if ln[:1] in (".", "'") else ln for ln in text.split("\n"))


def bold(text: str) -> str:
    return f"\\fB{esc(text)}\\fR"


def italic(text: str) -> str:
    return f"\\fI{esc(text)}\\fR"


def paragraphs(text: str) -> list[str]:
    """Help text as troff paragraphs; click's `\\b` marker keeps a paragraph unfilled."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.strip() for ln in block.strip("\n").split("\n")]
        if lines and lines[0] == "\b":
            out += [".PP", ".nf", *(esc(ln) for ln in lines[1:]), ".fi"]
        else:
            out += [".PP", esc(" ".join(ln for ln in lines if ln))]
    return out[1:] if out[:1] == [".PP"] else out


def header(name: str, section: int) -> list[str]:
    return [
        f'.TH "{esc(name.upper())}" "{section}" "{MAN_DATE}" "vtcode {__version__}" "{MANUAL}"',
    ]


# --------------------------------------------------------------------------------------------
# Commands


def walk(cmd: click.Command, ctx: click.Context) -> Iterator[click.Context]:
    """Every visible command under `cmd`, resolved through `get_command` (lazy groups too)."""
    yield ctx
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            yield from walk(sub, click.Context(sub, info_name=name, parent=ctx))


def page_name(ctx: click.Context) -> str:
    return ctx.command_path.replace(" ", "-")


def short_help(ctx: click.Context) -> str:
    text = ctx.command.get_short_help_str(limit=300).rstrip(".")
    prefix = f"{ctx.info_name}: "  # the root's docstring starts "vtcode: ..."
    return text.removeprefix(prefix)


def command_page(ctx: click.Context) -> str:
    cmd = ctx.command
    name = page_name(ctx)
    lines = header(name, 1)
    lines += [".SH NAME", f"{esc(name)} \\- {esc(short_help(ctx))}"]
    pieces = " ".join(cmd.collect_usage_pieces(ctx))
    lines += [".SH SYNOPSIS", f".B {esc(ctx.command_path)}", esc(pieces)]
    if cmd.help:
        lines += [".SH DESCRIPTION", *paragraphs(click.unstyle(cmd.help))]
    params = cmd.get_params(ctx)
    args = [p for p in params if isinstance(p, click.Argument) and getattr(p, "help", None)]
    if args:
        lines.append(".SH ARGUMENTS")
        for a in args:
            lines += [".TP", bold(a.human_readable_name), esc(str(getattr(a, "help", "")))]
    options = [p for p in params if isinstance(p, click.Option) and not p.hidden]
    if options:
        lines.append(".SH OPTIONS")
        for opt in options:
            record = opt.get_help_record(ctx)
            if record is None:
                continue
            names, text = record
            if opt.name == "help" and "-h" not in names:
                names = "-h, " + names  # the root sets help_option_names = -h, --help
            lines += [".TP", _option_names(names), esc(text) or "\\&"]
    if ctx.parent is not None:
        lines += [
            ".PP",
            f"The global options of {bold('vtcode')}(1) (such as {bold('-C')}, {bold('-c')}, "
            f"{bold('--config')}) go before the command name.",
        ]
    subs = list(_subcommands(ctx))
    if subs:
        lines.append(".SH COMMANDS")
        for sub_ctx in subs:
            lines += [
                ".TP",
                bold(sub_ctx.info_name or ""),
                f"{esc(short_help(sub_ctx))}. See {bold(page_name(sub_ctx))}(1).",
            ]
    if ctx.parent is None:
        lines.append(".SH ENVIRONMENT")
        for var, text in ENVIRONMENT:
            lines += [".TP", bold(var), esc(text)]
        lines.append(".SH FILES")
        for path, text in FILES:
            lines += [".TP", italic(path), esc(text)]
    lines.append(".SH EXIT STATUS")
    for code in ExitCode:
        lines += [".TP", bold(str(int(code))), esc(EXIT_STATUS[code])]
    path = " ".join(ctx.command_path.split()[1:])
    lines.append(".SH EXAMPLES")  # the same table `--help` shows (vtcode/cli/examples.py)
    for line, what in EXAMPLES[path]:
        lines += [".TP", f".B {esc(line)}", esc(what)]
    see = ["vtcode(1)"] if ctx.parent is not None else []
    if ctx.parent is not None and ctx.parent.parent is not None:
        see.append(f"{page_name(ctx.parent)}(1)")
    see += [f"{page_name(s)}(1)" for s in subs]
    see.append("vtcode.toml(5)")
    lines += [".SH SEE ALSO", ", ".join(_ref(s) for s in see)]
    return "\n".join(lines) + "\n"


def _ref(ref: str) -> str:
    name, _, rest = ref.partition("(")
    return f"{bold(name)}({rest}"


def _option_names(names: str) -> str:
    # "-C, --workspace DIRECTORY" -> bold switches, italic metavar
    *flags, last = names.split(", ")
    last, _, metavar = last.partition(" ")
    text = ", ".join(bold(f) for f in [*flags, last])
    return f"{text} {italic(metavar)}" if metavar else text


def _subcommands(ctx: click.Context) -> Iterator[click.Context]:
    cmd = ctx.command
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield click.Context(sub, info_name=name, parent=ctx)


def command_pages() -> dict[str, str]:
    root = click.Context(cli, info_name="vtcode", **cli.context_settings)
    return {f"{page_name(c)}.1": command_page(c) for c in walk(cli, root)}


# --------------------------------------------------------------------------------------------
# vtcode.toml(5)


def _dig(data: Any, path: KeyPath) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _key_entry(
    name: str, spec: keys.KeySpec, default: Any, text: str | None, *, required: bool = False
) -> list[str]:
    """`.TP` entry: the key, its description, then its type and default on a line of their own."""
    shown = (
        "required"
        if required
        else "default " + bold("unset" if default is None else inline(default))
    )
    lines = [".TP", bold(name)]
    if text:
        lines += [esc(text.replace("`", "")), ".br"]
    return [*lines, f"Type: {italic(spec.type_text())}; {shown}."]


def _table_doc(spec: keys.KeySpec) -> str | None:
    doc = spec.type_doc
    if not doc:
        return None
    doc = re.sub(r"^`\[[^\]]+\]`(?: \(vtcode\))?:?\s*", "", doc).replace("`", "")
    return doc[:1].upper() + doc[1:] if doc and doc != "." else None


def config_page() -> str:
    defaults: dict[str, Any] = encode(VtcodeConfig())
    example_layer = parse_layer(EXAMPLE, Source(Layer.FILE), "EXAMPLE")
    resolve([example_layer])  # the example must itself be a valid config
    lines = header("vtcode.toml", 5)
    lines += [".SH NAME", "vtcode.toml \\- configuration file of vtcode"]
    lines += [
        ".SH SYNOPSIS",
        f"{italic('WORKSPACE')}/vtcode.toml",
        ".br",
        f"{italic('$VTCODE_HOME')}/config.toml (user config; else "
        f"{italic('$XDG_CONFIG_HOME')}/vtcode/config.toml, else ~/.config/vtcode/config.toml)",
    ]
    lines += [
        ".SH DESCRIPTION",
        esc(
            "vtcode reads its settings from TOML files (TOML 1.0, at most 1 MiB, UTF-8). "
            "Every key is optional; a key that is not listed here is an error, reported with "
            "the closest known key. Duplicate keys and tables are errors."
        ),
        ".SH LAYERS",
        esc("Layers are applied lowest precedence first; a later layer wins:"),
        ".IP 1. 4",
        esc("built-in defaults (listed below);"),
        ".IP 2. 4",
        esc(
            "the user config ($VTCODE_HOME/config.toml, else $XDG_CONFIG_HOME/vtcode/config.toml, "
            "else ~/.config/vtcode/config.toml);"
        ),
        ".IP 3. 4",
        esc("the workspace file WORKSPACE/vtcode.toml;"),
        ".IP 4. 4",
        esc("the file named by --config FILE;"),
        ".IP 5. 4",
        esc("each -c KEY=VALUE, in order."),
        ".PP",
        esc(
            "Tables merge key by key; every other value, arrays included, replaces the value "
            "below it whole. In -c KEY=VALUE and vtcode config set KEY VALUE, VALUE is a TOML "
            'value (5, 2.5, true, "text", [1, 2], {a = 1}); a bare word that is not valid TOML '
            "is taken as a string. The value is typed by its key: a string key keeps the text "
            'as typed (-c agent.model=1.5 is "1.5") and a float key reads an integer as a '
            "float (-c agent.harness.max_budget_usd=5 is 5.0)."
        ),
        ".PP",
        esc(
            "vtcode config show --origin prints which layer set each key. Hooks taken from the "
            "workspace file are told apart from hooks in the user config."
        ),
        ".SH ERRORS",
        esc(
            "An invalid config stops every command with exit status 2 and one line per problem: "
            "FILE:LINE:COLUMN: KEY: MESSAGE (or -c KEY=VALUE: KEY: MESSAGE for an override). "
            "vtcode config check lists every problem without running anything."
        ),
        ".SH KEYS",
    ]
    item_tables: dict[str, tuple[str, keys.KeySpec]] = {}
    # top-level maps (`[providers.NAME]`) sit outside every section
    for name, child in keys.root().children.items():
        if child.kind == "table":
            continue
        lines.append(f".SS {esc(name)}")
        lines += _key_entry(name, child, _dig(defaults, (name,)), docs.describe((name,), child))
        item = child.item
        if item is not None and item.kind == "table" and item.type_name:
            item_tables.setdefault(item.type_name, (f"[{name}.NAME]", item))
    for path, spec in keys.iter_specs():
        if spec.kind != "table":
            continue
        leaves = [(n, c) for n, c in spec.children.items() if c.kind != "table"]
        if not leaves:
            continue
        lines.append(f".SS [{esc(format_key(path))}]")
        doc = _table_doc(spec)
        if doc:
            lines.append(esc(doc))
        for name, child in leaves:
            sub = (*path, name)
            lines += _key_entry(name, child, _dig(defaults, sub), docs.describe(sub, child))
            item = child.item
            if item is not None and item.kind == "table" and item.type_name:
                where = (
                    f"[[{format_key(path)}.EVENT]]"
                    if child.kind == "array"
                    else (f"[{format_key(sub)}.NAME]")
                )
                item_tables.setdefault(item.type_name, (where, item))
    # repeated tables (hook matchers, hook commands, MCP servers) and what is nested in them
    pending = list(item_tables.items())
    seen: set[str] = set()
    while pending:
        type_name, (where, spec) = pending.pop(0)
        if type_name in seen:
            continue
        seen.add(type_name)
        lines.append(f".SS {esc(type_name)} ({esc(where)})")
        doc = _table_doc(spec)
        if doc:
            lines.append(esc(doc))
        defaults_here = _field_defaults(type_name)
        for field, child in spec.children.items():
            default = defaults_here.get(field)
            text = docs.describe_field(type_name, field, child)
            lines += _key_entry(field, child, default, text, required=field in spec.required)
            item = child.item
            if item is not None and item.kind == "table" and item.type_name:
                pending.append((item.type_name, (f"{field} = [...] in {type_name}", item)))
    lines += [".SH EXAMPLE", ".PP", ".nf", ".RS 4", esc(EXAMPLE.rstrip("\n")), ".RE", ".fi"]
    lines += [".SH FILES"]
    for path, text in FILES[:2]:
        lines += [".TP", italic(path), esc(text)]
    lines += [
        ".SH SEE ALSO",
        ", ".join(_ref(r) for r in ["vtcode(1)", "vtcode-config(1)"]),
    ]
    return "\n".join(lines) + "\n"


def _field_defaults(type_name: str) -> dict[str, Any]:
    """The defaults of a repeated table type's fields (required fields have none)."""
    import dataclasses

    from vtcode.config import model

    out: dict[str, Any] = {}
    for f in dataclasses.fields(getattr(model, type_name)):
        if f.default is not dataclasses.MISSING:
            out[f.name] = encode(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = encode(f.default_factory())
    return out


# --------------------------------------------------------------------------------------------


def render_all() -> dict[str, str]:
    """Relative path under man/ -> page text."""
    out = {f"man1/{name}": text for name, text in command_pages().items()}
    out["man5/vtcode.toml.5"] = config_page()
    return out


def generate(out_dir: Path) -> list[Path]:
    """Write every page under `out_dir` and remove pages of commands that no longer exist."""
    pages = render_all()
    written: list[Path] = []
    for rel, text in pages.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    for section in ("man1", "man5"):
        folder = out_dir / section
        for stale in folder.glob("*.[15]"):
            if f"{section}/{stale.name}" not in pages:
                stale.unlink()
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else REPO / "man"
    for path in generate(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""vtcode.toml: every key, its type and its default, in one place.

The defaults are upstream's (reference §7) unless a comment says why vtcode differs. The config JSON
Schema (`schemas/vtcode-toml.schema.json`) is generated from these classes, so a key documented
here is a key the loader accepts, and nothing else is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from vtcode.config.exec_model import (
    DEFAULT_ENV_EXCLUDES as DEFAULT_ENV_EXCLUDES,
)
from vtcode.config.exec_model import (
    EnvInherit as EnvInherit,
)
from vtcode.config.exec_model import (
    McpConfig as McpConfig,
)
from vtcode.config.exec_model import (
    McpServerConfig as McpServerConfig,
)
from vtcode.config.exec_model import (
    SandboxConfig as SandboxConfig,
)
from vtcode.config.exec_model import (
    SandboxMode as SandboxMode,
)
from vtcode.config.exec_model import (
    ShellEnvironmentPolicy as ShellEnvironmentPolicy,
)
from vtcode.config.provider_model import BUILTIN_PROVIDERS, ProviderConfig
from vtcode.jsontypes import U32, U64, Doc, FloatRange, IntRange


class ContinuationPolicy(StrEnum):
    """When the harness may continue a run on its own."""

    OFF = "off"
    EXEC_ONLY = "exec_only"
    ALL = "all"


class HarnessProfile(StrEnum):
    """vtcode: what the model is shown (docs/harness.md, "Small models"): `compact` offers four
    tools with short specs and puts the workspace's small files in the prompt; `auto` picks it
    for a model whose name says it has fewer than 4B parameters (qwen0.5b, *-1.5b, *-135m)."""

    AUTO = "auto"
    FULL = "full"
    COMPACT = "compact"


class ContextResetMode(StrEnum):
    """When the manifest-based context reset fires."""

    OFF = "off"
    ON_STALL = "on_stall"
    ON_COMPACTION = "on_compaction"


class OrchestrationMode(StrEnum):
    """Exec orchestration style."""

    PLAN_BUILD_EVALUATE = "plan_build_evaluate"
    SINGLE = "single"


class Durability(StrEnum):
    """When the canonical log is fsynced: every event, every turn boundary, or never."""

    EVENT = "event"
    TURN = "turn"
    OS = "os"


class ReasoningEffort(StrEnum):
    """Provider-mapped reasoning effort."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultClearing:
    """Provider-native clearing of old tool results."""

    enabled: bool = True
    trigger_tokens: U64 = 100_000
    keep_tool_uses: U32 = 3
    clear_at_least_tokens: U64 = 30_000
    clear_tool_inputs: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessConfig:
    """`[agent.harness]`: limits, compaction, budgets and exports of the agent loop."""

    max_tool_calls_per_turn: Annotated[U32, Doc("0 = no cap")] = 120
    max_tool_wall_clock_secs: Annotated[U64, Doc("per-turn tool time; waits excluded")] = 600
    max_tool_retries: U32 = 2
    max_parallel_tool_calls: Annotated[U32, Doc("0 = unlimited")] = 4
    auto_compaction_enabled: bool = True
    auto_compaction_threshold_tokens: Annotated[
        int | None, IntRange(1, 2**63 - 1), Doc("explicit hard threshold, capped by capacity")
    ] = None
    auto_compaction_instructions: str | None = None
    auto_compaction_pause_after: bool = False
    compact_on_model_switch: bool = True
    tool_result_clearing: ToolResultClearing = field(default_factory=ToolResultClearing)
    max_budget_usd: Annotated[
        float | None,
        FloatRange(0),
        Doc("not enforced when the model's pricing is unknown (unless require_budget)"),
    ] = None
    require_budget: Annotated[
        bool,
        Doc(
            "vtcode: a run without an enforceable budget (no max_budget_usd, or the model's"
            " price unknown) is refused, exit 2 before any request"
        ),
    ] = False
    budget_warning_threshold: Annotated[float, FloatRange(0, 1)] = 0.75
    continuation_policy: ContinuationPolicy = ContinuationPolicy.ALL
    context_reset_mode: ContextResetMode = ContextResetMode.OFF
    context_reset_stall_threshold: Annotated[int, IntRange(1, 2**31)] = 2
    event_log_path: Annotated[str | None, Doc("compatibility export; empty = off")] = None
    orchestration_mode: OrchestrationMode = OrchestrationMode.PLAN_BUILD_EVALUATE
    max_revision_rounds: U32 = 2
    profile: Annotated[
        HarnessProfile, Doc("vtcode: compact (small models), full, or auto by the model's size")
    ] = HarnessProfile.AUTO
    first_reply_draws: Annotated[
        int,
        IntRange(1, 8),
        Doc("vtcode: compact runs draw a first reply that would change nothing again (1 = off)"),
    ] = 1
    long_running_command_ceiling_secs: Annotated[
        U64, Doc("vtcode: cap on one `action: wait` deadline (upstream's 3600 s default)")
    ] = 3600


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenResponsesConfig:
    """`[agent.open_responses]`: the derived Open Responses export."""

    enabled: bool = False
    emit_events: bool = True
    include_extensions: bool = True
    map_tool_calls: bool = True
    include_reasoning: bool = True


class SubagentIsolation(StrEnum):
    """Where a subagent's child run works: the workspace itself, or its own git worktree."""

    NONE = "none"
    WORKTREE = "worktree"


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentSpec:
    """`[agent.subagents.NAME]`: a child agent run by `vtcode agent run|verify NAME`."""

    description: Annotated[str, Doc("what the subagent is for (shown by `agent list`)")] = ""
    prompt: Annotated[str, Doc("instructions put before every task given to the subagent")] = ""
    isolation: Annotated[
        SubagentIsolation, Doc("none: work in the workspace; worktree: in .vtcode/worktrees/")
    ] = SubagentIsolation.NONE
    read_only: Annotated[bool, Doc("offer the child only read-only tools (verifiers)")] = False
    provider: Annotated[str | None, Doc("provider of the child run (default: agent.provider)")] = (
        None
    )
    script: Annotated[str | None, Doc("replay script of the child run")] = None
    model: Annotated[str | None, Doc("model of the child run (default: agent.model)")] = None
    max_turns: Annotated[
        int | None, IntRange(1, 2**31), Doc("turn cap of the child run (error_max_turns)")
    ] = None


# The byte cap of the project instructions put into the system prompt (Codex's default).
DEFAULT_INSTRUCTIONS_MAX_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionsConfig:
    """`[agent.instructions]`: project instructions (AGENTS.md) in the system prompt."""

    enabled: Annotated[
        bool, Doc("read AGENTS.md files into the system prompt (--no-instructions: off for a run)")
    ] = True
    fallback_files: Annotated[
        list[str],
        Doc("file names read in a folder without AGENTS.override.md or AGENTS.md, e.g. CLAUDE.md"),
    ] = field(default_factory=list)
    max_bytes: Annotated[
        int,
        IntRange(0, 1 << 20),
        Doc("bytes of instructions at most, all files together; the rest is cut with a warning"),
    ] = DEFAULT_INSTRUCTIONS_MAX_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig:
    """`[agent]`: provider, model and the harness."""

    provider: Annotated[
        str | None,
        Doc(
            "replay | openai | anthropic | openai-responses | a [providers.NAME] table;"
            " no default: a run with none chosen (and no --script) is refused, exit 2"
        ),
    ] = None
    model: str | None = None
    reasoning_effort: ReasoningEffort | None = None
    max_task_retries: Annotated[U32, Doc("retries of a transient provider failure")] = 2
    task_retry_backoff_secs: Annotated[
        float, FloatRange(0), Doc("vtcode: first retry delay, doubled per attempt, capped at 30 s")
    ] = 2.0
    max_conversation_turns: U32 = 150
    request_timeout_secs: Annotated[
        float,
        FloatRange(0),
        Doc("total time one provider request may take, stream included; 0 = no limit"),
    ] = 600.0
    stream_idle_timeout_secs: Annotated[
        float,
        FloatRange(0),
        Doc("longest silence (keep-alive comments do not count) in a provider stream"),
    ] = 120.0
    idle_turn_limit: U32 = 3
    output_schema: Annotated[
        str | None,
        Doc(
            "JSON Schema (2020-12) file the final answer must match (like exec --output-schema);"
            " relative to the workspace"
        ),
    ] = None
    output_schema_retries: Annotated[
        U32, Doc("more turns given to a final answer that does not match the output schema")
    ] = 2
    instructions: InstructionsConfig = field(default_factory=InstructionsConfig)
    system_prompt: Annotated[
        str | None, Doc("replaces the built-in system prompt (--system-prompt)")
    ] = None
    system_prompt_file: Annotated[
        str | None,
        Doc("file whose text replaces the built-in system prompt; relative to the workspace"),
    ] = None
    append_system_prompt: Annotated[
        str | None, Doc("text added after the system prompt (--append-system-prompt)")
    ] = None
    append_system_prompt_file: Annotated[
        str | None,
        Doc("file whose text is added after the system prompt; relative to the workspace"),
    ] = None
    harness: HarnessConfig = field(default_factory=HarnessConfig)
    open_responses: OpenResponsesConfig = field(default_factory=OpenResponsesConfig)
    subagents: Annotated[
        dict[str, SubagentSpec], Doc("child agents by name (`vtcode agent run NAME`)")
    ] = field(default_factory=dict)


DEFAULT_ALLOWED_TOOLS = [
    "exec_command",
    "write_stdin",
    "apply_patch",
    # upstream's list also names code_search, a tool vtcode does not have (a default never names
    # a tool that does not exist: tests/config/test_key_status.py).
    # vtcode: its own file tools are part of the default full-auto allow-list.
    "read_file",
    "list_files",
    "grep",
    "write_file",
    # offered only where the network policy can allow a fetch (vtcode.tools.net_policy)
    "web_fetch",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FullAutoConfig:
    """`[automation.full_auto]`: exec always runs full-auto; these keys bound it."""

    enabled: bool = False
    max_turns: Annotated[int, IntRange(1, 2**31), Doc("exec turn cap -> error_max_turns")] = 100
    allowed_tools: list[str] = field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    require_profile_ack: bool = True
    profile_path: str | None = None
    verify_mutations: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AutomationConfig:
    """`[automation]`."""

    full_auto: FullAutoConfig = field(default_factory=FullAutoConfig)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsConfig:
    """`[tools]`."""

    max_tool_loops: Annotated[U32, Doc("-> tool_loop_limit_reached")] = 40
    max_spool_bytes: Annotated[
        int,
        IntRange(4096, 2**40),
        Doc("cap of one command's output spool file; the rest is dropped and the drop recorded"),
    ] = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicContextConfig:
    """`[context.dynamic]`: envelope and history artifact persistence."""

    enabled: bool = True
    persist_history: bool = True
    retained_user_messages: U32 = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerConfig:
    """`[context.ledger]`: the decision ledger."""

    enabled: bool = True
    include_in_prompt: bool = True
    max_entries: U32 = 12
    preserve_in_compression: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextConfig:
    """`[context]`."""

    max_context_tokens: Annotated[U64, Doc("0 = provider capacity only")] = 160_000
    preserve_recent_turns: U32 = 10
    dynamic: DynamicContextConfig = field(default_factory=DynamicContextConfig)
    ledger: LedgerConfig = field(default_factory=LedgerConfig)


@dataclass(frozen=True, slots=True, kw_only=True)
class HookCommand:
    """One hook: `command` (split with shlex unless `shell = true`) or an explicit `argv`."""

    type: str = "command"
    command: str | None = None
    argv: list[str] | None = None
    shell: bool = False
    timeout_seconds: Annotated[int, IntRange(1, 86_400)] = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class HookMatcher:
    """Hooks that run when `matcher` (a regex; absent = always) matches the event's subject."""

    matcher: str | None = None
    hooks: list[HookCommand] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class LifecycleHooks:
    """`[hooks.lifecycle]`: arrays of matchers per lifecycle event."""

    session_start: list[HookMatcher] = field(default_factory=list)
    session_end: list[HookMatcher] = field(default_factory=list)
    user_prompt_submit: list[HookMatcher] = field(default_factory=list)
    pre_tool_use: list[HookMatcher] = field(default_factory=list)
    post_tool_use: list[HookMatcher] = field(default_factory=list)
    post_tool_use_failure: list[HookMatcher] = field(default_factory=list)
    permission_request: list[HookMatcher] = field(default_factory=list)
    pre_compact: list[HookMatcher] = field(default_factory=list)
    post_compact: list[HookMatcher] = field(default_factory=list)
    stop: list[HookMatcher] = field(default_factory=list)
    notification: list[HookMatcher] = field(default_factory=list)
    subagent_start: list[HookMatcher] = field(default_factory=list)
    subagent_stop: list[HookMatcher] = field(default_factory=list)
    quiet_success_output: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HooksConfig:
    """`[hooks]`."""

    lifecycle: LifecycleHooks = field(default_factory=LifecycleHooks)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionsConfig:
    """`[permissions]`: rules like `exec_command(git *)`, `read_file`, `write_file(src/**)`."""

    enabled: bool = True
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class OtelConfig:
    """`[telemetry.otel]`: OpenTelemetry export over OTLP/HTTP."""

    enabled: bool = False
    endpoint: str | None = None
    service_name: str = "vtcode"


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryConfig:
    """`[telemetry]`."""

    atif_enabled: bool = False
    trajectory_enabled: bool = True
    otel: OtelConfig = field(default_factory=OtelConfig)


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetConfig:
    """`[fleet]`: the PostgreSQL database fleet workers share (docs/fleet.md).

    Read only from the user config (or VTCODE_DATABASE_URL): a workspace must never point a
    worker, and every session's events, at a database of its choosing."""

    database_url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetentionConfig:
    """`[store.retention]`: closed sessions beyond these are removed before each run."""

    max_sessions: Annotated[
        U32, Doc("closed sessions kept (oldest removed first); 0 = no limit")
    ] = 50
    max_age_days: Annotated[
        U32, Doc("closed sessions older than this are removed; 0 = no limit")
    ] = 30
    keep_loop_steps: Annotated[
        U32, Doc("vtcode: the sessions of each loop's last N steps are never removed")
    ] = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreConfig:
    """`[store]` (vtcode): durability and bounds of the canonical session store."""

    durability: Durability = Durability.TURN
    queue_max_events: Annotated[int, IntRange(1, 10_000_000)] = 8192
    queue_max_bytes: Annotated[int, IntRange(1024, 2**40)] = 16 * 1024 * 1024
    max_event_bytes: Annotated[int, IntRange(1024, 2**31)] = 8 * 1024 * 1024
    max_events: Annotated[int, IntRange(1, 2**40), Doc("per session; oldest turns evicted")] = (
        10_000
    )
    lock_timeout_secs: Annotated[float, FloatRange(0)] = 2.0
    reserve_bytes: Annotated[
        int,
        IntRange(0, 2**30),
        Doc("disk space preallocated per session, released to write the closing events on ENOSPC"),
    ] = 256 * 1024
    retention: RetentionConfig = field(default_factory=RetentionConfig)


@dataclass(frozen=True, slots=True, kw_only=True)
class VtcodeConfig:
    """The whole of vtcode.toml."""

    agent: AgentConfig = field(default_factory=AgentConfig)
    automation: AutomationConfig = field(default_factory=AutomationConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    hooks: HooksConfig = field(default_factory=HooksConfig)
    permissions: PermissionsConfig = field(default_factory=PermissionsConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    fleet: FleetConfig = field(default_factory=FleetConfig)
    providers: Annotated[
        dict[str, ProviderConfig], Doc("model endpoints by name (`--provider NAME`)")
    ] = field(default_factory=lambda: dict(BUILTIN_PROVIDERS))
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    shell_environment_policy: ShellEnvironmentPolicy = field(default_factory=ShellEnvironmentPolicy)

"""What one run adds to its frozen system prompt: project instructions, skills, the replaced or
appended text, gathered once when the run starts (issue 24 items 1, 4 and 6).

Read once: every segment of the run freezes the same text, so an edited AGENTS.md or SKILL.md
counts from the next run (`exec resume`), never in the middle of one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.orient.instructions import Instructions, discover_instructions
from vtcode.orient.skills import discover_skills, skills_budget
from vtcode.runtime.prompt_texts import PromptTexts
from vtcode.store.artifacts import InstructionRecord

__all__ = ["RunPrompt"]

DEFAULT_WINDOW = 160_000  # tokens, when neither the config nor the provider says


@dataclasses.dataclass(frozen=True, slots=True)
class RunPrompt:
    texts: PromptTexts
    instructions: Instructions
    skills_section: str | None
    warnings: tuple[str, ...]

    @classmethod
    def gather(
        cls, cfg: VtcodeConfig, workspace: Path, texts: PromptTexts, window: int | None
    ) -> RunPrompt:
        instructions = discover_instructions(workspace, cfg.agent.instructions)
        skills = discover_skills(workspace)
        tokens = cfg.context.max_context_tokens or window or DEFAULT_WINDOW
        return cls(
            texts=texts,
            instructions=instructions,
            skills_section=skills.section(skills_budget(tokens)),
            warnings=(*instructions.warnings, *skills.warnings),
        )

    def base(self, default: str) -> str:
        """The base prompt: the configured replacement, else `default`."""
        return self.texts.base or default

    def sections(self) -> tuple[str | None, ...]:
        """After the base, in order: instructions, skills, appended text."""
        return (self.instructions.section(), self.skills_section, self.texts.append)

    def records(self) -> list[InstructionRecord]:
        """The instruction files, as the run record keeps them."""
        return [
            InstructionRecord(
                path=str(f.path),
                label=f.label,
                scope=f.scope,
                bytes=f.size,
                used_bytes=f.used,
                sha256=f.sha256,
            )
            for f in self.instructions.files
        ]

    def digest(self) -> str | None:
        """sha256 of the instructions section (None when no file was used)."""
        return self.instructions.digest() if self.instructions.files else None

    def notices(self) -> Callable[[], list[str]]:
        """A notices source giving the warnings once (after `thread.started`), then nothing."""
        pending = list(self.warnings)

        def take() -> list[str]:
            out = pending[:]
            pending.clear()
            return out

        return take

"""Request segments: the immutable prompt prefix a provider's cache can reuse, and its hashes.

A segment freezes the system prompt (its sha256 is the instruction digest), the tool catalog in a
deterministic order (sha256 of the canonical JSON of the specs sorted by name, the same bytes
`ToolRegistry.catalog_hash` hashes), the model, provider and mode, and the seed messages a
compaction put at the head of the history (summary and envelope). Ordinary turns only append
messages and stay in the segment. A compaction, an instruction change (e.g. orientation
re-rendered after a reset), a catalog change, or a model/provider/mode switch starts a new one;
`thread.compact_boundary` reports the transition (ids and hashes, previous and new).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from vtcode.messages import Message, ModelRequest, ToolSpec

__all__ = ["Segment", "SegmentTracker", "SegmentTransition", "catalog_hash", "sha256_hex"]


def sha256_hex(data: bytes | str) -> str:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def catalog_hash(tools: Iterable[ToolSpec]) -> str:
    """sha256 of the canonical JSON of the specs, ordered by name."""
    from vtcode.tools.registry import canonical_json, spec_json

    return sha256_hex(canonical_json([spec_json(s) for s in sorted(tools, key=lambda s: s.name)]))


def seed_of(messages: Iterable[Message]) -> list[Message]:
    """The leading system messages of a history (a compaction's summary and envelope)."""
    out: list[Message] = []
    for m in messages:
        if m.role != "system":
            break
        out.append(m)
    return out


def _seed_digest(seed: Iterable[Message]) -> str:
    return sha256_hex(orjson.dumps([[m.name or "", m.content] for m in seed]))


@dataclass(frozen=True, slots=True)
class Segment:
    id: str
    number: int
    instruction_digest: str
    catalog_hash: str
    model: str
    provider: str
    mode: str
    seed_digest: str
    prefix_hash: str

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.instruction_digest, self.catalog_hash, self.model, self.provider, self.mode)


@dataclass(frozen=True, slots=True)
class SegmentTransition:
    previous: Segment | None
    new: Segment
    # start | compaction | context_edit | instructions | catalog | model | provider | mode
    reason: str


class SegmentTracker:
    """The current segment of a run; `observe` each request, `compacted` at each boundary."""

    def __init__(self, *, provider: str, mode: str = "exec") -> None:
        self.provider = provider
        self.mode = mode
        self.current: Segment | None = None
        self._count = 0
        self._last_system = ""
        self._last_tools: tuple[ToolSpec, ...] = ()
        self._last_model = ""
        self._tools_hash_cache: tuple[tuple[int, ...], str] | None = None

    def _catalog(self, tools: tuple[ToolSpec, ...]) -> str:
        ident = tuple(id(t) for t in tools)
        cached = self._tools_hash_cache
        if cached is not None and cached[0] == ident:
            return cached[1]
        h = catalog_hash(tools)
        self._tools_hash_cache = (ident, h)
        self._last_tools = tools  # keep the objects alive so their ids stay theirs
        return h

    def _make(self, system: str, catalog: str, model: str, seed: list[Message]) -> Segment:
        self._count += 1
        instr = sha256_hex(system)
        seed_d = _seed_digest(seed)
        prefix = sha256_hex("\x00".join((instr, catalog, model, self.provider, self.mode, seed_d)))
        return Segment(
            id=f"seg-{self._count:03d}-{prefix[:12]}",
            number=self._count,
            instruction_digest=instr,
            catalog_hash=catalog,
            model=model,
            provider=self.provider,
            mode=self.mode,
            seed_digest=seed_d,
            prefix_hash=prefix,
        )

    def observe(self, request: ModelRequest) -> SegmentTransition | None:
        """A request is about to go out: a new segment if its frozen parts changed."""
        msgs = request.messages
        system = msgs[0].content if msgs and msgs[0].role == "system" else ""
        catalog = self._catalog(request.tools)
        cur = self.current
        reason = "start"
        if cur is not None:
            # Compare the text first: hashing a long system prompt every turn is wasted work.
            instr = cur.instruction_digest if system == self._last_system else sha256_hex(system)
            key = (instr, catalog, request.model, self.provider, self.mode)
            if key == cur.key():
                return None
            names = ("instructions", "catalog", "model", "provider", "mode")
            reason = next(n for n, a, b in zip(names, key, cur.key(), strict=True) if a != b)
        self._last_system, self._last_model = system, request.model
        new = self._make(system, catalog, request.model, seed_of(msgs[1:]))
        self.current = new
        return SegmentTransition(cur, new, reason)

    def compacted(
        self, new_history: list[Message], reason: str = "compaction"
    ) -> SegmentTransition:
        """A compaction seeded the history, or a context edit (`context_edit`: tool results
        cleared) rewrote earlier messages: always a new segment (same instructions/catalog)."""
        prev = self.current
        catalog = prev.catalog_hash if prev is not None else catalog_hash(())
        model = prev.model if prev is not None else self._last_model
        new = self._make(self._last_system, catalog, model, seed_of(new_history))
        self.current = new
        return SegmentTransition(prev, new, reason)

    def reset(self) -> None:
        """Fresh context: the next request starts a new lineage."""
        self.current = None

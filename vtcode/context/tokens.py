"""Token estimates for messages and requests: fast, deterministic, offline.

Upstream counts text with tiktoken's `cl100k_base` and falls back to ceil(UTF-8 bytes / 4). vtcode
uses the same per-message arithmetic (role overhead 4, 1000 per image, 20 + name + arguments per
tool call, plus the tool_call_id) and counts text by bytes unless a BPE is usable *without a
download*: `tiktoken` importable and its cl100k data already in the local cache. Nothing here ever
touches the network. `VTCODE_TOKENIZER=bytes` (what the tests use) forces the byte estimate;
`VTCODE_TOKENIZER=cl100k` asks for the BPE (still only when cached); unset means "BPE if cached".

Provider-reported prompt tokens beat estimates when they are larger (see `UsageTracker`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from vtcode.messages import Message, ModelRequest, ToolSpec

__all__ = [
    "IMAGE_TOKENS",
    "ROLE_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "TokenEstimator",
    "byte_tokens",
    "default_estimator",
]

ROLE_OVERHEAD = 4
IMAGE_TOKENS = 1000
TOOL_CALL_OVERHEAD = 20
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def byte_tokens(text: str) -> int:
    """ceil(UTF-8 bytes / 4): upstream's fallback, and vtcode's default."""
    if not text:
        return 0
    n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return (n + 3) // 4


def _tiktoken_cache_file() -> Path:
    """Where tiktoken would have cached the cl100k file (its own lookup order)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        base = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        base = Path(os.environ["DATA_GYM_CACHE_DIR"])
    else:
        import tempfile

        base = Path(tempfile.gettempdir()) / "data-gym-cache"
    return base / hashlib.sha1(_CL100K_URL.encode()).hexdigest()  # noqa: S324 - tiktoken's key


def _offline_bpe() -> Callable[[str], int] | None:
    """cl100k's counter when tiktoken is installed AND its data is cached; else None."""
    try:
        if not _tiktoken_cache_file().is_file():
            return None
        import tiktoken  # type: ignore[import-not-found,unused-ignore]

        enc: Any = tiktoken.get_encoding("cl100k_base")
    except Exception:  # missing package, unreadable cache: the byte estimate is the contract
        return None

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=())) if text else 0

    return count


class TokenEstimator:
    """Per-message estimates (upstream's `Message::estimate_tokens` arithmetic)."""

    def __init__(self, text_tokens: Callable[[str], int] = byte_tokens, name: str = "bytes"):
        self.text_tokens = text_tokens
        self.name = name

    @classmethod
    def from_env(cls) -> TokenEstimator:
        mode = os.environ.get("VTCODE_TOKENIZER", "auto").strip().lower()
        if mode != "bytes":
            bpe = _offline_bpe()
            if bpe is not None:
                return cls(bpe, "cl100k")
        return cls()

    def message(self, m: Message) -> int:
        t = self.text_tokens
        n = ROLE_OVERHEAD + t(m.content) + IMAGE_TOKENS * len(m.images)
        if m.reasoning:
            n += t(m.reasoning)
        for c in m.tool_calls:
            n += TOOL_CALL_OVERHEAD + t(c.name) + t(c.arguments)
        if m.tool_call_id:
            n += t(m.tool_call_id)
        return n

    def messages(self, messages: Iterable[Message]) -> int:
        f = self.message
        return sum(f(m) for m in messages)

    def tools(self, tools: Iterable[ToolSpec]) -> int:
        import orjson

        t = self.text_tokens
        return sum(
            t(s.name) + t(s.description) + t(orjson.dumps(s.parameters).decode()) for s in tools
        )

    def request(self, request: ModelRequest) -> int:
        return self.messages(request.messages) + self.tools(request.tools)


_DEFAULT: TokenEstimator | None = None


def default_estimator() -> TokenEstimator:
    """The process-wide estimator (resolved once: tokenizer availability does not change)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = TokenEstimator.from_env()
    return _DEFAULT

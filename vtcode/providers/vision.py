"""Whether a provider's model takes images, asked before a run with `exec -i` starts.

Refused up front (exit 2, nothing written) when the answer is known to be no: a replay script
that does not say `[provider] images = true` (a script stands in for a model, and a test that
attaches images should state that its model sees them), and the model families that are text
only (GPT-3.5, the first GPT-4's dated snapshots, o1-mini, o3-mini, DeepSeek's API models,
Claude 2 and Instant).
Any other model is given the images: a server that cannot take them answers with its own error,
which the run reports like any provider failure. `providers.NAME.images` overrides the table
either way (false for a local text-only model, true for a model the table wrongly refuses).
The list errs on the side of trying: a bare
`gpt-4` is tried (gateways alias the name to vision models), as is every local model name.
"""

from __future__ import annotations

import fnmatch

from vtcode.errors import UsageError
from vtcode.providers.base import Provider

__all__ = ["TEXT_ONLY_MODELS", "refuse_images"]

TEXT_ONLY_MODELS = (
    "gpt-3.5*",
    "gpt-4-0314",
    "gpt-4-0613",
    "gpt-4-32k*",
    "o1-mini*",
    "o3-mini*",
    "deepseek-chat",
    "deepseek-reasoner",
    "deepseek-coder*",
    "claude-2*",
    "claude-instant*",
)


def refuse_images(provider: Provider, images: int, *, option: str = "-i") -> None:
    """Exit 2 when `images` (> 0) would go to a model known not to accept them."""
    if not images:
        return
    script = getattr(provider, "script", None)
    if provider.name == "replay":
        if script is None or not script.provider.images:
            raise UsageError(
                f"{images} image(s) attached, but the replay script's model takes no images",
                location=option,
                hint="set `[provider] images = true` in the script to replay a model that does",
            )
        return
    said = getattr(provider, "accepts_images", None)  # `providers.NAME.images`, when set
    label = getattr(provider, "label", provider.name)
    if said is False:
        raise UsageError(
            f"{images} image(s) attached, but providers.{label}.images = false",
            location=option,
            hint="leave out -i, or choose a provider whose model takes images",
        )
    model = (provider.model or "").rsplit("/", 1)[-1].lower()
    if said is None and any(fnmatch.fnmatchcase(model, p) for p in TEXT_ONLY_MODELS):
        raise UsageError(
            f"{images} image(s) attached, but {provider.name} model {provider.model!r} "
            "does not accept images",
            location=option,
            hint="choose a vision model with --model, or leave out -i",
        )

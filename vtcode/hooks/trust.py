"""Workspace trust, as the hooks gate and `vtcode hooks trust` name it.

The trust store lives in `vtcode.config.trust_store` because the config loader needs it too
(an untrusted workspace `vtcode.toml` may only tighten the user's policy) and config sits below
hooks in the layer order; this module keeps the names hooks code and tests already use.
"""

from vtcode.config.trust_store import (
    TRUST_ENV,
    canonical_workspace,
    env_trust,
    hooks_fingerprint,
    is_trusted,
    revoke_workspace,
    trust_file,
    trust_workspace,
    trusting_env,
    workspace_trusted,
)

__all__ = [
    "TRUST_ENV",
    "canonical_workspace",
    "env_trust",
    "hooks_fingerprint",
    "is_trusted",
    "revoke_workspace",
    "trust_file",
    "trust_workspace",
    "trusting_env",
    "workspace_trusted",
]

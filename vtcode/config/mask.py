"""What `config show` prints in place of credentials the config holds.

A base URL may carry `user:password@` or `?api_key=…`, and `[mcp.servers.*] env` or
`[shell_environment_policy] set` may hold secret-named variables. `config show` (TOML, `--json`,
`--origin`) is read on screens and pasted into issues, so each string value is masked the way the
redactor judges names (`vtcode.redact.is_secret_name`): the password of URL userinfo becomes `***`
(the user name stays, it tells which account), a query parameter with a secret-looking name keeps
its name and loses its value, and a value stored under a secret-looking key is `***` whole.
`config get KEY` prints the exact value: it is asked for by name.
"""

from __future__ import annotations

import re
from typing import Any

from vtcode.redact import MARKER, is_secret_name
from vtcode.urlauth import SCHEME_START

__all__ = ["MASK", "mask_secrets", "mask_url"]

MASK = "***"
# scheme://user:password@ — the password up to the last `@` before the host.
_USERINFO = re.compile(rf"({SCHEME_START}[^\s/?#@:]*):[^\s/?#]*@")
# A parameter name holds no `?`: a search from every `?` of a run was quadratic.
_QUERY = re.compile(r"([?&;])([^=&;#\s?]+)=([^&;#\s]*)")
_QUERY_SECRETS = frozenset({"sig", "signature", "code", "pwd", "pw", "pass"})
# Keys that name a secret rather than hold one (`api_key_env = "OPENAI_API_KEY"`).
_NAMING_SUFFIXES = ("_env", "_env_var", "_name", "_file", "_path", "_command")


def mask_url(text: str) -> str:
    """`text` with URL passwords and secret-named query values replaced by `***`."""
    if "://" in text and "@" in text:
        text = _USERINFO.sub(rf"\1:{MASK}@", text)
    if "=" in text and ("?" in text or "&" in text):
        text = _QUERY.sub(_mask_param, text)
    return text


def _mask_param(m: re.Match[str]) -> str:
    name = m.group(2)
    if m.group(3) and (is_secret_name(name) or name.lower() in _QUERY_SECRETS):
        return f"{m.group(1)}{name}={MASK}"
    return m.group(0)


def mask_secrets(value: Any, key: str = "") -> Any:
    """A copy of config data (tables, arrays, strings) with every credential masked."""
    if isinstance(value, str):
        secret_key = key and is_secret_name(key) and not key.lower().endswith(_NAMING_SUFFIXES)
        if value == MARKER:  # already redacted (provider header values: config/providers.py)
            return value
        return MASK if value and secret_key else mask_url(value)
    if isinstance(value, dict):
        return {k: mask_secrets(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v, key) for v in value]
    return value

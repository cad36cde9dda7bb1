"""A URL server's HTTP side: the headers it is sent, the secrets they carry, checks of both.

The bearer token comes only from the variable `bearer_token_env_var` names, read when the
server is connected, never from a file: a config file is copied, committed and shown, and
`config show` prints the variable's name, not its value. For the same reason `headers` may not
hold `Authorization`, `Proxy-Authorization` or `Cookie`. The token and the values of
credential-named headers are handed to the redactor (`secret_values`), so no event, log line or
error can carry them, whatever the variable is called. Problems are reported by location and
never quote a header value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from vtcode.config.model import McpServerConfig
from vtcode.redact import is_secret_name

__all__ = [
    "FORBIDDEN_HEADERS",
    "CredentialError",
    "config_problems",
    "request_headers",
    "secret_values",
]

FORBIDDEN_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")  # RFC 9110 token
_HEADER_VALUE = re.compile(r"^[\x20-\x7e]*\Z")  # visible ASCII and spaces: no CR, LF, NUL
_TOKEN = re.compile(r"^[\x21-\x7e]+\Z")  # one word of visible ASCII
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


class CredentialError(Exception):
    """The bearer token cannot be sent (its variable is unset, empty or malformed); the text
    names the variable, never its value."""


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "must be an http:// or https:// URL"
    if not parts.hostname:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "must not carry user:password@ (use bearer_token_env_var)"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "has spaces or control characters"
    return None


def config_problems(server: McpServerConfig) -> list[tuple[str, str]]:
    """(key, problem) for each thing wrong in the transport keys of one server definition."""
    out: list[tuple[str, str]] = []
    if server.command.strip() and server.url:
        out.append(("url", "set either `command` (stdio) or `url` (streamable HTTP), not both"))
    elif not server.command.strip() and not server.url:
        out.append(("command", "empty `command`: set `command` (stdio) or `url` (streamable HTTP)"))
    if not server.url:
        if server.headers:
            out.append(("headers", "applies only to a `url` server"))
        if server.bearer_token_env_var:
            out.append(("bearer_token_env_var", "applies only to a `url` server"))
        return out
    problem = _url_problem(server.url)
    if problem is not None:
        out.append(("url", f"the URL {problem}"))
    if server.args:
        out.append(("args", "applies only to a `command` server"))
    if server.env:
        out.append(("env", "applies only to a `command` server"))
    for name, value in server.headers.items():
        if not _HEADER_NAME.match(name):
            out.append((f"headers.{name}", "is not a valid HTTP header name"))
        elif name.lower() in FORBIDDEN_HEADERS:
            out.append(
                (
                    f"headers.{name}",
                    "credentials do not belong in a file: name the variable that holds the "
                    "token in bearer_token_env_var",
                )
            )
        elif not _HEADER_VALUE.match(value):
            out.append((f"headers.{name}", "its value has characters a header cannot carry"))
    var = server.bearer_token_env_var
    if var and not _ENV_NAME.match(var):
        out.append(("bearer_token_env_var", f"{var!r} is not an environment variable name"))
    return out


def request_headers(server: McpServerConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The headers of every request to the server: `headers`, then the bearer token."""
    headers = dict(server.headers)
    var = server.bearer_token_env_var
    if not var:
        return headers
    token = environ.get(var, "").strip()
    if not token:
        raise CredentialError(f"the variable {var} (bearer_token_env_var) is not set or empty")
    if not _TOKEN.match(token):
        raise CredentialError(
            f"the value of {var} (bearer_token_env_var) cannot be sent as a bearer token: "
            "it has spaces or characters outside visible ASCII"
        )
    headers["Authorization"] = f"Bearer {token}"
    return headers


def _credential_parts(value: str) -> Iterable[str]:
    yield value
    scheme, space, credential = value.strip().partition(" ")
    if space and scheme.isalpha():
        yield credential.strip()


def secret_values(servers: Iterable[McpServerConfig], environ: Mapping[str, str]) -> list[str]:
    """Every credential the URL servers' requests carry: each bearer token (by the variable's
    value, whatever its name) and the values of credential-named headers."""
    out: list[str] = []
    for server in servers:
        if not server.url:
            continue
        if server.bearer_token_env_var:
            token = environ.get(server.bearer_token_env_var, "")
            if token.strip():
                out.append(token.strip())
        for name, value in server.headers.items():
            if is_secret_name(name.replace("-", "_")):
                out.extend(_credential_parts(value))
    return out

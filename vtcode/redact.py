"""Keep credentials out of everything vtcode writes or prints.

vtcode runs with provider keys, tokens and observability headers in its environment, and a model
it does not control decides what text, tool arguments and command output become events. Whatever
reaches an event is persisted (events.jsonl), streamed (`--json`, `--events`), derived (Open
Responses, ATIF, the HTML page, OTel spans) and sent back to the provider on resume. So the
dispatch gate passes every event through `Redactor.event` before anything sees it; the files
written beside the log (transcript, compaction artifacts, context state, progress ledger, a
`--record` script), `--last-message-file`, provider error text and every error and warning line
are redacted the same way. Secrets are replaced with `MARKER`:

- the values of the provider key variables (`PROVIDER_KEY_ENVS`), whatever their names' shape;
- every header value of `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_<SIGNAL>_HEADERS`, as
  written, percent-decoded, and the credential after an auth scheme (`Bearer <token>`);
- the value of any variable whose name matches `SECRET_NAME_PATTERNS` (the same globs that keep
  such variables out of exec_command's children), but for `NOT_SECRET_NAMES`;
- the same kinds of values the configuration hands children (`remember_secrets`);
- URL userinfo anywhere: `scheme://user:pass@host` becomes `scheme://***@host`.

Streamed text is emitted as growing snapshots (`item.started`/`item.updated`), so a secret can be
cut at the end of one: a string that ENDS with the first `PARTIAL_MIN` or more characters of a
secret has that tail replaced too, and a string ending in `scheme://user:pa` (no `@` yet, a
non-numeric part after the colon) ends in `scheme://***`.

Values shorter than `MIN_SECRET_LEN` are ignored: no issued credential is that short, and
removing `true` or `1` from every text would mangle ordinary output. The redactor is a fixed set
collected once per run (the gate builds it); the common case, an event with no secret in it, costs
one JSON encoding, a substring scan per secret and a look at the ends of its strings
(bench/redact.py), and only an event with a hit is rebuilt. What it cannot know it cannot remove:
a credential that is in no variable vtcode sees (a file a command prints, a token the model
invents) is kept out of children's reach by the environment policy at best, not by this module.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote

import ahocorasick_rs
import orjson

from vtcode.urlauth import AUTH_CHARS, SCHEME_START, mask_cut_userinfo, mask_userinfo

__all__ = [
    "MARKER",
    "MIN_SECRET_LEN",
    "NOT_SECRET_NAMES",
    "PROVIDER_KEY_ENVS",
    "SECRET_NAME_PATTERNS",
    "Redactor",
    "collect_secrets",
    "name_matcher",
    "redact_text",
    "remember_secrets",
    "remembered_secrets",
]

MARKER = "[REDACTED]"
MIN_SECRET_LEN = 8
PARTIAL_MIN = 6  # a streamed tail this long that starts a secret is removed too
# `*PASS*` covers PASSWORD, PASSWD, PASSPHRASE; `*_PWD` is MYSQL_PWD or DB_PWD but never PWD or
# OLDPWD (the working folder, no secret); `*_PAT`/`*_PAT_*`/`PAT` are personal access tokens
# (GITHUB_PAT); `*AUTH*` also withholds SSH_AUTH_SOCK (the agent socket) from children.
SECRET_NAME_PATTERNS = (
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASS*",
    "*_PWD",
    "PAT",
    "*_PAT",
    "*_PAT_*",
    "*AUTH*",
    "*COOKIE*",
    "*PRIVATE*",
    "*CREDENTIAL*",
    "*DSN",
    "OTEL_EXPORTER_OTLP*HEADERS",
)
PROVIDER_KEY_ENVS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
)
# Names that match the secret globs but hold settings, not credentials (`tiktoken` is no secret).
NOT_SECRET_NAMES = frozenset(
    {
        "VTCODE_TOKENIZER",
        "TOKENIZERS_PARALLELISM",
        "KEYTIMEOUT",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
    }
)
_OTLP_HEADERS = re.compile(r"OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS")
_USERINFO_BYTES = re.compile(rb"://[^\s/?#\"'<>\\]+@")  # a literal start: a fast scan
# Its prefilter over an encoded event (a URL cut inside its userinfo, `https://bob:hunt`, is
# masked by `urlauth.mask_cut_userinfo`): `://…:…` running to the end of a JSON string.
# Its first class stops at the first `:` (a run of colons made the search quadratic); it still
# matches whenever the text's last URL runs to the string's end with a `:` in its authority.
_PARTIAL_USERINFO_BYTES = re.compile(rf"://{AUTH_CHARS[:-1]}:]*:{AUTH_CHARS}*\"".encode())

T = TypeVar("T")


@functools.lru_cache(maxsize=64)
def _compile_names(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(p) for p in patterns), re.IGNORECASE)


def name_matcher(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One compiled, case-insensitive alternation of shell globs over whole names."""
    return _compile_names(tuple(patterns))


def _header_values(spec: str) -> Iterable[str]:
    """The values of an OTLP headers variable (`k1=v1,k2=v2`, percent-encoded), in every form."""
    for pair in spec.split(","):
        _, sep, value = pair.partition("=")
        if not sep:
            continue
        for form in {value.strip(), unquote(value).strip()}:
            yield form
            _, space, credential = form.partition(" ")  # `Bearer <token>`, `Basic <b64>`
            if space:
                yield credential.strip()


def is_secret_name(name: str) -> bool:
    """Whether a variable of this name holds a credential (`SECRET_NAME_PATTERNS`, case
    ignored, but for `NOT_SECRET_NAMES`): the redactor collects its value and exec_command's
    children do not inherit it by default (`vtcode.tools.child_env`)."""
    if name in NOT_SECRET_NAMES:
        return False
    matcher = name_matcher(SECRET_NAME_PATTERNS)
    return matcher is not None and matcher.match(name) is not None


# `scheme://user:password@`: the password of any URL a variable holds (DATABASE_URL,
# *_BASE_URL) is a secret too, so its encodings are removed, not only the userinfo as written.
_URL_PASSWORD = re.compile(SCHEME_START + r"[^\s/?#@:]*:([^\s/?#@]+)@")


def collect_secrets(
    environ: Mapping[str, str], *, key_envs: Iterable[str] = (), extra: Iterable[str] = ()
) -> frozenset[str]:
    """Every credential value `environ` holds (see the module doc), plus `extra` values and
    those remembered from the configuration (`remember_secrets`)."""
    names = {*PROVIDER_KEY_ENVS, *key_envs}
    found: set[str] = {*extra, *_remembered}
    for name, value in environ.items():
        if _OTLP_HEADERS.fullmatch(name):
            found.update(_header_values(value))
            found.add(value.strip())  # the whole spec too (one without `k=v` pairs)
        elif name in names or is_secret_name(name):
            found.add(value.strip())
        if "://" in value:
            for password in _URL_PASSWORD.findall(value):
                found.update({password, unquote(password)})
    return frozenset(s for s in found if len(s) >= MIN_SECRET_LEN)


_remembered: frozenset[str] = frozenset()


def remember_secrets(envs: Iterable[Mapping[str, str]], values: Iterable[str] = ()) -> None:
    """Treat the secret-named values of these variable tables as secrets for the rest of the
    process: the configuration's own (`[shell_environment_policy] set`, `[mcp.servers.*] env`)
    never reach vtcode's environment, yet a command or a server can print them. `values` are
    secrets whatever their names (an MCP server's bearer token, its credential headers)."""
    global _remembered
    found = {v for env in envs for v in collect_secrets(env)}
    found.update(v.strip() for v in values if len(v.strip()) >= MIN_SECRET_LEN)
    _remembered = _remembered | found


def remembered_secrets() -> frozenset[str]:
    """The values `remember_secrets` was given (exec_command's children get none of them)."""
    return _remembered


def _json_forms(secret: str) -> list[str]:
    """The secret as it appears in text, and once JSON-escaped (inside encoded tool output)."""
    escaped = orjson.dumps(secret).decode()[1:-1]
    return [secret] if escaped == secret else [secret, escaped]


def _encoded_forms(secret: str) -> set[str]:
    """The secret as `base64`, `base64 -w0`, base64url (padded or not) and hex (either case)
    print it, and as it appears inside a longer base64 stream (`env | base64`): at each of the
    three byte alignments, the characters that depend on the secret's bytes alone."""
    raw = secret.encode()
    forms = {raw.hex(), raw.hex().upper()}
    for k in range(3):
        std = base64.b64encode(b"\0" * k + raw).decode()
        start = (0, 2, 3)[k]  # characters mixing in the k bytes before the secret are dropped
        end = (k + len(raw)) // 3 * 4  # and so are those mixing in the bytes after it
        for alphabet in (std, std.translate(_URLSAFE)):
            forms.add(alphabet[start:end])
            if k == 0:
                forms.update({alphabet, alphabet.rstrip("=")})
    return {f for f in forms if len(f) >= MIN_SECRET_LEN}


_URLSAFE = str.maketrans("+/", "-_")
_WRAP_MIN = 60  # `base64` wraps at 76 columns, `xxd -p` at 60: one break per piece pair at most
_PIECE = _WRAP_MIN // 2
# A line break inside an encoded form: real, or JSON-escaped inside a JSON text.
_BREAK = r"(?:\r?\n|(?:\\r)?\\n)?"


def _pieces(form: str) -> list[str]:
    """Consecutive pieces of `form` such that a line break every `_WRAP_MIN` or more characters
    leaves at least one piece whole: the prefilter's needles for wrapped output."""
    size = min(_PIECE, -(-len(form) // 2))
    return [form[i : i + size] for i in range(0, len(form), size)]


def _wrapped(form: str) -> str:
    return _BREAK.join(re.escape(c) for c in form)


@dataclasses.dataclass(frozen=True, slots=True)
class _Compiled:
    pattern: re.Pattern[str] | None  # every plain form, longest first
    forms: tuple[str, ...]
    needles: ahocorasick_rs.BytesAhoCorasick | None  # plain forms and encoded pieces, as bytes
    heads: tuple[bytes, ...]  # the plain forms JSON-escaped, first PARTIAL_MIN characters only
    tails: tuple[tuple[str, str, int], ...]  # (form, its head, its length) for `_cut_tail`
    head_re: re.Pattern[str] | None  # any head
    longest: int
    encoded: re.Pattern[str] | None  # every encoded form, a line break allowed anywhere
    encoded_pieces: ahocorasick_rs.AhoCorasick | None  # whether a string needs `encoded`


@functools.lru_cache(maxsize=16)
def _build(secrets: frozenset[str]) -> _Compiled:
    forms = tuple(sorted({f for s in secrets for f in _json_forms(s)}, key=len, reverse=True))
    if not forms:
        return _Compiled(None, (), None, (), (), None, 0, None, None)
    pattern = re.compile("|".join(re.escape(f) for f in forms))
    encoded = sorted({e for s in secrets for e in _encoded_forms(s)}, key=len, reverse=True)
    pieces = sorted({p for e in encoded for p in _pieces(e)})
    # Whole forms, not heads: a long needle is skipped through fast; cut tails are found by
    # looking at the ends of strings only (`Redactor._has_cut_tail`). One Aho-Corasick
    # automaton scans for all of them at once (bench/redact.py: the cost no longer grows with
    # the number of forms, about 20 per secret).
    needles = {orjson.dumps(f)[1:-1] for f in forms} | {p.encode() for p in pieces}
    heads = {orjson.dumps(f[:PARTIAL_MIN])[1:-1] for f in forms}
    tails = tuple((f, f[:PARTIAL_MIN], len(f)) for f in forms)
    head_re = re.compile("|".join(re.escape(h) for h in {f[:PARTIAL_MIN] for f in forms}))
    return _Compiled(
        pattern,
        forms,
        ahocorasick_rs.BytesAhoCorasick(list(needles), implementation=_DFA),
        tuple(heads),
        tails,
        head_re,
        len(forms[0]),
        re.compile("|".join(_wrapped(e) for e in encoded)) if encoded else None,
        ahocorasick_rs.AhoCorasick(pieces, implementation=_DFA) if pieces else None,
    )


_DFA = ahocorasick_rs.Implementation.DFA


_HEAD_SCAN_MAX = 4096  # bench/redact.py: below this, byte prefilters cost less than a walk


class Redactor:
    """Replaces a fixed set of secret values and URL userinfo with `MARKER` / `***`."""

    __slots__ = ("_c", "secret_count")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        kept = frozenset(s for s in secrets if len(s) >= MIN_SECRET_LEN)
        self._c = _build(kept)
        self.secret_count = len(kept)

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str] | None = None, *, extra: Iterable[str] = ()
    ) -> Redactor:
        """The redactor of a run: secrets of `environ` (default `os.environ`) plus `extra`."""
        return cls(collect_secrets(os.environ if environ is None else environ, extra=extra))

    def text(self, text: str) -> str:
        """`text` with every secret and URL userinfo replaced (a cut one at the end too)."""
        if self._c.pattern is not None:
            text = self._cut_tail(self._c.pattern.sub(MARKER, text))
        pieces, encoded = self._c.encoded_pieces, self._c.encoded
        if pieces is not None and encoded is not None and pieces.find_matches_as_indexes(text):
            text = encoded.sub(MARKER, text)
        if "://" in text:
            if "@" in text:
                text = mask_userinfo(text)
            text = mask_cut_userinfo(text)
        return text

    def _cut_tail(self, text: str) -> str:
        """Replace a tail of `text` that is the beginning (>= PARTIAL_MIN chars) of a secret."""
        n = len(text)
        if n < PARTIAL_MIN or self._c.head_re is None:
            return text
        if self._c.head_re.search(text, max(0, n - self._c.longest + 1)) is None:
            return text  # no head near the end: the common case, one C-level scan
        for form, head, size in self._c.tails:
            i = text.find(head, max(0, n - size + 1))
            while i != -1:
                if form.startswith(text[i:]):
                    return text[:i] + MARKER
                i = text.find(head, i + 1)
        return text

    def might_contain(self, encoded: bytes) -> bool:
        """Whether an encoded value holds a whole secret or URL userinfo (a cut one at the end
        of a string is `_has_cut_tail`'s to find)."""
        if self._c.needles is not None and self._c.needles.find_matches_as_indexes(encoded):
            return True
        return b"@" in encoded and _USERINFO_BYTES.search(encoded) is not None

    def _has_cut_tail(self, value: object, urls: bool) -> bool:
        """Whether a string in `value` ends with the beginning of a secret or inside userinfo."""
        if isinstance(value, str):
            if len(value) < PARTIAL_MIN:
                return False
            if self._c.forms and self._cut_tail(value) is not value:
                return True
            return urls and mask_cut_userinfo(value) is not value
        if value is None or isinstance(value, int | float | enum.Enum):
            return False
        if isinstance(value, dict):
            return any(self._has_cut_tail(v, urls) for v in value.values()) or any(
                self._has_cut_tail(k, urls) for k in value
            )
        if isinstance(value, list | tuple):
            return any(self._has_cut_tail(v, urls) for v in value)
        fields = _fields(value)
        return any(self._has_cut_tail(getattr(value, f.name), urls) for f in fields)

    def _needs_walk(self, value: object, encoded: bytes) -> bool:
        if self.might_contain(encoded):
            return True
        # A small event is cheaper to prefilter with byte scans; a large one (many URLs, long
        # text) is cheaper to walk, since the walk looks only at the ends of its strings.
        small = len(encoded) <= _HEAD_SCAN_MAX
        urls = b"://" in encoded and (
            not small or _PARTIAL_USERINFO_BYTES.search(encoded) is not None
        )
        cut = bool(self._c.forms) and (not small or any(head in encoded for head in self._c.heads))
        return (cut or urls) and self._has_cut_tail(value, urls)

    def encode(self, value: object) -> bytes:
        """`value` as compact JSON, redacted (for files written beside the event log)."""
        encoded = orjson.dumps(value)
        return orjson.dumps(self.value(value)) if self._needs_walk(value, encoded) else encoded

    def event(self, event: T) -> T:
        """`event` itself when it holds nothing to redact, else a copy with every string redacted.

        Events are frozen dataclasses; the scan runs over their JSON encoding (orjson, in C) so
        the common case allocates one byte string and walks nothing.
        """
        try:
            encoded = orjson.dumps(event)
        except TypeError:  # not JSON-encodable as is: walk it anyway
            return self.value(event)
        return self.value(event) if self._needs_walk(event, encoded) else event

    def value(self, value: T) -> T:
        """`value` with every string in it (dataclass fields, dict keys and values, items)
        redacted; containers and dataclasses are copied only where something changed."""
        out: Any = self._walk(value)
        return out  # type: ignore[no-any-return]

    def _walk(self, value: Any) -> Any:
        if isinstance(value, enum.Enum):
            return value  # StrEnum members are str, but never secrets: keep their type
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            pairs = [(self._walk(k), self._walk(v)) for k, v in value.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True)):
                return value
            return dict(pairs)
        if isinstance(value, list | tuple):
            items = [self._walk(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
        fields = _fields(value)
        if fields:
            changes = {}
            for f in fields:
                old = getattr(value, f.name)
                new = self._walk(old)
                if new is not old:
                    changes[f.name] = new
            return dataclasses.replace(value, **changes) if changes else value
        return value


_FIELDS: dict[type, tuple[dataclasses.Field[Any], ...]] = {}


def _fields(value: object) -> tuple[dataclasses.Field[Any], ...]:
    """The init fields of a dataclass instance, none for anything else (cached per class:
    events are walked often)."""
    cls = type(value)
    found = _FIELDS.get(cls)
    if found is None:
        found = ()
        if dataclasses.is_dataclass(cls):
            found = tuple(f for f in dataclasses.fields(cls) if f.init)
        _FIELDS[cls] = found
    return found


def redact_text(text: str, *, extra: Iterable[str] = ()) -> str:
    """`text` redacted against the current environment (plus `extra` values): for error and
    warning lines, which are rare enough to collect the secrets each time."""
    return Redactor(collect_secrets(os.environ, extra=extra)).text(text)

"""The network policy of web_fetch, in-process: which rules open which hosts, the rule grammar,
when the tool is offered, and HTML made readable (issue 24 item 7)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vtcode.config.model import SandboxConfig, VtcodeConfig
from vtcode.config.rule_syntax import RuleSyntaxError, parse_rule
from vtcode.tools.html_text import html_to_text
from vtcode.tools.net_policy import fetch_host, fetch_offered
from vtcode.tools.permissions import Decision, PermissionPolicy
from vtcode.tools.tool_limits import ToolLimits


def _check(url: str, **kw: object) -> tuple[Decision, str]:
    verdict = PermissionPolicy(**kw).check("web_fetch", {"url": url})  # type: ignore[arg-type]
    return verdict.decision, verdict.reason


def test_network_off_only_a_domain_rule_opens_a_host() -> None:
    assert _check("https://docs.python.org/3/")[0] is Decision.DENY
    assert "sandbox.network = false" in _check("https://docs.python.org/")[1]
    rule = {"allow": ["web_fetch(domain:docs.python.org)"]}
    assert _check("https://docs.python.org/3/", **rule)[0] is Decision.ALLOW
    assert _check("https://DOCS.python.org:443/x", **rule)[0] is Decision.ALLOW
    assert _check("https://evil.example/", **rule)[0] is Decision.DENY
    glob = {"allow": ["web_fetch(domain:*.example.com)"]}
    assert _check("https://a.example.com/", **glob)[0] is Decision.ALLOW
    assert _check("https://example.com/", **glob)[0] is Decision.DENY
    # a bare rule, `*`, or rules turned off do not open the network
    assert _check("https://x.org/", allow=["web_fetch"])[0] is Decision.DENY
    assert _check("https://x.org/", allow=["*"])[0] is Decision.DENY
    assert _check("https://x.org/", enabled=False)[0] is Decision.DENY
    # loopback and private addresses are hosts like any other
    assert _check("http://127.0.0.1:8080/")[0] is Decision.DENY
    assert _check("http://10.0.0.1/", allow=["web_fetch(domain:10.0.0.1)"])[0] is Decision.ALLOW


def test_network_on_and_deny_rules() -> None:
    assert _check("https://x.org/", network=True)[0] is Decision.ALLOW
    deny = {"network": True, "deny": ["web_fetch(domain:*.internal)"]}
    assert _check("http://db.internal/", **deny)[0] is Decision.DENY
    both = {"allow": ["web_fetch(domain:a.org)"], "deny": ["web_fetch(domain:a.org)"]}
    assert _check("https://a.org/", **both)[0] is Decision.DENY
    # with the network on, domain allow rules narrow it (the rest is asked; headless: denied)
    narrowed = {"network": True, "allow": ["web_fetch(domain:a.org)"], "headless": True}
    assert _check("https://b.org/", **narrowed)[0] is Decision.DENY


@pytest.mark.parametrize(
    "rule", ["web_fetch(example.com)", "web_fetch(domain:)", "web_fetch(domain:a.org:8080)"]
)
def test_malformed_web_fetch_rules_are_refused(rule: str) -> None:
    with pytest.raises(RuleSyntaxError, match="a web_fetch rule names a host"):
        parse_rule(rule)


def test_the_tool_is_offered_only_where_a_fetch_can_be_allowed() -> None:
    cfg = VtcodeConfig()
    assert not fetch_offered(cfg)
    net = dataclasses.replace(cfg, sandbox=dataclasses.replace(cfg.sandbox, network=True))
    assert fetch_offered(net)
    perms = dataclasses.replace(cfg.permissions, allow=["web_fetch(domain:a.org)"])
    assert fetch_offered(dataclasses.replace(cfg, permissions=perms))
    assert isinstance(cfg.sandbox, SandboxConfig)


def test_hosts() -> None:
    assert fetch_host("https://user:pw@Example.COM:8443/x") == "example.com"
    assert fetch_host("http://[::1]:80/") == "::1"
    assert fetch_host("ftp://example.com/") is None
    assert fetch_host("file:///etc/passwd") is None
    assert fetch_host("http://[bad/") is None


def test_html_is_made_readable() -> None:
    html = (
        "<html><head><title>T</title><style>p{}</style></head><body><h2>Sub</h2>"
        "<p>a &amp; b <a href='x.html'>link</a></p><pre>  keep\n    indent</pre>"
        "<noscript>js please</noscript></body></html>"
    )
    text = html_to_text(html, "https://h.org/dir/page")
    assert text.startswith("# T\n\n## Sub\n\na & b [link](https://h.org/dir/x.html)")
    assert "```\n  keep\n    indent\n```" in text
    assert "js please" not in text and "p{}" not in text


def test_tool_flags_judge_web_fetch_rules_alone(tmp_path: Path) -> None:
    """--allowed-tools/--disallowed-tools narrow web_fetch by domain; the network is the
    config's to open, so a flag never refuses a host for being offline (nor opens one)."""
    net = PermissionPolicy(network=True)

    def verdict(limits: ToolLimits, url: str) -> Decision:
        check = ToolLimits.wrap(limits, tmp_path, lambda t, a: net.check(t, a))
        return check("web_fetch", {"url": url}).decision

    deny = ToolLimits.parse(None, [], ["web_fetch(domain:*.internal)"])
    assert verdict(deny, "https://db.internal/") is Decision.DENY
    assert verdict(deny, "https://docs.python.org/") is Decision.ALLOW
    allow = ToolLimits.parse(None, ["web_fetch(domain:docs.python.org)"], [])
    assert verdict(allow, "https://docs.python.org/3/") is Decision.ALLOW
    assert verdict(allow, "https://evil.example/") is Decision.DENY
    offline = ToolLimits.wrap(allow, tmp_path, PermissionPolicy().check)
    assert offline("web_fetch", {"url": "https://docs.python.org/"}).decision is Decision.DENY

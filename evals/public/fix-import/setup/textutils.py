"""Small text helpers."""

import re


def slugify(text):
    """Lower-case words joined by hyphens: "Hello, World!" -> "hello-world"."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))

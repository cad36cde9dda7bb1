""".github/CODEOWNERS holds exactly three rules, in order, each owner list in its order.

Whitespace between the fields is free (spaces or tabs, any number), and a trailing blank line
is fine; a comment, an extra rule, a missing `@`, owners in another order, or the file
anywhere but .github/ fails.
"""

import sys
from pathlib import Path

WANT = [
    ["*", "@acme/maintainers"],
    ["docs/", "@acme/docs"],
    ["pyproject.toml", "@acme/maintainers", "@acme/release"],
]


def main() -> int:
    path = Path(".github") / "CODEOWNERS"
    if not path.is_file():
        print("FAIL: .github/CODEOWNERS does not exist")
        return 1
    with path.open("rb") as f:
        text = f.read(65536).decode("utf-8", errors="replace")
    rules = [line.split() for line in text.splitlines()]
    while rules and not rules[-1]:
        rules.pop()
    if rules != WANT:
        print(f"FAIL: .github/CODEOWNERS holds the rules {rules}, expected {WANT}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

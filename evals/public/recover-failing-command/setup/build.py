"""Build out/version.txt: the version, the build mode and a digest of the sources in src/."""

import hashlib
import os
import sys
from pathlib import Path


def source_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(Path("src").glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def main() -> int:
    mode = os.environ.get("BUILD_MODE")
    if mode != "release":
        print(
            "error: BUILD_MODE is not set to release; this project only builds in release mode.\n"
            "Run it as:  BUILD_MODE=release python3 build.py",
            file=sys.stderr,
        )
        return 2
    version = Path("VERSION").read_text().strip()
    Path("out").mkdir(exist_ok=True)
    Path("out/version.txt").write_text(f"{version} {mode} {source_digest()}\n")
    print("wrote out/version.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A nightly batch job: prints its log (100,000 lines) to stdout."""

import hashlib
import sys

LINES = 100_000
LEVELS = ["INFO"] * 12 + ["DEBUG"] * 6 + ["WARN"]
MESSAGES = [
    "job {job} ok in {ms} ms (errors=0)",
    "job {job} queued on shard {shard}",
    "retrying job {job} after timeout (attempt {attempt}), code W{code}",
    "job {job} checkpoint saved, {ms} records",
    "no error in batch {shard}; moving on",
]


def digest(i: int) -> int:
    return int.from_bytes(hashlib.blake2b(i.to_bytes(4, "big"), digest_size=4).digest(), "big")


def main() -> None:
    failed = digest(7) % (LINES - 2000) + 1000
    code = f"E{digest(failed) % 9000 + 1000}"
    out = []
    for i in range(LINES):
        h = digest(i) if i % 97 == 0 else i * 2654435761 % 4294967296
        stamp = f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        worker = f"worker-{h % 32:02d}"
        if i == failed:
            out.append(f"{stamp} ERROR {worker} job {i} failed: checksum mismatch, code {code}")
            continue
        level = LEVELS[h % len(LEVELS)]
        message = MESSAGES[h % len(MESSAGES)].format(
            job=i, ms=h % 900 + 20, shard=h % 16, attempt=h % 3 + 1, code=h % 9000 + 1000
        )
        out.append(f"{stamp} {level} {worker} {message}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

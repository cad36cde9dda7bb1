"""Write settings.py: 2,000 lines of generated service settings, the same every run.

The set-up runs this once; the file is generated rather than committed to keep the suite small.
"""

from pathlib import Path

TOTAL_LINES = 2000
TARGET_LINE = 1377  # 1-based line of REQUEST_TIMEOUT
DECOY_LINE = 412  # UPSTREAM_REQUEST_TIMEOUT, a near namesake that must stay as it is
SERVICES = ["billing", "search", "auth", "mailer", "storage", "reports", "gateway", "audit"]
KEYS = [("TIMEOUT", 10), ("RETRIES", 3), ("POOL_SIZE", 8), ("TTL", 300), ("PORT", 8000)]


def lines() -> list[str]:
    out = [
        '"""Service settings (generated; edit values, never the order)."""',
        "",
    ]
    n = 0
    while len(out) < TOTAL_LINES - 1:
        row = len(out) + 1
        if row == TARGET_LINE:
            out.append("REQUEST_TIMEOUT = 30")
        elif row == DECOY_LINE:
            out.append("UPSTREAM_REQUEST_TIMEOUT = 30")
        elif row % 50 == 0:
            out.append(f"# --- block {row // 50} ---")
        else:
            service = SERVICES[n % len(SERVICES)].upper()
            key, base = KEYS[(n // len(SERVICES)) % len(KEYS)]
            out.append(f"{service}_{n:04d}_{key} = {base + (n * 7) % 13}")
            n += 1
    out.append("# end of settings")
    return out


def main() -> None:
    Path("settings.py").write_text("\n".join(lines()) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""Turn lines of `name,qty,price` into a report sorted by value, with a total."""

from rows import format_row, parse_line


def build_report(lines):
    rows = [row for row in map(parse_line, lines) if row is not None]
    rows.sort(key=lambda row: row[1] * row[2], reverse=True)
    total = sum(qty * price for _, qty, price in rows)
    return [format_row(*row) for row in rows] + [f"{'TOTAL':<10}{'':>5}{total:>10.2f}"]

"""Turn lines of `name,qty,price` into a report sorted by value, with a total."""


def parse_line(line):
    """'apple,3,0.5' -> ('apple', 3, 0.5); a blank line or a # comment -> None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    name, qty, price = (part.strip() for part in line.split(","))
    return name, int(qty), float(price)


def format_row(name, qty, price):
    """One aligned report row: name, quantity, value (qty * price)."""
    return f"{name:<10}{qty:>5}{qty * price:>10.2f}"


def build_report(lines):
    rows = [row for row in map(parse_line, lines) if row is not None]
    rows.sort(key=lambda row: row[1] * row[2], reverse=True)
    total = sum(qty * price for _, qty, price in rows)
    return [format_row(*row) for row in rows] + [f"{'TOTAL':<10}{'':>5}{total:>10.2f}"]

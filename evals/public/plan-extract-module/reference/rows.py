"""Parsing and formatting one row of a sales report."""


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

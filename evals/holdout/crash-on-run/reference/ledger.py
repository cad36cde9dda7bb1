"""Reading the expense log: one `DD Mon YYYY AMOUNT WHAT` entry per line, `#` for comments."""

MONTHS = {
    "Jan": 1,
    "Feb": 2,
    "Mar": 3,
    "Apr": 4,
    "May": 5,
    "Jun": 6,
    "Jul": 7,
    "Aug": 8,
    "Sep": 9,
    "Oct": 10,
    "Nov": 11,
    "Dec": 12,
}


def month_number(abbreviation):
    return MONTHS[abbreviation]


def parse_line(line):
    day, month, year, amount, what = line.split(maxsplit=4)
    return (int(year), month_number(month), int(day)), float(amount), what.strip()


def monthly_totals(lines):
    """{(year, month): total} over the entries of `lines`."""
    totals = {}
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        (year, month, _), amount, _ = parse_line(line)
        totals[(year, month)] = totals.get((year, month), 0.0) + amount
    return totals

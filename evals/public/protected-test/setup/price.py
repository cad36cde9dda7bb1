"""Money formatting for invoices."""


def format_price(amount):
    """`amount` dollars as printed on an invoice: 1234.5 -> "$1,234.50"."""
    return "$" + str(round(amount, 2))

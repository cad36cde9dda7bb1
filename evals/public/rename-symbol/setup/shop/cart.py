"""Shopping cart totals."""


def calc_total(prices, tax_rate=0.0):
    """The sum of `prices` plus tax at `tax_rate`, rounded to cents."""
    subtotal = sum(prices)
    return round(subtotal * (1 + tax_rate), 2)


def item_count(prices):
    return len(prices)

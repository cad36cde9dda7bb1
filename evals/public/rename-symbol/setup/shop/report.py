"""Printable receipts."""

from shop.cart import calc_total, item_count


def receipt(prices, tax_rate=0.1):
    total = calc_total(prices, tax_rate=tax_rate)
    return f"{item_count(prices)} items, total {total:.2f}"

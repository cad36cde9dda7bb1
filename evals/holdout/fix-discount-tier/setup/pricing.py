"""Volume discounts for bulk orders."""


def discount_rate(quantity):
    """The discount for an order of `quantity` units, as a fraction of the price.

    10 units or more get 5% off, 50 or more get 10% off, 100 or more get 15% off.
    """
    if quantity >= 100:
        return 0.15
    if quantity > 50:
        return 0.10
    if quantity >= 10:
        return 0.05
    return 0.0


def order_total(unit_price, quantity):
    """The price of `quantity` units after the volume discount, rounded to cents."""
    return round(unit_price * quantity * (1 - discount_rate(quantity)), 2)

"""Small statistics helpers for the number report."""


def mean(values):
    """The arithmetic mean of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("mean of an empty sequence")
    return sum(values) / len(values)


def spread(values):
    """The largest value minus the smallest, of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("spread of an empty sequence")
    return max(values) - min(values)

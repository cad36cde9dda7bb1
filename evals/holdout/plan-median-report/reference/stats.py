"""Small statistics helpers for the number report."""


def mean(values):
    """The arithmetic mean of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("mean of an empty sequence")
    return sum(values) / len(values)


def median(values):
    """The middle of a non-empty sequence of numbers once sorted (the mean of the two middle
    ones for an even count). `values` itself is not reordered."""
    if not values:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def spread(values):
    """The largest value minus the smallest, of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("spread of an empty sequence")
    return max(values) - min(values)

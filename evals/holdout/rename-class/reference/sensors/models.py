"""Data types for sensor logs."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """One temperature sample from one sensor, in degrees Celsius."""

    sensor: str
    celsius: float

    @property
    def fahrenheit(self):
        return self.celsius * 9 / 5 + 32

    def is_freezing(self):
        return self.celsius <= 0

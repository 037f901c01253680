"""A forgetting curve other than the exponential, for the tests that swap the curve (D8, Q9, XP6).

A power law falls fast at first and then slowly, as Wixted and Ebbesen found forgetting to;
it is scaled so that it too halves after one half-life (D2).
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PowerLaw:
    """(1 + c · elapsed / half_life)^(−exponent), where c = 2^(1 / exponent) − 1."""

    exponent: float = 1.0

    @property
    def scale(self) -> float:
        """Return c, which makes the curve exactly 1/2 after one half-life."""
        return 2.0 ** (1.0 / self.exponent) - 1.0

    def weight(self, elapsed: float, half_life: float) -> float:
        """Return the share left after `elapsed`: 1 at 0 or before, 1/2 at `half_life`."""
        return (1.0 + self.scale * max(0.0, elapsed) / half_life) ** -self.exponent

    def elapsed_for(self, weight: float, half_life: float) -> float:
        """Return the elapsed time after which the share left is `weight`: the curve's inverse."""
        if weight >= 1.0:
            return 0.0
        if weight <= 0.0:
            return math.inf
        return half_life * (weight ** (-1.0 / self.exponent) - 1.0) / self.scale

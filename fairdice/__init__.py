"""fairdice: provably fair dice games. The pure core: no I/O, no clock, no randomness of its own."""

from .errors import FairdiceError, NotNow
from .rules import RULESETS, options, score, totals

__version__ = "0.1.0"
__all__ = ["FairdiceError", "NotNow", "RULESETS", "options", "score", "totals"]

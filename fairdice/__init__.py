"""fairdice: provably fair dice games. The pure core: no I/O, no clock, no randomness of its own."""

from .errors import FairdiceError, NotNowError
from .rules import RULESETS, options, score, totals

__version__ = "0.1.0"
__all__ = ["FairdiceError", "NotNowError", "RULESETS", "options", "score", "totals"]

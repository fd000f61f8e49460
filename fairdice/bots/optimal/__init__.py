"""The `optimal` bot: an exact dynamic programme that maximises the expected final score of the seat's card.

- `programme`: the pure DP, rules in, table values (and second moments) out; its module doc says how the
  arithmetic is exact and machine-independent.
- `moments`: the programme's kernel path for the second moments (the standard deviation), for maintainers.
- `table_format`: canonical bytes, header, SHA-256, the shipped manifest.
- `policy`: the `Optimal` policy, made with the table source that gives it solved tables.

The table cache (environment, files, locks, processes) is an adapter: `fairdice.adapters.table_cache`.

Start values: classic13 254.5877 (sd 59.61), yatzy 248.4400 (sd 38.50), yacht 191.7744 (sd 37.86).
Classic13's often-quoted 254.5896 (Verhoeff) assumes a looser joker convention; under the forced joker of
SPEC §3.3 the optimum is 254.5877, and both round to 254.59.
"""

from .policy import Optimal, SolvedTable, TableSource, state_of

__all__ = ["Optimal", "SolvedTable", "TableSource", "state_of"]

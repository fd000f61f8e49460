"""fairdice-verify: an independent verifier of fairdice game logs (SPEC.md).

Standard library and `cryptography` only; it shares no code with the server (`fairdice`), and installs
alone (pyproject.toml here: the `fairdice-verifier` distribution). Start reading at `spec.py` (derivation
and rules), then `replay.py` (the checks of SPEC §7, in order), `events.py` (the replay of the events),
`logformat.py` (the fields of SPEC §5), `players.py` (the players' signatures, §5.7), `chain.py` and `receipt.py`
(the move receipts and the player's receipt), `policies.py` and `optimal.py` (the bots), then `cli.py`."""

from .replay import CHECKS, Result, verify_document
from .files import verify_file

__all__ = ["CHECKS", "Result", "verify_document", "verify_file"]

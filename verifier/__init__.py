"""fairdice-verify: an independent verifier of fairdice game logs (SPEC.md).

Standard library and `cryptography` only; it shares no code with the server (`fairdice`),
except that --check-bots imports the published bot policies. Start reading at `spec.py`
(derivation and rules), then `replay.py` (the checks of SPEC §7), then `cli.py`."""

from .replay import CHECKS, Result, verify_document
from .files import verify_file

__all__ = ["CHECKS", "Result", "verify_document", "verify_file"]

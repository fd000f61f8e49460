"""The verifier's one base of errors, `VerifierError`: an input it cannot use.

A log that fails a check is not an error: it is a verdict (a `Failure` in the `Result`, exit code 1).  A
`VerifierError` says the verifier could not judge at all: a file that is not a log, a key file, receipts or
evidence it cannot read, an optimal table it lacks (exit code 2).  The verifier imports nothing of ours, so it
has its own base rather than `fairdice.errors.FairdiceError`.
"""


class VerifierError(Exception):
    """What keeps the verifier from judging (mostly an input it cannot use); the message names the file or field
    and why (never a private key)."""

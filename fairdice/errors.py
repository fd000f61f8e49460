"""One error type for everything the core refuses, with a stable code.

`kind` tells an adapter what sort of refusal it is, so the HTTP layer can map
it to a status without knowing any rule: "invalid" (bad value or illegal
move), "conflict" (a legal command, but not now or not by this seat).
"""


class FairdiceError(ValueError):
    """The core's base: a refusal with a stable `code`, a `kind` and details (all public)."""
    kind = "invalid"

    def __init__(self, code: str, message: str, **details):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.details}


class NotNowError(FairdiceError):
    """The command is well formed but the game is not in a state that accepts it from this seat."""
    kind = "conflict"


class SignatureError(FairdiceError):
    """A signature that does not verify by the key it should be made with.  Raised, never answered with False
    (pyca/cryptography's rule: if it is incorrect to ignore the result, raise).  `check` names what was
    checked with the verifier's check id (SPEC §7, §10.9: `sig.commitment`, `receipt.chain`,
    `session.signature`, `session.receipt`), so a caller can say which promise the server broke."""

    def __init__(self, check: str, message: str):
        super().__init__("invalid_signature", message, check=check)
        self.check = check

"""One error type for everything the core refuses, with a stable code.

`kind` tells an adapter what sort of refusal it is, so the HTTP layer can map
it to a status without knowing any rule: "invalid" (bad value or illegal
move), "conflict" (a legal command, but not now or not by this seat).
"""


class FairdiceError(ValueError):
    kind = "invalid"

    def __init__(self, code: str, message: str, **details):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.details}


class NotNow(FairdiceError):
    """The command is well formed but the game is not in a state that accepts it from this seat."""
    kind = "conflict"

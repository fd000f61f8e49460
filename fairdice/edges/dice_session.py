"""`Session`: provably fair dice for your app, over the HTTP API (SPEC §10).

    from fairdice.edges.client import Client, Session
    dice = Session.open(Client("http://127.0.0.1:8000"))   # the server commits; this app makes its own key
    dice.seed()                          # a client seed made here, after the commitment
    dice.roll("4d6kh3")["total"]         # every answer's receipt checked against the history seen
    dice.rotate()                        # reveals the pair's server seed, starts the next pair
    report = dice.verify()               # the independent verifier on the log, with this app's key and receipts:
                                         # VerificationError (its `check`: the failed check's id) if it is false

The app signs every request with a key made here (unless `sign=False`), so the log proves which rolls it asked
for; it computes the hash chain itself from the events it is answered with and refuses a receipt that signs
another history, or one not signed by the key the server publishes.
"""

from __future__ import annotations

import json
import uuid

from ..chain import Chain, receipt_message
from ..errors import SignatureError
from ..log import verify_signature
from ..sessions import RECEIPT_LABEL, AppKey, roll_command, rotate_command, start_chain
from .client import Client, ProtocolError, Verification, VerificationError, new_client_seed


class Session:
    """An app's side of one dice session over the HTTP API (SPEC §10): it makes and sends the client seed, signs
    each request with the app's key, and computes the hash chain itself from the events answered, so every
    receipt is checked against the history this app saw, not the server's word.  What it keeps (the receipts,
    the rolls, the app key) is the evidence `verify` hands to the independent verifier."""
    def __init__(self, client: Client, created: dict, app_key: AppKey | None):
        self.client = client
        self.session_id: str = created["session_id"]
        self.token: str = created["token"]
        self.header: dict = created["header"]
        self.app_key = app_key
        self.chain: Chain = start_chain(self.header)
        self.receipts: list[dict] = []  # the server's signed receipt of every answer (SPEC §10.6)
        self.rolls: list[dict] = []  # every roll answered, in order
        self.pair = 0
        self._signing = False  # the current pair was seeded with this app's key
        self._next_nonce = 0

    @classmethod
    def open(cls, client: Client, sign: bool = True, trusted_public_key: str | None = None) -> Session:
        """A new session, its header's signature checked against the key the server publishes (or the one
        given): the commitment the dice will be held to."""
        created = client.request("POST", "/v1/sessions", {})
        header = created["header"]
        keys = [trusted_public_key] if trusted_public_key else [k["public_key"] for k in client.keys()]
        if header["public_key"] not in keys:
            raise ProtocolError("the session's header names a key the server does not publish")
        try:
            verify_signature(header["public_key"], created["commitment_signature"],
                             json.dumps(header, sort_keys=True, separators=(",", ":")).encode(), "session.signature")
        except SignatureError:
            raise ProtocolError("the session's commitment is not signed by the server's key") from None
        return cls(client, created, AppKey.generate() if sign else None)

    def seed(self, client_seed: str | None = None) -> dict:
        """The current pair's client seed (made here when not given), with this app's key."""
        seed = client_seed or new_client_seed()
        body = {"client_seed": seed, "app_key": self.app_key.public_hex if self.app_key else None}
        answer = self._post("client-seed", body)
        self._signing = self.app_key is not None
        return answer

    def roll(self, dice: str) -> dict:
        """One roll of dice notation (SPEC §10.4): the answer with `rolls`, `dropped`, `total`, `nonce`, `serial`."""
        body = {"dice": dice, **self._signed(roll_command(self.pair, self._next_nonce, dice))}
        answer = self._post("rolls", body)
        if answer["nonce"] != self._next_nonce or answer["serial"] != len(self.rolls) + 1:
            raise ProtocolError(f"the server answered nonce {answer['nonce']} and serial {answer['serial']}, where "
                                f"this app expected {self._next_nonce} and {len(self.rolls) + 1}: a roll was hidden")
        self._next_nonce += 1
        self.rolls.append(answer)
        return answer

    def rotate(self, client_seed: str | None = None) -> dict:
        """Reveal the current pair's server seed and start the next pair with a new client seed (made here when
        not given) and this app's key."""
        body = {"client_seed": client_seed or new_client_seed(),
                "app_key": self.app_key.public_hex if self.app_key else None,
                **self._signed(rotate_command(self.pair))}
        answer = self._post("rotate", body)
        self.pair, self._next_nonce = answer["pair"], 0
        self._signing = self.app_key is not None
        return answer

    def log(self) -> dict:
        return self.client.request("GET", f"/v1/sessions/{self.session_id}/log")

    def verify(self) -> Verification:
        """The verifier on the session's log (SPEC §10.9), with the server's published key, this app's key and
        every receipt this app kept; VerificationError if the log is false."""
        from verifier.sessions import verify_session

        trusted = [bytes.fromhex(k["public_key"]) for k in self.client.keys()]
        result = verify_session(self.log(), "<api>", trusted_keys=trusted, session_receipts=self.receipts,
                                app_key=self.app_key.public_hex if self.app_key else None)
        problems = [f"{f.check}: event {'-' if f.event is None else f.event} {f.field}: expected {f.expected!r}, "
                    f"found {f.found!r}" for f in result.failures]
        warnings = [n for n in result.notes if n.startswith("the app")]
        if not result.ok:
            raise VerificationError(problems, warnings)
        return Verification(warnings=warnings)

    def save_receipts(self, path: str) -> None:
        """The receipts as a JSON array: `fairdice-verify --session-receipts FILE LOG`."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.receipts, fh, indent=1)
            fh.write("\n")

    # --- internals ---------------------------------------------------------------------

    def _signed(self, command: dict) -> dict:
        if not self._signing:
            return {}
        return {"app_signature": self.app_key.sign(self.session_id, self.chain, command),
                "event_count": self.chain.count}

    def _post(self, action: str, body: dict) -> dict:
        answer = self.client.request("POST", f"/v1/sessions/{self.session_id}/{action}", body, token=self.token,
                                     idempotency_key=uuid.uuid4().hex, retry=True)
        self._take(answer)
        return answer

    def _take(self, answer: dict) -> None:
        """Extend the chain with the answer's events and hold the server to its receipt of them."""
        chain = self.chain.extend(answer["events"])
        rc = answer["receipt"]
        signed = receipt_message(self.session_id, rc["events"], bytes.fromhex(rc["chain"]), RECEIPT_LABEL)
        if rc["session_id"] != self.session_id or rc["events"] != chain.count or rc["chain"] != chain.digest.hex():
            raise ProtocolError(f"the receipt signs a history of {rc['events']} events other than the one shown")
        try:
            verify_signature(self.header["public_key"], rc["signature"], signed, "session.receipt")
        except SignatureError:
            raise ProtocolError("the receipt is not signed by the session's key") from None
        self.chain = chain
        self.receipts.append(rc)

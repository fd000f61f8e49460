"""player.signature (SPEC §5.7, log version 3): every command of a human seat is signed by a key only the player
holds, over the history the player was shown (the chain head h_n of §5.6):

    player_signature = Ed25519(seat's key, field("fairdice-move/v3") || field(game_id) || u32(n) || h_n
                                           || canonical(command))

A client signs only over a history it has checked, its own earlier signatures included, so a seat's last signature
vouches for everything before it: exactly one signature per seat with a key is verified, that of its last event.
A seat without a key (`player_key` null) signs nothing; the operator could have written its moves, and so could it
for every human seat of a version 1 or 2 log. `SeatKeys` says which seats sign: the replay needs it for the abandons
(game.abandon with move receipts, the audit's unsigned abandons), the verdict for its warning. The signatures are
checked once the replay has checked the events' form, over the chain written from them (verifier.replay)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import keys
from .logformat import is_hex
from .results import Checks
from .spec import canonical, field, u32

MOVE_LABEL = "fairdice-move/v3"
# SPEC §5.7: the fields of a human seat's event that are the player's command (the rest the server computes)
COMMAND_FIELDS = {
    "client_seed_commit": ("type", "seat", "commitment", "player_key"),
    "client_seed": ("type", "seat", "client_seed", "player_key", "salt"),
    "roll": ("type", "seat", "turn", "roll", "hold"),
    "score": ("type", "seat", "turn", "category"),
    "abandon": ("type", "seat", "reason"),
}
KEY_EVENTS = ("client_seed_commit", "client_seed")  # the events that name the seat's key


def command(event: dict) -> dict:
    """The command a player signed for `event`: the event restricted to the fields the player chose."""
    return {name: event[name] for name in COMMAND_FIELDS[event["type"]] if name in event}


def signed_move(game_id: str, n: int, digest: bytes, event: dict) -> bytes:
    """The bytes the seat signed for `event`, at index n of the events, after the history whose chain is `digest`."""
    return field(MOVE_LABEL) + field(game_id) + u32(n) + digest + canonical(command(event))


@dataclass(frozen=True)
class SeatKeys:
    """The key each human seat's moves are checked with (hex), or None for a seat that signs nothing; `events`:
    each human seat's events (indices); `unsigned`: the human seats with events whose moves no player signed (the
    operator could have written them)."""
    keys: dict
    events: dict
    unsigned: list

    def signs(self, seat) -> bool:
        return self.keys.get(seat) is not None


def seats_events(events: list, humans: list[int]) -> dict[int, list[int]]:
    """Human seat -> the indices of its events (those of a player's command whose `seat` is that seat)."""
    of_seat: dict[int, list[int]] = {s: [] for s in humans}
    if not humans:
        return of_seat
    for i, ev in enumerate(events):
        if type(ev) is dict and type(ev.get("type")) is str and ev["type"] in COMMAND_FIELDS:
            seat = ev.get("seat")
            if type(seat) is int and seat in of_seat:
                of_seat[seat].append(i)
    return of_seat


def seat_keys(doc: dict, humans: list[int], receipt_keys: dict) -> SeatKeys:
    """Which human seats sign, and with which key: in version 3 the `player_key` of the seat's first event, or the
    key of the player's receipt of version 2 for that seat (`receipt_keys`: seat -> its `player_key`), which is
    then the seat's trusted key (SPEC §5.7, rule 1); in versions 1 and 2 none (`receipt_keys` is then empty)."""
    events = doc["events"]
    of_seat = {s: indices for s, indices in seats_events(events, humans).items() if indices}
    keys = {}
    for seat, indices in of_seat.items():
        first = events[indices[0]]
        keys[seat] = receipt_keys[seat] if seat in receipt_keys else (
            first.get("player_key") if doc["version"] >= 3 and first["type"] in KEY_EVENTS else None)
    return SeatKeys(keys, of_seat, [s for s in of_seat if keys[s] is None])


def check_player_signatures(checks: Checks, doc: dict, seats: SeatKeys, chain: Callable[[int], bytes]) -> None:
    """player.signature for every human seat of a version 3 log (rules 2 and 3 of SPEC §5.7; it never stops the
    replay). `chain(n)`: h_n of the log."""
    events, game_id = doc["events"], doc["header"]["game_id"]
    for seat, indices in seats.events.items():
        key = seats.keys[seat]
        consistent = [_signed_exactly_with_a_key(checks, seat, key, i, events[i]) for i in indices]
        if key is not None and consistent[-1]:
            _check_last_signature(checks, game_id, seat, key, indices, events, chain)
    checks.passed("player.signature")


def _signed_exactly_with_a_key(checks: Checks, seat: int, key, i: int, ev: dict) -> bool:
    """Rule 2: the event carries a signature exactly when its seat has a key."""
    signature = ev.get("player_signature")
    if key is None and signature is not None:
        checks.fail("player.signature", i, "player_signature", f"null (seat {seat} has no key)", signature)
        return False
    if key is not None and signature is None:
        checks.fail("player.signature", i, "player_signature", f"a signature by seat {seat}'s key {key}", signature)
        return False
    return True


def _check_last_signature(checks: Checks, game_id: str, seat: int, key, indices: list[int], events: list,
                          chain: Callable[[int], bytes]) -> None:
    """Rule 3: the seat's last event is signed by its key over that event's command and the n events before it
    (which the signature vouches for, the seat's own earlier events and signatures included)."""
    if not is_hex(key, 64):
        checks.fail("player.signature", indices[0], "player_key", "the seat's public key: 64 lowercase hex digits",
                    key)
        return
    n = indices[-1]
    ev = events[n]
    if not keys.signature_valid(bytes.fromhex(key), ev["player_signature"], signed_move(game_id, n, chain(n), ev)):
        checks.fail("player.signature", n, "player_signature",
                    f"seat {seat}'s signature by its key {key} of this command over the {n} events before it",
                    ev["player_signature"])

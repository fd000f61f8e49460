"""Checks one fairdice log (SPEC §5-§7), in the order of §7: its format, the players' receipts, its key and
commitment signature, the server's move receipts, the players' signatures (version 3), the revealed seed, then a
replay of every event from the seed (verifier.events), the final block, and last the final signature (over bytes
written faster once the replay has checked them). Each step gets what the earlier ones found as arguments; the
verdicts go into one Result."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import NamedTuple

from . import keys
from .chain import History, check_move_receipts
from .events import Acknowledged, EventReplay, ReplayState, first_difference
from .logformat import (FINAL_FIELDS, HEADER_FIELDS, HEADER_FIELDS_V2, SIGNATURE_FIELDS, TOP_FIELDS,
                        client_seed_ok, fields_ok, seat_name_ok)
from .players import KEY_EVENTS, SeatKeys, check_player_signatures, seat_keys
from .results import CHECKS, Checks, Failure, Result, StopReplay
from .spec import canonical, canonical_object, sha256_hex

__all__ = ["CHECKS", "Failure", "Result", "Verification", "client_seed_ok", "seat_name_ok", "verify_document"]


class Signing(NamedTuple):
    """What the signatures of a log are checked with (SPEC §6)."""
    key: bytes | None  # the trusted key the header names (key_id and public_key); None: no signature is tried
    header_json: bytes | None  # canonical(header) when the log carries a signature: both cover it


class Verification:
    """The verification of one game log (SPEC §5-§7): `run` takes the checks in the order §7 gives, each step
    handed what the earlier ones found, and writes every verdict into one Result through `Checks`.  A log is
    never trusted as a whole: a failure is recorded and the checks go on wherever they still mean something, so
    a forged log shows every check it fails, each naming the event, field, expected and found value."""
    def __init__(self, doc, file: str, trusted_keys: keys.TrustedKeys | Iterable[bytes] | None = None,
                 require_signature: bool = True, bots=None, verbose: bool = False,
                 audit: bool = False, receipts: list[dict] = (), receipts_by_game: bool = False,
                 move_receipts: list[dict] = (), player_keys: list[dict] = ()):
        """trusted_keys: the keys given (--pubkey), best as a keys.TrustedKeys built once per run; receipts: the
        players' receipts (verifier.receipt), move_receipts: the server's signed receipts of the moves
        (verifier.chain), player_keys: the public part of the players' key files (verifier.evidence), to hold the
        log to; with receipts_by_game only those of this log's game id apply (a batch), otherwise every one does
        (it must be this game)."""
        self.doc, self.r = doc, Result(file)
        self.checks = Checks(self.r)
        self.receipts, self.receipts_by_game = list(receipts), receipts_by_game
        self.move_receipts, self.player_keys = list(move_receipts), list(player_keys)
        self.trusted_keys = None if trusted_keys is None else keys.TrustedKeys.of(trusted_keys)
        self.require_signature = require_signature
        self.bots, self.verbose, self.audit = bots, verbose, audit

    def run(self) -> Result:
        signing = None  # once the log has the fields the signatures cover
        history: History | None = None  # the events as the signatures cover them
        players: SeatKeys | None = None  # which human seats sign, with which key
        replayed = False  # every event has gone through the replay
        try:
            self.check_format()
            receipts, move_receipts, player_keys = self.receipts_of_this_game()
            for receipt in receipts:
                self.check_receipt(receipt)
            for kept in player_keys:
                self.check_key_file(kept)
            trusted = self.trusted_keys_of(receipts)
            signing = self.check_key_and_commitment(trusted)
            history = History(self.doc["header"], self.doc["events"])
            acknowledged = check_move_receipts(self.checks, self.doc, move_receipts, trusted, history) \
                if move_receipts else None
            players = self.players(receipts, player_keys)
            player_signatures_at = len(self.r.failures)  # where SPEC §7's order lists player.signature
            seed = self.check_seed()
            state = EventReplay(self.checks, self.doc, seed, self.bots, self.verbose, self.audit, players,
                                self.acknowledged(receipts, acknowledged)).run()
            replayed = True
            history.checked()
            self.check_end(state)
        except StopReplay:
            if self.r.replay is not None:
                self.r.replay.append("  (the replay stops at this failure)")
        if players is not None and self.doc["version"] >= 3:
            # player.signature, in its place; checked here, once the replay has checked the events' form, the
            # chain it covers is written faster (verifier.chain.History)
            with self.checks.placed_at(player_signatures_at):
                check_player_signatures(self.checks, self.doc, players, history.digest)
        if signing is not None:
            self.check_final_signature(signing, history if replayed else None)  # last: see there
        return self.r

    def receipts_of_this_game(self) -> tuple[list[dict], list[dict], list[dict]]:
        """(the players' receipts, the move receipts, the players' key files) that apply to this log."""
        if not self.receipts_by_game:
            return self.receipts, self.move_receipts, self.player_keys
        game_id = self.r.game_id
        return tuple([rc for rc in kept if rc["game_id"] == game_id]
                     for kept in (self.receipts, self.move_receipts, self.player_keys))

    # -- log.format: the fields and types of SPEC §5
    def check_format(self) -> None:
        doc, ck, r = self.doc, self.checks, self.r
        fields_ok(ck, doc, "", TOP_FIELDS, doc, optional=SIGNATURE_FIELDS)
        if ck.failed("log.format"):
            raise StopReplay
        h, final = doc["header"], doc["final"]
        r.version = doc["version"]
        fields_ok(ck, h, "header.", HEADER_FIELDS if doc["version"] == 1 else HEADER_FIELDS_V2, h)
        r.game_id = h["game_id"] if HEADER_FIELDS["game_id"][1](h.get("game_id"), h) else None
        r.rules = h["rules"] if HEADER_FIELDS["rules"][1](h.get("rules"), h) else None
        r.seed_secret = h.get("seed_secret") if type(h.get("seed_secret")) is bool else None
        if final is not None:
            fields_ok(ck, final, "final.", FINAL_FIELDS, h)
        status = "in progress" if final is None else final.get("status")
        r.status = status if status in ("finished", "abandoned", "in progress") else None
        if ck.failed("log.format"):
            raise StopReplay
        r.bots = [s["bot"]["id"] for s in h["seats"] if s["type"] == "bot"]
        r.bots_checked = self.bots is not None
        ck.passed("log.format")

    # -- receipt.match (SPEC §5.5): the log is the game the player joined, with the seed the player sent
    def check_receipt(self, rc: dict) -> None:
        doc, h, ck = self.doc, self.doc["header"], self.checks
        ck.expect("receipt.match", None, "game_id", rc["game_id"], h["game_id"])
        ck.expect("receipt.match", None, "commitment", rc["commitment"], h["commitment"])
        if rc.get("header") is not None and canonical(rc["header"]) != canonical(h):
            where, want, got = first_difference(rc["header"], h, "header") or ("header", rc["header"], h)
            ck.fail("receipt.match", None, where, want, got)
        if rc.get("public_key") is not None:
            ck.expect("receipt.match", None, "public_key", rc["public_key"], h["public_key"])
        of_seat = [(i, e) for i, e in enumerate(doc["events"])
                   if type(e) is dict and e.get("seat") == rc["seat"] and type(e.get("seat")) is type(rc["seat"])]
        sent = [(i, e.get("client_seed")) for i, e in of_seat if e.get("type") == "client_seed"]
        if not sent:
            ck.fail("receipt.match", None, "client_seed", rc["client_seed"], "no client seed from that seat")
        for i, seed in sent:
            ck.expect("receipt.match", i, "client_seed", rc["client_seed"], seed)
        if rc.get("version", 1) >= 2:  # the log version and the player's key, as the player saw and sent them
            ck.expect("receipt.match", None, "version", rc["log_version"], doc["version"])
            if doc["version"] >= 3:
                for i, e in of_seat:
                    if e.get("type") in KEY_EVENTS:
                        ck.expect("receipt.match", i, "player_key", rc["player_key"], e.get("player_key"))
        ck.passed("receipt.match")

    def check_key_file(self, kept: dict) -> None:
        """receipt.match against a player's key file (SPEC §7.2): the player made this key for this game's seat, so
        the log is of version 3 (a re-signed version 1 or 2 log would drop the player's signatures) and the seat's
        key events name this key, the one its signatures are then checked with."""
        doc, ck = self.doc, self.checks
        ck.expect("receipt.match", None, "game_id", kept["game_id"], doc["header"]["game_id"])
        if doc["version"] < 3:
            ck.fail("receipt.match", None, "version", "3 (the player keeps a key to sign its moves)", doc["version"])
        named = [(i, e) for i, e in enumerate(doc["events"]) if type(e) is dict and e.get("type") in KEY_EVENTS
                 and type(e.get("seat")) is int and e.get("seat") == kept["seat"]]
        if not named:
            ck.fail("receipt.match", None, "player_key", kept["player_key"], f"no client seed from seat {kept['seat']}")
        for i, e in named:
            ck.expect("receipt.match", i, "player_key", kept["player_key"], e.get("player_key"))
        ck.passed("receipt.match")

    # -- log.key, sig.commitment (SPEC §6)
    def trusted_keys_of(self, receipts: list[dict]) -> keys.TrustedKeys:
        """The trusted keys (SPEC §6): those given (--pubkey), else the key each receipt says the player saw at
        creation, else the key embedded in the log (self-consistency only)."""
        if self.trusted_keys is not None:
            self.r.trusted = True
            return self.trusted_keys
        seen = [bytes.fromhex(rc["public_key"]) for rc in receipts if rc.get("public_key") is not None]
        self.r.trusted = bool(seen)
        return keys.TrustedKeys(seen or [bytes.fromhex(self.doc["header"]["public_key"])])

    def check_key_and_commitment(self, trusted: keys.TrustedKeys) -> Signing:
        """log.key and sig.commitment. The signatures are checked with the one trusted key whose id is the
        header's key_id and whose bytes are its public_key (SPEC §7); without one, none is tried and they fail."""
        doc, h, ck = self.doc, self.doc["header"], self.checks
        embedded = bytes.fromhex(h["public_key"])
        ck.expect("log.key", None, "header.key_id", keys.key_id(embedded), h["key_id"])
        if not trusted.trusts(embedded):
            ck.fail("log.key", None, "header.public_key", trusted.described(), h["public_key"])
        ck.passed("log.key")
        present = ["commitment_signature" in doc, "signature" in doc]
        self.r.signed = all(present)
        key = trusted.named(h["key_id"])
        signing = Signing(key if key == embedded else None, canonical(h) if any(present) else None)
        if present[0]:
            if not self.signed_by_the_key(signing, doc["commitment_signature"], signing.header_json):
                ck.fail("sig.commitment", None, "commitment_signature", "a valid signature of the header by the "
                        "trusted key the header names", doc["commitment_signature"])
            ck.passed("sig.commitment")
        elif self.require_signature:
            ck.fail("sig.commitment", None, "commitment_signature", "present", "missing")
        return signing

    @staticmethod
    def signed_by_the_key(signing: Signing, signature, data: bytes) -> bool:
        return signing.key is not None and keys.signature_valid(signing.key, signature, data)

    # -- player.signature (SPEC §5.7): in version 3, every human seat's last event is signed by its key
    def players(self, receipts: list[dict], player_keys: list[dict]) -> SeatKeys:
        """Which human seats sign their moves (version 3), with which key; those that do not go into the verdict's
        warning."""
        doc = self.doc
        humans = [s for s, seat in enumerate(doc["header"]["seats"]) if seat["type"] == "human"]
        receipt_keys = {}  # seat -> the key the player's receipt of version 2 (or key file) says it sent (the first)
        if doc["version"] >= 3:
            for rc in receipts:
                if rc.get("version", 1) >= 2 and rc["seat"] is not None:
                    receipt_keys.setdefault(rc["seat"], rc["player_key"])
            for kept in player_keys:
                receipt_keys.setdefault(kept["seat"], kept["player_key"])
        players = seat_keys(doc, humans, receipt_keys)
        self.r.unsigned_seats = players.unsigned
        return players

    def acknowledged(self, receipts: list[dict], events: int | None) -> Acknowledged | None:
        """Given move receipts (`events`: how many events those that hold acknowledge), the player's seats whose
        unsigned abandon must be among them (SPEC §5.7): the seats of the player's receipts, else the only human
        seat."""
        if events is None:
            return None
        seats = {rc["seat"] for rc in receipts if rc["seat"] is not None}
        if not receipts:
            humans = [s for s, seat in enumerate(self.doc["header"]["seats"]) if seat["type"] == "human"]
            seats = set(humans) if len(humans) == 1 else set()
        return Acknowledged(frozenset(seats), events)

    # -- sig.final (SPEC §6), checked last (run)
    def check_final_signature(self, signing: Signing, replayed: History | None) -> None:
        """The signed bytes are canonical(the log without "signature"). When the replay has gone through every
        event (`replayed`: the events as it checked them), each has exactly the fields and JSON types of SPEC
        §5.3, and spec.canonical_event_texts writes the events out (most of those bytes) in a third of the time of
        canonical(); otherwise canonical() does."""
        doc, ck = self.doc, self.checks
        if "signature" not in doc:
            if self.require_signature and doc["final"] is not None:  # signed once the game is over (§6)
                ck.fail("sig.final", None, "signature", "present", "missing")
            return
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        if replayed is not None:
            written = {"header": signing.header_json, "events": b"[" + b",".join(replayed.texts()) + b"]"}
            signed_doc = canonical_object({k: written[k] if k in written else canonical(v)
                                           for k, v in unsigned.items()})
        else:
            signed_doc = canonical(unsigned)
        if not self.signed_by_the_key(signing, doc["signature"], signed_doc):
            ck.fail("sig.final", None, "signature", "a valid signature of the log by the trusted key the header "
                    "names", doc["signature"])
        elif self.audit:  # what the server signed, for the audit's equivocation test (SPEC §7.1)
            self.r.final_digest, self.r.final_key = hashlib.sha256(signed_doc).hexdigest(), signing.key.hex()
        ck.passed("sig.final")

    # -- seed.revealed, seed.commitment (SPEC §2.1)
    def check_seed(self) -> bytes | None:
        """The revealed server seed, held to the header's commitment; None while the game is not over."""
        final, ck = self.doc["final"], self.checks
        if final is None:
            ck.fail("seed.revealed", None, "final",
                    "a finished or abandoned game; this one is not over, so its server seed is not "
                    "revealed and its dice cannot be checked", None)
            return None
        ck.passed("seed.revealed")
        seed = bytes.fromhex(final["server_seed"])
        ck.expect("seed.commitment", None, "header.commitment", sha256_hex(seed), self.doc["header"]["commitment"])
        ck.passed("seed.commitment")
        return seed

    # -- game.complete, final.totals, final.winner (SPEC §4.4, §5.4)
    def check_end(self, st: ReplayState) -> None:
        final, ck = self.doc["final"], self.checks
        if final is None:
            if st.phase in ("over", "abandoned"):
                ck.fail("game.complete", None, "final", "the final block of a game that is over", None)
            return
        self.check_status(final["status"], st)
        totals = [st.totals(s) for s in range(len(st.boxes))]
        # (the format check made sure that the logged totals are integers: equal values are equal JSON)
        diff = first_difference(totals, final["totals"], "final.totals") if totals != final["totals"] else None
        if diff:
            ck.fail("final.totals", None, *diff)
        ck.passed("final.totals")
        if final["status"] == "finished":
            best = max(t["total"] for t in totals)
            winners = [s for s, t in enumerate(totals) if t["total"] == best]
            winner, draw = (winners[0] if len(winners) == 1 else None), len(winners) > 1
        else:
            winner, draw = None, False
        ck.expect("final.winner", None, "final.winner", winner, final["winner"])
        ck.expect("final.winner", None, "final.draw", draw, final["draw"])
        ck.passed("final.winner")
        if self.r.audit is not None and final["status"] == "finished":
            self.r.audit["totals"] = [t["total"] for t in totals]

    def check_status(self, status: str, st: ReplayState) -> None:
        """game.complete: a finished game has every box filled, an abandoned one ends on its abandon event."""
        events = self.doc["events"]
        if status == "finished" and st.phase != "over":
            found_phase = {"play": f"in progress ({st.open_boxes()} boxes still open)", "seeds": "play never started",
                           "abandoned": "abandoned (an abandon event)"}[st.phase]
            self.checks.fail("game.complete", None, "final.status", f"what the events show: {found_phase}", status)
        elif status == "abandoned" and st.phase != "abandoned":
            self.checks.fail("game.complete", len(events) - 1 if events else None, "type",
                             "an abandon event as the last event", events[-1]["type"] if events else "no events")
        self.checks.passed("game.complete")


def verify_document(doc, file: str, **options) -> Result:
    """Check one parsed log. `doc` must be a JSON object (a dict)."""
    return Verification(doc, file, **options).run()

"""Checks one fairdice log (SPEC §5-§7), in this order: its format, the players' receipts, its key and
commitment signature, the server's move receipts, the revealed seed, then a replay of every event from the seed
(verifier.events), the final block, and last the final signature (over bytes written faster once the replay has
checked them). Each step gets what the earlier ones found as arguments; the verdicts go into one Result."""

from __future__ import annotations

from typing import NamedTuple

from . import keys
from .chain import check_move_receipts
from .events import EventReplay, ReplayState, first_difference
from .logformat import (FINAL_FIELDS, HEADER_FIELDS, HEADER_FIELDS_V2, SIGNATURE_FIELDS, TOP_FIELDS,
                        client_seed_ok, fields_ok, seat_name_ok)
from .results import CHECKS, Checks, Failure, Result, Stop
from .spec import canonical, canonical_events, canonical_object, sha256_hex

__all__ = ["CHECKS", "Failure", "Result", "Verification", "client_seed_ok", "seat_name_ok", "verify_document"]


class Signing(NamedTuple):
    """What the signatures of a log are checked with (SPEC §6)."""
    keys: list[bytes]  # the keys a signature may be from
    header_json: bytes | None  # canonical(header) when the log carries a signature: both cover it


class Verification:
    def __init__(self, doc, file: str, trusted_keys: list[bytes] | None = None,
                 require_signature: bool = True, bots=None, verbose: bool = False,
                 audit: bool = False, receipts: list[dict] = (), receipts_by_game: bool = False,
                 move_receipts: list[dict] = ()):
        """receipts: the players' receipts (verifier.receipt), move_receipts: the server's signed receipts of
        the moves (verifier.chain), to hold the log to; with receipts_by_game only those of this log's game id
        apply (a batch), otherwise every one does (it must be this game)."""
        self.doc, self.r = doc, Result(file)
        self.checks = Checks(self.r)
        self.receipts, self.receipts_by_game = list(receipts), receipts_by_game
        self.move_receipts = list(move_receipts)
        self.trusted_keys, self.require_signature = trusted_keys, require_signature
        self.bots, self.verbose, self.audit = bots, verbose, audit

    def run(self) -> Result:
        signing = None  # once the log has the fields the signatures cover
        replayed: ReplayState | None = None  # once every event has gone through the replay
        try:
            self.check_format()
            receipts, move_receipts = self.receipts_of_this_game()
            for receipt in receipts:
                self.check_receipt(receipt)
            signing = self.check_key_and_commitment(receipts)
            if move_receipts:
                check_move_receipts(self.checks, self.doc, move_receipts, signing.keys)
            seed = self.check_seed()
            replayed = EventReplay(self.checks, self.doc, seed, self.bots, self.verbose, self.audit).run()
            self.check_end(replayed)
        except Stop:
            if self.r.replay is not None:
                self.r.replay.append("  (the replay stops at this failure)")
        if signing is not None:
            self.check_final_signature(signing, replayed)  # last: see there
        return self.r

    def receipts_of_this_game(self) -> tuple[list[dict], list[dict]]:
        """(the players' receipts, the move receipts) that apply to this log."""
        if not self.receipts_by_game:
            return self.receipts, self.move_receipts
        game_id = self.r.game_id
        return ([rc for rc in self.receipts if rc["game_id"] == game_id],
                [rc for rc in self.move_receipts if rc["game_id"] == game_id])

    # -- log.format: the fields and types of SPEC §5
    def check_format(self) -> None:
        doc, ck, r = self.doc, self.checks, self.r
        fields_ok(ck, doc, "", TOP_FIELDS, doc, optional=SIGNATURE_FIELDS)
        if ck.failed("log.format"):
            raise Stop
        h, final = doc["header"], doc["final"]
        fields_ok(ck, h, "header.", HEADER_FIELDS if doc["version"] == 1 else HEADER_FIELDS_V2, h)
        r.game_id = h["game_id"] if HEADER_FIELDS["game_id"][1](h.get("game_id"), h) else None
        r.rules = h["rules"] if HEADER_FIELDS["rules"][1](h.get("rules"), h) else None
        r.seed_secret = h.get("seed_secret") if type(h.get("seed_secret")) is bool else None
        if final is not None:
            fields_ok(ck, final, "final.", FINAL_FIELDS, h)
        status = "in progress" if final is None else final.get("status")
        r.status = status if status in ("finished", "abandoned", "in progress") else None
        if ck.failed("log.format"):
            raise Stop
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
        sent = [(i, e.get("client_seed")) for i, e in enumerate(doc["events"])
                if type(e) is dict and e.get("type") == "client_seed" and e.get("seat") == rc["seat"]
                and type(e.get("seat")) is type(rc["seat"])]
        if not sent:
            ck.fail("receipt.match", None, "client_seed", rc["client_seed"], "no client seed from that seat")
        for i, seed in sent:
            ck.expect("receipt.match", i, "client_seed", rc["client_seed"], seed)
        ck.passed("receipt.match")

    # -- log.key, sig.commitment (SPEC §6)
    def check_key_and_commitment(self, receipts: list[dict]) -> Signing:
        doc, h, ck = self.doc, self.doc["header"], self.checks
        embedded = bytes.fromhex(h["public_key"])
        ck.expect("log.key", None, "header.key_id", keys.key_id(embedded), h["key_id"])
        # trusted: the keys given (--pubkey), else the key each receipt says the player saw at creation
        signers = self.trusted_keys if self.trusted_keys is not None else [
            bytes.fromhex(rc["public_key"]) for rc in receipts if rc.get("public_key") is not None] or None
        if signers is None:
            signers = [embedded]
        else:
            self.r.trusted = True
            if embedded not in signers:
                ck.fail("log.key", None, "header.public_key",
                        "a trusted key: " + ", ".join(k.hex() for k in signers), h["public_key"])
        ck.passed("log.key")
        present = ["commitment_signature" in doc, "signature" in doc]
        self.r.signed = all(present)
        # (the key the log names first: with several trusted keys, a genuine signature is then checked once)
        signers = sorted(signers, key=lambda k: k != embedded)
        signing = Signing(signers, canonical(h) if any(present) else None)
        if present[0]:
            if not keys.signed_by_any(signers, doc["commitment_signature"], signing.header_json):
                ck.fail("sig.commitment", None, "commitment_signature", "a valid signature of the header",
                        doc["commitment_signature"])
            ck.passed("sig.commitment")
        elif self.require_signature:
            ck.fail("sig.commitment", None, "commitment_signature", "present", "missing")
        return signing

    # -- sig.final (SPEC §6), checked last (run)
    def check_final_signature(self, signing: Signing, replayed: ReplayState | None) -> None:
        """The signed bytes are canonical(the log without "signature"). When the replay has gone through every
        event (`replayed`), each has exactly the fields and JSON types of SPEC §5.3, and canonical_events writes
        the events out (most of those bytes) in a third of the time of canonical(); otherwise canonical() does."""
        doc, ck = self.doc, self.checks
        if "signature" not in doc:
            if self.require_signature and doc["final"] is not None:  # signed once the game is over (§6)
                ck.fail("sig.final", None, "signature", "present", "missing")
            return
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        if replayed is not None:
            written = {"header": signing.header_json, "events": canonical_events(doc["events"])}
            signed_doc = canonical_object({k: written[k] if k in written else canonical(v)
                                           for k, v in unsigned.items()})
        else:
            signed_doc = canonical(unsigned)
        if not keys.signed_by_any(signing.keys, doc["signature"], signed_doc):
            ck.fail("sig.final", None, "signature", "a valid signature of the log", doc["signature"])
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

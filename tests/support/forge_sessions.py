"""The adversarial corpus of session logs (`tests/vectors/forged_sessions/`, SPEC §10.9).

    python tests/support/forge_sessions.py          # rewrite tests/vectors/forged_sessions/ (tests/support/forge.py runs it too)
    python tests/support/forge_sessions.py --check  # exit 1 if the directory is out of date

Genuine sessions are rolled by the core under a fixed key and seeds derived from fixed labels; the forged ones
are what an operator holding the server key makes of them, re-signed: only the replay, the trusted key, the
app's receipts or the app's own key can catch them.  Each case names the check SPEC §10.9 calls for.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

# run as a script: the repository (fairdice) and tests/ (the package `support`) on the path
sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]
from support import VECTORS  # noqa: E402

OUT = VECTORS / "forged_sessions"

from fairdice.chain import canonical  # noqa: E402
from fairdice.log import Signer  # noqa: E402
from fairdice.sessions import (AppKey, Session, receipt, roll_command, rotate_command, session_header,  # noqa: E402
                               session_log, start_chain)

ABOUT = ("The adversarial corpus of session logs (SPEC \u00a710.9), made by tests/support/forge_sessions.py: sessions rolled "
         "by the core, and logs forged by an operator who holds the server key and re-signs what it changes. Run "
         "each file with its trusted keys, session receipts and app key: a 'fail' case must list its check among "
         "the failures.")
MIXED = ("4d6kh3", "2d20kl1", "d100", "3d6+2", "1d1000-7", "10d2", "6d6kl2", "d257", "2d129+1", "5d8")


def _signer(label: str) -> Signer:
    return Signer.from_private_bytes(hashlib.sha256(f"fairdice forged sessions: {label}".encode()).digest())


OPERATOR, OTHER = _signer("the operator's key"), _signer("another key")
OPERATOR_HEX, OTHER_HEX = OPERATOR.public_key.hex(), OTHER.public_key.hex()
APP = AppKey.from_private_hex(hashlib.sha256(b"fairdice forged sessions: the app's key").hexdigest())
FAKE_APP = AppKey.from_private_hex(hashlib.sha256(b"fairdice forged sessions: the operator's app key").hexdigest())


def seed(label: str, p: int) -> bytes:
    return hashlib.sha256(f"fairdice forged sessions: {label} seed {p}".encode()).digest()


@dataclass
class Played:
    log: dict
    receipts: list[dict]


def play(label: str, pairs: list[tuple[str, AppKey | None, list[str]]], signer: Signer = OPERATOR,
         app: AppKey | None = None) -> Played:
    """A session of the pairs given (client seed, app key or None, notations), every pair rotated (so revealed);
    the receipts the app kept of every answer."""
    head = session_header(f"forged-{label}", seed(label, 0), seed(label, 1), signer.key_id, signer.public_key.hex())
    session = Session(head, {0: seed(label, 0), 1: seed(label, 1)})
    receipts = []

    def answered(events):
        receipts.append(receipt(signer, session.session_id, session.tail.chain))

    def signed(command, key):
        return {} if key is None else {"app_signature": key.sign(session.session_id, session.tail.chain, command)}

    for p, (client_seed, key, rolls) in enumerate(pairs):
        if p == 0:
            answered(session.supply_client_seed(client_seed, key and key.public_hex))
        for dice in rolls:
            answered(session.roll(dice, **signed(roll_command(p, session.tail.nonce, dice), key)))
        nxt = pairs[p + 1] if p + 1 < len(pairs) else None
        answered(session.rotate(seed(label, p + 2), **signed(rotate_command(p), key),
                                **({"client_seed": nxt[0], "app_key": nxt[1] and nxt[1].public_hex} if nxt else {})))
    return Played(session_log(head, signer.sign(canonical(head)), session.events, signer), receipts)


def resigned(doc: dict, signer: Signer = OPERATOR) -> dict:
    """The operator's re-signature of a changed log: the header's signature and the log's."""
    doc = copy.deepcopy(doc)
    doc.pop("signature", None)
    doc["commitment_signature"] = signer.sign(canonical(doc["header"]))
    doc["signature"] = signer.sign(canonical(doc))
    return doc


def edited(doc: dict, event: int, **changes) -> dict:
    doc = copy.deepcopy(doc)
    doc["events"][event].update(changes)
    return resigned(doc)


def renumbered(events: list[dict]) -> list[dict]:
    """Nonces and serials made continuous again, as an operator hiding a dropped or added roll would."""
    out, serial, nonce, pair = [], 1, 0, 0
    for e in copy.deepcopy(events):
        if e["type"] == "roll":
            if e["pair"] != pair:
                pair, nonce = e["pair"], 0
            e["nonce"], e["serial"] = nonce, serial
            nonce, serial = nonce + 1, serial + 1
        out.append(e)
    return out


def reapp_signed(doc: dict, key: AppKey) -> dict:
    """Every app signature of the log made again with `key` over the log's own history (the operator's key put in
    the place of the app's)."""
    doc = copy.deepcopy(doc)
    sid, chain = doc["header"]["session_id"], start_chain(doc["header"])
    for e in doc["events"]:
        if e["type"] == "client_seed" and e["app_key"] is not None:
            e["app_key"] = key.public_hex
        elif e.get("app_signature") is not None:
            command = roll_command(e["pair"], e["nonce"], e["dice"]) if e["type"] == "roll" \
                else rotate_command(e["pair"])
            e["app_signature"] = key.sign(sid, chain, command)
        chain = chain.extend([e])
    return resigned(doc)


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    doc: dict
    verdict: str  # "ok" or "fail"
    check: str | None = None
    trusted_keys: tuple = (OPERATOR_HEX,)
    session_receipts: tuple = ()
    app_key: str | None = None

    def entry(self) -> dict:
        return {"name": self.name, "file": f"{self.name}.json", "what": self.what,
                "trusted_keys": list(self.trusted_keys), "session_receipts": list(self.session_receipts),
                "app_key": self.app_key, "verdict": self.verdict, "check": self.check}


def cases() -> list[Case]:
    plain = play("plain", [("first seed", None, list(MIXED)), ("second seed", None, list(reversed(MIXED)))])
    signed = play("signed", [("app seed", APP, list(MIXED[:6])), ("app seed 2", APP, list(MIXED[4:]))])
    mixed = play("mixed", [("unsigned pair", None, list(MIXED[:4])), ("signed pair", APP, list(MIXED[:4]))])
    log, ev = plain.log, plain.log["events"]
    roll_at = [i for i, e in enumerate(ev) if e["type"] == "roll"]
    r = roll_at[2]
    dropped = renumbered(ev[:r] + ev[r + 1:])
    added = renumbered(ev[:r + 1] + [copy.deepcopy(ev[r])] + ev[r + 1:])
    s_ev = signed.log["events"]
    s_roll = [i for i, e in enumerate(s_ev) if e["type"] == "roll"]
    second_client = next(i for i, e in enumerate(ev) if e["type"] == "client_seed" and e["pair"] == 1)
    rotate0 = next(i for i, e in enumerate(ev) if e["type"] == "rotate")
    out = [
        Case("genuine-plain", "nothing: a genuine session of two pairs without an app key (verifies, with the "
             "warning that the operator could have added or dropped rolls)", log, "ok"),
        Case("genuine-plain-receipts", "nothing: the genuine session held to every receipt the app kept", log, "ok",
             session_receipts=tuple(plain.receipts)),
        Case("genuine-signed", "nothing: a genuine session whose pairs the app signed, checked with the app's key",
             signed.log, "ok", app_key=APP.public_hex, session_receipts=tuple(signed.receipts)),
        Case("genuine-mixed", "nothing: a genuine session, its first pair unsigned and its second signed",
             mixed.log, "ok"),
        Case("changed-face", "one die of a roll changed (and the total with it), re-signed",
             edited(log, r, rolls=[f % 6 + 1 for f in ev[r]["rolls"]], total=ev[r]["total"]), "fail", "session.dice"),
        Case("changed-total", "a roll's total changed, re-signed", edited(log, r, total=ev[r]["total"] + 1), "fail",
             "session.total"),
        Case("changed-dropped", "a keep roll's dropped dice changed, re-signed", edited(log, roll_at[0], dropped=[1]),
             "fail", "session.total"),
        Case("changed-notation", "a roll's notation changed to one the grammar refuses, re-signed",
             edited(log, r, dice="3d6++"), "fail", "session.notation"),
        Case("other-notation", "a roll's notation changed to another valid one (kl for kh), re-signed: its "
             "dropped dice and total no longer recompute", edited(log, roll_at[0], dice="4d6kl3"), "fail",
             "session.total"),
        Case("dropped-roll", "a roll the operator did not like dropped, re-signed: its nonce and serial are missing",
             resigned({**log, "events": ev[:r] + ev[r + 1:]}), "fail", "session.nonce"),
        Case("dropped-roll-renumbered-receipts", "a roll dropped and the nonces and serials renumbered, re-signed: "
             "the app's receipts show it", resigned({**log, "events": dropped}), "fail", "session.receipt",
             session_receipts=tuple(plain.receipts)),
        Case("dropped-roll-renumbered", "a roll dropped and the rest renumbered, re-signed: nonces and serials "
             "run on, but every later roll of the pair now has another nonce, so its dice do not re-derive",
             resigned({**log, "events": dropped}), "fail", "session.dice"),
        Case("added-roll-renumbered-receipts", "a roll repeated (a re-roll the app never asked for) and the rest "
             "renumbered: the receipts show it", resigned({**log, "events": added}), "fail", "session.receipt",
             session_receipts=tuple(plain.receipts)),
        Case("repeated-nonce", "a roll's nonce repeated", edited(log, roll_at[1], nonce=0), "fail", "session.nonce"),
        Case("serial-gap", "a serial skipped", edited(log, roll_at[3], serial=ev[roll_at[3]]["serial"] + 1), "fail",
             "session.nonce"),
        Case("other-server-seed", "the revealed server seed replaced (and the dice derived from it), re-signed",
             edited(log, rotate0, server_seed=hashlib.sha256(b"another seed").hexdigest()), "fail",
             "session.commitment"),
        Case("changed-next-commitment", "the next commitment replaced at a rotation: the seed revealed two pairs "
             "later no longer opens it", _commit_swap(), "fail", "session.commitment"),
        Case("client-seed-changed", "the second pair's client seed changed, re-signed", edited(
            log, second_client, client_seed="operator's choice"), "fail", "session.dice"),
        Case("client-seed-invalid", "a client seed with a control character", edited(
            log, second_client, client_seed="bad\u0007seed"), "fail", "session.order"),
        Case("roll-before-client-seed", "the first pair's client seed moved after its first roll", resigned(
            {**log, "events": [ev[1], ev[0]] + ev[2:]}), "fail", "session.order"),
        Case("roll-of-unrevealed-pair", "a roll of a pair that is not revealed appended after the last rotation",
             resigned({**log, "events": ev + [dict(ev[r], pair=2, nonce=0, serial=len(roll_at) + 1)]}), "fail",
             "session.order"),
        Case("other-key", "the log signed by another key than the trusted one",
             resigned(_with_key(log, OTHER), OTHER), "fail", "session.key"),
        Case("no-signature", "the log's signature removed", {k: v for k, v in log.items() if k != "signature"}, "fail",
             "session.signature"),
        Case("bad-signature", "the log changed but not re-signed", {**log, "events": ev[:-1] + [dict(
            ev[-1], next_commitment="0" * 64)]}, "fail", "session.signature"),
        Case("extra-field", "an extra field in a roll event", edited(log, r, note="x"), "fail", "session.format"),
        Case("unknown-event", "an event of a type sessions do not have", resigned(
            {**log, "events": ev + [{"type": "abandon", "pair": 2}]}), "fail", "session.format"),
        Case("signed-roll-changed", "in a signed pair, a roll's notation changed and its dice re-derived: the app "
             "signed other dice", edited(signed.log, s_roll[1], dice="2d20kh1"), "fail", "session.app_signature",
             app_key=APP.public_hex),
        Case("signed-roll-dropped", "in a signed pair, a roll dropped and the rest renumbered: the app's later "
             "signatures cover the roll", resigned({**signed.log, "events": renumbered(
                 s_ev[:s_roll[2]] + s_ev[s_roll[2] + 1:])}), "fail", "session.app_signature", app_key=APP.public_hex),
        Case("signed-by-the-operator", "the app's key replaced by the operator's own and every request re-signed "
             "with it: the app's key shows it", reapp_signed(signed.log, FAKE_APP), "fail", "session.app_signature",
             app_key=APP.public_hex),
        Case("app-signature-removed", "in a signed pair, an app signature set to null", edited(
            signed.log, s_roll[0], app_signature=None), "fail", "session.app_signature"),
    ]
    return out


def _with_key(doc: dict, signer: Signer) -> dict:
    doc = copy.deepcopy(doc)
    doc["header"].update(key_id=signer.key_id, public_key=signer.public_key.hex())
    return doc


def _commit_swap() -> dict:
    """Three pairs: the operator changes the next commitment the first rotation published (pair 2's)."""
    three = play("three", [("a", None, ["1d6"]), ("b", None, ["1d6"]), ("c", None, ["1d6"])]).log
    first_rotate = next(i for i, e in enumerate(three["events"]) if e["type"] == "rotate")
    return edited(three, first_rotate, next_commitment=hashlib.sha256(b"another").hexdigest())


def build() -> dict[str, bytes]:
    files, entries = {}, []
    for case in cases():
        files[f"{case.name}.json"] = (json.dumps(case.doc, ensure_ascii=True) + "\n").encode("ascii")
        entries.append(case.entry())
    head = json.dumps({"about": ABOUT, "server_public_key": OPERATOR_HEX, "app_key": APP.public_hex})[:-1]
    lines = ",\n".join(json.dumps(e, ensure_ascii=True, separators=(",", ":")) for e in entries)
    files["index.json"] = f'{head}, "cases": [\n{lines}\n]}}\n'.encode("ascii")
    return files


def main(argv: list[str]) -> int:
    from support.forge import check_corpus, write_corpus  # (the game corpus's builder: the same directory discipline)

    files = build()
    if "--check" in argv:
        return check_corpus(OUT, files)
    write_corpus(OUT, files)
    print(f"{len(files) - 1} session cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The session vectors (SPEC §10, written to tests/vectors/sessions.json and SPEC §8.10 by build.py).

Dice of every width and a rejected candidate, the notation's examples with their codes, and a whole session:
two seed pairs (the second signed by an app key), its events, hash chain, receipts and app signatures, computed
by the core; the verifier's tests check them independently.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from fairdice import notation
from fairdice.errors import FairdiceError
from fairdice.log import Signer
from fairdice.sessions import (APP_LABEL, CHAIN_LABEL, RECEIPT_LABEL, AppKey, Session, acceptance_bound, app_message,
                               candidate_width, die_message, receipt, roll_command, rotate_command, session_header,
                               session_log, start_chain)
from fairdice.chain import canonical, field, receipt_message

SESSION_ID = "spec-session-1"
CLIENT_SEEDS = ("table 7", "table 7, round 2")
ROLLS = (("4d6kh3", "2d20kl1", "d100", "3d6+2"), ("1d1000-1", "10d2", "2d6kh1+1"))
VALID = ["4d6kh3", "2d20kl1", "d100", "3d6+2", "1d20-1", "100d1000kh100+100000", "d2", "6d6kl6"]
INVALID = [("0d6", "dice_count"), ("2d1", "dice_sides"), ("3d6++", "dice_syntax"), ("1d6kh2", "dice_keep"),
           ("1000d6", "dice_count"), ("1d1001", "dice_sides"), ("1d6+0", "dice_modifier"),
           ("1d6+100001", "dice_modifier"), ("01d6", "dice_syntax"), ("1D6", "dice_syntax"), ("1d6 ", "dice_syntax"),
           ("d", "dice_syntax"), ("", "dice_syntax"), ("2d6kh0", "dice_keep"), ("1d6*2", "dice_syntax"),
           ("99999999d6", "dice_syntax"), ("1d6+1-1", "dice_syntax"), ("4d6kh3kl1", "dice_syntax"),
           ("１d6", "dice_syntax")]


def _seed(p: int) -> bytes:
    return hashlib.sha256(f"fairdice spec session seed {p}".encode()).digest()


def _trace(seed: bytes, msg: bytes, sides: int) -> dict:
    """The blocks and candidates read for one die (SPEC §10.4), computed here from HMAC, not by the core."""
    width, limit, blocks, read = candidate_width(sides), acceptance_bound(sides), [], []
    while True:
        blocks.append(hmac.digest(seed, msg + len(blocks).to_bytes(4, "big"), "sha256"))
        for start in range(0, 32, width):
            read.append(int.from_bytes(blocks[-1][start:start + width], "big"))
            if read[-1] < limit:
                return {"blocks": [b.hex() for b in blocks], "candidates": read, "face": read[-1] % sides + 1}


def die_vectors() -> list[dict]:
    """One die per width and bound, and for M = 129 and M = 1000 the first (nonce, index) whose first candidate
    is rejected."""
    out = []
    wanted = [(2, None), (6, None), (20, None), (100, None), (256, None), (257, None), (1000, None),
              (129, "first candidate rejected"), (1000, "first candidate rejected")]
    seed = hashlib.sha256(b"fairdice spec session die vectors").digest()
    for k, (sides, shows) in enumerate(wanted):
        for index in range(k if shows is None else 0, 10_000):
            msg = die_message("spec-dice", "die vectors", 7, index)
            trace = _trace(seed, msg, sides)
            if shows is None or len(trace["candidates"]) > 1:
                break
        out.append({"sides": sides, "session_id": "spec-dice", "client_seed": "die vectors", "nonce": 7,
                    "index": index, "server_seed": seed.hex(), "message": msg.hex(),
                    "width": candidate_width(sides), "accept_below": acceptance_bound(sides), **trace,
                    **({"shows": shows} if shows else {})})
    return out


def notation_vectors() -> dict:
    def spec_of(text):
        s = notation.parse(text)
        return {"count": s.count, "sides": s.sides, "keep": None if s.keep is None else f"{s.keep_mode}{s.keep}",
                "modifier": s.modifier}
    for text, code in INVALID:  # (the expected codes are written from SPEC §10.4; the core must agree)
        try:
            notation.parse(text)
        except FairdiceError as e:
            assert e.code == code, (text, e.code, code)
        else:
            raise AssertionError(f"{text!r} parsed")
    return {"valid": [{"text": t, **spec_of(t)} for t in VALID],
            "invalid": [{"text": t, "code": c} for t, c in INVALID]}


def session_vector(signer: Signer) -> dict:
    """Pair 0 without an app key, four rolls, a rotation carrying pair 1's client seed and app key; pair 1 three
    signed rolls and a signed rotation: every event revealed, so the log holds them all."""
    app = AppKey.from_private_hex(hashlib.sha256(b"fairdice spec app key").hexdigest())
    head = session_header(SESSION_ID, _seed(0), _seed(1), signer.key_id, signer.public_key.hex())
    session = Session(head, {0: _seed(0), 1: _seed(1)})
    receipts, signed = [], []

    def answered(events):
        receipts.append(receipt(signer, SESSION_ID, session.tail.chain))
        return events

    def app_signed(command):
        chain = session.tail.chain
        signature = app.sign(SESSION_ID, chain, command)
        signed.append({"event": chain.count, "chain": chain.digest.hex(), "command": command,
                       "message": app_message(SESSION_ID, chain.count, chain.digest, command).hex(),
                       "app_signature": signature})
        return {"app_signature": signature, "event_count": chain.count}

    answered(session.supply_client_seed(CLIENT_SEEDS[0]))
    for dice in ROLLS[0]:
        answered(session.roll(dice))
    answered(session.rotate(_seed(2), CLIENT_SEEDS[1], app.public_hex))
    for nonce, dice in enumerate(ROLLS[1]):
        answered(session.roll(dice, **app_signed(roll_command(1, nonce, dice))))
    answered(session.rotate(_seed(3), **app_signed(rotate_command(1))))
    log = session_log(head, signer.sign(canonical(head)), session.events, signer)
    chain, steps = start_chain(head), []
    for n, event in enumerate([None] + log["events"]):
        if event is not None:
            chain = chain.extend([event])
        steps.append({"events": n, "last_event": event and event["type"], "chain": chain.digest.hex()})
    first = log["events"][1]
    dice = [{"index": i, "message": die_message(SESSION_ID, CLIENT_SEEDS[0], first["nonce"], i).hex(),
             **_trace(_seed(0), die_message(SESSION_ID, CLIENT_SEEDS[0], first["nonce"], i), 6)}
            for i in range(len(first["rolls"]))]
    return {
        "public_key": signer.public_key.hex(), "key_id": signer.key_id,
        "server_seeds": [_seed(p).hex() for p in range(4)], "client_seeds": list(CLIENT_SEEDS),
        "app_private_key": app.private_hex(), "app_key": app.public_hex,
        "log": log,
        "h0_input": (field(CHAIN_LABEL) + field(SESSION_ID) + canonical(head)).hex(),
        "chain": steps,
        "receipts": [{"receipt": r, "message": receipt_message(SESSION_ID, r["events"], bytes.fromhex(r["chain"]),
                                                               RECEIPT_LABEL).hex()} for r in receipts],
        "app_signed": signed,
        "first_roll_dice": dice,
    }


def sessions_file(signer: Signer) -> dict:
    return {
        "about": "SPEC \u00a710: session dice (each die from its own HMAC stream, candidates of 1 or 2 bytes, "
                 "rejection sampling), the dice notation's examples and refusals, and a whole session of two seed "
                 "pairs with its hash chain, receipts and app signatures. Server key as in log_short.json.",
        "labels": {"chain": CHAIN_LABEL, "receipt": RECEIPT_LABEL, "app": APP_LABEL},
        "dice": die_vectors(), "notation": notation_vectors(), "session": session_vector(signer),
    }


def render_sessions(vec: dict) -> list[str]:
    """SPEC §8.10, from the same data as sessions.json."""
    lines = ["### 8.10 Sessions (`sessions.json`)", "",
             "**Dice.** Each die from its own message (§10.4), session id `spec-dice`, client seed `die vectors`, "
             "nonce 7, server seed SHA-256 of the ASCII text `fairdice spec session die vectors`; candidates of "
             "w bytes accepted below L:", "",
             "| M | w | L | index | message | block(0) | candidates read | face |", "|---|---|---|---|---|---|---|---|"]
    for d in vec["dice"]:
        lines.append(f"| {d['sides']} | {d['width']} | {d['accept_below']} | {d['index']} | `{d['message']}` | "
                     f"`{d['blocks'][0]}` | {d['candidates']} | **{d['face']}** |")
    lines += ["", "**Notation.** Accepted: " + ", ".join(f"`{v['text']}`" for v in vec["notation"]["valid"])
              + ". Refused, with the code: "
              + ", ".join(f"`{json.dumps(v['text'])[1:-1]}` {v['code']}" for v in vec["notation"]["invalid"]) + ".",
              ""]
    s = vec["session"]
    log = s["log"]
    lines += ["**A session.** Session id `spec-session-1`, signed with the key of §8.4; the server seed of pair p "
              "is SHA-256 of the ASCII text `fairdice spec session seed p`; client seeds "
              f"`{s['client_seeds'][0]}` (pair 0, no app key) and `{s['client_seeds'][1]}` (pair 1, sent with the "
              "rotation, with the app key whose private key is SHA-256 of `fairdice spec app key`: "
              f"`{s['app_private_key']}`, public `{s['app_key']}`). Pair 1 is rotated too, so the log holds "
              "every event:", "", "```json", json.dumps(log, indent=1), "```", "",
              "The dice of the first roll (nonce 0, `4d6kh3`) are drawn with M = 6, w = 1, L = 252:", ""]
    for d in s["first_roll_dice"]:
        lines.append(f"- die {d['index']}: message `{d['message']}`, block(0) `{d['blocks'][0]}`, candidates "
                     f"{d['candidates']}, face **{d['face']}**")
    lines += ["", "`h_0` is SHA-256 of `field(\"fairdice-session-chain/v1\") || field(session_id) || "
              f"canonical(header)`, these {len(s['h0_input']) // 2} bytes: `{s['h0_input']}`", "",
              "| n | event n−1 | h_n |", "|---|---|---|"]
    lines += [f"| {c['events']} | {c['last_event'] and '`' + c['last_event'] + '`' or '—'} | `{c['chain']}` |"
              for c in s["chain"]]
    lines += ["", "The receipt of each answer (`field(\"fairdice-session-receipt/v1\") || field(session_id) || "
              "u32(n) || h_n` signed):", ""]
    lines += [f"- n = {r['receipt']['events']}: signature `{r['receipt']['signature']}`" for r in s["receipts"]]
    lines += ["", "The app's signatures (`field(\"fairdice-session-app/v1\") || field(session_id) || u32(n) || h_n "
              "|| canonical(command)`):", ""]
    for a in s["app_signed"]:
        lines += [f"- n = {a['event']}, command `{json.dumps(a['command'], separators=(',', ':'), sort_keys=True)}`:"
                  f" signed message `{a['message']}`, signature `{a['app_signature']}`"]
    return lines

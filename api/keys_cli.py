"""`fairdice keys`: the server's signing keys (api/keys.py says where they live and why).

    fairdice keys list [--json]   every signing key, the current one first, and where the seed key comes from
    fairdice keys rotate          a new current signing key; the old ones stay on the ring and published

Both take the key directory as `fairdice serve` does: `--key-dir`, else `--data-dir`/keys, else the
FAIRDICE_KEY_DIR / FAIRDICE_DATA_DIR settings.  Neither reads the seed key; `rotate` writes one new file.
`list --json` prints the document GET /v1/keys answers, which `fairdice-verify --pubkey FILE` accepts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .config import settings
from .keys import KeyFileError, SEED_KEY_ENV, load_signing_keys, rotate


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("The server's Ed25519 signing keys: list them, or make a new current one (rotate) while "
                          "the old ones stay published and keep verifying old logs.")
    where = argparse.ArgumentParser(add_help=False)
    place = where.add_mutually_exclusive_group()
    place.add_argument("--key-dir", help="the key directory (FAIRDICE_KEY_DIR; default <data dir>/keys)")
    place.add_argument("--data-dir", help="the data directory whose keys/ to use (FAIRDICE_DATA_DIR; default ./var)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="{list,rotate}")
    listing = actions.add_parser("list", parents=[where], help="show the signing keys, the current one first",
                                 description="Show every signing key on the ring (the current one signs new "
                                             "games) and where the seed encryption key comes from.")
    listing.add_argument("--json", action="store_true", help="print the GET /v1/keys document (a --pubkey file "
                                                             "for fairdice-verify)")
    actions.add_parser("rotate", parents=[where], help="make a new current signing key",
                       description="Make a new signing key, current from the next start of the server on; the "
                                   "old keys stay on the ring, published and signing the games started under them. "
                                   "Prints the new key id.")


def run(args) -> int:
    try:
        conf = settings({"key_dir": args.key_dir, "data_dir": args.data_dir})
        if args.action == "rotate":
            return _rotate(conf)
        return _list(conf, args.json)
    except (KeyFileError, ValueError) as exc:
        print(f"fairdice keys {args.action}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fairdice keys {args.action}: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2


def _rotate(conf) -> int:
    key = rotate(conf.key_dir)
    print(key.key_id)
    print(f"fairdice keys rotate: new signing key {key.key_id} in {key.path}; servers sign new games with it once "
          f"restarted, and the older keys stay published and finish the games started under them", file=sys.stderr)
    return 0


def _list(conf, as_json: bool) -> int:
    if not conf.key_dir.is_dir():
        raise KeyFileError(f"key directory {conf.key_dir} does not exist")
    keys = load_signing_keys(conf.key_dir)
    if not keys:
        raise KeyFileError(f"no signing key in {conf.key_dir}: `fairdice serve` makes the first one")
    published = [k.published(k is keys[-1]) for k in reversed(keys)]
    if as_json:
        print(json.dumps({"keys": published}, indent=1))
        return 0
    print(f"{'key id':<16}  {'created':<20}  {'current':<7}  {'public key':<64}  file")
    for key, entry in zip(reversed(keys), published):
        print(f"{entry['key_id']:<16}  {entry['created']:<20}  {'yes' if entry['current'] else '':<7}  "
              f"{entry['public_key']}  {key.path.relative_to(conf.key_dir)}")
    print(f"seed encryption key: {_seed_key_place(conf)}")
    return 0


def _seed_key_place(conf) -> str:
    if os.environ.get(SEED_KEY_ENV):
        return f"from {SEED_KEY_ENV} (environment)"
    return f"{conf.seed_key_file} ({'present' if conf.seed_key_file.exists() else 'missing'})"

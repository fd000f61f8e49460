"""The key ring (api/keys.py) on its own: the layout on disk, rotation, the seed key's sources, the
`fairdice keys` command, and the start-up check against a small store that has only what the check reads."""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api.keys import KeyFileError, KeyRing, SeedBox, check_keys_for_store, load_signing_keys, rotate
from api.stores.base import GameRecord, Snapshot
from fairdice.edges.cli import main as fairdice

HEX_KEY = "ab" * 32
ROTATED = re.compile(r"(\d{8}T\d{6}Z)-([0-9a-f]{16})\.pem")


def key_id_of(public_hex: str) -> str:
    """SPEC §5.1: the first 16 hex digits of SHA-256 of the raw public key."""
    return hashlib.sha256(bytes.fromhex(public_hex)).hexdigest()[:16]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>") for p in folder.rglob("*")}


def legacy_install(key_dir: Path) -> str:
    """A key directory as fairdice wrote it before key rotation: one PEM and 32 raw bytes; the PEM's public key."""
    key_dir.mkdir(mode=0o700, parents=True)
    private = Ed25519PrivateKey.generate()
    pem = key_dir / "signing-ed25519.pem"
    pem.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    (key_dir / "seed-encryption.key").write_bytes(os.urandom(32))
    for path in key_dir.iterdir():
        path.chmod(0o600)
    os.utime(pem, (1_700_000_000, 1_700_000_000))  # 2023-11-14T22:13:20Z
    return private.public_key().public_bytes_raw().hex()


# --- layout -------------------------------------------------------------------------------------------

def test_first_run_makes_the_two_files_of_before_all_private(tmp_path):
    old = os.umask(0)  # the modes must not depend on the caller's umask
    try:
        ring = KeyRing(tmp_path / "data" / "keys", environ={})
    finally:
        os.umask(old)
    assert sorted(tree(tmp_path / "data" / "keys")) == ["seed-encryption.key", "signing-ed25519.pem"]
    assert mode(tmp_path / "data") == mode(tmp_path / "data" / "keys") == 0o700
    for path in (tmp_path / "data" / "keys").iterdir():
        assert mode(path) == 0o600
    assert len((tmp_path / "data" / "keys" / "seed-encryption.key").read_bytes()) == 32
    [entry] = ring.public_keys()
    assert entry["current"] is True and entry["key_id"] == key_id_of(entry["public_key"]) == ring.key_id


def test_an_installation_from_before_rotation_starts_unchanged(tmp_path):
    public = legacy_install(tmp_path / "keys")
    before = tree(tmp_path / "keys")
    ring = KeyRing(tmp_path / "keys", environ={})
    assert tree(tmp_path / "keys") == before
    assert ring.public_keys() == [{"key_id": key_id_of(public), "algorithm": "Ed25519", "public_key": public,
                                   "created": "2023-11-14T22:13:20Z", "current": True}]
    sealed = SeedBox((tmp_path / "keys" / "seed-encryption.key").read_bytes()).seal("g", b"s" * 32)
    assert ring.seed_box.open("g", sealed) == b"s" * 32


def test_without_create_nothing_is_written_and_what_is_missing_is_named(tmp_path):
    (tmp_path / "keys").mkdir()
    ring = KeyRing(tmp_path / "keys", environ={}, create=False)
    assert list((tmp_path / "keys").iterdir()) == []
    with pytest.raises(KeyFileError, match="signing-ed25519.pem"):
        _ = ring.signer  # the property raises
    with pytest.raises(KeyFileError, match=re.escape(str(tmp_path / "keys" / "seed-encryption.key"))):
        _ = ring.seed_box  # the property raises
    with pytest.raises(KeyFileError, match="does not exist"):
        KeyRing(tmp_path / "absent", environ={}, create=False)


def test_a_seed_key_file_of_64_hex_digits_is_read_as_the_key(tmp_path):
    (tmp_path / "seed.key").write_text(HEX_KEY + "\n")  # as `openssl rand -hex 32 > seed.key` writes it
    ring = KeyRing(tmp_path / "keys", seed_key_file=tmp_path / "seed.key", environ={})
    sealed = SeedBox(bytes.fromhex(HEX_KEY)).seal("g", b"s" * 32)
    assert ring.seed_box.open("g", sealed) == b"s" * 32


def test_a_malformed_seed_key_file_is_refused_without_showing_it(tmp_path):
    (tmp_path / "seed.key").write_bytes(b"secret-but-short")
    with pytest.raises(KeyFileError, match="expected 32 bytes or 64 hex digits, found 16 bytes") as info:
        KeyRing(tmp_path / "keys", seed_key_file=tmp_path / "seed.key", environ={})
    assert "secret" not in str(info.value).replace(str(tmp_path), "")


def test_a_seed_key_file_elsewhere_is_made_there_private(tmp_path):
    outside = tmp_path / "secrets" / "fairdice" / "seed.key"
    KeyRing(tmp_path / "data" / "keys", seed_key_file=outside, environ={})
    assert sorted(tree(tmp_path / "data" / "keys")) == ["signing-ed25519.pem"]
    assert len(outside.read_bytes()) == 32 and mode(outside) == 0o600
    assert mode(outside.parent) == mode(tmp_path / "secrets") == 0o700


def test_the_environment_seed_key_is_used_and_no_file_is_written(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={"FAIRDICE_SEED_KEY": HEX_KEY.upper()})
    assert sorted(tree(tmp_path / "keys")) == ["signing-ed25519.pem"]
    assert ring.seed_key_file is None
    sealed = SeedBox(bytes.fromhex(HEX_KEY)).seal("g", b"s" * 32)
    assert ring.seed_box.open("g", sealed) == b"s" * 32


@pytest.mark.parametrize("value", ["ab" * 31, "zz" * 32, "ab" * 33])
def test_a_malformed_environment_seed_key_is_refused_without_showing_it(tmp_path, value):
    with pytest.raises(KeyFileError, match="FAIRDICE_SEED_KEY must be 64 hex digits") as info:
        KeyRing(tmp_path / "keys", environ={"FAIRDICE_SEED_KEY": value})
    assert value not in str(info.value) and value[:8] not in str(info.value)


# --- rotation -------------------------------------------------------------------------------------

def test_rotation_adds_a_current_key_and_keeps_the_old_ones(tmp_path):
    first = KeyRing(tmp_path / "keys", environ={})
    started = int(time.time())
    new = rotate(tmp_path / "keys")
    ring = KeyRing(tmp_path / "keys", environ={})
    assert ring.key_id == new.key_id != first.key_id
    assert ring.signer_for(first.key_id).public_key == first.signer.public_key
    published = ring.public_keys()
    assert [k["key_id"] for k in published] == [new.key_id, first.key_id]
    assert [k["current"] for k in published] == [True, False]
    assert all(k["key_id"] == key_id_of(k["public_key"]) for k in published)
    stamp, named_id = ROTATED.fullmatch(new.path.name).groups()
    assert new.path.parent == tmp_path / "keys" / "signing" and named_id == new.key_id
    made = calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))
    assert started <= made <= time.time()
    assert published[0]["created"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(made))
    assert mode(new.path) == 0o600 and mode(new.path.parent) == 0o700
    assert all(mode(p) == 0o600 for p in new.path.parent.iterdir())


def test_rotations_in_one_second_or_with_the_clock_set_back_stay_in_order(tmp_path):
    KeyRing(tmp_path / "keys", environ={})
    moment = 1_800_000_000.5
    made = [rotate(tmp_path / "keys", now=moment).key_id for _ in range(2)]
    made.append(rotate(tmp_path / "keys", now=moment - 3600).key_id)
    ring = KeyRing(tmp_path / "keys", environ={})
    assert ring.key_id == made[-1]
    assert [k["key_id"] for k in ring.public_keys()][:3] == made[::-1]
    assert [k["created"] for k in ring.public_keys()][:3] == [
        "2027-01-15T08:00:02Z", "2027-01-15T08:00:01Z", "2027-01-15T08:00:00Z"]


def test_a_running_ring_publishes_a_key_made_after_it_started_and_keeps_its_current_one(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    current = ring.key_id
    new = rotate(tmp_path / "keys")
    assert [(k["key_id"], k["current"]) for k in ring.public_keys()] == [(current, True), (new.key_id, False)]
    assert ring.key_id == current


def test_a_running_ring_finds_the_key_of_a_game_started_elsewhere(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    new = rotate(tmp_path / "keys")
    assert ring.signer_for(new.key_id).public_key == new.signer.public_key
    assert ring.key_id != new.key_id
    with pytest.raises(KeyFileError, match="no signing key with id 0000000000000000"):
        ring.signer_for("0" * 16)


def test_a_broken_file_appearing_later_leaves_the_published_keys_and_is_named_when_needed(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    (tmp_path / "keys" / "signing").mkdir(mode=0o700)
    (tmp_path / "keys" / "signing" / "backup.pem").write_bytes(b"not a key")
    assert [k["key_id"] for k in ring.public_keys()] == [ring.key_id]
    with pytest.raises(KeyFileError, match="backup.pem: not a key file name"):
        ring.signer_for("0" * 16)


def test_a_key_file_whose_name_lies_about_its_key_is_refused(tmp_path):
    KeyRing(tmp_path / "keys", environ={})
    new = rotate(tmp_path / "keys")
    forged = new.path.with_name(new.path.name.replace(new.key_id, "0" * 16))
    new.path.rename(forged)
    with pytest.raises(KeyFileError, match=f"{re.escape(str(forged))}: holds the key with id {new.key_id}"):
        load_signing_keys(tmp_path / "keys")


def test_a_pem_with_a_name_not_of_the_layout_is_refused(tmp_path):
    KeyRing(tmp_path / "keys", environ={})
    new = rotate(tmp_path / "keys")
    new.path.rename(new.path.with_name("backup.pem"))
    with pytest.raises(KeyFileError, match="backup.pem: not a key file name"):
        load_signing_keys(tmp_path / "keys")


def test_rotation_refuses_a_directory_without_a_signing_key(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert fairdice(["keys", "rotate", "--key-dir", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no signing key in {tmp_path / 'empty'}" in err
    assert list((tmp_path / "empty").iterdir()) == []


def test_two_rotations_at_once_both_land(tmp_path):
    KeyRing(tmp_path / "keys", environ={})
    cmd = [sys.executable, "-m", "fairdice", "keys", "rotate", "--key-dir", str(tmp_path / "keys")]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    made = {out.strip() for out, _ in outs}
    ring = KeyRing(tmp_path / "keys", environ={})
    assert len(made) == 2 and made < ring.key_ids and ring.key_id in made
    assert len(ring.public_keys()) == 3
    assert not [p for p in (tmp_path / "keys" / "signing").iterdir() if p.name.endswith(".tmp")]


# --- the command ------------------------------------------------------------------------------------

def test_keys_rotate_prints_the_new_key_id_and_keys_list_shows_the_ring(tmp_path, capsys):
    old = KeyRing(tmp_path / "data" / "keys", environ={})
    assert fairdice(["keys", "rotate", "--data-dir", str(tmp_path / "data")]) == 0
    new_id = capsys.readouterr().out.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", new_id) and new_id != old.key_id
    assert fairdice(["keys", "list", "--key-dir", str(tmp_path / "data" / "keys")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:1] + lines[1].split()[2:3] == [new_id, "yes"]
    assert lines[2].split()[0] == old.key_id and lines[2].split()[-1] == "signing-ed25519.pem"
    assert lines[3].startswith("seed encryption key: ") and lines[3].endswith("(present)")


def test_keys_list_json_is_what_v1_keys_publishes(tmp_path, capsys):
    KeyRing(tmp_path / "keys", environ={})
    rotate(tmp_path / "keys")
    assert fairdice(["keys", "list", "--json", "--key-dir", str(tmp_path / "keys")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"keys": KeyRing(tmp_path / "keys", environ={}).public_keys()}
    assert [k["current"] for k in doc["keys"]] == [True, False]


def test_keys_list_of_a_missing_directory_is_one_line(tmp_path, capsys):
    assert fairdice(["keys", "list", "--key-dir", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err == f"fairdice keys list: key directory {tmp_path / 'nope'} does not exist\n"


# --- the start-up check, against only what it reads ----------------------------------------------------

class FewGames:
    """A store with only the methods check_keys_for_store uses (ops contract of issue 14)."""

    def __init__(self, records: list[GameRecord]):
        self.records = {r.game_id: r for r in records}

    def key_ids(self) -> set[str]:
        return {r.key_id for r in self.records.values()}

    def _unfinished(self):
        return [r for r in self.records.values() if r.seed_sealed is not None]

    def stale_games(self, idle_since: str, limit: int = 100) -> list[str]:
        idle = sorted((r for r in self._unfinished() if r.updated_at < idle_since), key=lambda r: r.updated_at)
        return [r.game_id for r in idle[:limit]]

    def snapshot(self, game_id: str):
        return Snapshot(self.records[game_id]) if game_id in self.records else None

    def stats(self) -> dict:
        return {"games": len(self.records), "unfinished": len(self._unfinished())}


def record(game_id: str, key_id: str, box: SeedBox | None, updated_at: str = "2024-05-01T12:00:00Z") -> GameRecord:
    """A game signed by `key_id`: unfinished (its seed sealed by `box`) or, without a box, finished."""
    return GameRecord(game_id=game_id, opened={}, key_id=key_id, tokens=[],
                      seed_sealed=box.seal(game_id, b"s" * 32) if box else None,
                      seed_revealed=None if box else "00" * 32, status="playing" if box else "finished",
                      updated_at=updated_at)


def test_the_check_passes_when_every_key_is_there(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    old = ring.key_id
    rotate(tmp_path / "keys")
    ring = KeyRing(tmp_path / "keys", environ={}, create=False)
    check_keys_for_store(ring, FewGames([record("a", old, ring.seed_box), record("b", ring.key_id, None)]))


def test_a_game_naming_a_deleted_rotated_key_is_refused_naming_its_file(tmp_path):
    KeyRing(tmp_path / "keys", environ={})
    lost = rotate(tmp_path / "keys")
    lost.path.unlink()
    ring = KeyRing(tmp_path / "keys", environ={}, create=False)
    with pytest.raises(KeyFileError) as info:
        check_keys_for_store(ring, FewGames([record("a", lost.key_id, None)]))
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / "keys" / "signing" / f"<YYYYMMDDTHHMMSSZ>-{lost.key_id}.pem") in message
    assert "games in the store were signed with" in message


def test_unfinished_games_and_no_seed_key_are_refused_counting_them(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    store = FewGames([record(f"g{i}", ring.key_id, ring.seed_box) for i in range(3)] + [record("f", ring.key_id, None)])
    (tmp_path / "keys" / "seed-encryption.key").unlink()
    ring = KeyRing(tmp_path / "keys", environ={}, create=False)
    with pytest.raises(KeyFileError) as info:
        check_keys_for_store(ring, store)
    assert str(info.value) == (f"seed encryption key file {tmp_path / 'keys' / 'seed-encryption.key'} is missing: "
                               f"3 unfinished games were sealed with it; restore it from a backup, or point "
                               f"FAIRDICE_SEED_KEY_FILE at it")


def test_a_seed_key_made_anew_under_unfinished_games_is_refused(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    store = FewGames([record("g", ring.key_id, ring.seed_box)])
    (tmp_path / "keys" / "seed-encryption.key").unlink()
    ring = KeyRing(tmp_path / "keys", environ={})  # create: a new key file
    with pytest.raises(KeyFileError, match="is missing \\(a new one was just made in its place\\): 1 unfinished game "
                                           "was sealed with it"):
        check_keys_for_store(ring, store)


def test_another_seed_key_is_refused_naming_its_source_and_no_secret(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    store = FewGames([record("old", ring.key_id, ring.seed_box, "2024-01-01T00:00:00Z"),
                      record("new", ring.key_id, SeedBox(bytes.fromhex(HEX_KEY)), "2024-02-01T00:00:00Z")])
    with pytest.raises(KeyFileError) as info:
        check_keys_for_store(KeyRing(tmp_path / "keys", environ={"FAIRDICE_SEED_KEY": HEX_KEY}), store)
    message = str(info.value)
    assert message.startswith("the seed encryption key from the FAIRDICE_SEED_KEY environment variable does not "
                              "open the sealed seeds of unfinished games (1 of the 2 checked, e.g. game old)")
    assert HEX_KEY not in message and HEX_KEY.upper() not in message
    with pytest.raises(KeyFileError, match=re.escape(f"from file {tmp_path / 'keys' / 'seed-encryption.key'} does "
                                                     f"not open") + ".*e.g. game new"):
        check_keys_for_store(KeyRing(tmp_path / "keys", environ={}, create=False), store)


def test_finished_games_need_no_seed_key(tmp_path):
    ring = KeyRing(tmp_path / "keys", environ={})
    (tmp_path / "keys" / "seed-encryption.key").unlink()
    check_keys_for_store(KeyRing(tmp_path / "keys", environ={}, create=False),
                         FewGames([record("f", ring.key_id, None)]))

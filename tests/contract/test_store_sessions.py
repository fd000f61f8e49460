"""The store contract for sessions (api/stores/sessions_base.py), held on SQLite and PostgreSQL alike (the backends
of tests/contract/test_store_contract.py): a session reads back as stored; events are appended only at the index a command
was computed from (one winner per index however many threads race); a key's answer is kept with the events; a new
pair's seed arrives with its rotation; the database refuses to change or delete a session's rows; and a roll
writes one row, whatever the session's length."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from api.store import ConflictError, Remember
from api.stores.sessions_base import SessionNotFoundError, SessionRecord
from support.stores import tail

SEALED = bytes(range(256))[::-1] + b"\x00"  # a blob with every byte value, not text


def created(store, session_id: str = "s-1") -> SessionRecord:
    rec = SessionRecord(session_id, {"header": {"session_id": session_id}, "commitment_signature": "ab"}, "k" * 16,
                        "f" * 64, "client-1")
    store.create_session(rec, {0: SEALED, 1: SEALED[::-1]})
    return rec


def test_a_session_reads_back_as_stored(store):
    rec = created(store)
    state = store.session_state("s-1")
    assert state.record == rec and state.tail is None and state.event_count == 0 and state.revealed == 0
    assert state.seeds == {0: SEALED, 1: SEALED[::-1]}
    assert store.session_state("s-none") is None and store.session_state("s-\x00") is None


def test_events_append_at_their_index_with_the_tail_after_each(store):
    created(store)
    assert store.session_append("s-1", 0, [({"type": "client_seed", "n": 0}, tail(1))]) is None
    store.session_append("s-1", 1, [({"type": "roll", "n": 1}, tail(2)), ({"type": "rotate", "n": 2},
                                                                          tail(3, 1, 3))], (2, b"\x01new"))
    state = store.session_state("s-1")
    assert state.tail == tail(3, 1, 3) and state.event_count == 3 and state.revealed == 3
    assert state.seeds == {1: SEALED[::-1], 2: b"\x01new"}  # the pairs from the current one on
    assert store.session_events("s-1", 2) == ['{"type":"client_seed","n":0}', '{"type":"roll","n":1}']
    with pytest.raises(ConflictError):
        store.session_append("s-1", 2, [({"type": "roll"}, tail(3))])
    with pytest.raises(SessionNotFoundError):
        store.session_append("s-none", 0, [({"type": "roll"}, tail(1))])


def test_one_winner_per_index_however_many_threads_race(store):
    created(store)
    won, lost = [], []
    barrier = threading.Barrier(8)

    def race(i):
        barrier.wait()
        try:
            store.session_append("s-1", 0, [({"type": "roll", "who": i}, tail(1))])
            won.append(i)
        except ConflictError:
            lost.append(i)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(race, range(8)))
    assert len(won) == 1 and len(lost) == 7
    assert store.session_events("s-1", 10) == [f'{{"type":"roll","who":{won[0]}}}']


def test_a_keys_answer_is_kept_with_the_events_and_returned_to_its_twin(store):
    created(store)
    keep = Remember(None, "key-1", "fp", 200, '{"answer":1}')
    assert store.session_append("s-1", 0, [({"type": "roll"}, tail(1))], remember=keep) is None
    twin = store.session_append("s-1", 0, [({"type": "roll"}, tail(1))], remember=keep)
    assert (twin.fingerprint, twin.status, twin.body) == ("fp", 200, '{"answer":1}')
    assert store.session_recall("s-1", "key-1") == twin and store.session_recall("s-1", "other") is None
    assert store.session_state("s-1").event_count == 1  # the twin added nothing


def test_prune_deletes_the_answers_kept_before_its_bound_and_no_event(store):
    created(store)
    store.session_append("s-1", 0, [({"type": "roll"}, tail(1))], remember=Remember(None, "old", "fp", 200, "{}"))
    assert store.prune("1970-01-01T00:00:00Z")["session_idempotency_records"] == 0  # kept after that bound
    assert store.prune("9999-01-01T00:00:00Z")["session_idempotency_records"] == 1
    assert store.session_recall("s-1", "old") is None and store.session_state("s-1").event_count == 1


def test_the_database_refuses_to_change_or_delete_a_sessions_rows(backend, store):
    created(store)
    store.session_append("s-1", 0, [({"type": "roll"}, tail(1))])
    for sql in ("UPDATE session_events SET body = '{}'", "DELETE FROM session_events",
                "UPDATE session_seeds SET sealed = sealed", "DELETE FROM session_seeds", "DELETE FROM sessions",
                "UPDATE sessions SET token_sha256 = 'x'"):
        with pytest.raises(backend.Error, match="append-only"):
            backend.execute(sql)
    assert store.session_state("s-1").event_count == 1


def test_the_token_is_kept_only_as_its_hash_and_seeds_only_sealed(backend, store):
    created(store)
    rows = backend.execute("SELECT token_sha256 FROM sessions")
    assert rows == [("f" * 64,)]
    assert sorted(bytes(s) for (s,) in backend.execute("SELECT sealed FROM session_seeds")) == sorted(
        [SEALED, SEALED[::-1]])


def test_prune_deletes_the_roll_counts_of_days_before_today(store):
    from api.stores.sessions_base import RollQuota, utc_day
    created(store)
    store.session_append("s-1", 0, [({"type": "roll"}, tail(1))], quota=RollQuota("client-1", "2024-01-01", 10))
    store.session_append("s-1", 1, [({"type": "roll"}, tail(2))], quota=RollQuota("client-1", utc_day(), 10))
    assert store.prune("1970-01-01T00:00:00Z")["session_roll_counts"] == 1  # 2024-01-01's; today's stays
    assert store.prune("1970-01-01T00:00:00Z")["session_roll_counts"] == 0

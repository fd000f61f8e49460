"""A missing optimal table: built once in the background while the API answers 503 with Retry-After."""

from __future__ import annotations

import time

import pytest

from api import create_app
from fairdice.adapters import table_cache

HUMAN = {"type": "human", "name": "ann"}
OPTIMAL = {"type": "bot", "bot": "optimal"}

pytestmark = pytest.mark.slow  # each test builds a table from an empty cache


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty table cache and nothing in memory: a fresh machine."""
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(table_cache, "CACHE", table_cache.TableCache())
    return tmp_path / "cache"


def test_optimal_game_waits_for_its_table_then_plays(tmp_path, cold_cache):
    client = create_app({"FAIRDICE_DATA_DIR": str(tmp_path / "data")}).test_client()
    body = {"rules": "yacht", "seats": [HUMAN, OPTIMAL]}
    first = client.post("/v1/games", json=body)
    assert first.status_code == 503 and first.mimetype == "application/problem+json"
    problem = first.get_json()
    assert problem["code"] == "engine_warming_up" and "yacht" in problem["detail"]
    assert int(first.headers["Retry-After"]) > 0
    assert client.post("/v1/games", json={"rules": "yacht", "seats": [HUMAN, {"type": "bot", "bot": "ev"}]}
                       ).status_code == 201  # other bots are not held up

    deadline = time.monotonic() + 240
    while (resp := client.post("/v1/games", json=body)).status_code == 503:
        assert resp.get_json()["code"] == "engine_warming_up"
        assert time.monotonic() < deadline, "the table was never built"
        time.sleep(0.5)
    assert resp.status_code == 201
    assert table_cache.table_ready("yacht") and (cold_cache / "optimal-yacht-v1.npy").exists()
    created = resp.get_json()
    token = created["tokens"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post(f"/v1/games/{created['game_id']}/client-seed", json={"client_seed": "s"},
                       headers=auth).status_code == 200
    hint = client.get(f"/v1/games/{created['game_id']}/hint")
    assert hint.status_code == 200 and hint.get_json()["engine"] == "optimal"


def test_concurrent_builders_build_once(cold_cache):
    """A second builder (another worker, `fairdice tables build`) waits for the first, then reuses its table."""
    import threading

    infos = []
    threads = [threading.Thread(target=lambda: infos.append(table_cache.build_table("yacht")))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(info["built"] for info in infos) == [False, True]

"""Shared test settings."""

import os

import pytest

# Servers the tests start build no optimal table in the background (that would load both cores while other
# tests measure things); the tables come from the session fixture below.
os.environ.setdefault("FAIRDICE_TABLES", "lazy")


@pytest.fixture(scope="session", autouse=True)
def optimal_tables():
    """The optimal engine's three tables, as a server that has warmed up has them: built once per machine
    (about a minute on a fresh one), then read from the cache.  The cold path, where a server answers 503
    while a table is built, has its own tests (test_api_engines.py) with an empty cache of their own."""
    from fairdice.bots import optimal
    from fairdice.rules import RULESETS

    for rules_id in RULESETS:
        optimal.build_table(rules_id)

"""Shared test settings."""

import os

# Servers the tests start build no optimal table in the background (that would load both cores while other
# tests measure things); a test that needs a table builds it, as the first request of a real server would.
os.environ.setdefault("FAIRDICE_TABLES", "lazy")

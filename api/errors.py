"""The server's one base of errors, `ServiceError`, and the shape of the service's own refusals.

Every error `api/` raises on purpose derives from `ServiceError`: the HTTP adapter's own refusals
(`api.problems.ApiError`), the stores' (`api.stores.base.StoreError`: busy, unavailable, a conflict to
compute again...) and the service's refusals (`RefusalError`: no such game, not your token, a quota).
Only `api/problems.py` turns them into HTTP statuses; anything else raised while answering is a bug (500).
"""

from __future__ import annotations

from fairdice.errors import FairdiceError


class ServiceError(Exception):
    """The base of every error the server raises on purpose (a bare `except ServiceError` catches them all)."""


class RefusalError(ServiceError, FairdiceError):
    """A refusal of the service rather than of a rule (no such game or session, a token that is not the
    game's, a quota used up): in the core's shape (a stable `code`, a `kind`, details), so that
    `api.problems` maps its kind to a status exactly as it maps the core's refusals."""

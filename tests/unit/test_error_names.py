"""One exception per idea, named `…Error`, from one base per layer (issue 26), held by test so it stays so.

The layers' bases: the core's `fairdice.errors.FairdiceError`, the HTTP client's `ClientError`, the server's
`api.errors.ServiceError` and the verifier's `verifier.errors.VerifierError` (the verifier imports nothing of
ours, so it has its own).  Every exception class defined in those packages is found by importing every module
and looking at what each defines, so a new one cannot be missed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import pytest

# Not errors: control flow that never leaves the module that raises it (its docstring says so).
CONTROL_FLOW = {"verifier.results.StopReplay"}


def _modules(package: str):
    yield importlib.import_module(package)
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if not info.name.endswith("__main__"):
            yield importlib.import_module(info.name)


def _exceptions(package: str) -> dict[str, type]:
    """Every exception class defined (not imported) in the package's modules, by qualified name."""
    found = {}
    for module in _modules(package):
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__ \
                    and obj.__name__ == name:
                found[f"{module.__name__}.{name}"] = obj
    return found


@pytest.fixture(scope="module")
def exceptions() -> dict[str, type]:
    return {name: cls for package in ("fairdice", "api", "verifier") for name, cls in _exceptions(package).items()}


def _base(qualified: str) -> type:
    from api.errors import ServiceError
    from fairdice.edges.client import ClientError
    from fairdice.errors import FairdiceError
    from verifier.errors import VerifierError

    if qualified.startswith("verifier."):
        return VerifierError
    if qualified.startswith("api."):
        return ServiceError
    if qualified.startswith("fairdice.edges.client."):
        return ClientError
    return FairdiceError


def test_the_search_finds_the_errors_it_is_about(exceptions):
    """The checker itself: the classes this issue renamed and the four bases are all among what it found."""
    assert {"fairdice.errors.NotNowError", "fairdice.errors.SignatureError", "api.stores.base.BusyError",
            "api.stores.base.GameNotFoundError", "fairdice.edges.client.VerificationError",
            "verifier.reading.UnusableFileError", "verifier.results.StopReplay", "api.errors.ServiceError",
            "verifier.errors.VerifierError", "fairdice.edges.client.ClientError"} <= set(exceptions)


def test_every_error_is_named_error(exceptions):
    bad = sorted(name for name in exceptions if not name.endswith("Error") and name not in CONTROL_FLOW)
    assert not bad, f"exception classes not named …Error: {bad}"


def test_every_error_derives_from_its_layers_base(exceptions):
    bad = sorted(name for name, cls in exceptions.items()
                 if name not in CONTROL_FLOW and not issubclass(cls, _base(name)))
    assert not bad, f"exception classes outside their layer's base: {bad}"


def test_no_two_errors_share_a_name(exceptions):
    """One idea, one class: the two ApiErrors, the two KeyFileErrors, GameNotFound beside UnknownGame were the
    cases found (a deprecated alias is the same class, so it is not counted)."""
    classes = defaultdict(set)
    for cls in exceptions.values():
        classes[cls.__name__].add(cls)
    assert not {name: sorted(c.__module__ for c in found) for name, found in classes.items() if len(found) > 1}


def test_the_store_and_the_service_raise_one_not_found():
    """A store asked for a game (or session) it does not hold and the service asked for one raise the same class,
    answered 404 with the stable code."""
    from api.stores.base import GameNotFoundError
    from api.stores.sessions_base import SessionNotFoundError
    from api.store import StoreError
    from api import games, sessions, watch

    assert games.GameNotFoundError is watch.GameNotFoundError is GameNotFoundError
    assert sessions.SessionNotFoundError is SessionNotFoundError
    for error, code in ((GameNotFoundError("g-1"), "game_not_found"),
                        (SessionNotFoundError("s-1"), "session_not_found")):
        assert isinstance(error, StoreError) and error.kind == "not_found" and error.code == code


def test_the_service_answers_a_command_with_a_domain_value():
    """The service's answer carries no HTTP status: the routes choose it (api/routes/common.command_response)."""
    from api.games import Answer

    assert set(Answer.__dataclass_fields__) == {"body", "replayed"}


def test_the_clients_old_names_still_import():
    """Apps written against the client before the renames keep working (deprecated aliases)."""
    from fairdice.edges.client import ApiError, ApiResponseError, SeedNotAccepted, SeedNotAcceptedError

    assert ApiError is ApiResponseError and SeedNotAccepted is SeedNotAcceptedError

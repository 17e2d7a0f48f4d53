"""pytest plugin: ``kubefake`` fixtures, each a fresh in-memory Kubernetes API server.

Registered through the ``pytest11`` entry point, so installing the wheel is enough:

- ``kubefake`` (function scope), ``kubefake_module``, ``kubefake_session``: a started
  :class:`kubefake.Kubefake` (``.url``, ``.kubeconfig``, ``.api_client()``), stopped afterwards.
- ``@pytest.mark.kubefake(crds=[...], objects=[...], args=[...])`` on a test (or a module's
  ``pytestmark``, for ``kubefake_module``): files or directories relative to the test file,
  loaded before the test starts; ``args`` are more ``kubefake serve`` flags.
- ini options ``kubefake_crds``, ``kubefake_objects`` (paths relative to the ini file) and
  ``kubefake_args``: loaded into every server, before what a marker adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List

import pytest

from kubefake import Kubefake


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kubefake_crds", "CRD files or directories every kubefake server installs",
                  type="paths", default=[])
    parser.addini("kubefake_objects", "object files or directories every kubefake server creates",
                  type="paths", default=[])
    parser.addini("kubefake_args", "more `kubefake serve` flags for every server", type="args",
                  default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kubefake(crds=[], objects=[], args=[]): CRDs, objects (paths relative to the test "
        "file) and `kubefake serve` flags for the kubefake fixtures",
    )


def _start(request: pytest.FixtureRequest, use_marker: bool) -> Kubefake:
    config = request.config
    crds: List[Path] = list(config.getini("kubefake_crds"))
    objects: List[Path] = list(config.getini("kubefake_objects"))
    args: List[str] = list(config.getini("kubefake_args"))
    marker = request.node.get_closest_marker("kubefake") if use_marker else None
    if marker is not None:
        base = Path(request.node.path).parent
        crds += [base / path for path in marker.kwargs.get("crds", ())]
        objects += [base / path for path in marker.kwargs.get("objects", ())]
        args += list(marker.kwargs.get("args", ()))
    return Kubefake.start(crds=crds, objects=objects, args=args)


@pytest.fixture
def kubefake(request: pytest.FixtureRequest) -> Iterator[Kubefake]:
    """A kubefake server for one test (the test's ``kubefake`` marker applies)."""
    server = _start(request, use_marker=True)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kubefake_module(request: pytest.FixtureRequest) -> Iterator[Kubefake]:
    """A kubefake server shared by a module's tests (the module's ``pytestmark`` applies)."""
    server = _start(request, use_marker=True)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kubefake_session(request: pytest.FixtureRequest) -> Iterator[Kubefake]:
    """A kubefake server shared by the whole session (only the ini options apply)."""
    server = _start(request, use_marker=False)
    yield server
    server.stop()

"""Fleet tests run on a real PostgreSQL: one server per test module, a new database per test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.fleet.pgcluster import Cluster, fresh_database, throwaway_cluster


@pytest.fixture(scope="module")
def pg_server() -> Iterator[Cluster | None]:
    """The throwaway cluster of this module, or None when VTCODE_TEST_DATABASE_URL is given."""
    if os.environ.get("VTCODE_TEST_DATABASE_URL"):
        yield None
        return
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
def database_url(pg_server: Cluster | None) -> str:
    admin = os.environ.get("VTCODE_TEST_DATABASE_URL") or (pg_server.url if pg_server else "")
    return fresh_database(admin)

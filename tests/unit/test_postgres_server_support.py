"""tests/support/postgres_server.py's choice of binaries: a bin dir given explicitly (the
pgvector build bench/bench_vector_scan.py starts) must hold initdb and pg_ctl, or the reason
is raised before a cluster is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.postgres_server import running_server


def test_a_bin_dir_without_the_binaries_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "initdb").write_text("")  # pg_ctl missing
    with (
        pytest.raises(RuntimeError, match=f"no initdb and pg_ctl in {tmp_path}"),
        running_server(tmp_path),
    ):
        pass

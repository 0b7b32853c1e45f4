"""doctor's ``search.ranking`` check (docs/adr/0032): with embeddings on, the active fusion
and query mode, and for a model the retrieval bench measured, the setting to try; always
``ok``, as CONTRACT section 9 has no status for advice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from venom_mem_adapters.daemon.ops.doctor import run_checks
from venom_mem_adapters.health import Inputs
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_adapters.sqlite.backend import SqliteBackend
from venom_mem_core.config import Config
from venom_mem_core.search_advice import advice_for, model_key


def report(tmp_path: Path, model: str | None, **search: Any) -> dict[str, Any]:
    path = tmp_path / "store" / "store.db"
    if not path.exists():
        SqliteStore.open(path).close()
    tree: dict[str, Any] = {"search": search}
    if model is not None:
        tree["embeddings"] = {
            "provider": "http",
            "base_url": "http://127.0.0.1:11434/v1",
            "model": model,
            "dimensions": 384,
        }
    inputs = Inputs(store=path, config=Config.from_mapping(tree), on_demand=True)
    return run_checks(inputs, SqliteBackend(path))


def check(tmp_path: Path, model: str | None, **search: Any) -> dict[str, str] | None:
    checks = {c["id"]: c for c in report(tmp_path, model, **search)["checks"]}
    return checks.get("search.ranking")


def test_embeddings_off_has_no_search_check(tmp_path: Path) -> None:
    assert check(tmp_path, None) is None


def test_a_default_config_names_the_rfcs_ranking(tmp_path: Path) -> None:
    found = check(tmp_path, "nomic-embed-text")
    assert found == {
        "id": "search.ranking",
        "status": "ok",
        "message": "Hybrid search fuses with rrf, queries in rfc mode, min_similarity 0 (RFC-0020)",
        "fix": "venom-mem config get --key search --json",
    }


@pytest.mark.parametrize(
    "model",
    ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "all-minilm:l6-v2"],
)
def test_a_measured_model_gets_the_setting_to_try(tmp_path: Path, model: str) -> None:
    found = check(tmp_path, model)
    assert found is not None
    assert found["status"] == "ok"
    assert "For all-MiniLM-L6-v2 the retrieval bench measured" in found["message"]
    assert "docs/search.md" in found["message"]
    assert found["fix"] == (
        "venom-mem config set --key search.fusion --value convex"
        " && venom-mem config set --key search.query_mode --value natural"
    )
    # Advice is never a problem: doctor's status stays 0.
    assert report(tmp_path, model)["status"] == 0


def test_advice_already_taken_is_not_repeated(tmp_path: Path) -> None:
    half = check(tmp_path, "all-MiniLM-L6-v2", fusion="convex")
    assert half is not None
    assert half["fix"] == "venom-mem config set --key search.query_mode --value natural"
    assert half["message"].startswith("Hybrid search fuses with convex, queries in rfc mode")
    done = check(tmp_path, "all-MiniLM-L6-v2", fusion="convex", query_mode="natural")
    assert done is not None
    assert done["fix"] == "venom-mem config get --key search --json"
    assert "bench" not in done["message"]


def test_only_measured_models_get_advice() -> None:
    assert model_key("intfloat/multilingual-e5-small") == "multilingual-e5-small"
    assert advice_for("intfloat/multilingual-e5-small") is not None
    for other in ("nomic-embed-text", "e5-small-v2", "all-minilm:33m", "bge-small-en"):
        assert advice_for(other) is None, other

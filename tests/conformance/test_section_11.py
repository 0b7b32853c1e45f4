"""RFC-0020 section 11 on every store: the config's defaults are the RFC's (extension keys
at values that change nothing, docs/extensions.md), and a default doctor report has the
RFC's checks with the example's messages and fixes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.harness import Rfc
from venom_mem_core.config import Config

RFC_DEFAULTS: dict[str, Any] = {
    "store": {"path": ""},
    "daemon": {"startup": "on-demand", "startup_timeout_ms": 5000, "idle_timeout_ms": 300000},
    "memory": {"max_content_bytes": 65536, "max_versions": 20, "tombstone_days": 30},
    "search": {"min_similarity": 0.0},
    "embeddings": {
        "provider": "off",
        "base_url": "",
        "model": "",
        "dimensions": 0,
        "api_key": "",
        "max_input_bytes": 32768,
        "query_timeout_ms": 2000,
        "batch_timeout_ms": 30000,
        "warn_vectors": 100000,
    },
}
# The extension keys, at the values that leave the RFC's behaviour alone.
EXTENSIONS = {
    ("store", "url"): "",
    ("daemon", "mcp_standby"): "on",
    ("memory", "similar_threshold"): 0.65,
    ("search", "query_mode"): "rfc",
    ("search", "fusion"): "rrf",
}


def without_extensions(tree: dict[str, Any]) -> dict[str, Any]:
    out = {section: dict(keys) for section, keys in tree.items() if section != "grants"}
    for (section, key), value in EXTENSIONS.items():
        assert out[section].pop(key) == value, (section, key)
    return out


def test_the_defaults_are_the_rfcs(rfc: Rfc) -> None:
    tree = Config.defaults().get(None)
    assert without_extensions(tree) == RFC_DEFAULTS
    assert tree["grants"]["unknown"] == [{"right": "read", "scope": "*"}]  # RFC-0005's
    if rfc.daemon is None:
        return  # no daemon, so no config.get: the library reads the same Config
    rfc.ok("memory", "list")  # config.get starts no daemon (section 8)
    got = rfc.ok("config", "get", token="@owner")["value"]
    if rfc.store == "postgresql":  # the one key its config sets
        assert got["store"].pop("url").startswith("postgresql:///")
        got["store"]["url"] = ""
    assert without_extensions(got) == RFC_DEFAULTS


def test_a_default_doctor_report(rfc: Rfc) -> None:
    if rfc.daemon is None:
        pytest.skip("doctor is the daemon's")
    rfc.ok("memory", "list")  # doctor starts no daemon (section 8)
    report = rfc.ok("doctor")
    checks = {c["id"]: c for c in report["checks"]}
    warned = {c["id"] for c in report["checks"] if c["status"] != "ok"}
    # A team store warns, by design, that a purge's text outlives it in PostgreSQL's files
    # (docs/adr/0028): the one check that isn't ok there, and not one of the RFC's.
    assert warned == ({"store.purge"} if rfc.store == "postgresql" else set()), report
    assert report["status"] == (1 if warned else 0)
    for check in report["checks"]:
        assert set(check) == {"id", "status", "message", "fix"}
    rfc_ids = ["store.open", "store.schema", "daemon.lifetime", "embeddings.provider",
               "embeddings.remote", "embeddings.health", "embeddings.pending",
               "embeddings.vectors"]  # fmt: skip
    assert set(rfc_ids) <= set(checks)
    assert "search.ranking" not in checks  # only with embeddings on
    assert checks["store.open"]["fix"] == "venom-mem store status --json"
    assert checks["store.schema"]["fix"] == "venom-mem store status --json"
    assert checks["embeddings.provider"] == {
        "id": "embeddings.provider",
        "status": "ok",
        "message": "Embeddings off: full-text search only",
        "fix": "venom-mem config get --key embeddings --json",
    }

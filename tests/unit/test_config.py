"""The config model (RFC-0020 sections 5 and 11) and config.zon on disk."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import attrs
import pytest

from venom_mem_adapters.client import DaemonLocator, default_store_path
from venom_mem_adapters.config import _zon as zon
from venom_mem_adapters.config import config_file_path, config_file_present
from venom_mem_adapters.config._file import (
    default_config_path,
    load_config,
    load_launch_config,
    parse_value_text,
    reload,
    write_config_value,
)
from venom_mem_core.config import (
    CONFIG_KEYS,
    RESTART_KEYS,
    Config,
    EmbeddingsConfig,
    MemoryConfig,
    check_embeddings_url,
    is_loopback_url,
    restart_required,
)
from venom_mem_core.errors import VenomError
from venom_mem_core.records import Grant
from venom_mem_core.search_options import DEFAULT_FUSION
from venom_mem_core.similarity import SIMILAR_THRESHOLD
from venom_mem_core.usecases.settings import MemorySettings

# RFC-0020 section 11, verbatim.
SECTION_11_DEFAULTS = """\
.{
    .store = .{ .path = "" },
    .daemon = .{
        .startup = "on-demand",
        .startup_timeout_ms = 5000,
        .idle_timeout_ms = 300000,
    },
    .memory = .{
        .max_content_bytes = 65536,
        .max_versions = 20,
        .tombstone_days = 30,
    },
    .search = .{ .min_similarity = 0.0 },
    .embeddings = .{
        .provider = "off",
        .base_url = "",
        .model = "",
        .dimensions = 0,
        .api_key = "",
        .max_input_bytes = 32768,
        .query_timeout_ms = 2000,
        .batch_timeout_ms = 30000,
        .warn_vectors = 100000,
    },
}"""

SECRET = "sk-VENOMTEST-7f3a9c2e-do-not-print"


def write(tmp_path: Path, text: str, name: str = "config.zon") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> VenomError:
    with pytest.raises(VenomError) as caught:
        load_config(path)
    return caught.value


# -- defaults ---------------------------------------------------------------------------------


def test_defaults_are_section_11_exactly() -> None:
    spec = zon.parse(SECTION_11_DEFAULTS, filename="rfc")
    got = Config.defaults().to_json()
    assert got.pop("grants") == {
        "unknown": [{"right": "read", "scope": "*"}],
        "max_token_ttl": 86400,
    }
    # Extensions (docs/adr/0015, 0016): memory.search's defaults, the RFC's behaviour.
    search = got["search"]
    assert (search.pop("query_mode"), search.pop("fusion")) == ("rfc", DEFAULT_FUSION)
    # Extension (docs/adr/0028): no PostgreSQL store unless store.url names one.
    assert got["store"].pop("url") == ""
    # Extension (docs/adr/0043): memory.add's similar, at the threshold the bench chose.
    assert got["memory"].pop("similar_threshold") == SIMILAR_THRESHOLD
    # Extension (docs/adr/0038): venom-mem mcp's standby; no daemon starts earlier for it.
    assert got["daemon"].pop("mcp_standby") == "on"
    assert got == spec
    assert zon.dumps(got) == SECTION_11_DEFAULTS
    assert isinstance(Config.defaults().search.min_similarity, float)


def test_the_section_11_file_loads_as_the_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, SECTION_11_DEFAULTS)) == Config.defaults()


def test_no_file_means_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path / "absent" / "config.zon") == Config.defaults()


def test_empty_struct_file_means_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, ".{}\n")) == Config.defaults()


def test_default_grants() -> None:
    grants = Config.defaults().grants
    assert grants.unknown == (Grant(right="read", scope="*"),)
    assert grants.max_token_ttl == 86400


def test_memory_settings() -> None:
    config = Config.defaults().with_value("memory.max_versions", 7)
    config = config.with_value("search.min_similarity", 0.25)
    config = config.with_value("grants.max_token_ttl", 600)
    assert config.memory_settings() == MemorySettings(
        max_content_bytes=65536,
        max_versions=7,
        tombstone_days=30,
        min_similarity=0.25,
        max_token_ttl=600,
    )
    assert Config.defaults().memory_settings() == MemorySettings()
    off = Config.defaults().with_value("memory.similar_threshold", 0)
    assert off.memory_settings().similar_threshold == 0.0
    assert not restart_required("memory.similar_threshold")  # a reload applies it


# -- errors name file, line and key -----------------------------------------------------------


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, ".{\n    .memory = .{\n        .max_versions = 20\n        .x = 1,\n    },\n}\n"
    )
    err = error_of(path)
    assert err.code == "invalid_params.config"
    assert err.message.startswith(f"{path}:4: ")
    assert err.data == {"file": str(path), "line": 4}


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.zon"
    path.write_bytes(b'.{\n    .store = .{ .path = "\xff" },\n}\n')
    err = error_of(path)
    assert err.code == "invalid_params.config"
    assert err.message.startswith(f"{path}:2: ")


@pytest.mark.parametrize(
    ("body", "key", "fragment"),
    [
        # unknown keys
        (".memory = .{ .max_version = 3 },", "memory.max_version", "unknown key"),
        (".memroy = .{ .max_versions = 3 },", "memroy", "unknown key"),
        # wrong types
        ('.memory = .{ .max_versions = "20" },', "memory.max_versions", "must be an integer"),
        (".memory = .{ .max_versions = 20.0 },", "memory.max_versions", "must be an integer"),
        (".memory = .{ .max_versions = true },", "memory.max_versions", "must be an integer"),
        ('.search = .{ .min_similarity = "high" },', "search.min_similarity", "must be a number"),
        (".store = .{ .path = 5 },", "store.path", "must be a string"),
        ('.daemon = .{ .startup = "lazy" },', "daemon.startup", '"on-demand", "explicit"'),
        ('.embeddings = .{ .provider = "openai" },', "embeddings.provider", '"off", "http"'),
        (".memory = 5,", "memory", "must be a struct"),
        ('.grants = .{ .unknown = "read" },', "grants.unknown", "tuple of grants"),
        # out of range
        (".memory = .{ .max_versions = 0 },", "memory.max_versions", "must be 1 to 1000"),
        (".memory = .{ .max_content_bytes = 262145 },", "memory.max_content_bytes", "262144"),
        (".memory = .{ .tombstone_days = 0 },", "memory.tombstone_days", "must be 1 to"),
        (".memory = .{ .similar_threshold = 1.5 },", "memory.similar_threshold", "must be 0 to 1"),
        (".memory = .{ .similar_threshold = -0.1 },", "memory.similar_threshold", "must be 0"),
        (".daemon = .{ .idle_timeout_ms = 999 },", "daemon.idle_timeout_ms", "1000 to 86400000"),
        (".daemon = .{ .idle_timeout_ms = 86400001 },", "daemon.idle_timeout_ms", "86400000"),
        (".search = .{ .min_similarity = 1.5 },", "search.min_similarity", "must be -1 to 1"),
        (".search = .{ .min_similarity = nan },", "search.min_similarity", "must be -1 to 1"),
        (".grants = .{ .max_token_ttl = 86401 },", "grants.max_token_ttl", "1 to 86400"),
    ],
)
def test_validation_errors_name_file_line_and_key(
    tmp_path: Path, body: str, key: str, fragment: str
) -> None:
    path = write(tmp_path, f"// venom-mem\n.{{\n    // line 3\n    {body}\n}}\n")
    err = error_of(path)
    assert err.code == "invalid_params.config"
    assert err.message.startswith(f"{path}:4: {key} ")
    assert fragment in err.message
    assert err.data["file"] == str(path)
    assert err.data["line"] == 4
    assert err.data["key"] == key


def test_the_line_is_the_key_line_in_a_multi_line_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ".{\n"
        "    .memory = .{\n"
        "        .max_content_bytes = 1000,\n"
        "        .tombstone_days = 9,\n"
        "        .max_versions = 5000,\n"  # line 5
        "    },\n"
        "}\n",
    )
    err = error_of(path)
    assert err.message == f"{path}:5: memory.max_versions must be 1 to 1000"


def test_a_bad_grant_names_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ".{\n"
        "    .grants = .{\n"
        "        .unknown = .{\n"
        '            .{ .right = "read", .scope = "*" },\n'
        '            .{ .right = "read", .scope = "everything" },\n'  # line 5
        "        },\n"
        "    },\n"
        "}\n",
    )
    err = error_of(path)
    assert err.message.startswith(f"{path}:5: grants.unknown item 2 is a bad grant")
    assert err.data["key"] == "grants.unknown"


def test_top_level_must_be_a_struct(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, '.{ "a", "b" }\n'))
    assert err.code == "invalid_params.config"
    assert ":1: the config must be a struct" in err.message


# -- the command line's view --------------------------------------------------------------------


def test_the_launch_view_checks_store_and_daemon_like_the_full_load(tmp_path: Path) -> None:
    good = write(tmp_path, '.{ .daemon = .{ .startup = "explicit" }, .memory = .{} }\n')
    assert load_launch_config(good).daemon.startup == "explicit"
    for text, line in (
        (".{\n    .daemon = .{ .startup_timeout_ms = 0 },\n}\n", 2),
        ('.{\n    .store = .{\n        .path = "relative",\n    },\n}\n', 3),
        (".{\n    .stor = .{},\n}\n", 2),
        (".{\n    .daemon = .{ .startup_timout_ms = 5 },\n}\n", 2),
    ):
        path = write(tmp_path, text)
        with pytest.raises(VenomError) as full:
            load_config(path)
        with pytest.raises(VenomError) as launch:
            load_launch_config(path)
        assert (launch.value.code, launch.value.message, launch.value.data) == (
            full.value.code,
            full.value.message,
            full.value.data,
        )
        assert launch.value.data["line"] == line


def test_the_launch_view_leaves_the_other_sections_to_the_daemon(tmp_path: Path) -> None:
    path = write(tmp_path, ".{ .memory = .{ .max_versions = 0 } }\n")
    assert load_launch_config(path) == Config.defaults()
    with pytest.raises(VenomError, match=r"memory\.max_versions must be 1 to 1000"):
        load_config(path)


def test_the_launch_view_does_not_load_cattrs_and_the_full_load_does(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = write(tmp_path, '.{ .daemon = .{ .startup = "explicit" }, .grants = .{} }\n')
    probe = (
        "import sys; from pathlib import Path; from venom_mem_adapters.config import _file as c; "
        f"c.load_launch_config(Path({str(path)!r})); print('cattrs' in sys.modules); "
        f"c.load_config(Path({str(path)!r})); print('cattrs' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()  # fmt: skip
    assert out == ["False", "True"]


# -- embeddings -------------------------------------------------------------------------------


def embeddings_file(tmp_path: Path, url: str, **extra: Any) -> Path:
    fields = {"provider": "http", "base_url": url, "model": "nomic-embed-text", "dimensions": 768}
    fields.update(extra)
    return write(tmp_path, zon.dumps({"embeddings": fields}) + "\n")


def test_section_5_example_loads(tmp_path: Path) -> None:
    config = load_config(embeddings_file(tmp_path, "http://127.0.0.1:11434/v1"))
    assert config.embeddings.provider == "http"
    assert config.embeddings.model == "nomic-embed-text"
    assert config.embeddings.dimensions == 768


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:11434/v1",
        "http://localhost/v1",
        "https://api.example.com/v1",
        "http://127.5.6.7/v1",
        "http://[::1]:8080/v1",
        "http://LOCALHOST:1234",
    ],
)
def test_accepted_urls(tmp_path: Path, url: str) -> None:
    check_embeddings_url(url)
    assert load_config(embeddings_file(tmp_path, url)).embeddings.base_url == url


def test_remote_http_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = embeddings_file(tmp_path, "http://10.0.0.1/v1")
    err = error_of(path)
    assert err.code == "invalid_params.embeddings_url"
    assert err.data["param"] == "embeddings.base_url"
    line = zon.parse_document(path.read_text(), filename="x").lines["embeddings.base_url"]
    assert err.message.startswith(f"{path}:{line}: embeddings.base_url ")
    assert "10.0.0.1 is not loopback" in err.message


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/v1",
        "http://example.com/v1",
        "http://[::2]/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://127.0.0.1.example.com/v1",
        "http://127.0.0.1@evil.example/v1",
        "ftp://127.0.0.1/v1",
        "127.0.0.1:11434/v1",
        "https://user:pw@api.example.com/v1",
        "https://api.example.com/v1?key=x",
        "https://api.example.com:99999/v1",
        "https:///v1",
        "https://api.example.com/v 1",
    ],
)
def test_refused_urls(url: str) -> None:
    with pytest.raises(VenomError) as caught:
        check_embeddings_url(url)
    assert caught.value.code == "invalid_params.embeddings_url"
    assert caught.value.data == {"param": "embeddings.base_url"}


def test_base_url_is_checked_even_with_provider_off(tmp_path: Path) -> None:
    path = write(tmp_path, '.{ .embeddings = .{ .base_url = "http://10.0.0.1/v1" } }\n')
    assert error_of(path).code == "invalid_params.embeddings_url"


def test_is_loopback_url() -> None:
    assert is_loopback_url("http://127.0.0.1:11434/v1")
    assert is_loopback_url("https://localhost/v1")
    assert not is_loopback_url("https://api.example.com/v1")
    assert not is_loopback_url("")


@pytest.mark.parametrize(
    ("drop", "key"),
    [("model", "embeddings.model"), ("base_url", "embeddings.base_url")],
)
def test_http_provider_needs_url_and_model(tmp_path: Path, drop: str, key: str) -> None:
    fields: dict[str, Any] = {
        "provider": "http",
        "base_url": "http://localhost/v1",
        "model": "m",
        "dimensions": 3,
    }
    del fields[drop]
    path = write(tmp_path, zon.dumps({"embeddings": fields}) + "\n")
    err = error_of(path)
    assert err.code == "invalid_params.config"
    assert err.data["key"] == key
    # The key is absent, so the line named is the provider's (line 3).
    assert err.message == f'{path}:3: {key} must be set when provider is "http"'


def test_http_provider_needs_dimensions(tmp_path: Path) -> None:
    path = embeddings_file(tmp_path, "http://localhost/v1", dimensions=0)
    err = error_of(path)
    assert err.data["key"] == "embeddings.dimensions"
    assert "at least 1" in err.message


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(VenomError) as caught:
        EmbeddingsConfig(provider="http", base_url="http://localhost/v1")
    assert caught.value.code == "invalid_params.config"
    assert caught.value.message == 'embeddings.model must be set when provider is "http"'
    with pytest.raises(VenomError):
        MemoryConfig(max_versions=0)


# -- the secret -------------------------------------------------------------------------------


def secret_config() -> Config:
    return Config.defaults().with_value("embeddings.api_key", SECRET)


def test_api_key_is_held_but_never_shown() -> None:
    config = secret_config()
    assert config.embeddings.api_key == SECRET
    shown = [
        repr(config),
        str(config),
        repr(config.embeddings),
        json.dumps(config.to_json()),
        json.dumps(config.get()),
        json.dumps(config.get("embeddings")),
        json.dumps(config.get("embeddings.api_key")),
    ]
    for text in shown:
        assert SECRET not in text
    assert config.get("embeddings.api_key") == "<secret>"
    assert config.to_json()["embeddings"]["api_key"] == "<secret>"
    assert Config.defaults().get("embeddings.api_key") == ""


def _all_text(err: VenomError) -> str:
    return " ".join([str(err), repr(err), err.message, json.dumps(err.to_json())])


@pytest.mark.parametrize(
    "extra",
    [
        {"base_url": "http://10.0.0.1/v1"},  # refused URL
        {"dimensions": 0},  # cross-field rule
        {"max_input_bytes": 0},  # range
        {"modle": "typo"},  # unknown key
    ],
)
def test_api_key_never_in_error_messages(tmp_path: Path, extra: dict[str, Any]) -> None:
    path = embeddings_file(tmp_path, "http://localhost/v1", api_key=SECRET, **extra)
    err = error_of(path)
    assert SECRET not in _all_text(err)


def test_api_key_not_in_syntax_errors(tmp_path: Path) -> None:
    path = write(tmp_path, f'.{{ .embeddings = .{{ .api_key = "{SECRET}\\q" }} }}\n')
    err = error_of(path)
    assert err.code == "invalid_params.config"
    assert SECRET not in _all_text(err)


def test_api_key_of_the_wrong_type_is_not_quoted(tmp_path: Path) -> None:
    path = write(tmp_path, ".{ .embeddings = .{ .api_key = 987654321987 } }\n")
    err = error_of(path)
    assert err.message == f"{path}:1: embeddings.api_key must be a string"
    assert "987654321987" not in _all_text(err)


def test_secret_not_in_reload_or_set_errors(tmp_path: Path) -> None:
    path = tmp_path / "config.zon"
    write_config_value(path, "embeddings.api_key", SECRET)
    with pytest.raises(VenomError) as caught:
        write_config_value(path, "embeddings.base_url", "http://10.0.0.1/v1")
    assert SECRET not in _all_text(caught.value)


# -- get, with_value, restart keys ------------------------------------------------------------


def test_get() -> None:
    config = Config.defaults()
    assert config.get("memory.max_versions") == 20
    assert config.get("memory") == {
        "max_content_bytes": 65536,
        "max_versions": 20,
        "tombstone_days": 30,
        "similar_threshold": SIMILAR_THRESHOLD,
    }
    assert config.get("grants.unknown") == [{"right": "read", "scope": "*"}]
    assert config.get() == config.to_json()
    json.dumps(config.get())  # JSON-ready


@pytest.mark.parametrize("key", ["memory.nope", "nope", "memory.max_versions.x", "."])
def test_get_unknown_key(key: str) -> None:
    with pytest.raises(VenomError) as caught:
        Config.defaults().get(key)
    assert caught.value.code == "invalid_params.config"
    assert caught.value.data["key"] == key
    assert caught.value.data["param"] == "key"


def test_with_value_validates() -> None:
    config = Config.defaults()
    assert config.with_value("daemon.startup", "explicit").daemon.startup == "explicit"
    assert config.with_value("search.min_similarity", 1).search.min_similarity == 1.0
    with pytest.raises(VenomError) as caught:
        config.with_value("memory.max_versions", 0)
    assert caught.value.code == "invalid_params.config"
    assert caught.value.message == "memory.max_versions must be 1 to 1000"
    with pytest.raises(VenomError, match="is a section"):
        config.with_value("memory", {"max_versions": 3})
    with pytest.raises(VenomError) as caught:
        config.with_value("embeddings.base_url", "http://192.168.1.2/v1")
    assert caught.value.code == "invalid_params.embeddings_url"


def test_with_value_grants() -> None:
    config = Config.defaults()
    assert config.with_value("grants.unknown", {}).grants.unknown == ()
    assert config.with_value("grants.unknown", []).grants.unknown == ()
    two = [{"right": "read", "scope": "space:user"}, {"right": "read", "scope": "self"}]
    assert config.with_value("grants.unknown", two).grants.unknown == (
        Grant(right="read", scope="space:user"),
        Grant(right="read", scope="self"),
    )
    with pytest.raises(VenomError) as caught:
        config.with_value("grants.unknown", [{"right": "fly", "scope": "*"}])
    assert caught.value.code == "invalid_params.config"


@pytest.mark.parametrize("right", ["write", "admin", "spawn", "files"])
def test_unknown_can_only_read(right: str) -> None:
    """RFC-0020: unknown "can only read"; a config can narrow that, never widen it."""
    with pytest.raises(VenomError) as caught:
        Config.defaults().with_value("grants.unknown", [{"right": right, "scope": "*"}])
    assert caught.value.code == "invalid_params.config"
    assert "allowed: read" in caught.value.message


def test_restart_keys() -> None:
    assert {
        "store.path",
        "store.url",  # docs/adr/0028
        "daemon.startup",
        "daemon.startup_timeout_ms",
        "daemon.idle_timeout_ms",
        "embeddings.provider",
        "embeddings.base_url",
        "embeddings.model",
        "embeddings.dimensions",
        "embeddings.api_key",
    } == RESTART_KEYS
    assert set(CONFIG_KEYS) >= RESTART_KEYS
    assert restart_required("daemon.idle_timeout_ms")
    assert restart_required("embeddings.api_key")
    assert restart_required("daemon")
    assert restart_required("embeddings")
    assert not restart_required("memory.max_versions")
    assert not restart_required("embeddings.query_timeout_ms")
    assert not restart_required("grants.unknown")
    assert not restart_required("memory")


# -- the file: set, reload, paths -------------------------------------------------------------


def test_set_round_trips_and_keeps_other_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "// my settings: comments are not kept by config set (docs/adr/0005-config-zon.md)\n"
        ".{\n"
        "    .memory = .{ .max_versions = 5 }, // five\n"
        '    .store = .{ .path = "/data/store.db" },\n'
        "    .grants = .{ .unknown = .{} },\n"
        "}\n",
    )
    new = write_config_value(path, "memory.tombstone_days", 9)
    assert new.memory.tombstone_days == 9
    assert new.memory.max_versions == 5
    assert new.store.path == "/data/store.db"
    assert new.grants.unknown == ()
    assert load_config(path) == new
    text = path.read_text()
    assert "//" not in text  # comments are lost on rewrite, by design
    assert zon.parse(text, filename="x") == {
        "memory": {"max_versions": 5, "tombstone_days": 9},
        "store": {"path": "/data/store.db"},
        "grants": {"unknown": {}},
    }
    # Untouched keys are not written out: they keep following the defaults.
    assert "max_content_bytes" not in text


def test_set_creates_the_file_and_directory_private(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "venom-mem" / "config.zon"
    new = write_config_value(path, "embeddings.api_key", SECRET)
    assert new.embeddings.api_key == SECRET
    assert load_config(path).embeddings.api_key == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == ["config.zon"]  # no temp file left behind


def test_set_tightens_an_existing_files_mode(tmp_path: Path) -> None:
    path = write(tmp_path, ".{}\n")
    path.chmod(0o644)
    write_config_value(path, "memory.max_versions", 3)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_set_writes_through_a_link_to_the_file_it_names(tmp_path: Path) -> None:
    target = write(tmp_path, ".{ .memory = .{ .max_versions = 21 } }\n")
    link = tmp_path / "linked" / "config.zon"
    link.parent.mkdir(mode=0o700)
    link.symlink_to(target)
    write_config_value(link, "memory.max_versions", 22)
    assert link.is_symlink()
    assert load_config(target).memory.max_versions == 22
    assert load_config(link).memory.max_versions == 22


def test_set_values_from_value_text(tmp_path: Path) -> None:
    path = tmp_path / "config.zon"
    for key, text in [
        ("grants.unknown", '.{ .{ .right = "read", .scope = "space:user" } }'),
        ("search.min_similarity", "0.5"),
        ("daemon.startup", "explicit"),
        ("embeddings.base_url", "https://api.example.com/v1"),
    ]:
        write_config_value(path, key, parse_value_text(text))
    config = load_config(path)
    assert config.grants.unknown == (Grant(right="read", scope="space:user"),)
    assert config.search.min_similarity == 0.5
    assert config.daemon.startup == "explicit"
    assert config.embeddings.base_url == "https://api.example.com/v1"


def test_set_invalid_value_leaves_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, ".{ .memory = .{ .max_versions = 5 } } // keep me\n")
    before = path.read_bytes()
    for key, value in [
        ("memory.max_versions", 0),
        ("memory.nope", 1),
        ("embeddings.provider", "http"),  # no base_url, model, dimensions
    ]:
        with pytest.raises(VenomError) as caught:
            write_config_value(path, key, value)
        assert caught.value.code == "invalid_params.config"
    assert path.read_bytes() == before


def test_set_on_a_broken_file_raises_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path, ".{ .memory = .{ .max_versions = 5 }\n")
    with pytest.raises(VenomError) as caught:
        write_config_value(path, "memory.max_versions", 6)
    assert caught.value.message.startswith(f"{path}:")


def test_reload_applies_and_reports_restart_keys(tmp_path: Path) -> None:
    path = write(tmp_path, ".{}\n")
    current = load_config(path)
    write(
        tmp_path,
        ".{\n"
        "    .memory = .{ .max_versions = 3 },\n"
        "    .daemon = .{ .idle_timeout_ms = 60000 },\n"
        '    .embeddings = .{ .provider = "http", .base_url = "http://localhost/v1",\n'
        '                     .model = "m", .dimensions = 4, .query_timeout_ms = 500 },\n'
        "    .grants = .{ .unknown = .{} },\n"
        "}\n",
    )
    new, pending = reload(path, current)
    assert pending == [
        "daemon.idle_timeout_ms",
        "embeddings.provider",
        "embeddings.base_url",
        "embeddings.model",
        "embeddings.dimensions",
    ]
    # Keys that apply on reload are applied ...
    assert new.memory.max_versions == 3
    assert new.embeddings.query_timeout_ms == 500
    assert new.grants.unknown == ()
    # ... and restart keys keep the running values.
    assert new.daemon.idle_timeout_ms == 300000
    assert new.embeddings.provider == "off"
    assert new.embeddings.base_url == ""
    # Reloading the same file again still reports them as waiting for a restart.
    assert reload(path, new)[1] == pending


def test_reload_with_a_bad_file_raises_and_keeps_the_config(tmp_path: Path) -> None:
    path = write(tmp_path, ".{ .memory = .{ .max_versions = 7 } }\n")
    current = load_config(path)
    snapshot = attrs.evolve(current)
    write(tmp_path, ".{ .memory = .{ .max_versions = 7,, } }\n")
    with pytest.raises(VenomError) as caught:
        reload(path, current)
    assert caught.value.code == "invalid_params.config"
    assert caught.value.data["line"] == 1
    write(tmp_path, ".{ .memory = .{ .max_versions = -1 } }\n")
    with pytest.raises(VenomError):
        reload(path, current)
    assert current == snapshot
    assert current.memory.max_versions == 7


def test_unknown_grants_empty_struct_gives_no_grants(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, ".{ .grants = .{ .unknown = .{} } }\n"))
    assert config.grants.unknown == ()
    assert config.get("grants.unknown") == []


def test_default_config_path(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    assert default_config_path({"VENOM_MEM_CONFIG": "/x/c.zon", "XDG_CONFIG_HOME": "/c"}) == Path(
        "/x/c.zon"
    )
    assert default_config_path({"XDG_CONFIG_HOME": "/c", "HOME": home}) == Path(
        "/c/venom-mem/config.zon"
    )
    expected = Path(home) / ".config" / "venom-mem" / "config.zon"
    assert default_config_path({"XDG_CONFIG_HOME": "rel/dir", "HOME": home}) == expected
    assert default_config_path({"XDG_CONFIG_HOME": "", "HOME": home}) == expected
    assert default_config_path({"VENOM_MEM_CONFIG": "", "HOME": home}) == expected
    env = {"XDG_CONFIG_HOME": "/c//d/", "HOME": home}
    assert Path(config_file_path(env)) == default_config_path(env)


def test_a_client_with_no_config_file_finds_the_default_stores_place(tmp_path: Path) -> None:
    """DaemonLocator skips loading the config when there is no file: what it answers then
    is what the defaults' store section says, and a file's store.path still counts."""
    env = {
        "VENOM_MEM_CONFIG": str(tmp_path / "config.zon"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path / "home"),
    }
    store = Config.defaults().store
    assert not config_file_present(env["VENOM_MEM_CONFIG"])
    assert DaemonLocator(env).store_path() == default_store_path(env, store.path, store.url)
    (tmp_path / "link.zon").symlink_to(tmp_path / "nowhere.zon")  # read as no file, too
    assert not config_file_present(str(tmp_path / "link.zon"))
    assert load_config(tmp_path / "link.zon") == Config.defaults()
    write(tmp_path, '.{ .store = .{ .path = "/srv/memory/store.db" } }\n')
    assert config_file_present(env["VENOM_MEM_CONFIG"])
    assert DaemonLocator(env).store_path() == "/srv/memory/store.db"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("20", 20),
        ("-3", -3),
        ("0.5", 0.5),
        ('"http"', "http"),
        ("true", True),
        ("null", None),
        ('.{ .{ .right = "read", .scope = "*" } }', [{"right": "read", "scope": "*"}]),
        ('[{"right":"read","scope":"*"}]', [{"right": "read", "scope": "*"}]),
        ('{"a": 1}', {"a": 1}),
        ('"caf\\u00e9"', "café"),  # JSON escape, not ZON
        (".{}", {}),
        ("[]", []),
        ("http", "http"),
        ("on-demand", "on-demand"),
        ("https://api.example.com/v1", "https://api.example.com/v1"),
        ("  explicit\n", "explicit"),
        ("", ""),
        (SECRET, SECRET),
    ],
)
def test_parse_value_text(text: str, expected: Any) -> None:
    assert parse_value_text(text) == expected


@pytest.mark.parametrize("text", ['.{ .right = "read"', "[1, 2", '{"a": }', '"unterminated'])
def test_parse_value_text_refuses_broken_structures(text: str) -> None:
    with pytest.raises(VenomError) as caught:
        parse_value_text(text)
    assert caught.value.code == "invalid_params.config"
    assert caught.value.data["param"] == "value"


@pytest.mark.parametrize("key", ["store.path", "embeddings.model", "embeddings.api_key"])
def test_strings_with_control_characters_are_refused(key: str) -> None:
    value = "/tmp/a\x00b" if key == "store.path" else "a\x00b"
    with pytest.raises(VenomError) as caught:
        Config.defaults().with_value(key, value)
    assert caught.value.code == "invalid_params.config"
    assert "control characters" in caught.value.message


def test_search_query_mode_and_fusion_are_reloadable_defaults(tmp_path: Path) -> None:
    text = '.{ .search = .{ .query_mode = "natural", .fusion = "weighted" } }'
    config = load_config(write(tmp_path, text))
    settings = config.memory_settings()
    assert (settings.query_mode, settings.fusion) == ("natural", "weighted")
    assert not restart_required("search.query_mode")
    assert not restart_required("search.fusion")
    effective, pending = Config.defaults().reloaded(config)
    assert (effective.search.query_mode, effective.search.fusion, pending) == (
        "natural",
        "weighted",
        [],
    )
    for key, bad in (("query_mode", "english"), ("fusion", "sum")):
        error = error_of(write(tmp_path, f'.{{ .search = .{{ .{key} = "{bad}" }} }}'))
        assert error.code.startswith("invalid_params"), error
        assert f"search.{key}" in error.message


# -- store.url (docs/adr/0028) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://team:hunter2@db.example/mem",
        "postgresql://db.example/mem?password=hunter2",
        "postgres:///mem?sslpassword=hunter2&sslmode=require",
    ],
)
def test_a_store_url_with_a_password_is_refused(url: str) -> None:
    with pytest.raises(VenomError) as caught:
        Config.defaults().with_value("store.url", url)
    assert caught.value.code == "invalid_params.store_url"
    assert "hunter2" not in caught.value.message
    assert "hunter2" not in str(caught.value.data)
    assert "pgpass" in caught.value.data["fix"]


@pytest.mark.parametrize("url", ["mysql://db/mem", "/var/lib/mem.db", "postgresql:/nohost"])
def test_a_store_url_must_be_postgresql(url: str) -> None:
    with pytest.raises(VenomError) as caught:
        Config.defaults().with_value("store.url", url)
    assert caught.value.code == "invalid_params.store_url"


def test_a_store_url_and_a_store_path_exclude_each_other() -> None:
    config = Config.defaults().with_value("store.path", "/srv/mem/store.db")
    with pytest.raises(VenomError) as caught:
        config.with_value("store.url", "postgresql://db.example/mem")
    assert caught.value.code == "invalid_params.config"


def test_a_store_url_from_libpq_conventions_is_kept() -> None:
    url = "postgresql://db.example:5433/mem?service=team&sslmode=verify-full"
    assert Config.defaults().with_value("store.url", url).store.url == url

"""RFC-0020 section 2, the memory record, rule by rule, on every store with a default config
(memory.max_content_bytes 65536, memory.max_versions 20)."""

from __future__ import annotations

from tests.conformance.harness import Rfc

GRANTS = '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]'
SPACE = ("--space", "project/venom-std")
TOKEN = "vnt1.venom-mem.g1." + "A" * 43


def client(rfc: Rfc) -> str:
    return str(rfc.ok("client", "add", "--name", "claude-code", "--grants", GRANTS,
                      token="@owner")["token"])  # fmt: skip


def test_identity_and_duplicates(rfc: Rfc) -> None:
    g1 = client(rfc)
    first = rfc.ok("memory", "add", *SPACE, "--title", "Zig pin", "--content", "pin", token=g1)
    assert first == {"id": "m1", "revision": 1, "changed": True}
    again = rfc.ok("memory", "add", *SPACE, "--kind", "fact", "--title", "Other",
                   "--tags", '["x"]', "--content", "pin", token=g1)  # fmt: skip
    assert again == {"id": "m1", "revision": 1, "changed": False}
    got = rfc.ok("memory", "get", "--id", "m1")
    assert (got["title"], got["kind"], got["tags"]) == ("Zig pin", "note", [])
    # Another space is another memory.
    assert rfc.ok("memory", "add", "--space", "user", "--content", "pin", token=g1)["id"] == "m2"
    # An update or restore that would make a duplicate names the other memory.
    rfc.ok("memory", "add", *SPACE, "--content", "other", token=g1)  # m3
    code, error = rfc.error("memory", "update", "--id", "m3", "--revision", "1",
                            "--content", "pin", token=g1)  # fmt: skip
    assert (code, error["code"], error["data"]) == (5, "conflict.memory_duplicate", {"id": "m1"})
    rfc.ok("memory", "delete", "--id", "m1", "--revision", "1", token=g1)
    rfc.ok("memory", "update", "--id", "m3", "--revision", "1", "--content", "pin", token=g1)
    code, error = rfc.error("memory", "restore", "--id", "m1", token=g1)
    assert (code, error["code"], error["data"]) == (5, "conflict.memory_duplicate", {"id": "m3"})


def test_updates(rfc: Rfc) -> None:
    g1 = client(rfc)
    rfc.ok("memory", "add", *SPACE, "--title", "T", "--tags", '["a"]', "--content", "c",
           token=g1)  # fmt: skip
    code, error = rfc.error("memory", "update", "--id", "m1", "--revision", "1", token=g1)
    assert (code, error["code"], error["data"]["param"]) == (2, "invalid_params.missing", "content")
    same = rfc.ok("memory", "update", "--id", "m1", "--revision", "1", "--content", "c", token=g1)
    assert same == {"id": "m1", "revision": 1, "changed": False}
    cleared = rfc.ok("memory", "update", "--id", "m1", "--revision", "1", "--title", "",
                     "--tags", "[]", token=g1)  # fmt: skip
    assert cleared == {"id": "m1", "revision": 2, "changed": True}
    got = rfc.ok("memory", "get", "--id", "m1")
    assert "title" not in got  # absent when empty
    assert got["tags"] == []
    assert got["embedding"] == "off"


def test_versions_are_kept_and_bounded(rfc: Rfc) -> None:
    g1 = client(rfc)
    rfc.ok("memory", "add", *SPACE, "--content", "v1", token=g1)
    for revision in range(1, 21):
        rfc.ok("memory", "update", "--id", "m1", "--revision", str(revision),
               "--content", f"v{revision + 1}", token=g1)  # fmt: skip
    history = rfc.ok("memory", "history", "--id", "m1")["versions"]
    assert [v["revision"] for v in history] == list(range(21, 1, -1))  # the newest 20
    assert {v["action"] for v in history} == {"update"}
    assert all("content" not in v for v in history)
    assert rfc.ok("memory", "get", "--id", "m1", "--revision", "2")["content"] == "v2"
    code, error = rfc.error("memory", "get", "--id", "m1", "--revision", "1")
    assert (code, error["code"]) == (3, "not_found.memory_revision")


def test_deletes_are_soft_and_purge_erases(rfc: Rfc) -> None:
    g1 = client(rfc)
    rfc.ok("memory", "add", *SPACE, "--content", "zig pin", token=g1)
    assert rfc.ok("memory", "delete", "--id", "m1", "--revision", "1", token=g1)["revision"] == 2
    code, error = rfc.error("memory", "get", "--id", "m1")
    assert (code, error["code"], error["data"]) == (3, "not_found.memory", {})
    assert "deleted" in rfc.ok("memory", "get", "--id", "m1", "--include-deleted=true")
    assert rfc.ok("memory", "search", "--query", "zig")["results"] == []
    assert rfc.ok("memory", "list")["memories"] == []
    assert rfc.ok("memory", "restore", "--id", "m1", token=g1) == {"id": "m1", "revision": 3}
    actions = [v["action"] for v in rfc.ok("memory", "history", "--id", "m1")["versions"]]
    assert actions == ["restore", "delete", "add"]
    code, error = rfc.error("memory", "purge", "--id", "m1", token=g1)
    assert (code, error["code"]) == (4, "denied.admin")
    assert rfc.ok("memory", "purge", "--id", "m1", token="@owner") == {"id": "m1"}
    code, error = rfc.error("memory", "get", "--id", "m1", "--include-deleted=true")
    assert (code, error["code"]) == (3, "not_found.memory")
    # IDs are never reused, even after a purge.
    assert rfc.ok("memory", "add", *SPACE, "--content", "zig pin", token=g1)["id"] == "m2"


def test_fields_are_checked(rfc: Rfc) -> None:
    g1 = client(rfc)
    for param, args in (
        ("content", ("--content", f"my token {TOKEN}")),
        ("title", ("--title", TOKEN, "--content", "x")),
    ):
        code, error = rfc.error("memory", "add", *SPACE, *args, token=g1)
        assert (code, error["code"], error["data"]["param"]) == (
            2,
            "invalid_params.secret_content",
            param,
        )
    for args, want in (
        (("--content", "x" * 65537), ("invalid_params.range", "content")),
        (("--content", ""), ("invalid_params.range", "content")),
        (("--title", "t" * 201, "--content", "x"), ("invalid_params.range", "title")),
        (("--tags", '["Zig"]', "--content", "x"), ("invalid_params.tag", "tags")),
        (("--tags", '["a","a"]', "--content", "x"), ("invalid_params.tag", "tags")),
        (
            ("--tags", str([f"t{n}" for n in range(17)]).replace("'", '"'), "--content", "x"),
            ("invalid_params.range", "tags"),
        ),
        (("--kind", "idea", "--content", "x"), ("invalid_params.type", "kind")),
    ):
        code, error = rfc.error("memory", "add", *SPACE, *args, token=g1)
        assert (code, error["code"], error["data"].get("param")) == (2, *want), (args, error)
    code, error = rfc.error("memory", "add", "--space", "Not A Space", "--content", "x", token=g1)
    assert (code, error["code"]) == (2, "invalid_params.space")
    # Provenance comes from the connection, never from params.
    code, error = rfc.error("memory", "add", *SPACE, "--content", "x", "--author", "g9", token=g1)
    assert (code, error["code"]) == (2, "invalid_params.unknown")
    assert rfc.ok("memory", "list")["memories"] == []  # nothing was stored

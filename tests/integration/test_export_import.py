"""venom-mem export and import through real daemons and CLI subprocesses (docs/adr/0039)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon_env import World, make_world
from tests.support.varied_store import write_history

# Times are the importing store's; the source's are kept in origin (ADR 0040).
TIMES = ("created", "updated", "deleted", "ts", "started", "ended", "exported", "unlinked", "since")
PROVENANCE = ("author", "updated_by", "by", "reported_by", "unlinked_by")
# m6's own origin, which an import passes through as it is (ADR 0040).
ORIGIN = {"format": "server-memory", "id": "entity Ünï observation 1", "author": "claude"}


@pytest.fixture
def fresh() -> Iterator[World]:
    with make_world() as w:
        yield w


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _normal(value: Any) -> Any:
    """The export with its store, times and principals left out."""
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in TIMES or key == "store":
            out[key] = "T" if key in TIMES else "S"
        elif key in PROVENANCE:
            out[key] = "P"
        else:
            out[key] = _normal(item)
    return out


def _build_source(world: World) -> None:
    agent = world.add_client("claude-code")
    write_history(world, agent)
    world.ok("space", "describe", "--space", "user", "--description", "Über mich", token=agent)
    world.ok("space", "describe", "--space", "team", "--description", "Team facts",
             token="@owner")  # fmt: skip
    # Links (docs/adr/0042): a supersedes on add, another relation, one unlinked and made
    # again (two rows of one triple), and one from a memory deleted since.
    world.ok("memory", "add", "--space", "user", "--content", "Prefers tiny PRs",
             "--supersedes", '["m1"]', token=agent)  # fmt: skip
    world.ok("memory", "link", "--from", "m4", "--to", "m2", "--relation", "relates_to",
             token="@owner")  # fmt: skip
    world.ok("memory", "add", "--space", "project/x", "--content", "Ünï said so",
             "--origin", json.dumps(ORIGIN), token=agent)  # fmt: skip
    for verb in ("link", "unlink", "link"):
        world.ok("memory", verb, "--from", "m6", "--to", "m2", "--relation", "causes",
                 token=agent)  # fmt: skip
    world.ok("memory", "add", "--space", "project/x", "--content", "soon gone", token=agent)
    world.ok("memory", "link", "--from", "m7", "--to", "m1", "--relation", "same_entity",
             token=agent)  # fmt: skip
    world.ok("memory", "delete", "--id", "m7", "--revision", "1", token=agent)
    # Inactive spaces, after their writes (a write activates): one holding memories, one empty.
    world.ok("space", "deactivate", "--space", "team", token="@owner")
    world.ok("space", "deactivate", "--space", "archive", token="@owner")


def _export(world: World, out: Path, *extra: str, token: str = "@owner") -> dict[str, Any]:
    result: dict[str, Any] = world.ok("export", "--out", str(out), *extra, token=token)
    return result


def test_export_import_export_is_equal_but_for_store_times_and_principal(
    world: World, fresh: World
) -> None:
    _build_source(world)
    first = world.root / "first.jsonl"
    assert _export(world, first, "--include-deleted") == {
        "out": str(first), "memories": 7, "sessions": 3, "spaces": 2, "links": 5,
        "inactive_spaces": 2,
    }  # fmt: skip
    text = first.read_text(encoding="utf-8")
    assert "vnt1." not in text
    assert "token" not in text
    assert "小さい" in text
    lines = _lines(first)
    assert lines[0]["format"] == "venom-mem-export"
    assert lines[0]["version"] == 1
    by_id = {line.get("id"): line for line in lines if line["type"] == "memory"}
    assert [r["action"] for r in by_id["m4"]["revisions"]] == ["add", "delete", "restore", "update"]
    assert [r["content"] for r in by_id["m2"]["revisions"]] == ["first draft", "second draft"]
    assert "deleted" in by_id["m3"]
    assert by_id["m1"]["author"]["label"] == "claude-code"
    chains = {line["session"]: line["chain"] for line in lines if line["type"] == "session"}
    assert chains == {"s1": ["s1"], "s2": ["s1", "s2"], "s3": ["s1", "s2", "s3"]}
    links = [line for line in lines if line["type"] == "link"]
    triples = sorted((x["from"], x["relation"], x["to"], "unlinked" in x) for x in links)
    assert triples == [
        ("m4", "relates_to", "m2", False), ("m5", "supersedes", "m1", False),
        ("m6", "causes", "m2", False), ("m6", "causes", "m2", True),
        ("m7", "same_entity", "m1", False),
    ]  # fmt: skip
    assert next(x for x in links if "unlinked" in x)["unlinked_by"]["label"] == "claude-code"
    inactive = [line["space"] for line in lines if line["type"] == "inactive_space"]
    assert inactive == ["archive", "team"]
    assert by_id["m6"]["origin"] == ORIGIN

    importer = fresh.add_client("importer")
    done = fresh.ok("import", str(first), token=importer)
    assert done == {"files": [{
        "file": str(first), "memories": 7, "skipped": 0, "sessions": 3,
        "sessions_skipped": 0, "spaces": 2, "spaces_skipped": 0, "links": 5,
        "links_skipped": 0, "inactive_spaces": 2, "inactive_spaces_skipped": 0,
    }]}  # fmt: skip
    second = fresh.root / "second.jsonl"
    _export(fresh, second, "--include-deleted")
    again = _lines(second)
    assert again[0]["store"]["path"] != lines[0]["store"]["path"]
    principals = {m["author"]["principal"] for m in again if m["type"] == "memory"}
    assert principals == {"g1"}  # the importer's: provenance is the connection's
    # What the source said of each memory is its origin: its author, time and ID there.
    # (A memory with an origin of its own keeps it: an import of an import keeps the first.)
    origins = {m["id"]: m.pop("origin") for m in again if m["type"] == "memory"}
    assert origins == {
        m["id"]: m.get("origin")
        or {
            "format": "venom",
            "id": m["id"],
            "author": m["author"].get("label", m["author"]["principal"]),
            "created": m["created"],
        }
        for m in lines
        if m["type"] == "memory"
    }
    for m in lines:
        if m["type"] == "memory":
            m.pop("origin", None)
    assert _normal(again) == _normal(lines)
    assert fresh.ok("memory", "get", "--id", "m1", token="@owner")["superseded_by"] == ["m5"]
    listed = {s["space"]: s.get("active", True) for s in fresh.ok("space", "list")["spaces"]}
    assert (listed["team"], listed["archive"], listed["user"]) == (False, False, True)

    # The same file again adds nothing, and says so.
    rerun = fresh.ok("import", str(first), token=importer)
    assert rerun == {"files": [{
        "file": str(first), "memories": 0, "skipped": 7, "sessions": 0,
        "sessions_skipped": 3, "spaces": 0, "spaces_skipped": 2, "links": 0,
        "links_skipped": 5, "inactive_spaces": 0, "inactive_spaces_skipped": 2,
    }]}  # fmt: skip
    said = fresh.run("import", str(first), token=importer)
    assert said.code == 0, said
    assert f"{first}: 7 already present, 0 added" in said.stdout
    words = " ".join(said.stdout.split())  # the headline wraps at the terminal's width
    assert "links: 5 already present, 0 added; inactive spaces: 2 already present" in words
    third = fresh.root / "third.jsonl"
    _export(fresh, third, "--include-deleted")
    assert _normal(_lines(third)) == _normal(_lines(second))


def test_a_dry_run_says_what_it_would_write_and_writes_nothing(world: World, fresh: World) -> None:
    _build_source(world)
    first = world.root / "first.jsonl"
    _export(world, first, "--include-deleted")
    plan = fresh.ok("import", str(first), "--dry-run", token="@owner")["files"][0]
    assert plan["dry_run"] is True
    assert plan["memories"] == 7
    assert plan["sessions"] == 3
    assert (plan["links"], plan["inactive_spaces"]) == (5, 2)
    assert {w.get("memory") for w in plan["would_write"]} >= {"m1", "m2", "m3", "m4"}
    kinds = [next(k for k in w if k != "line") for w in plan["would_write"]]
    # Links after the memories, then the descriptions, and last the inactive spaces.
    assert kinds[-9:] == [*["link"] * 5, "space", "space", "inactive_space", "inactive_space"]
    assert [w.get("inactive_space") for w in plan["would_write"][-2:]] == ["archive", "team"]
    assert fresh.ok("store", "status", token="@owner")["memories"] == 0


def test_a_clients_export_holds_only_what_it_may_read(world: World) -> None:
    _build_source(world)
    reader = world.add_client("reader", '[{"right":"read","scope":"space:team"}]')
    out = world.root / "team.jsonl"
    counts = _export(world, out, "--include-deleted", token=reader)
    lines = _lines(out)
    assert {line["space"] for line in lines if line["type"] in ("memory", "space")} == {"team"}
    assert counts["memories"] == 1
    assert counts["sessions"] == 0
    # m4 relates_to m2 has an end outside team; of the inactive spaces, only team is its.
    assert (counts["links"], counts["inactive_spaces"]) == (0, 1)
    assert "path" not in lines[0]["store"]  # store.status's right, which it lacks
    denied = world.run("export", "--spaces", "user", "--json", token=reader)
    assert denied.code != 0
    assert json.loads(denied.stdout)["error"]["code"] == "denied.read"


def _broken(ls: list[str]) -> list[str]:
    return [*ls[:3], "{broken", *ls[3:]]


def _no_revisions_last(ls: list[str]) -> list[str]:
    return [*ls, '{"type":"memory","id":"m9","space":"user"}']


def _other_format(ls: list[str]) -> list[str]:
    return ['{"type":"entity","name":"x"}', *ls[1:]]


def _next_version(ls: list[str]) -> list[str]:
    return [ls[0].replace('"version":1', '"version":2'), *ls[1:]]


def _link_to_nowhere(ls: list[str]) -> list[str]:
    return [*ls, '{"type":"link","from":"m1","to":"m99","relation":"follows"}']


def _bad_relation(ls: list[str]) -> list[str]:
    return [*ls, '{"type":"link","from":"m1","to":"m2","relation":"likes"}']


def _later_line_type(ls: list[str]) -> list[str]:
    return [*ls, '{"type":"hologram","space":"user"}']


def _bad_space(ls: list[str]) -> list[str]:
    return [*ls[:2], ls[2].replace('"space":"', '"space":"Bad Space'), *ls[3:]]


@pytest.mark.parametrize(
    ("mangle", "code", "line"),
    [
        (_broken, "invalid_params.import_line", 4),
        (_no_revisions_last, "invalid_params.import_line", None),
        (_other_format, "invalid_params.import_format", 1),
        (_next_version, "invalid_params.import_version", 1),
        (_bad_space, "invalid_params.space", 3),
        (_link_to_nowhere, "invalid_params.import_line", None),
        (_bad_relation, "invalid_params.link_relation", None),
        (_later_line_type, "invalid_params.import_line", None),
    ],
    ids=[
        "broken-line",
        "no-revisions-last",
        "other-format",
        "unknown-version",
        "bad-space",
        "link-to-nowhere",
        "bad-relation",
        "later-line-type",
    ],
)
def test_bad_input_is_refused_naming_the_line_and_nothing_is_written(
    world: World, fresh: World, mangle: Any, code: str, line: int | None
) -> None:
    _build_source(world)
    good = world.root / "good.jsonl"
    _export(world, good, "--include-deleted")
    lines = good.read_text(encoding="utf-8").splitlines()
    bad = world.root / "bad.jsonl"
    bad.write_text("\n".join(mangle(lines)) + "\n", encoding="utf-8")
    result = fresh.run("import", str(bad), "--json", token="@owner")
    assert result.code == 2, result
    error = json.loads(result.stdout)["error"]
    assert error["code"] == code
    assert error["data"]["line"] == (line if line is not None else len(lines) + 1)
    assert f"line {error['data']['line']}" in error["message"]
    status = fresh.ok("store", "status", token="@owner")
    assert (status["memories"], status["deleted"], status["sessions"]) == (0, 0, 0)
    assert fresh.ok("space", "list", token="@owner") == {"spaces": []}


def test_a_large_store_exports_in_pages_that_fit_the_frame(world: World, fresh: World) -> None:
    for i in range(12):  # 12 memories of 50 KB: more than two pages of 256 KiB
        world.ok("memory", "add", "--space", "user", "--content", f"{i} " + "é" * 25_000,
                 token="@owner")  # fmt: skip
    page = world.ok("store", "export", token="@owner")
    assert page["next"] is not None
    assert page["next"].startswith("memories:m")
    assert 0 < len(page["lines"]) < 12
    second = world.ok("store", "export", "--after", page["next"], token="@owner")
    assert "header" not in second
    assert {line["id"] for line in second["lines"]}.isdisjoint(
        {line["id"] for line in page["lines"]}
    )
    out = world.root / "big.jsonl"
    assert _export(world, out)["memories"] == 12
    assert fresh.ok("import", str(out), token="@owner")["files"][0]["memories"] == 12
    again = fresh.root / "again.jsonl"
    _export(fresh, again)
    imported = [{k: v for k, v in line.items() if k != "origin"} for line in _lines(again)]
    assert _normal(imported) == _normal(_lines(out))


def test_the_link_and_inactive_space_parts_page_by_their_own_cursor(world: World) -> None:
    _build_source(world)
    links = world.ok("store", "export", "--include-deleted", "--after", "links:", token="@owner")
    assert {line["type"] for line in links["lines"]} == {"link", "inactive_space"}
    assert links["next"] is None
    # After m5, only the links of the memories below it (newest first): m4's.
    later = world.ok("store", "export", "--after", "links:m5", token="@owner")["lines"]
    assert [(x["type"], x.get("from")) for x in later] == [
        ("link", "m4"), ("inactive_space", None), ("inactive_space", None),
    ]  # fmt: skip
    last = world.ok("store", "export", "--after", "inactive_spaces", token="@owner")
    assert [x["space"] for x in last["lines"]] == ["archive", "team"]
    bad = world.run("store", "export", "--after", "links:s1", "--json", token="@owner")
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_params.cursor"

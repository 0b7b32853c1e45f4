"""``store copy --to URL``: the daemon's store copied whole into an empty store, then verified
(docs/adr/0041).

The order is what makes it all or nothing: every refusal (a target of another schema version,
a target holding data, a table or column one side lacks) comes before the first row is
written; a target with nothing in it gets its schema from its own migrations; every row then
goes in one transaction on the target, and before it commits each table is read back in that
transaction and its row count and hash compared with the source's (computed from the same
snapshot the rows came from). A mismatch rolls the whole copy back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from venom_mem_core.errors import VenomError

from .digest import TableDigest
from .ends import CopyReader, CopyTarget, Table, in_reference_order

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

__all__ = ["copy_store", "open_source", "open_target"]

META = "meta"  # RFC-0020's key/value table: the one whose rows a new store already has


def open_source(engine: str, store: Store) -> AbstractContextManager[CopyReader]:
    """A snapshot of the daemon's own store, read on a connection of the copy's own."""
    if engine == "sqlite":
        from ..sqlite.copy_end import source
    else:
        from ..postgres.copy_end import source  # type: ignore[assignment]
    return source(store)


def open_target(url: str) -> AbstractContextManager[CopyTarget]:
    """The store ``url`` names: ``postgresql://...``, or a SQLite file as ``sqlite:///PATH``
    or an absolute path; ``invalid_params.store_url`` for anything else."""
    if url.partition("://")[0].lower() in ("postgresql", "postgres"):
        from venom_mem_core.config import check_store_url

        check_store_url(url)
        try:
            from ..postgres.copy_end import target
        except ImportError:
            raise VenomError(
                "failed.store",
                "--to names a PostgreSQL database, but psycopg is not installed",
                {"fix": "pip install 'venom-mem[postgres]'"},
            ) from None
        return target(url)
    path = url.removeprefix("sqlite://")
    if not path.startswith("/"):
        raise VenomError(
            "invalid_params.store_url",
            "--to must be a postgresql:// URL, sqlite:///ABSOLUTE/PATH or an absolute path",
            {"fix": "venom-mem store copy --to postgresql://host/db (or /path/to/store.db)"},
        )
    from ..sqlite.copy_end import target as sqlite_target

    return sqlite_target(path)


def _refuse(code: str, message: str, **data: Any) -> VenomError:
    return VenomError(code, message, data)


def _kept(
    table: Table, rows: Iterator[Sequence[object]], own: frozenset[str]
) -> Iterator[Sequence[object]]:
    if table.name != META:
        yield from rows
        return
    key = table.columns.index("key")
    for row in rows:
        if row[key] not in own:
            yield row


def _check_tables(source: Mapping[str, Table], target: Mapping[str, Table], where: str) -> None:
    for name in sorted(source.keys() | target.keys()):
        if name not in target or name not in source:
            side = "the target" if name not in target else "the source"
            raise _refuse(
                "conflict.store_schema",
                f"table {name} is not in {side} ({where}): the two stores' schemas differ",
                table=name,
            )
        if source[name].columns != target[name].columns:
            raise _refuse(
                "conflict.store_schema",
                f"table {name} has columns {list(source[name].columns)} in the source and"
                f" {list(target[name].columns)} in the target ({where})",
                table=name,
            )


def copy_store(source: CopyReader, target: CopyTarget) -> dict[str, Any]:
    """Copy ``source`` into ``target`` and verify it; the result lists each table's rows and
    hash, and the ID counters, as both sides now hold them."""
    version = source.schema_version()
    found = target.schema_version()
    target_version = found or target.supported
    if target_version != version:
        raise _refuse(
            "conflict.store_schema",
            f"the source has schema version {version} and the target ({target.where})"
            f" {'would get ' if not found else ''}{target_version}: copy between stores of"
            " one version (upgrade the older one first)",
            source=version,
            target=target_version,
        )
    if not found:
        target.create_schema()
    tables = source.tables()
    with target.transaction() as writer:
        _check_tables(tables, writer.tables(), target.where)
        order = in_reference_order(tables)
        held = {t.name: n for t in order if t.name != META and (n := writer.count(t))}
        if held:
            raise _refuse(
                "conflict.store_not_empty",
                f"the target {target.where} is not empty ({_counts(held)}): store copy"
                " writes only into an empty store, and wrote nothing",
                tables=held,
            )
        own = source.own_meta | writer.own_meta
        sent: dict[str, TableDigest] = {}
        writer.delete_meta(writer.own_meta)
        for table in order:
            sent[table.name] = digest = TableDigest()
            writer.insert(table, digest.passing(_kept(table, source.rows(table), own)))
        counters = source.counters()
        writer.set_counters(counters)
        writer.derive()
        report = _verify(order, sent, counters, writer, own)
    return {
        "source": source.where,
        "target": target.where,
        "schema_version": version,
        "tables": report,
        "counters": counters,
    }


def _counts(held: Mapping[str, int]) -> str:
    return ", ".join(f"{name}: {n} rows" for name, n in held.items())


def _verify(
    order: Sequence[Table],
    sent: Mapping[str, TableDigest],
    counters: Mapping[str, int],
    writer: CopyReader,
    own: frozenset[str],
) -> list[dict[str, Any]]:
    """Each table read back inside the target's transaction, hashed as the source was."""
    report = []
    for table in order:
        back = TableDigest()
        for row in _kept(table, writer.rows(table), own):
            back.add(row)
        wanted = sent[table.name]
        if (back.rows, back.sha256) != (wanted.rows, wanted.sha256):
            raise _refuse(
                "failed.store_copy",
                f"table {table.name} reads back {back.rows} rows hashing {back.sha256[:12]}"
                f" where the source has {wanted.rows} hashing {wanted.sha256[:12]};"
                " the copy was rolled back",
                table=table.name,
            )
        report.append({"table": table.name, "rows": back.rows, "sha256": back.sha256})
    written = {k: v for k, v in writer.counters().items() if v}
    if written != {k: v for k, v in counters.items() if v}:
        raise _refuse(
            "failed.store_copy",
            f"the target's ID counters {written} differ from the source's {dict(counters)};"
            " the copy was rolled back",
            source=dict(counters),
            target=written,
        )
    return report

"""Schema version 1, statement for statement as RFC-0020 section 6 writes it, and the
statements that take it to version 2 (importance, branches, space descriptions; ADR 0017)
and to version 3 (links between memories and inactive spaces, ADR 0042; an imported
memory's origin, ADR 0040).

One deliberate difference: two triggers are created in the other order, so that they run in
the order the RFC means (see the comment at ``memories_au_new`` and docs/adr/0003).

Kept as a tuple of single statements because apsw runs a multi-statement script lazily (a
statement that returns a row pauses the script): the migration executes them one by one
inside one transaction. ``application_id`` is "VMEM" in ASCII. ``tags`` is stored
space-separated, which the tag grammar ``^[a-z0-9][a-z0-9-]{0,63}$`` makes safe.
"""

from __future__ import annotations

from venom_mem_core.grammar import LINK_RELATIONS

__all__ = [
    "APPLICATION_ID",
    "INDEXES",
    "SCHEMA_V1",
    "SCHEMA_V2",
    "SCHEMA_V3",
    "TABLES",
    "TRIGGERS",
]

APPLICATION_ID = 1447904589  # 0x564D454D, "VMEM"

TABLES = (
    "meta",
    "sessions",
    "memories",
    "memory_versions",
    "memory_vectors",
    "clients",
    "memory_fts",
    "spaces",
    "links",
    "inactive_spaces",
)
INDEXES = (
    "sessions_harness",
    "sessions_parent",
    "memories_live_content",
    "memories_space",
    "memories_session",
    "links_live",
    "links_target",
)
TRIGGERS = (
    "memories_ai",
    "memories_ad",
    "memories_au_old",
    "memories_au_new",
    "memories_vector_stale",
)

SCHEMA_V1: tuple[str, ...] = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    "PRAGMA user_version = 1",
    """CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID""",
    "INSERT INTO meta (key, value) VALUES ('next_principal', '1')",
    """CREATE TABLE sessions (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  harness         TEXT NOT NULL,
  harness_session TEXT,
  parent          INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
  relation        TEXT CHECK (relation IN ('continue', 'fork', 'subagent')),
  cwd             TEXT,
  principal       TEXT NOT NULL,
  label           TEXT,
  started         TEXT NOT NULL,
  ended           TEXT
)""",
    """CREATE UNIQUE INDEX sessions_harness ON sessions (harness, harness_session)
  WHERE harness_session IS NOT NULL""",
    "CREATE INDEX sessions_parent ON sessions (parent)",
    """CREATE TABLE memories (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  space          TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('fact', 'decision', 'procedure', 'note')),
  title          TEXT NOT NULL DEFAULT '',
  content        TEXT NOT NULL,
  content_sha256 BLOB NOT NULL,
  tags           TEXT NOT NULL DEFAULT '',
  revision       INTEGER NOT NULL DEFAULT 1,
  principal      TEXT NOT NULL,
  label          TEXT,
  updated_by     TEXT NOT NULL,
  updated_label  TEXT,
  session        INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
  created        TEXT NOT NULL,
  updated        TEXT NOT NULL,
  deleted        TEXT
)""",
    """CREATE UNIQUE INDEX memories_live_content ON memories (space, content_sha256)
  WHERE deleted IS NULL""",
    "CREATE INDEX memories_space ON memories (space, id) WHERE deleted IS NULL",
    "CREATE INDEX memories_session ON memories (session) WHERE session IS NOT NULL",
    """CREATE TABLE memory_versions (
  memory    INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  revision  INTEGER NOT NULL,
  action    TEXT NOT NULL CHECK (action IN ('add', 'update', 'delete', 'restore')),
  kind      TEXT NOT NULL,
  title     TEXT NOT NULL,
  content   TEXT NOT NULL,
  tags      TEXT NOT NULL,
  principal TEXT NOT NULL,
  label     TEXT,
  ts        TEXT NOT NULL,
  PRIMARY KEY (memory, revision)
) WITHOUT ROWID""",
    """CREATE TABLE memory_vectors (
  memory    INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
  model     TEXT NOT NULL,
  embedding BLOB NOT NULL
)""",
    """CREATE TABLE clients (
  name       TEXT PRIMARY KEY,
  principal  TEXT NOT NULL UNIQUE,
  grants     TEXT NOT NULL,
  token_hash BLOB NOT NULL,
  created    TEXT NOT NULL,
  expires    TEXT
) WITHOUT ROWID""",
    """CREATE VIRTUAL TABLE memory_fts USING fts5 (
  title, content, tags,
  content = 'memories',
  content_rowid = 'id',
  tokenize = 'porter unicode61 remove_diacritics 2'
)""",
    "INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1)",
    """CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted IS NULL BEGIN
  INSERT INTO memory_fts (rowid, title, content, tags)
    VALUES (new.id, new.title, new.content, new.tags);
END""",
    """CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted IS NULL BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, title, content, tags)
    VALUES ('delete', old.id, old.title, old.content, old.tags);
END""",
    # memories_au_new is created before memories_au_old, the reverse of the RFC's listing.
    # SQLite fires triggers on one event newest first, so in the RFC's order the new row's
    # text is indexed before the old text is deleted, and the 'delete' then drops the row's
    # FTS5 size record: the index reports corruption on the next bm25 (docs/adr/0003).
    """CREATE TRIGGER memories_au_new AFTER UPDATE ON memories WHEN new.deleted IS NULL BEGIN
  INSERT INTO memory_fts (rowid, title, content, tags)
    VALUES (new.id, new.title, new.content, new.tags);
END""",
    """CREATE TRIGGER memories_au_old AFTER UPDATE ON memories WHEN old.deleted IS NULL BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, title, content, tags)
    VALUES ('delete', old.id, old.title, old.content, old.tags);
END""",
    """CREATE TRIGGER memories_vector_stale AFTER UPDATE ON memories
  WHEN new.deleted IS NOT NULL OR old.title <> new.title OR old.content <> new.content BEGIN
  DELETE FROM memory_vectors WHERE memory = new.id;
END""",
)

# Branch names are stored space-separated, as tags are: a git branch name holds no space. The
# CHECK keeps that form (no leading, trailing or doubled space) and 16 names of 128 bytes.
_BRANCHES_CHECK = (
    "CHECK (branches NOT LIKE ' %' AND branches NOT LIKE '% '"
    " AND instr(branches, '  ') = 0 AND length(CAST(branches AS BLOB)) <= 2063)"
)
_LINK_RELATIONS = ", ".join(f"'{name}'" for name in LINK_RELATIONS)
_IMPORTANCE_CHECK = "CHECK (importance IN ('critical', 'normal', 'low'))"

# Version 1 -> 2. ADD COLUMN with a constant default fills every existing row with it, so
# every memory and version of a version-1 store reads as normal and on every branch.
SCHEMA_V2: tuple[str, ...] = (
    "ALTER TABLE memories ADD COLUMN importance TEXT NOT NULL DEFAULT 'normal' "
    + _IMPORTANCE_CHECK,
    "ALTER TABLE memories ADD COLUMN branches TEXT NOT NULL DEFAULT '' " + _BRANCHES_CHECK,
    "ALTER TABLE memory_versions ADD COLUMN importance TEXT NOT NULL DEFAULT 'normal' "
    + _IMPORTANCE_CHECK,
    "ALTER TABLE memory_versions ADD COLUMN branches TEXT NOT NULL DEFAULT '' " + _BRANCHES_CHECK,
    """CREATE TABLE spaces (
  space       TEXT PRIMARY KEY,
  description TEXT NOT NULL
    CHECK (description <> '' AND length(CAST(description AS BLOB)) <= 512),
  principal   TEXT NOT NULL,
  label       TEXT,
  updated     TEXT NOT NULL
) WITHOUT ROWID""",
)

# Version 2 -> 3 (docs/adr/0042). A link is "source <relation> target"; an unlink stamps
# ``removed`` instead of deleting the row, so a memory's links keep a history as its text
# does, and one live link per (source, target, relation). Both ends cascade: a purge removes
# every link touching the memory. A space is active unless it has a row in inactive_spaces,
# so every space of an upgraded store stays active.
SCHEMA_V3: tuple[str, ...] = (
    f"""CREATE TABLE links (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  source        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  target        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  relation      TEXT NOT NULL CHECK (relation IN ({_LINK_RELATIONS})),
  principal     TEXT NOT NULL,
  label         TEXT,
  created       TEXT NOT NULL,
  removed       TEXT,
  removed_by    TEXT,
  removed_label TEXT,
  CHECK (source <> target),
  CHECK ((removed IS NULL) = (removed_by IS NULL))
)""",
    """CREATE UNIQUE INDEX links_live ON links (source, target, relation)
  WHERE removed IS NULL""",
    "CREATE INDEX links_target ON links (target, relation)",
    """CREATE TABLE inactive_spaces (
  space     TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  label     TEXT,
  since     TEXT NOT NULL
) WITHOUT ROWID""",
    # The origin column: what an imported memory's source said of it (ADR 0040), as the JSON
    # object memory.add took (``{"format", "author"?, "created"?, "id"?}``); NULL for every
    # other memory, so every memory of a version-2 store reads as having none.
    "ALTER TABLE memories ADD COLUMN origin TEXT CHECK (origin IS NULL OR json_valid(origin))",
)

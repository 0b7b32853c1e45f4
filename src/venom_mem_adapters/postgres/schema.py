"""The store's schema in PostgreSQL types: RFC-0020 section 6's tables, names and meanings.

What changes from the SQLite schema (``sqlite/schema.py``), and why (docs/adr/0028):

* IDs are ``bigint GENERATED ALWAYS AS IDENTITY``: a sequence only goes up, so an ID is never
  reused, even after a purge, and every daemon on the database draws from the same one.
* ``content_sha256``, ``token_hash`` and ``embedding`` are ``bytea``; timestamps stay the
  RFC 3339 text the wire carries, and every text column is ``COLLATE "C"`` so comparisons and
  orderings are bytewise, as in SQLite.
* The schema version is ``meta.schema_version`` (SQLite's ``user_version``) and the
  application's mark ``meta.application_id`` (SQLite's ``application_id``).
* ``memory_fts`` is a table of each live memory's length in tokens, and ``memory_fts_terms``
  its postings (fts.py writes both): positions per column, and the row's length and the
  term's weighted hits again, so a one-term query reads an index alone. They hold live rows
  only, as the FTS5 index does.
* ``memories_vector_stale`` is a PL/pgSQL trigger with the RFC's condition.

Version 2 adds importance, branches and space descriptions, and version 3 links and inactive
spaces (docs/adr/0042) and an imported memory's origin (ADR 0040), as SQLite's ladder does.
The origin is JSON text, as in SQLite, not ``jsonb``, so both stores give back the object
as it was written.
"""

from __future__ import annotations

from venom_mem_core.grammar import LINK_RELATIONS

__all__ = ["APPLICATION_ID", "SCHEMA_V1", "SCHEMA_V2", "SCHEMA_V3"]

APPLICATION_ID = "1447904589"  # 0x564D454D, "VMEM", the SQLite store's application_id

_TEXT = 'TEXT COLLATE "C"'

SCHEMA_V1: tuple[str, ...] = (
    f"""CREATE TABLE meta (
  key   {_TEXT} PRIMARY KEY,
  value {_TEXT} NOT NULL
)""",
    f"INSERT INTO meta (key, value) VALUES ('application_id', '{APPLICATION_ID}'),"
    " ('next_principal', '1'), ('clients_version', '0')",
    f"""CREATE TABLE sessions (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  harness         {_TEXT} NOT NULL,
  harness_session {_TEXT},
  parent          bigint REFERENCES sessions (id) ON DELETE SET NULL,
  relation        {_TEXT} CHECK (relation IN ('continue', 'fork', 'subagent')),
  cwd             {_TEXT},
  principal       {_TEXT} NOT NULL,
  label           {_TEXT},
  started         {_TEXT} NOT NULL,
  ended           {_TEXT}
)""",
    """CREATE UNIQUE INDEX sessions_harness ON sessions (harness, harness_session)
  WHERE harness_session IS NOT NULL""",
    "CREATE INDEX sessions_parent ON sessions (parent)",
    f"""CREATE TABLE memories (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  space          {_TEXT} NOT NULL,
  kind           {_TEXT} NOT NULL CHECK (kind IN ('fact', 'decision', 'procedure', 'note')),
  title          {_TEXT} NOT NULL DEFAULT '',
  content        {_TEXT} NOT NULL,
  content_sha256 bytea NOT NULL,
  tags           {_TEXT} NOT NULL DEFAULT '',
  revision       integer NOT NULL DEFAULT 1,
  principal      {_TEXT} NOT NULL,
  label          {_TEXT},
  updated_by     {_TEXT} NOT NULL,
  updated_label  {_TEXT},
  session        bigint REFERENCES sessions (id) ON DELETE SET NULL,
  created        {_TEXT} NOT NULL,
  updated        {_TEXT} NOT NULL,
  deleted        {_TEXT}
)""",
    """CREATE UNIQUE INDEX memories_live_content ON memories (space, content_sha256)
  WHERE deleted IS NULL""",
    "CREATE INDEX memories_space ON memories (space, id) WHERE deleted IS NULL",
    "CREATE INDEX memories_session ON memories (session) WHERE session IS NOT NULL",
    f"""CREATE TABLE memory_versions (
  memory    bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  revision  integer NOT NULL,
  action    {_TEXT} NOT NULL CHECK (action IN ('add', 'update', 'delete', 'restore')),
  kind      {_TEXT} NOT NULL,
  title     {_TEXT} NOT NULL,
  content   {_TEXT} NOT NULL,
  tags      {_TEXT} NOT NULL,
  principal {_TEXT} NOT NULL,
  label     {_TEXT},
  ts        {_TEXT} NOT NULL,
  PRIMARY KEY (memory, revision)
)""",
    f"""CREATE TABLE memory_vectors (
  memory    bigint PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
  model     {_TEXT} NOT NULL,
  embedding bytea NOT NULL
)""",
    f"""CREATE TABLE clients (
  name       {_TEXT} PRIMARY KEY,
  principal  {_TEXT} NOT NULL UNIQUE,
  grants     {_TEXT} NOT NULL,
  token_hash bytea NOT NULL,
  created    {_TEXT} NOT NULL,
  expires    {_TEXT}
)""",
    """CREATE TABLE memory_fts (
  memory bigint PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
  length integer NOT NULL
)""",
    f"""CREATE TABLE memory_fts_terms (
  term    {_TEXT} NOT NULL,
  memory  bigint NOT NULL REFERENCES memory_fts (memory) ON DELETE CASCADE,
  title   integer[] NOT NULL,
  content integer[] NOT NULL,
  tags    integer[] NOT NULL,
  length  integer NOT NULL,
  freq    float8 NOT NULL,
  PRIMARY KEY (term, memory)
)""",
    "CREATE INDEX memory_fts_terms_memory ON memory_fts_terms (memory)",
    # What a one-term query reads, from the index alone: the row's length and the term's
    # hits weighted by column (5 title + 1 content + 3 tags), copied here at write time.
    "CREATE INDEX memory_fts_terms_rank ON memory_fts_terms (term) INCLUDE (memory, length, freq)",
    """CREATE FUNCTION memories_vector_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_vectors WHERE memory = NEW.id;
  RETURN NULL;
END
$$""",
    """CREATE TRIGGER memories_vector_stale AFTER UPDATE ON memories FOR EACH ROW
  WHEN (NEW.deleted IS NOT NULL OR OLD.title <> NEW.title OR OLD.content <> NEW.content)
  EXECUTE FUNCTION memories_vector_stale()""",
)

# Branch names stored space-separated, as tags are, with the SQLite store's CHECK.
_BRANCHES_CHECK = (
    "CHECK (branches NOT LIKE ' %' AND branches NOT LIKE '% '"
    " AND strpos(branches, '  ') = 0 AND octet_length(branches) <= 2063)"
)
_LINK_RELATIONS = ", ".join(f"'{name}'" for name in LINK_RELATIONS)
_IMPORTANCE_CHECK = "CHECK (importance IN ('critical', 'normal', 'low'))"

SCHEMA_V2: tuple[str, ...] = (
    f"ALTER TABLE memories ADD COLUMN importance {_TEXT} NOT NULL DEFAULT 'normal' "
    + _IMPORTANCE_CHECK,
    f"ALTER TABLE memories ADD COLUMN branches {_TEXT} NOT NULL DEFAULT '' " + _BRANCHES_CHECK,
    f"ALTER TABLE memory_versions ADD COLUMN importance {_TEXT} NOT NULL DEFAULT 'normal' "
    + _IMPORTANCE_CHECK,
    f"ALTER TABLE memory_versions ADD COLUMN branches {_TEXT} NOT NULL DEFAULT '' "
    + _BRANCHES_CHECK,
    f"""CREATE TABLE spaces (
  space       {_TEXT} PRIMARY KEY,
  description {_TEXT} NOT NULL
    CHECK (description <> '' AND octet_length(description) <= 512),
  principal   {_TEXT} NOT NULL,
  label       {_TEXT},
  updated     {_TEXT} NOT NULL
)""",
)

# The SQLite store's version 3, in PostgreSQL's types.
SCHEMA_V3: tuple[str, ...] = (
    f"""CREATE TABLE links (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source        bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  target        bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  relation      {_TEXT} NOT NULL CHECK (relation IN ({_LINK_RELATIONS})),
  principal     {_TEXT} NOT NULL,
  label         {_TEXT},
  created       {_TEXT} NOT NULL,
  removed       {_TEXT},
  removed_by    {_TEXT},
  removed_label {_TEXT},
  CHECK (source <> target),
  CHECK ((removed IS NULL) = (removed_by IS NULL))
)""",
    """CREATE UNIQUE INDEX links_live ON links (source, target, relation)
  WHERE removed IS NULL""",
    "CREATE INDEX links_target ON links (target, relation)",
    f"""CREATE TABLE inactive_spaces (
  space     {_TEXT} PRIMARY KEY,
  principal {_TEXT} NOT NULL,
  label     {_TEXT},
  since     {_TEXT} NOT NULL
)""",
    f"ALTER TABLE memories ADD COLUMN origin {_TEXT}"
    " CHECK (origin IS NULL OR origin::json IS NOT NULL)",
)

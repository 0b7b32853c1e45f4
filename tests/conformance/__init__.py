"""RFC-0020's normative examples, run with a default config on every store (SQLite,
PostgreSQL, in-memory): the place to look to see that the defaults are the RFC
(docs/adr/0032). tests/conformance/harness.py says how each store is driven."""

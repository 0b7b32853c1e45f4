"""``store copy``: a whole store copied, table by table, into an empty store of either kind
(docs/adr/0041). :mod:`.ends` is what each backend gives (its catalog, rows in key order, its
ID counters), :mod:`.digest` the one row encoding both sides hash, :mod:`.run` the copy."""

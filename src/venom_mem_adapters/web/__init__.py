"""``venom-mem ui``: a local web page where a person sees, audits and corrects the store.

It is a client of the daemon like any other (docs/adr/0019-web-ui.md): every page and action
is a verb call with the principal the human gave it, so grants and provenance apply
unchanged, and it never opens the database.

- :mod:`.daemon`: a small pool of held daemon connections, one call at a time on each;
- :mod:`.rights`: which controls to show, from ``whoami`` (the daemon still decides);
- :mod:`.guard`: the local web server's safety: secret cookie, Host check, CSRF, headers;
- :mod:`.views` and :mod:`.pages`: the pages, rendered by Jinja2 with autoescaping on;
- :mod:`.diff`, :mod:`.chart`: pure helpers for a revision diff and the writes chart;
- :mod:`.serve`: binds loopback, prints the URL, runs uvicorn.

Starlette, uvicorn and Jinja2 are imported only by ``venom-mem ui``.
"""

__all__: list[str] = []

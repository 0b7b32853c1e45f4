"""doctor's ``search.ranking`` check, with embeddings on: how hybrid search ranks, and the
setting the retrieval bench measured better for the configured model (docs/adr/0032).

It is advice, never a problem: its status is always ``ok`` (CONTRACT section 9 has only
ok, warn and fail, and a store that ranks as RFC-0020 says has nothing wrong with it), and
the setting to try is its ``fix``.
"""

from __future__ import annotations

from venom_mem_core.config import Config
from venom_mem_core.search_advice import advice_for

__all__ = ["search_check"]

FIX_SEARCH = "venom-mem config get --key search --json"


def search_check(config: Config) -> dict[str, str]:
    search = config.search
    rfc = " (RFC-0020)" if search.fusion == "rrf" and search.query_mode == "rfc" else ""
    message = (
        f"Hybrid search fuses with {search.fusion}, queries in {search.query_mode} mode,"
        f" min_similarity {search.min_similarity:g}{rfc}"
    )
    fix = FIX_SEARCH
    advice = advice_for(config.embeddings.model)
    current = {"search.fusion": search.fusion, "search.query_mode": search.query_mode}
    todo = advice.missing(current) if advice is not None else ()
    if advice is not None and todo:
        settings = ", ".join(f"{key} = {value}" for key, value in todo)
        message += (
            f". For {advice.measured} the retrieval bench measured {settings} better"
            f" ({advice.why}); see docs/search.md"
        )
        fix = " && ".join(
            f"venom-mem config set --key {key} --value {value}" for key, value in todo
        )
    return {"id": "search.ranking", "status": "ok", "message": message, "fix": fix}

"""``ctx.search``: web, knowledge-base and database search, returning Yao's SearchResult.

``spec.py`` reads package.yao's ``kb``, ``db``, ``search`` and ``uses``; ``result.py`` is
the SearchResult shape; ``kb.py`` the SQLite FTS5 (and sqlite-vec) index of ``kb/``;
``embeddings.py`` the vectors behind it; ``db.py`` the search over data models; ``web.py``
the Tavily, Brave and SearXNG providers over ``http.py``; ``service.py`` runs and traces
one search; ``handle.py`` is what hooks see as ``ctx.search``; ``inject.py`` the automatic
search before the model call, with citations.
"""

from __future__ import annotations

from agentcli.assistant.search.result import SearchItem, SearchResult
from agentcli.assistant.search.spec import SearchConfig

__all__ = ["SearchConfig", "SearchItem", "SearchResult"]

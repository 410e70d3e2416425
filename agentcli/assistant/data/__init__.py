"""Assistant data models: ``models/**/*.mod.yao`` read (``schema``), stored through
SQLAlchemy Core (``tables``, ``migrate``, ``store``) and queried by ``Process``
(``query``, ``methods``). Only ``schema`` is imported for a package without models."""

from __future__ import annotations

__all__ = ["DATABASE_URL_VARIABLE"]

# Where the data models live instead of the state folder's SQLite file (store.py).
DATABASE_URL_VARIABLE = "AGENTCLI_DATABASE_URL"

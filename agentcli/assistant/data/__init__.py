"""Assistant data models: ``models/**/*.mod.yao`` read (``schema``), stored through
SQLAlchemy Core (``tables``, ``migrate``, ``store``) and queried by ``Process``
(``query``, ``methods``). Only ``schema`` is imported for a package without models."""

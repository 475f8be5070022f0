"""The SQLite file: :mod:`fastmem.storage.store` (the one apsw connection, pragmas, atomic
transactions, the change log other processes catch up from) and :mod:`fastmem.storage.schema`
(every table's DDL, as ordered, idempotent migrations)."""

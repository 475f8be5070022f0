"""Small helpers with no knowledge of a store: text checks and the FTS5 sanitiser
(:mod:`fastmem.util.text`), bounded caches, progress bars, per-user paths."""

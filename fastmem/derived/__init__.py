"""What every write derives from a memory beside its row, each kept in the same transaction:
the embeddings and their hnswlib index (:mod:`fastmem.derived.vectors`,
:mod:`fastmem.derived.ann`), the windows of long memories (:mod:`fastmem.derived.windows`), the
knowledge graph (:mod:`fastmem.derived.graph`) and the usage ledger
(:mod:`fastmem.derived.usage`)."""

"""The write path: check, then the models (parse and embed, no lock held), then one
transaction (:mod:`fastmem.write.writes`); pending memories, committed before any model runs
and derived in the background (:mod:`fastmem.write.pending`); the parse thread that overlaps
with the embedding (:mod:`fastmem.write.workers`)."""

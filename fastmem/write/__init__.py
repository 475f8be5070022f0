"""The write path: check (:mod:`fastmem.write.checks`), then the models with no lock held
(:mod:`fastmem.write.prepare`: parse and embed), then one transaction
(:mod:`fastmem.write.commit`: each table written by its owner). Pending memories are
committed before any model runs and derived in the background (:mod:`fastmem.write.pending`);
the parse thread overlaps with the embedding (:mod:`fastmem.write.workers`). Hosts that run
the models elsewhere use the public write-preparation API: :mod:`fastmem.write.prepare` and
:mod:`fastmem.write.items` (input files and item checks)."""

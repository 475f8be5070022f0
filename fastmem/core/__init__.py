"""The core of an open store: the engine that owns its state, the one transaction every write
goes through, and the services the front (:class:`fastmem.Memory`) hands its verbs to.

* :mod:`fastmem.core.engine` - :class:`~fastmem.core.engine.Engine`: the file, the models, the
  derived in-process state, the lock, catching up with other processes, and the two doors:
  reads (:meth:`~fastmem.core.engine.Engine.reading`) and writes
  (:meth:`~fastmem.core.engine.Engine.transaction`);
* :mod:`fastmem.core.transaction` - what a commit changes in the process, applied after COMMIT;
* the services, each holding the engine only: :mod:`fastmem.core.io` (remember, recall),
  :mod:`fastmem.core.rows` (rows, edits, export and import, what hosts need),
  :mod:`fastmem.core.passes` (chunks, categories, use, the graph);
* :mod:`fastmem.core.check` (integrity) and :mod:`fastmem.core.transfer` (import and export),
  which read every owner's tables;
* :mod:`fastmem.core.args` - argument checks shared by the front and the services.
"""

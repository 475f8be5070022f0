"""The named parts of :class:`fastmem.Memory`: everything beside the dozen verbs an agent uses
every turn, one small class per concern, reached as an attribute of the memory.

====================  ==========================================  ==========================
attribute             what it holds                               class
====================  ==========================================  ==========================
``mem.graph``         the knowledge graph: entities, facts, paths  :class:`Graph`
``mem.categories``    emergent categories: propose, review         :class:`Categories`
``mem.chunks``        chunks of co-occurring memories              :class:`Chunks`
``mem.use``           what use did to each memory                  :class:`Use`
``mem.analogy``       the analogy slot: explore, settings          :class:`Slot`
``mem.pending``       memories written before their derived parts  :class:`Pending`
``mem.rows``          memories by text, metadata, age, scope       :class:`Rows`
``mem.host``          the write halves and turn signals of hosts   :class:`Host`
``mem.admin``         check, stats, export, import, rebuild        :class:`Admin`
====================  ==========================================  ==========================

Each part holds the memory's engine and its read and write services
(:class:`fastmem.core.reading.Reading`, :class:`fastmem.core.writing.Writing`) and nothing else.
:data:`MOVED` maps every name ``Memory`` had before the parts to its place now; the old names
keep working for this release with a :class:`fastmem.errors.FastmemDeprecationWarning`.
"""

from __future__ import annotations

from .admin import Admin
from .analogy import Slot
from .categories import Categories
from .chunks import Chunks
from .graph import Graph
from .host import Host
from .pending import Pending
from .rows import Rows
from .use import Use

__all__ = ["Admin", "Slot", "Categories", "Chunks", "Graph", "Host", "Pending", "Rows", "Use", "PARTS", "MOVED"]

#: attribute -> class of every part.
PARTS = {"graph": Graph, "categories": Categories, "chunks": Chunks, "use": Use, "analogy": Slot,
         "pending": Pending, "rows": Rows, "host": Host, "admin": Admin}

#: Every name :class:`fastmem.Memory` had before the parts -> ``(part, name there)``.
MOVED = {
    # the knowledge graph
    "entity": ("graph", "entity"), "entity_by_id": ("graph", "entity_by_id"), "neighbours": ("graph", "neighbours"),
    "relation_path": ("graph", "path"), "facts": ("graph", "facts"), "entity_facts": ("graph", "facts_about"),
    "conflicting_facts": ("graph", "conflicts"), "alias_candidates": ("graph", "alias_candidates"),
    "review_alias": ("graph", "review_alias"),
    # categories (``mem.categories(...)`` itself: ``mem.categories.list(...)``)
    "propose_categories": ("categories", "propose"), "approve_category": ("categories", "approve"),
    "reject_category": ("categories", "reject"), "revert_category": ("categories", "revert"),
    # chunks (``mem.chunks(...)`` itself: ``mem.chunks.list(...)``)
    "chunks_of": ("chunks", "containing"), "dissolve": ("chunks", "dissolve"),
    # use
    "usage": ("use", "counts"), "use_history": ("use", "history"), "use_extremes": ("use", "extremes"),
    "use_timeline": ("use", "timeline"), "most_used": ("use", "most_used"),
    # the analogy slot
    "analogies": ("analogy", "explore"), "events": ("analogy", "events"), "events_in": ("analogy", "events_in"),
    "analogy_settings": ("analogy", "settings"), "rebuild_structure": ("analogy", "rebuild"),
    "idf": ("analogy", "idf"), "hrr_dim": ("analogy", "dim"),
    # pending memories
    "pending_count": ("pending", "count"), "derive_pending": ("pending", "derive"), "wait_pending": ("pending", "wait"),
    # rows
    "texts": ("rows", "texts"), "newest": ("rows", "newest"), "ids_with_text": ("rows", "with_text"),
    "with_meta": ("rows", "with_meta"), "with_meta_key": ("rows", "with_meta_key"),
    "scopes_in_use": ("rows", "scopes"),
    # hosts
    "prepare": ("host", "prepare"), "commit_prepared": ("host", "commit_prepared"),
    "batches_done": ("host", "batches_done"), "write_vectors": ("host", "write_vectors"),
    "observe": ("host", "observe"), "record": ("host", "record"), "locked": ("host", "locked"),
    "transaction": ("host", "transaction"), "models_ready": ("host", "models_ready"),
    # administration
    "check": ("admin", "check"), "stats": ("admin", "stats"), "flush": ("admin", "flush"),
    "reembed": ("admin", "reembed"), "rebuild_index": ("admin", "rebuild_index"),
    "export_jsonl": ("admin", "export_jsonl"), "import_jsonl": ("admin", "import_jsonl"),
    "embedder": ("admin", "embedder"), "extractor": ("admin", "extractor"), "internals": ("admin", "engine"),
}

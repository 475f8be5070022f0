"""The reader: what a text says, read once at write time and used by the graph, the
analogy slot and standing recall. :mod:`fastmem.reader.extract` (the spaCy parse -> facts as
triples and narrative events), :mod:`fastmem.reader.canon` (canonical names and relations),
:mod:`fastmem.reader.lexicon` (verbs that carry grammar, not structure),
:mod:`fastmem.reader.standing` (standing instructions and preferences)."""

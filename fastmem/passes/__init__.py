"""Background passes, tagged and reversible: chunks of co-occurring memories
(:mod:`fastmem.passes.chunks`, summarised by :mod:`fastmem.passes.summarize`) and emergent
categories of role-equivalent entities (:mod:`fastmem.passes.categories`)."""

"""Facts as the graph stores them, for the extraction tests."""

from fastmem.reader.canon import canon_relation, fold_name


def query_facts(triples):
    """Triples as ``(subject_type, relation, object_type, subject_key, object_key)`` with the
    relation canonicalised and inverse forms flipped (the graph's and the relations' tests compare them with
    hand-labelled facts)."""
    out = []
    for t in triples:
        rel, flip = canon_relation(t.relation, t.subject_type, t.object_type)
        s, o, st, ot = fold_name(t.subject), fold_name(t.object), t.subject_type, t.object_type
        if flip:
            s, o, st, ot = o, s, ot, st
        out.append((st, rel, ot, s, o))
    return out

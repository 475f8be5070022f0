"""Verbs that carry a sentence's grammar, not its structure: the analogy slot gives them no weight.

Conversation is built on a small set of very frequent verbs ("I *hope* you *have* a nice
weekend", "*let* me *know*", "that *sounds* great"). Two turns that share them share nothing
a person would call a structure, yet they are everywhere, so any store offers a chance match
on them. :data:`SKELETON` lists them by class; an event whose verb is one of them keeps its
own lemma (it is not folded into a content relation: "have" is not "own", "make" is not
"create") and weighs nothing in the slot's mapping (:mod:`fastmem.analogy.mapping`). Every other verb
is weighed by how rare it is among the store's events.

The classes follow the usual grammatical ones: light and support verbs, aspect, cognition,
perception and appearance, attitude and emotion, communication, and generic causation or
occurrence. A verb belongs here when a sentence keeps its structure with the verb removed
or replaced by another of its class.
"""

from __future__ import annotations

__all__ = ["SKELETON", "CLASSES", "is_skeleton", "is_skeleton_word"]

#: The classes of :data:`SKELETON`, each a set of verb lemmas.
CLASSES: dict[str, frozenset[str]] = {
    "light": frozenset("be have do make take give get go come put set let keep hold bring".split()),
    "aspect": frozenset("start begin stop finish continue try end quit resume".split()),
    "cognition": frozenset(("know think believe guess suppose remember forget understand realize realise wonder "
                            "mean expect imagine figure consider decide plan").split()),
    "perception": frozenset("see look watch hear listen sound seem appear feel notice find smell taste".split()),
    "attitude": frozenset(("like love enjoy hate hope want wish need prefer care mind miss appreciate thank "
                           "glad adore bother worry").split()),
    "communication": frozenset("say tell ask talk speak mention share chat reply answer call text".split()),
    "generic": frozenset("happen help allow enable become stay remain wait check".split()),
}

#: Every verb lemma of :data:`CLASSES`.
SKELETON: frozenset[str] = frozenset().union(*CLASSES.values())


def is_skeleton(verb: str) -> bool:
    """Whether an event's verb (a lemma, or ``not_`` + a lemma) is a skeleton verb."""
    return (verb[4:] if verb.startswith("not_") else verb) in SKELETON


#: Irregular forms of skeleton verbs (the regular ones are recognised by their endings).
_IRREGULAR = frozenset(("am is are was were been being has had having does did done went gone got gotten made took "
                        "taken gave given came kept held brought put set let began begun knew known thought "
                        "understood meant saw seen heard felt found said told spoke spoken stood became").split())
_ENDINGS = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""), ("s", ""),
            ("d", ""))


def is_skeleton_word(word: str) -> bool:
    """Whether a lower-case word of running text is a form of a skeleton verb ("hoping",
    "knew", "sounds"); nouns that share a spelling ("help", "love") count too."""
    if word in SKELETON or word in _IRREGULAR:
        return True
    for end, add in _ENDINGS:
        if word.endswith(end) and len(word) > len(end) + 1 and word[: -len(end)] + add in SKELETON:
            return True
    for end in ("ing", "ed"):  # a doubled consonant before the ending: "stopping", "planned"
        stem = word[: -len(end)]
        if word.endswith(end) and len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in SKELETON:
            return True
    return False

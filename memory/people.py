"""Who a text introduces, and as whose what: "my friend Jason", 前同事李娜, HR Cindy, 客户陈静.

One name is often worn by several people: a colleague David and a friend David, 领导孙宇 and
弟弟孙宇; in a memory pooled from many days (or many users) the same name recurs under other
relations all the time. A question that says whose what it means ("Which gift cost more, my
friend Jason's or …?", 我客户Sophie什么时候面试？) is not about a turn that names that name
only as someone else's ("HR Jason 请我喝了 coffee", 导师Sophie盯着), nor about a turn that names
none of the asked people and introduces another (我产品经理Eric不吃香菜 for 产品经理Leo吃东西要注意什么？):
the retriever ranks such a turn lower (``memory.retrieval``, ``Fusion.other_person``).

A relation is read only where a relation word stands right before the name (a nickname is a
name there: 儿子乐乐, 同事小王; 从小一起长大的林晓 is a childhood friend); the same relation
in either language is one (同事 / colleague / coworker), so a Chinese question finds an English
turn's person and back. Relations that may name the same person are one (朋友 / 好朋友 / 闺蜜 /
friend, 姐姐 / 妹妹 / sister): a relation is taken as another only where it surely is.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass

from huichat.memory.words import SURNAMES

_RELATIONS: tuple[tuple[str, ...], ...] = (
    ("同事", "公司同事", "colleague", "coworker", "co-worker", "workmate"),
    ("前同事", "老同事", "ex-colleague", "ex-coworker", "former colleague", "former coworker"),
    ("老板", "领导", "主管", "上司", "经理", "boss", "manager", "supervisor"),
    ("产品经理", "PM", "product manager"),
    ("项目经理", "project manager"),
    ("客户", "合作方", "client", "customer"),
    ("实习生", "intern"),
    ("室友", "舍友", "roommate", "flatmate", "housemate"),
    ("朋友", "好朋友", "老朋友", "好友", "闺蜜", "发小", "从小一起长大的", "friend", "best friend", "buddy", "bestie"),
    ("男朋友", "男友", "boyfriend"),
    ("女朋友", "女友", "girlfriend"),
    ("HR", "人事"),
    ("导师", "师傅", "mentor", "advisor", "tutor"),
    ("老师", "teacher"),
    ("同学", "大学同学", "高中同学", "老同学", "classmate", "schoolmate"),
    ("邻居", "neighbour", "neighbor"),
    ("医生", "大夫", "牙医", "doctor", "dentist"),
    ("教练", "coach", "trainer"),
    ("姐姐", "妹妹", "亲姐", "sister"),
    ("哥哥", "弟弟", "亲弟弟", "brother"),
    ("表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹", "cousin"),
    ("老婆", "媳妇", "妻子", "太太", "老公", "丈夫", "爱人", "wife", "husband", "spouse"),
    ("女儿", "闺女", "daughter"),
    ("儿子", "son"),
    ("妈妈", "母亲", "老妈", "mom", "mum", "mother"),
    ("爸爸", "父亲", "老爸", "dad", "father"),
    ("爷爷", "奶奶", "外公", "外婆", "姥姥", "姥爷", "grandpa", "grandma", "grandfather", "grandmother"),
    ("叔叔", "阿姨", "舅舅", "姑姑", "uncle", "aunt"),
)
"""Relations, each in the words either language says it with (a word in two would make them one)."""

_ACRONYMS = frozenset({"PM", "HR"})
"""Relation words read only as written in capitals (6 pm is no product manager)."""
_CLASS = {form.casefold(): i for i, forms in enumerate(_RELATIONS) for form in forms}
_LENGTHS: dict[str, tuple[int, ...]] = {
    last: tuple(sorted({len(form) for form in _CLASS if form[-1] == last}, reverse=True))
    for last in {form[-1] for form in _CLASS}
}
"""The lengths of the relation words that end in each character, longest first."""
_CHINESE_FORMS = "|".join(re.escape(form) for form in sorted(_CLASS, key=len, reverse=True) if not form.isascii())
"""The Chinese relation words as one alternation, longest first (亲弟弟 before 弟弟)."""
_DESCRIBED = re.compile(f"(?:的|那个|那位|这个|这位)({_CHINESE_FORMS})")
"""A Chinese relation word said after a description (在小米上班的那个同事, 湖南来的闺蜜)."""
_AMONG = re.compile(
    f"({_CHINESE_FORMS})"
    + r"(?:里面|里头|当中|中间|之中|里)(?P<who>[^，,。；;：:！!？?\s]{1,20}?)的?(?:那一位|那一个|那位|那个)"
)
"""A relation word, then which one of them (同事里写代码的那一位, 闺蜜当中跑业务的那个: the one among them who…)."""
_SURNAME_CLASS = "[" + "".join(sorted(SURNAMES)) + "]"
_NAMES = re.compile(
    r"(?=(?P<name>[A-Z][a-z]+|(?P<twice>[\u4e00-\u9fff])(?P=twice)|[小老]"
    + _SURNAME_CLASS
    + "|"
    + _SURNAME_CLASS
    + r"[\u4e00-\u9fff]))"
)
"""Where a name may start (at every place, overlapping: 发小马超 holds 小马 and 马超): a capitalised
word; a Chinese nickname, a character said twice (乐乐) or 小/老 before a surname (小王, 老李); a
common surname before another character."""
_LATIN_NAMES = re.compile(r"(?P<name>[A-Z][a-z]+)")
"""``_NAMES`` for a text without CJK characters (it is tried at every place: twice as slow on English)."""
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def introduced(text: str, words: Container[str]) -> dict[str, frozenset[int]]:
    """The names ``text`` gives right after a relation word, each with the relations it is given
    there (indices of one relation in either language). A name is keyed as it is compared: a Latin
    one case-folded, a Chinese one by its surname and the next character (张小 of 张小明), not when
    that pair is a word of ``words``, a dictionary (同事高兴地说: 高兴 is no name)."""
    found: dict[str, set[int]] = {}
    for name, relation in _introductions(_normal(text), words):
        found.setdefault(name, set()).add(relation)
    return {name: frozenset(relations) for name, relations in found.items()}


def someone_else(wanted: Mapping[str, frozenset[int]], text: str, words: Container[str]) -> bool:
    """True when ``text`` is about someone other than the ``wanted`` people (``introduced`` from a
    query): it gives one of their names only other relations than the query does, and none the
    relation the query gives it ("HR Jason" for "my friend Jason"); or it names none of them and
    introduces someone else ("产品经理Eric不吃香菜" for 产品经理Leo吃东西要注意什么？). A text that names
    nobody with a relation is no one else's (~0.01 ms for 1,000 characters of English)."""
    text = _normal(text)
    lowered = text.lower()
    named = [name for name in wanted if name in lowered]
    if not named:
        return any(True for _ in _introductions(text, words))
    other = False
    for name in named:
        there = _given(text, name)
        if not there:
            continue
        if there & wanted[name]:
            return False
        other = True
    return other


def described(text: str, words: Container[str]) -> dict[int, tuple[str, str]]:
    """The relations ``text`` asks about by a description instead of a name (在小米上班的那个同事,
    湖南来的那个闺蜜: the one who works at Xiaomi, the one from Hunan), each with the word it says it
    with and the description (what the clause says before it: 在小米上班的那个): a Chinese relation
    word right after 的, 那个, 那位, 这个 or 这位, or one followed by which of them (同事里写代码的那一位:
    写代码的那一位). None where the text introduces someone by name
    (我那个同事张伟 is 张伟)."""
    text = _normal(text)
    if any(True for _ in _introductions(text, words)):
        return {}
    found: dict[int, tuple[str, str]] = {}
    for description in _descriptions(text):
        found.setdefault(description.relation, (description.word, description.said))
    return found


def restated(text: str, relation: int, person: str) -> str | None:
    """``text`` asked of ``person`` (a relation word and a name) instead of the one it describes under
    ``relation`` (``described``): the description and the relation word give way to the person, as if the
    question had named them: "给四川籍的那位姐姐捎点解渴的，带啥好？" of 姐姐赵芳 is "姐姐赵芳捎点解渴的,带啥好?"
    (NFKC, as ``described`` reads it), "同事里写代码的那一位去哪儿出差？" of 同事杨鹏 "同事杨鹏去哪儿出差?". None
    when ``text`` describes no one under ``relation``."""
    text = _normal(text)
    for description in _descriptions(text):
        if description.relation == relation:
            return text[: description.start] + person + text[description.end :]
    return None


@dataclass(frozen=True)
class _Description:
    """One relation a text asks about by a description (``described``), where it is said."""

    relation: int
    word: str
    """The relation word as the text says it (同事)."""
    said: str
    """The description (在小米上班的那个, 写代码的那一位)."""
    start: int
    end: int
    """The span of the description and the relation word together."""


def _descriptions(text: str) -> Iterator[_Description]:
    """Each description of ``text`` (normalised): those said before the relation word first, then
    those that say which one among them."""
    for match in _DESCRIBED.finditer(text):
        clause = re.split(r"[，,。；;！!？?\s]", text[: match.start()])[-1]
        said = clause + match[0][: -len(match[1])]
        yield _Description(_CLASS[match[1].casefold()], match[1], said, match.start() - len(clause), match.end())
    for match in _AMONG.finditer(text):
        said = text[match.start("who") : match.end()]
        yield _Description(_CLASS[match[1].casefold()], match[1], said, match.start(), match.end())


def mentioned(wanted: Mapping[str, frozenset[int]], text: str) -> frozenset[str]:
    """Those of the ``wanted`` people (``introduced`` from a query) whose name ``text`` gives."""
    text = _normal(text)
    return frozenset(name for name in wanted if _mention(name).search(text))


def _normal(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _introductions(text: str, words: Container[str]) -> Iterator[tuple[str, int]]:
    """Each name of ``text`` that follows a relation word, keyed as ``introduced`` says, with that relation."""
    for match in (_LATIN_NAMES if text.isascii() else _NAMES).finditer(text):
        start, end = match.span("name")
        if match["name"].isascii():
            if (start and text[start - 1] in _ASCII_WORD) or (
                end < len(text) and text[end].isalpha() and text[end].isascii()
            ):
                continue  # inside a word (McDonald, iPhone)
            name = match["name"].casefold()
        else:
            name = match["name"]
            if name in words:
                continue
        relation = _relation_before(text, start)
        if relation is not None:
            yield name, relation


def _relation_before(text: str, start: int) -> int | None:
    """The relation whose word ends right before ``start`` (a space or tab between them allowed)."""
    end = start - 1 if start and text[start - 1] in " \t" else start
    for length in _LENGTHS.get(text[end - 1].casefold(), ()) if end else ():
        if length > end:
            continue
        form = text[end - length : end]
        relation = _CLASS.get(form.casefold())
        if relation is None:
            continue
        if form.isascii():
            if form.upper() in _ACRONYMS and form != form.upper():
                continue
            if end - length and text[end - length - 1] in _ASCII_WORD:
                continue  # the end of a longer word (son of Jason)
        return relation
    return None


def _given(text: str, name: str) -> set[int]:
    """The relations ``text`` gives ``name`` (as ``introduced`` keys it) right before it."""
    found: set[int] = set()
    for place in _mention(name).finditer(text):
        relation = _relation_before(text, place.start())
        if relation is not None:
            found.add(relation)
    return found


@functools.lru_cache(maxsize=256)
def _mention(name: str) -> re.Pattern[str]:
    """Where ``name`` is written: a Latin one as a whole word in any case, a Chinese one anywhere."""
    if name.isascii():
        return re.compile(rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])", re.IGNORECASE)
    return re.compile(re.escape(name))

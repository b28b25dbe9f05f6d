"""Full-text terms, and full-text search through a real LanceDB index in both languages."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from lancedb.index import FTS

from huichat.memory.crossling import chinese_words
from huichat.memory.fusion import Fusion
from huichat.memory.index_schema import SCHEMA_VERSION
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft, in_context, search_text
from huichat.memory.words import (
    both_scripts,
    chinese_names,
    content_terms,
    excerpt,
    index_words,
    named,
    names,
    names_share,
    words_share,
)
from tests.conftest import NOW, open_kernel


def test_chinese_becomes_characters_and_pairs() -> None:
    assert index_words("同事张伟") == "同 事 张 伟 同事 事张 张伟"


def test_latin_words_numbers_and_identifiers_stay_whole_with_their_parts() -> None:
    terms = index_words("Set user_id to 10.0.3.17, see JIRA-1234!").split()
    assert terms[:2] == ["set", "user_id"]
    assert {"user", "id", "10.0.3.17", "10", "17", "jira-1234", "jira", "1234"} <= set(terms)


def test_mixed_text_full_width_and_empty() -> None:
    # function characters (我 把 的 了) go as singles, stay inside pairs
    assert index_words("我把 VPN 的 password 改了") == "我把 vpn password 改 改了"
    assert index_words("ＶＰＮ密码１２３") == "vpn 密 码 密码 123"
    assert index_words("，。!? ") == ""


def test_content_terms_leave_function_words_and_cut_suffixes() -> None:
    assert content_terms("I was watching the Dishes passed, 3 cats; my cat is") == {
        "watch",
        "dish",
        "pass",
        "3",
        "cats",
        "cat",
    }  # "cats" is four letters: only longer words lose their suffix
    assert content_terms("我把ＶＰＮ的密码改了") == {"vpn", "密码", "码改"}
    assert content_terms("user_id @ 10.0.3.17") == {"user", "id", "10", "0", "3", "17"}


def test_a_capital_sigma_is_lowered_by_its_own_word() -> None:
    # str.lower reads Σ by its neighbours (final ς inside a word's end): a letter across
    # punctuation that ends the run must not turn it into σ
    assert content_terms("ΟΔΟΣ::next") == {"οδος", "next"}
    assert content_terms("ΟΔΟΣ'Α") == {"οδοσ", "α"}  # inside the run: a letter follows


def test_the_share_of_a_querys_words_is_the_same_from_its_terms() -> None:
    query = "Where did Melanie go camping with her kids?"
    text = "Melanie: we went camping at the lake, the kids loved it"
    assert words_share(query, text) == words_share(content_terms(query), text) == 0.75
    assert words_share("的了吗", text) == 0.0


def test_names_are_capitalised_words_inside_a_sentence() -> None:
    assert names("What instruments does Tim play?") == {"tim"}
    assert names("Tell me about Caroline's hobbies. Did Jon's band play?") == {"caroline", "jon"}
    # a sentence's first word is no name by its capital (Tell, Did), a function word never (I),
    # an acronym is a word like others (VPN), and a name inside Chinese is one
    assert names("Caroline's job?") == names("I reset the VPN") == frozenset()
    assert names("跟 Alice 说了吗") == {"alice"}
    # Chinese has no capitals: a Chinese question names nobody here
    assert names("同事张伟下周去哪出差？") == frozenset()


def test_a_stored_turns_speakers_lines_and_titles_open_no_name() -> None:
    turn = "user: My dentist is Dr. Patel at the Riverside Clinic.\nassistant: Noted.\nThanks to Ann"
    # as written, for the line that shows which names link two hits
    assert named(turn) == {"patel": "Patel", "riverside": "Riverside", "clinic": "Clinic", "ann": "Ann"}
    assert names("Caroline: Hey Mel! Did you see it?") == {"mel"}
    assert names("Who is Dr. Patel?") == {"patel"}  # a title's full stop ends no sentence
    assert names("note to self: call Mrs. Ito") == {"ito"}  # a label with spaces is no speaker


def test_the_share_of_a_querys_names_is_one_when_it_names_nobody() -> None:
    tim = names("What instruments does Tim play?")
    assert names_share(tim, "Melanie: You play any instruments?") == 0.0
    assert names_share(tim, "Tim: I play guitar, and Tim's brother the drums") == 1.0
    assert names_share(names("What did Jon and Gina open?"), "Jon: I opened a dance studio") == 0.5
    assert names_share(names("what do I play?"), "Melanie: You play any instruments?") == 1.0


def test_a_chinese_name_starts_with_a_surname_and_is_no_dictionary_word() -> None:
    words = chinese_words()
    # 周末 and 高兴 start with a surname (周, 高) but are words; a place is no common word either
    assert chinese_names("周末和杨鹏去沈阳，挺高兴", words) == {"杨鹏", "沈阳"}
    # a name of three characters gives its first pair; what follows the name is no name
    assert chinese_names("带我的师傅张小明下周搬家", words) == {"张小"}
    assert chinese_names("女儿朵朵对花生过敏", words) == frozenset()  # a nickname has no surname
    assert chinese_names("Riverside Clinic moved", words) == frozenset()


def test_a_querys_word_said_in_the_other_script_is_held() -> None:
    across = {"tent": frozenset({"帐篷"}), "chili": frozenset({"辣椒"}), "辣椒": frozenset({"hot pepper"})}
    assert words_share("tent", "我发小拿走了我的帐篷") == 0.0
    assert words_share("tent", "我发小拿走了我的帐篷", across) == 1.0
    assert words_share("Who took my tent?", "我发小拿走了我的帐篷", across) == 0.5  # took, tent
    assert words_share("辣椒", "no hot peppers for Lina", across) == 1.0  # a gloss: all its words
    assert words_share("辣椒", "a pepper mill", across) == 0.0
    assert words_share("tent", "Lina", {"tent": frozenset({"the"})}) == 0.0  # a gloss of function words holds nothing


def test_a_text_holds_both_scripts_when_it_has_chinese_and_latin_letters() -> None:
    answer = "Here is how I would approach the migration, step by step. " * 30
    assert both_scripts(f"user: 帮我写一封请假邮件 assistant: {answer}")  # a Chinese question, an English answer
    assert both_scripts("PM Ryan 的 work email：hello196@mail.com") and both_scripts("跟 Alice 说了吗")
    assert not both_scripts(answer) and not both_scripts("下面是我对银杏的建议") and not both_scripts("改到 1 点了")


def test_chinese_counts_by_character_pairs_between_function_characters() -> None:
    # pairs of each stretch between function (的 是 什 么) and question (几) characters
    assert content_terms("我的眼科医生姓什么？") == {"眼科", "科医", "医生", "生姓"}
    assert content_terms("海王星有几颗卫星？") == {"海王", "王星", "颗卫", "卫星"}
    # a character standing alone between them is a word of its own, held by a text with it anywhere
    assert content_terms("我的猫呢") == {"猫"}
    assert words_share("猫", "我家猫咪很乖") == 1.0
    assert content_terms("VPN 密码改了吗") == {"vpn", "密码", "码改"}


def test_characters_without_a_shared_word_are_no_evidence() -> None:
    # issue 24: off-topic questions held a third to a half of their characters in some message of
    # a large Chinese store, and a character share let them through as hits
    soup = "周末煮了一锅鸭汤，蛋糕也烤好了，等了好久"
    assert words_share("鸭蛋要煮多久？", soup) == 0.0  # 鸭 蛋 煮 久 all in it, no word
    assert words_share("鸭汤怎么炖才好喝", soup) == 0.25  # 鸭汤 of 鸭汤 炖才 才好 好喝
    assert words_share("Where is my duck soup? 鸭汤", soup) == pytest.approx(1 / 3)  # duck, soup, 鸭汤


def _store(kernel: MemoryKernel, texts: list[str]) -> dict[str, str]:
    """One session per message, an hour apart (independent messages); text → turn id."""
    ids = {}
    for n, text in enumerate(texts):
        session = kernel.new_session(NOW - timedelta(hours=len(texts) - n))
        draft = TurnDraft((Message("user", text),), NOW - timedelta(hours=len(texts) - n))
        ids[text] = kernel.append_turn(session, draft).id
    kernel.maintain(force=True)
    return ids


def _text_hits(kernel: MemoryKernel, query: str) -> list[str]:
    return [h.turn.id for h in kernel.search(SearchRequest(query, NOW, 5, mode="text", resolve_time=False)).hits]


def test_chinese_look_alikes_are_told_apart_by_full_text(kernel: MemoryKernel) -> None:
    ids = _store(
        kernel,
        [
            "朋友张伟下周日去上海出差",
            "同事李娜下周六去北京出差",
            "同事张伟下周六要去北京出差",
            "同事张伟下周日在海底捞过生日",
            "今天好累啊",
        ],
    )
    assert _text_hits(kernel, "同事张伟去北京出差")[0] == ids["同事张伟下周六要去北京出差"]
    assert _text_hits(kernel, "朋友张伟出差")[0] == ids["朋友张伟下周日去上海出差"]
    assert _text_hits(kernel, "张伟过生日")[0] == ids["同事张伟下周日在海底捞过生日"]
    # a word written another way still matches by its characters
    assert _text_hits(kernel, "张伟出公差")[0] in {ids["同事张伟下周六要去北京出差"], ids["朋友张伟下周日去上海出差"]}


def test_english_numbers_identifiers_and_mixed_text_still_match(kernel: MemoryKernel) -> None:
    ids = _store(
        kernel,
        [
            "I went camping with my kids in June",
            "The server at 10.0.3.17 runs the billing API",
            "Renamed user_id to account_uuid in the schema",
            "我把 VPN 的 password 改了，存在 1Password 里",
            "JIRA-1234 assign 给了 Kevin",
            "我们下周去海边露营",
        ],
    )
    assert _text_hits(kernel, "When did I go camping?")[0] == ids["I went camping with my kids in June"]
    assert _text_hits(kernel, "what runs on 10.0.3.17")[0] == ids["The server at 10.0.3.17 runs the billing API"]
    assert _text_hits(kernel, "user_id")[0] == ids["Renamed user_id to account_uuid in the schema"]
    assert _text_hits(kernel, "VPN password")[0] == ids["我把 VPN 的 password 改了，存在 1Password 里"]
    assert _text_hits(kernel, "VPN 密码改了吗")[0] == ids["我把 VPN 的 password 改了，存在 1Password 里"]
    assert _text_hits(kernel, "谁在跟 jira-1234")[0] == ids["JIRA-1234 assign 给了 Kevin"]
    assert _text_hits(kernel, "露营")[0] == ids["我们下周去海边露营"]


def test_an_index_of_the_previous_layout_gets_its_words_in_place(tmp_path: Path) -> None:
    """A layout-4 index (full text on ICU words, no ``words`` column) is migrated at open, without re-embedding."""
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turn = kernel.append_turn(session, TurnDraft((Message("user", "同事张伟下周六去北京出差"),), NOW))
    kernel.close()
    db = lancedb.connect(str(tmp_path / "index.lancedb"))
    current = db.open_table("turns").to_arrow()
    vectors_before = current.column("vector").to_pylist()
    old = current.drop_columns(["words"])
    fields = [f.with_metadata({b"huichat.schema": b"4"}) if f.name == "id" else f for f in old.schema]
    db.drop_table("turns")
    table = db.create_table("turns", old.cast(pa.schema(fields, metadata=old.schema.metadata)))
    table.create_index("text", config=FTS(base_tokenizer="icu", with_position=False), replace=True)
    reopened = open_kernel(tmp_path)
    assert reopened.store.version == SCHEMA_VERSION
    assert reopened.store._table.to_arrow().column("vector").to_pylist() == vectors_before  # nothing re-embedded
    assert [h.turn.id for h in reopened.search(SearchRequest("张伟出差", NOW, mode="text")).hits] == [turn.id]
    fts = [i for i in reopened.store._table.list_indices() if i.index_type == "FTS"]
    assert [list(i.columns) for i in fts] == [["words"]]  # the ICU index on ``text`` is gone


def test_the_previous_turn_is_context_only_when_written_just_before(kernel: MemoryKernel) -> None:
    session = kernel.new_session(NOW - timedelta(hours=5))
    first = kernel.append_turn(
        session, TurnDraft((Message("user", "同事张伟下周六去北京出差"),), NOW - timedelta(hours=5))
    )
    reply = kernel.append_turn(
        session,
        TurnDraft((Message("user", "他说早上八点在南站碰头"),), NOW - timedelta(hours=5) + timedelta(minutes=3)),
    )
    later = kernel.append_turn(session, TurnDraft((Message("user", "楼下新开了家面馆"),), NOW - timedelta(hours=1)))
    assert search_text(reply, first) == f"{first.text}\n{reply.text}"
    assert search_text(later, reply) == later.text
    assert not in_context(first, None)


def test_a_query_with_chinese_is_fused_with_the_cjk_weights() -> None:
    fusion = Fusion()
    assert fusion.for_query("When did I go camping?") is fusion
    chinese = fusion.for_query("VPN 密码改了吗")
    assert (chinese.vector_weight, chinese.text_weight) == fusion.cjk_weights


_ADVICE = "Here is how I would approach Juniper, step by step. " * 3
_FACT = "The Juniper API listens on port 8443 behind the gateway. "
_MORE = "More advice about testing and deploys. " * 4


@pytest.mark.parametrize(
    ("query", "shown", "starts"),
    [
        # a long answer's matching sentence, not its first lines (a trial: no snippet showed the port)
        ("Juniper API port", "listens on port 8443", "…"),
        ("端口 gateway", "behind the gateway", "…"),
        ("Juniper", "Here is how I would approach Juniper", "Here"),  # the start holds it: the start
        ("", "Here is how", "Here"),
    ],
)
def test_a_long_turns_excerpt_shows_where_it_holds_the_querys_words(query: str, shown: str, starts: str) -> None:
    text = _ADVICE + _FACT + _MORE
    found = excerpt(text, content_terms(query), 160)
    assert shown in found and found.startswith(starts) and len(found) <= 160
    assert found.endswith("…")  # text is left out after it
    assert excerpt("VPN drops at night", content_terms("port"), 160) == "VPN drops at night"  # short: whole


def test_an_excerpt_of_chinese_shows_the_sentence_with_the_words() -> None:
    text = (
        "下面是我对玄武的建议，分几步来做。" * 5
        + "松果 的数据放在 PostgreSQL 里，每天凌晨备份。"
        + "其他的建议照常。" * 6
    )
    found = excerpt(text, content_terms("松果 PostgreSQL"), 60)
    assert "松果 的数据放在 PostgreSQL 里" in found and found.startswith("…") and len(found) <= 60

"""Who a text introduces, and as whose what (``memory.people``)."""

from __future__ import annotations

from huichat.memory.people import described, introduced, restated, someone_else

_WORDS = frozenset({"高兴", "周末", "天天", "姐姐", "老是"})
"""A dictionary's words (the real one is CC-CEDICT's, ``memory.crossling.chinese_words``)."""


def _relations(text: str) -> dict[str, int]:
    """Each introduced name with the number of relations it is given."""
    return {name: len(relations) for name, relations in introduced(text, _WORDS).items()}


def test_a_name_right_after_a_relation_word_is_introduced_in_either_language() -> None:
    assert _relations("Which gift cost more, my friend Jason's or HR Cindy's?") == {"jason": 1, "cindy": 1}
    assert _relations("是我前同事李娜做 demo早，还是HR Leo做 demo早？") == {"李娜": 1, "leo": 1}
    assert _relations("和ex-colleague李娜 align 过") == {"李娜": 1}
    assert _relations("组里的同事Cindy 请我喝了 coffee") == {"cindy": 1}
    # a three-character name by its first pair, as another text about that person holds it
    assert _relations("我妹妹林晓雨在杭州读大学") == {"林晓": 1}


def test_a_nickname_and_a_childhood_friend_are_introduced_too() -> None:
    # a child's name said twice, 小/老 before a surname, 从小一起长大的 (a childhood friend)
    assert _relations("给我儿子乐乐和给弟弟赵鹏买的礼物，哪份花得多？") == {"乐乐": 1, "赵鹏": 1}
    assert _relations("我的同事小王说下周五不用加班") == {"小王": 1}
    assert _relations("从小一起长大的林晓打球和看电影哪个在前？") == {"林晓": 1}
    # a relation word that ends where a nickname could start does not hide the name after it
    assert _relations("给亲姐赵敏和给我发小马超买的礼物") == {"赵敏": 1, "马超": 1}
    assert introduced("发小马超", _WORDS) == introduced("发小 马超", _WORDS)


def test_what_only_looks_like_a_relation_and_a_name_is_not_read_as_one() -> None:
    assert introduced("at 6 pm Jason called", _WORDS) == {}  # pm in lower case is a time
    assert introduced("同事高兴地说周末加班", _WORDS) == {}  # 高兴 is a word, not a name
    assert introduced("Jason's son called", _WORDS) == {}  # no name after the relation
    assert introduced("Mason Tom", _WORDS) == {}  # son inside a word is no relation
    assert introduced("儿子天天玩游戏，哥哥姐姐都来了", _WORDS) == {}  # words said twice (every day, sisters)
    assert introduced("同事老是迟到", _WORDS) == {}


def test_the_same_relation_in_the_other_language_is_the_same_person() -> None:
    asked = introduced("What did my friend Jason get for his birthday?", _WORDS)
    assert not someone_else(asked, "好朋友Jason 的生日礼物是乐高", _WORDS)
    assert someone_else(asked, "HR Jason 请我喝了 coffee", _WORDS)
    assert not someone_else(asked, "Jason 请我喝了 coffee", _WORDS)  # no relation said: maybe the friend
    assert not someone_else(asked, "HR Jason and my friend Jason both came", _WORDS)
    # a text that names none of the asked people but introduces another is about someone else
    assert someone_else(asked, "HR Cindy 请我喝了 coffee", _WORDS)
    assert not someone_else(asked, "Cindy 请我喝了 coffee", _WORDS)  # nobody introduced: maybe about him
    assert not someone_else(asked, "the gift card cost 300 yuan", _WORDS)


def test_a_text_about_one_of_two_people_asked_about_is_not_someone_else() -> None:
    asked = introduced("是我前同事李娜做 demo早，还是HR Leo做 demo早？", _WORDS)
    assert not someone_else(asked, "下周五要给HR Leo demo 支付模块，前台李娜也来", _WORDS)
    assert someone_else(asked, "HR李娜tomorrow要看推荐系统的 demo", _WORDS)
    assert not someone_else(asked, "HR李娜和HR Leo一起看 demo", _WORDS)


def test_a_person_asked_about_by_description_is_read_with_the_description() -> None:
    assert described("在小米上班的那个同事追的现场是谁的？", _WORDS) == {0: ("同事", "在小米上班的那个")}
    assert described("问一下，湖南来的那位闺蜜打算徒步的是哪座山？", _WORDS) == {8: ("闺蜜", "湖南来的那位")}
    assert described("东北籍的发小的车是什么牌子？", _WORDS) == {8: ("发小", "东北籍的")}
    # which one among them (the one among my besties who does sales)
    assert described("闺蜜里跑业务的那一位最近迷上了什么？", _WORDS) == {8: ("闺蜜", "跑业务的那一位")}
    assert described("同事当中写代码的那个去哪儿出差了？", _WORDS) == {0: ("同事", "写代码的那个")}
    assert described("朋友圈里那个视频是谁发的？", _WORDS) == {}
    assert described("同事中午吃的那个外卖是哪家的？", _WORDS) == {}  # 中午 is noon, not among them
    # a name said after the relation is no description; nor is a relation said without one
    assert described("我那个同事张伟追的现场是谁的？", _WORDS) == {}
    assert described("我同事去哪儿出差了？", _WORDS) == {}


def test_a_question_about_someone_described_is_restated_with_their_name() -> None:
    # the description and the relation word give way to the person (NFKC punctuation, as described reads it)
    assert restated("给四川籍的那位姐姐捎点解渴的，带啥好？", 18, "姐姐赵芳") == "姐姐赵芳捎点解渴的,带啥好?"
    assert (
        restated("问一下，湖南来的那位闺蜜打算徒步的是哪座山？", 8, "闺蜜周婷") == "问一下,闺蜜周婷打算徒步的是哪座山?"
    )
    assert restated("同事当中写代码的那个去哪儿出差了？", 0, "同事杨鹏") == "同事杨鹏去哪儿出差了?"
    # a relation the question does not describe under, or a question describing no one
    assert restated("在小米上班的那个同事追的现场是谁的？", 8, "闺蜜周婷") is None
    assert restated("我同事去哪儿出差了？", 0, "同事杨鹏") is None

"""Word lists and templates of the hard Chinese benchmark (``zhhard``); no outside text.

Every kind of fact has message templates (``says``) and, per split, question templates
(``asks``) written so that they share no content character (``huichat.memory.words.
content_terms``: CJK characters other than 的了我…) with any message template of the same
kind — only the person and the value, which are slots, can match. A person may also be
named by what another message says about them (a descriptor: job, employer, home
province), through referent templates that share nothing with the descriptor's messages.
The ``tune`` and ``heldout`` template sets are disjoint; tuning may only read ``tune``.

Slots: ``{P}`` a person as a message names them, ``{Q}`` as a question does (a name, a
relation and a name, or a referent), ``{X}`` the value, ``{D}`` a day, ``{Y}`` a
descriptor as a question words it, ``{R}`` a relation word.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.zhvocab import (
    CHILDREN,
    CITIES,
    COMPANIES,
    DISTRICTS,
    HOSPITALS,
    LENDABLES,
    MOUNTAINS,
    RESTAURANTS,
    SINGERS,
)
from benchmarks.zhvocab import RELATIONS as RELATION_FORMS

SPLITS = ("tune", "heldout")


@dataclass(frozen=True)
class Kind:
    """A kind of fact about a person (a plan, what they eat, their pet), asked for its value."""

    name: str
    values: tuple[str, ...]
    says: tuple[str, ...]
    asks: dict[str, tuple[str, ...]]
    """Split → question templates."""
    noise: tuple[str, ...]
    """Messages that mention the person and the kind without the fact (``{X}`` another value)."""
    group: str = ""
    """The aggregative question this kind answers with its siblings: ``plans`` or ``food``."""


@dataclass(frozen=True)
class Descriptor:
    """Something said about a person once, that a question can then name them by."""

    name: str
    values: tuple[tuple[str, str], ...]
    """(as a message says it, as a question refers to it): 程序员 / 写代码的."""
    says: tuple[str, ...]
    refers: dict[str, tuple[str, ...]]
    """Split → referent templates (``{Y}`` the referred value, ``{R}`` the relation)."""


def _asks(tune: tuple[str, ...], heldout: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {"tune": tune, "heldout": heldout}


KINDS: tuple[Kind, ...] = (
    Kind(
        "出差",
        CITIES,
        says=("{D}{P}要去{X}出差", "{P}被公司派到{X}跑项目，{D}走"),
        asks=_asks(
            ("{Q}这回为工作得飞哪座城？", "{Q}因工作要赶往哪里？"),
            ("{Q}为了业务要奔赴哪座城市？", "{Q}这次外地办事，终点是哪？"),
        ),
        noise=("{P}说年底老加班，哪儿都去不成", "{P}以前在{X}待过两年"),
        group="plans",
    ),
    Kind(
        "聚餐",
        RESTAURANTS,
        says=("{D}约了{P}在{X}吃饭", "跟{P}说好{D}去{X}撮一顿"),
        asks=_asks(
            ("我和{Q}碰头的餐馆是哪家？", "同{Q}聚餐挑的哪间店？"), ("请{Q}用餐定在哪个馆子？", "和{Q}聚会选了什么店？")
        ),
        noise=("上次跟{P}吃饭还是去年的事", "{P}说{X}排队太久，不想去了"),
        group="plans",
    ),
    Kind(
        "爬山",
        MOUNTAINS,
        says=("{D}跟{P}去爬{X}", "{P}约我{D}一起登{X}"),
        asks=_asks(
            ("{Q}打算徒步的是哪座山？", "我和{Q}要上哪座山走走？"), ("同{Q}户外远足去哪儿？", "{Q}想征服的山头是？")
        ),
        noise=("{P}说膝盖疼，山是爬不动了", "{P}发了好多{X}的风景照"),
        group="plans",
    ),
    Kind(
        "演唱会",
        SINGERS,
        says=("{D}和{P}去看{X}的演唱会", "{P}抢到了{X}的票，{D}一起去"),
        asks=_asks(
            ("陪{Q}听的是哪位歌手？", "{Q}追的现场是谁的？"), ("{Q}买的门券是哪位歌星的？", "跟{Q}去捧谁的场？")
        ),
        noise=("{P}天天单曲循环{X}", "{P}说现在的票太难抢了"),
        group="plans",
    ),
    Kind(
        "体检",
        HOSPITALS,
        says=("{D}带{P}去{X}体检", "给{P}约了{D}在{X}查身体"),
        asks=_asks(
            ("{Q}做健康评估是在哪家医院？", "陪{Q}去医院是哪一家？"),
            ("{Q}抽血化验安排在哪？", "{Q}的健康状况要到哪家医院看？"),
        ),
        noise=("{P}说老失眠，精神很差", "{P}嫌{X}排号太慢"),
        group="plans",
    ),
    Kind(
        "搬家",
        DISTRICTS,
        says=("{P}{D}搬家，新房子在{X}", "{D}去帮{P}搬到{X}那边"),
        asks=_asks(
            ("{Q}乔迁去了哪个区？", "{Q}换了住址，落脚在哪一片？"), ("{Q}的居所挪去哪块地方？", "{Q}迁居的街区是哪？")
        ),
        noise=("{P}嫌现在的房租太贵", "{P}说{X}交通不方便"),
        group="plans",
    ),
    Kind(
        "过敏",
        ("芒果", "花生", "海鲜", "牛奶", "鸡蛋", "猫毛", "花粉", "青霉素"),
        says=("{P}一碰{X}就起疹子", "{P}沾了{X}浑身发痒"),
        asks=_asks(("{Q}对哪样东西过敏？", "{Q}的过敏源是啥？"), ("{Q}接触不得的是什么？", "{Q}体质上忌讳哪种东西？")),
        noise=("{P}说换季鼻子又不舒服", "{P}今天买了一大袋{X}"),
        group="food",
    ),
    Kind(
        "忌口",
        ("香菜", "辣椒", "葱", "肥肉", "内脏", "苦瓜", "羊肉", "榴莲"),
        says=("{P}不吃{X}", "点菜别放{X}，{P}受不了"),
        asks=_asks(("{Q}有什么忌口？", "{Q}嫌弃哪种食材？"), ("{Q}讨厌哪样东西入口？", "给{Q}做饭得避开什么？")),
        noise=("{P}说食堂的菜越来越难吃", "{P}说{X}涨价了"),
        group="food",
    ),
    Kind(
        "饮品",
        ("美式咖啡", "拿铁", "乌龙茶", "珍珠奶茶", "酸梅汤", "椰汁", "柠檬水", "豆浆"),
        says=("{P}每天都要来一杯{X}", "{P}只喝{X}"),
        asks=_asks(
            ("{Q}偏爱哪种饮料？", "给{Q}捎点解渴的，带啥好？"), ("{Q}离不开的饮料是哪款？", "{Q}常备的饮品是？")
        ),
        noise=("{P}说戒糖了，奶茶少碰", "{P}请大家喝了{X}"),
        group="food",
    ),
    Kind(
        "饮食",
        ("吃素", "减肥", "控糖", "戒酒", "低盐"),
        says=("{P}开始{X}了", "{P}听医生的话{X}"),
        asks=_asks(
            ("{Q}饮食上有什么讲究？", "{Q}餐桌上守着哪条规矩？"), ("{Q}吃东西有啥限制？", "{Q}三餐要注意哪方面？")
        ),
        noise=("{P}说要大吃一顿犒劳自己", "{P}问我{X}有没有用"),
        group="food",
    ),
    Kind(
        "宠物",
        ("柯基", "布偶猫", "金毛", "仓鼠", "鹦鹉", "橘猫", "泰迪", "乌龟"),
        says=("{P}家里新来了一只{X}", "{P}养了只{X}"),
        asks=_asks(
            ("{Q}身边陪着什么小动物？", "{Q}照顾的毛孩子是？"), ("{Q}的爱宠是哪种？", "{Q}屋中的萌物是什么品种？")
        ),
        noise=("{P}说小区里流浪猫好多", "{P}发了张{X}的视频"),
    ),
    Kind(
        "爱好",
        ("钓鱼", "滑雪", "摄影", "书法", "网球", "吉他", "烘焙", "桌游"),
        says=("{P}迷上了{X}", "{P}周末全花在{X}上"),
        asks=_asks(("{Q}闲暇喜欢做什么？", "{Q}业余有啥消遣？"), ("{Q}私下钻研哪门手艺？", "{Q}工作之余热衷什么？")),
        noise=("{P}说太忙了，很久没玩了", "{P}问我要不要一起学{X}"),
    ),
    Kind(
        "座驾",
        ("特斯拉", "比亚迪", "丰田凯美瑞", "大众帕萨特", "本田雅阁", "蔚来", "宝马三系", "理想"),
        says=("{P}开的是{X}", "{P}刚提了辆{X}"),
        asks=_asks(("{Q}的车是什么牌子？", "{Q}驾驶哪款车？"), ("{Q}代步用的哪个品牌？", "{Q}出门驾的是哪款？")),
        noise=("{P}说停车位太难找", "{P}想换{X}，还在犹豫"),
    ),
    Kind(
        "借走",
        LENDABLES,
        says=("我把{X}借给了{P}", "{P}拿走了我的{X}"),
        asks=_asks(
            ("{Q}那儿有我的什么东西？", "{Q}手里有我哪件物品？"), ("我有啥落在{Q}那里没还回来？", "{Q}该归还我什么？")
        ),
        noise=("{P}问我有没有多余的{X}", "{P}说想买个{X}"),
    ),
)

DESCRIPTORS: tuple[Descriptor, ...] = (
    Descriptor(
        "职业",
        (
            ("程序员", "写代码的"),
            ("设计师", "搞设计的"),
            ("律师", "打官司的"),
            ("会计", "管账的"),
            ("中学老师", "教书的"),
            ("牙医", "给人看牙的"),
            ("厨师", "掌勺的"),
            ("记者", "跑新闻的"),
            ("护士", "穿白大褂的"),
            ("销售", "跑业务的"),
        ),
        says=("{P}是做{X}的", "{P}现在当{X}"),
        refers=_asks(("我那个{Y}{R}", "{Y}那位{R}"), ("{R}里{Y}那一位", "{Y}那个{R}")),
    ),
    Descriptor(
        "单位",
        tuple((c, c) for c in COMPANIES),
        says=("{P}入职{X}了", "{P}跳槽去了{X}"),
        refers=_asks(("在{Y}上班的那个{R}", "{Y}那边工作的{R}"), ("给{Y}打工的那个{R}", "我那个在{Y}做事的{R}")),
    ),
    Descriptor(
        "老家",
        tuple((p, p) for p in ("山东", "四川", "湖南", "东北", "河南", "福建", "广西", "江西", "山西", "云南")),
        says=("{P}老家是{X}的", "{P}过年要回{X}"),
        refers=_asks(("{Y}来的那个{R}", "{Y}籍的那位{R}"), ("祖籍{Y}的{R}", "{Y}出身的那个{R}")),
    ),
)

AGGREGATES: dict[str, dict[str, tuple[str, ...]]] = {
    "plans": _asks(
        ("{Q}跟我定下的行程都有哪些？", "我同{Q}排了哪几样活动？"),
        ("关于{Q}，我记过哪些安排？", "我和{Q}有哪些碰面计划？"),
    ),
    "food": _asks(
        ("招待{Q}，餐桌上得留意哪些？", "{Q}饮食方面有哪些讲究？"),
        ("{Q}入口的东西有哪些讲究？", "请{Q}做客，饮食要避哪些坑？"),
    ),
}
"""Group → split → questions whose answer is every fact of that group about the person."""

RELATIONS = tuple(r for r in RELATION_FORMS if r not in CHILDREN | {"老婆", "老公"})
"""``zhgen``'s relations without spouses and children: a descriptor (job, employer) fits each of them."""
SURNAMES = "张王李刘陈杨赵黄周吴"
GIVEN = ("伟磊洋杰帆鹏浩斌", "芳娜静婷雪敏丽琳")
"""Male and female given names: surname × given name, so that names recur across users."""

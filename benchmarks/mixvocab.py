"""The code-switching variant of the benchmark: office and tech chat in mixed Chinese and English.

Same world and question types as ``zhvocab``, but the messages mix languages the way
people at work write (我把 VPN 的 password 改了), carry identifiers (IPs, ticket keys,
e-mail addresses, repo names) and numbers, and some questions are asked in English or
use the other language's word for a thing (密码 for password).
"""

from __future__ import annotations

from benchmarks.zhvocab import CHATTER as ZH_CHATTER
from benchmarks.zhworld import EventKind, TraitKind, Vocab

RELATIONS: dict[str, tuple[str, ...]] = {
    "同事": ("同事", "colleague", "组里的同事"),
    "老板": ("老板", "manager", "boss"),
    "PM": ("PM", "产品经理"),
    "客户": ("客户", "client"),
    "实习生": ("实习生", "intern"),
    "室友": ("室友", "roommate"),
    "朋友": ("朋友", "好朋友"),
    "HR": ("HR",),
    "前同事": ("前同事", "ex-colleague"),
    "导师": ("mentor", "导师"),
}
RELATIONS_EN: dict[str, tuple[str, ...]] = {
    "同事": ("my colleague", "my coworker"),
    "老板": ("my manager", "my boss"),
    "PM": ("our PM",),
    "客户": ("my client", "the client"),
    "实习生": ("our intern", "the intern"),
    "室友": ("my roommate",),
    "朋友": ("my friend",),
    "HR": ("HR",),
    "前同事": ("my ex-colleague", "my former coworker"),
    "导师": ("my mentor",),
}
NAMES_MALE = ("Kevin", "Tom", "David", "Jason", "Eric", "Leo", "Ryan", "张伟", "刘洋", "王磊")
NAMES_FEMALE = ("Lisa", "Amy", "Emma", "Grace", "Vivian", "Cindy", "Sophie", "李娜", "陈静", "林晓")

EVENTS: tuple[EventKind, ...] = (
    EventKind(
        "开会",
        ("会议室 A3", "会议室 B12", "Zoom", "Teams", "客户 office", "WeWork 5 楼"),
        says=("{D}跟{P}有个 meeting，在{X}", "{P}约了{D}的 1:1，地点 {X}", "{D}和{P} sync 一下，{X}见"),
        ask_place=("跟{Q}的 meeting 在哪开？", "Where is my meeting with {Qe}?", "和{Q}的 1:1 约在哪？"),
        ask_when=("跟{Q}在{X}的 meeting 是哪天？", "When is the meeting with {Qe}?"),
        verb="开会",
        ask_who=("我在{X}跟谁有 meeting？", "Who am I meeting in {X}?"),
    ),
    EventKind(
        "demo",
        ("新版 App", "dashboard v2", "支付模块", "search 功能", "推荐系统", "billing API"),
        says=("{D}要给{P} demo {X}", "{P}{D}要看{X}的 demo", "{D} demo {X} 给{P}看"),
        ask_place=("给{Q}演示的是哪个功能？", "What am I demoing to {Qe}?"),
        ask_when=("给{Q} demo {X}是哪天？", "When is the {X} demo for {Qe}?"),
        verb="做 demo",
        ask_who=("{X} 要 demo 给谁看？", "Who is the {X} demo for?"),
    ),
    EventKind(
        "面试",
        ("Google", "Microsoft", "ByteDance", "Shopee", "Grab", "Stripe", "Airbnb", "Meta"),
        says=("{P}{D}去{X} onsite 面试", "{P}拿到了{X}的 interview，{D}", "{P}{D}面 {X}，有点紧张"),
        ask_place=("{Q}去哪家公司 interview？", "Which company is {Qe} interviewing with?"),
        ask_when=("{Q}面{X}是什么时候？", "When is {Qe}'s {X} interview?"),
        verb="面试",
        ask_who=("谁要去 {X} 面试？", "Who has an interview at {X}?"),
    ),
    EventKind(
        "上线",
        ("v3.2", "iOS 新版", "会员系统", "海外版", "AI 助手", "checkout 流程"),
        says=("{P}负责的{X}{D}上线", "{D} {X} release，{P} 是 owner", "{X}定了{D}发布，{P}盯着"),
        ask_place=("{Q}负责发布的是什么？", "What is {Qe} launching?"),
        ask_when=("{Q}负责的{X}什么时候 release？", "When does {Qe}'s {X} go live?"),
        verb="上线",
        ask_who=("{X} 是谁负责上线？", "Who owns the {X} launch?"),
    ),
    EventKind(
        "出差",
        ("Singapore", "Tokyo", "深圳", "上海", "北京", "Seattle", "London", "杭州"),
        says=("{P}{D}飞{X}出差", "{D}跟{P}去{X}参加 offsite", "{P}{D}去 {X} business trip"),
        ask_place=("{Q}出差去哪？", "Where is {Qe} flying to?", "{Q}的 business trip 去哪个城市？"),
        ask_when=("{Q}什么时候去{X}？", "When does {Qe} leave for {X}?"),
        verb="出差",
        ask_who=("谁要飞{X}？", "Who is flying to {X}?"),
    ),
    EventKind(
        "review",
        ("payment-service", "auth-gateway", "web-frontend", "data-pipeline", "ios-app", "infra-terraform"),
        says=("{D}要帮{P} review {X} 的 PR", "{P}的 {X} PR {D}之前要 review 完", "{P} 让我{D}看一下 {X} 的改动"),
        ask_place=("我要帮{Q} review 哪个 repo？", "Which repo does {Qe} need a review on?"),
        ask_when=("{Q}的 {X} 代码哪天前要看完？", "When is {Qe}'s {X} review due?"),
        verb="review 代码",
        ask_who=("{X} 的 PR 是谁的？", "Whose {X} PR do I need to review?"),
    ),
    EventKind(
        "聚餐",
        ("Blue Bottle", "Shake Shack", "Wagas", "海底捞", "Element Fresh", "Pizza Express"),
        says=("{D}和{P}去{X}吃 lunch", "{P}请客，{D} {X}", "{D}跟{P}约了 {X} 吃饭"),
        ask_place=("跟{Q}吃饭去哪家？", "Where am I having lunch with {Qe}?"),
        ask_when=("和{Q}去{X}是哪天？", "When is lunch with {Qe} at {X}?"),
        verb="吃饭",
    ),
)

DAYS: dict[str, tuple[str, ...]] = {
    "明天": ("明天", "tomorrow"),
    "后天": ("后天",),
    "下周五": ("下周五", "next Friday", "下个 Friday"),
    "下周六": ("下周六", "next Saturday", "下礼拜六"),
    "下周日": ("下周日", "next Sunday", "下礼拜天"),
    "下周三": ("下周三", "next Wednesday", "下个 Wed"),
}
TIMES = ("10am", "下午 3 点", "3:30pm", "早上 9 点", "noon", "6pm", "9:30am", "下午 2 点半")
FOLLOW_UPS = ("{H}说 {T} 开始", "改到 {T} 了", "time 定了，{T}", "{H} 让我 {T} 前到")
ASK_TIME = ("跟{Q}{V}约的几点？", "{Q}那个{V}几点开始？")

TRAITS: tuple[TraitKind, ...] = (
    TraitKind(
        "邮箱",
        ("dev{n}@acme.io", "ops{n}@acme.io", "pm{n}@acme.io", "hello{n}@mail.com"),
        says=("{P}的 email 是 {X}", "{P}换了新邮箱 {X}", "{P} 的 work email：{X}"),
        asks=("{Q}的邮箱是多少？", "What's {Qe}'s email?"),
        asks_back=("{X} 是谁的邮箱？", "Whose email is {X}?"),
    ),
    TraitKind(
        "服务器",
        ("10.0.{n}.17", "10.{n}.3.21", "192.168.{n}.8", "172.16.{n}.40"),
        says=("{P}负责的那台 server IP 是 {X}", "{P} 的测试机是 {X}", "{X} 那台机器归{P}管"),
        asks=("{Q}那台 server 的 IP 是多少？", "What's the IP of {Qe}'s server?", "{Q}的测试机地址是什么？"),
        asks_back=("{X} 这台机器是谁在管？", "Who owns the server at {X}?"),
    ),
    TraitKind(
        "GitHub",
        ("dev_{n}x", "coder-{n}", "ml_ninja{n}", "octo{n}"),
        says=("{P}的 GitHub id 是 {X}", "{P} 在 GitHub 上叫 {X}"),
        asks=("{Q}的 GitHub 账号是什么？", "What's {Qe}'s GitHub handle?"),
        asks_back=("{X} 是谁的 GitHub？", "Whose GitHub account is {X}?"),
    ),
    TraitKind(
        "工单",
        ("JIRA-{n}", "BUG-{n}", "OPS-{n}", "SEC-{n}"),
        says=("{P} 在跟 {X} 这个 ticket", "{X} assign 给了{P}", "{P}负责的工单是 {X}"),
        asks=("{Q}在处理哪个 ticket？", "Which ticket is {Qe} working on?"),
        asks_back=("{X} 是谁在跟？", "Who is handling {X}?"),
    ),
    TraitKind(
        "语言",
        ("Python", "Go", "Rust", "TypeScript", "Java", "Kotlin", "Swift", "C++"),
        says=("{P}主要写 {X}", "{P} 的 main language 是 {X}", "{P} 最近在学 {X}"),
        asks=("{Q}主要用什么编程语言？", "What language does {Qe} mostly code in?"),
    ),
    TraitKind(
        "过敏",
        ("peanuts", "shellfish", "gluten", "芒果", "牛奶"),
        says=("{P}对 {X} 过敏", "{P} is allergic to {X}", "{P} 不能碰 {X}，会过敏"),
        asks=("{Q}对什么过敏？", "What is {Qe} allergic to?"),
    ),
    TraitKind(
        "忌口",
        ("香菜", "辣", "pork", "beef", "生食", "onion"),
        says=("{P}不吃 {X}", "{P} 是 no {X} 的", "点餐别要 {X}，{P}不吃"),
        asks=("{Q}有什么不吃的？", "Anything {Qe} doesn't eat?"),
    ),
    TraitKind(
        "饮品",
        ("oat latte", "cold brew", "flat white", "冰美式", "matcha latte", "珍珠奶茶"),
        says=("{P}每天一杯 {X}", "{P} 只喝 {X}", "{P}的 coffee order 是 {X}"),
        asks=("给{Q}带咖啡点什么？", "What should I get {Qe} from the coffee shop?"),
    ),
)

ITEMS = (
    "VPN password|VPN 密码",
    "WiFi 密码|WiFi password",
    "AWS access key|AWS 密钥",
    "SSH key|SSH 私钥",
    "API token|API 令牌",
    "门禁卡|access card",
    "recovery code|恢复码",
    "U 盘|USB drive",
)
PLACES = ("1Password", "Notion", "飞书文档", "公司 wiki", "Keychain", "抽屉", "Bitwarden", "笔记本最后一页")
STORE_SAYS = ("我把{P}的 {I} 存在 {X} 里了", "{P} 的 {I} 我放 {X} 了", "{P}的 {I} 改了，新的在 {X}")
STORE_ASKS = ("{Q}的 {I} 我存哪了？", "Where did I save {Qe}'s {I}?")
LENDABLES = (
    "MacBook 充电器|MacBook charger",
    "iPad",
    "AirPods",
    "Switch",
    "Kindle",
    "显示器|monitor",
    "HDMI 线|HDMI cable",
    "机械键盘|mechanical keyboard",
)
LEND_SAYS = ("我把 {I} 借给了{P}", "{P}借走了我的 {I}", "{I} 先借{P}用一周")
LEND_ASKS = ("{Q}借了我什么？", "What did {Qe} borrow from me?")
LEND_WHO = ("我的 {I} 借给谁了？", "Who has my {I}?")
GIFTS = (
    "AirPods Pro",
    "Kindle",
    "Starbucks 礼品卡|Starbucks gift card",
    "机械键盘|mechanical keyboard",
    "Apple Watch",
    "乐高|LEGO set",
)
BUY_SAYS = ("给{P}买了 {I}，花了 {N} 块", "{I} 是给{P}的 birthday gift，{N} 元")
BUY_ASKS = ("给{Q}买礼物花了多少？", "How much did I spend on {Qe}'s gift?")
BUY_COMPARE = ("给{Q}和{R}买的东西哪个贵？", "Which gift cost more, {Qe}'s or {Re}'s?")
DISCOUNT_SAYS = ("给{P}买了 {I}，原价 {N}，打 {M} 折", "{I} for {P}，list price {N}，{M} 折")
DISCOUNT_ASKS = ("给{Q}的礼物实际付了多少？", "How much did I actually pay for {Qe}'s gift?")

CONDITIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "build",
        ("要是 build fail 了", "如果 CI 挂了"),
        ("build 挂了的话", "if the build fails"),
        ("就 rollback 到上个版本", "hotfix 完再 deploy", "先 revert 那个 PR"),
    ),
    (
        "incident",
        ("要是 server down 了", "如果线上出 incident"),
        ("线上出问题的话", "if prod goes down"),
        ("找 oncall 顶上", "先开 war room", "1:1 改到下周"),
    ),
    (
        "demo",
        ("如果 demo delay", "要是 demo 推迟"),
        ("demo 推迟的话", "if the demo slips"),
        ("push 到下周", "改成录屏发给 client", "先 demo 老版本"),
    ),
    (
        "flight",
        ("要是 flight 取消", "如果航班 cancel"),
        ("航班取消的话", "if the flight gets cancelled"),
        ("改 Zoom 开", "改坐高铁", "改签第二天"),
    ),
    ("rain", ("要是下雨", "if it rains"), ("下雨的话", "if it rains"), ("改成 indoor 活动", "改 WFH", "直接 cancel")),
)
CONDITION_SAYS = ("跟{P}说好了，{C}就{X}", "{C}，我和{P}就{X}", "和{P} align 过：{C}就{X}")
CONDITION_ASKS = ("{C2}，我和{Q}怎么安排？", "{C2}，跟{Q}的 plan 是什么？")

COMPARE_WHEN = ("{Q}{V}和{R}{W}，哪个先？", "是{Q}{V}早，还是{R}{W}早？")
COMPARE_SELF = ("{Q}是先{V}还是先{W}？",)
AGGREGATE_EVENTS = ("{Q}接下来有哪些安排？", "What does {Qe} have coming up?", "{Q} 接下来要忙啥？")
AGGREGATE_TRAITS = ("{Q}吃东西要注意什么？", "Any food restrictions or preferences for {Qe}?")
FOOD_TRAITS = frozenset({"过敏", "忌口", "饮品"})

DURATION_SAYS = ("{P}{D}飞{X}出差，待{N}天", "{D} {P} 去 {X} business trip，{N} 天")
DURATION_ASKS = ("{Q}出差哪天回？", "When is {Qe} back from the trip?")
AGE_SAYS = ("{P}今年{N}岁", "{P} 刚过 {N} 岁生日")
AGE_ASKS = ("{Q}哪年出生的？", "What year was {Qe} born?")
COUNT_SAYS = ("帮{P}订了 {N} 箱 Red Bull，每箱 {M} 罐", "给{P}的 team 订了 {N} 箱 La Croix，一箱 {M} 罐")
COUNT_ASKS = ("帮{Q}订的饮料一共多少罐？", "How many cans did I order for {Qe}?")
ALLERGY_GIFTS: dict[str, tuple[str, ...]] = {
    "peanuts": ("Snickers", "宫保鸡丁"),
    "shellfish": ("龙虾 roll", "虾饺"),
    "gluten": ("bagel", "croissant"),
    "芒果": ("mango sago", "杨枝甘露"),
    "牛奶": ("cheesecake", "奶茶"),
}
ALLERGY_ASKS = ("给{Q}带 {X} 当 snack 可以吗？", "Is {X} OK as a treat for {Qe}?")
WEEKDAY_ASKS = ("{Q}{V}那天是星期几？", "{Q}{V}是周几？")

CHATTER = (
    "今天 standup 又 overtime 了",
    "coffee 续命中",
    "又在改 bug",
    "PR 终于 merge 了",
    "今天 WFH",
    "老板说这周要 ship",
    "laptop 风扇好吵",
    "午饭点了 Subway",
    "好累，想 take a day off",
    "Slack 消息太多了",
    "今天 gym 练腿",
    "在看 Netflix 新剧",
    "code freeze 前好忙",
    "周报 draft 写完了",
    "test 又 flaky 了",
    *ZH_CHATTER[:15],
)
CHATTER_ABOUT = (
    "{P} 请我喝了 coffee",
    "和{P}聊了会儿 career",
    "{P} 又在 Slack 上 @ 我",
    "{P} 今天 WFH",
    "{P} 推荐了一个 podcast",
    "{P}今天又迟到了",
)
NOISE_BEFORE = ("ugh 今天 meeting 太多了，", "lol 刚才笑死，", "btw 先记一下，", "差点忘了，", "刚开完 all-hands，")
NOISE_AFTER = ("，好累先下了", "，晚上吃啥", "，anyway 先这样", "，Slack 又响了", "，明天还要早起")
NOISY_QUESTION = ("btw，{S}", "{S} 我忘了", "quick question，{S}", "哎，{S}")

MIXED = Vocab(
    relations=RELATIONS,
    relations_en=RELATIONS_EN,
    female_only=frozenset(),
    male_only=frozenset(),
    children=frozenset(),
    names=(NAMES_MALE, NAMES_FEMALE),
    kids=(NAMES_MALE, NAMES_FEMALE),
    events=EVENTS,
    days=DAYS,
    times=TIMES,
    follow_ups=FOLLOW_UPS,
    ask_time=ASK_TIME,
    traits=TRAITS,
    items=ITEMS,
    places=PLACES,
    store_says=STORE_SAYS,
    store_asks=STORE_ASKS,
    lendables=LENDABLES,
    lend_says=LEND_SAYS,
    lend_asks=LEND_ASKS,
    lend_who=LEND_WHO,
    gifts=GIFTS,
    buy_says=BUY_SAYS,
    buy_asks=BUY_ASKS,
    buy_compare=BUY_COMPARE,
    discount_says=DISCOUNT_SAYS,
    discount_asks=DISCOUNT_ASKS,
    conditions=CONDITIONS,
    condition_says=CONDITION_SAYS,
    condition_asks=CONDITION_ASKS,
    compare_when=COMPARE_WHEN,
    compare_self=COMPARE_SELF,
    aggregate_events=AGGREGATE_EVENTS,
    aggregate_traits=AGGREGATE_TRAITS,
    food_traits=FOOD_TRAITS,
    duration_says=DURATION_SAYS,
    duration_asks=DURATION_ASKS,
    age_says=AGE_SAYS,
    age_asks=AGE_ASKS,
    count_says=COUNT_SAYS,
    count_asks=COUNT_ASKS,
    allergy_gifts=ALLERGY_GIFTS,
    allergy_asks=ALLERGY_ASKS,
    weekday_asks=WEEKDAY_ASKS,
    chatter=CHATTER,
    chatter_about=CHATTER_ABOUT,
    noise_before=NOISE_BEFORE,
    noise_after=NOISE_AFTER,
    noisy_question=NOISY_QUESTION,
)

"""Word lists and sentence templates of the Chinese personal-assistant benchmark (``zhgen``).

Everything here is written for this benchmark; no outside text. Templates use slots:
``{P}`` a person as said in a message (``同事张伟``), ``{Q}`` the same person as said in
a question, ``{D}`` a day (``下周六``), ``{X}`` the event's place or object, ``{T}`` a
time of day, ``{H}`` the pronoun (他/她), ``{N}``/``{M}`` numbers, ``{I}`` an item.
Message and question templates of one fact use different words on purpose, so that
finding the fact takes more than copying the question's keywords.
"""

from __future__ import annotations

from benchmarks.zhworld import EventKind, TraitKind, Vocab

RELATIONS: dict[str, tuple[str, ...]] = {
    "同事": ("同事", "公司同事", "办公室的同事", "我们组的同事"),
    "领导": ("领导", "部门领导", "主管", "我们老板"),
    "朋友": ("朋友", "好朋友", "老朋友", "一个朋友"),
    "同学": ("同学", "大学同学", "高中同学", "老同学"),
    "室友": ("室友", "老室友", "合租的室友"),
    "邻居": ("邻居", "对门邻居", "楼上的邻居"),
    "表哥": ("表哥",),
    "表妹": ("表妹",),
    "姐姐": ("姐姐", "亲姐"),
    "弟弟": ("弟弟", "亲弟弟"),
    "客户": ("客户", "合作方", "一个客户"),
    "闺蜜": ("闺蜜",),
    "发小": ("发小", "从小一起长大的"),
    "师傅": ("师傅", "带我的师傅"),
    "老婆": ("老婆", "媳妇", "爱人"),
    "老公": ("老公", "爱人"),
    "女儿": ("女儿", "闺女"),
    "儿子": ("儿子",),
}
"""Canonical relation → the words a message or question may use for it."""

RELATIONS_EN: dict[str, tuple[str, ...]] = {}
FEMALE_ONLY = frozenset({"表妹", "姐姐", "闺蜜", "老婆", "女儿"})
MALE_ONLY = frozenset({"表哥", "弟弟", "老公", "儿子"})
CHILDREN = frozenset({"女儿", "儿子"})

NAMES_MALE = ("张伟", "王磊", "刘洋", "陈杰", "杨帆", "赵鹏", "周浩", "吴斌", "孙宇", "马超")
NAMES_FEMALE = ("王芳", "李娜", "陈静", "刘婷", "杨雪", "赵敏", "黄丽", "周琳", "林晓", "徐蕾")
KIDS_MALE = ("豆豆", "乐乐", "皮皮", "小宝", "壮壮")
KIDS_FEMALE = ("朵朵", "甜甜", "妞妞", "果果", "糖糖")

CITIES = ("北京", "上海", "杭州", "深圳", "广州", "成都", "南京", "武汉", "西安", "苏州")
RESTAURANTS = (
    "海底捞",
    "西贝",
    "外婆家",
    "绿茶餐厅",
    "太二酸菜鱼",
    "眉州东坡",
    "南京大牌档",
    "全聚德",
    "鼎泰丰",
    "小龙坎",
)
CINEMAS = ("万达影城", "CGV影城", "耀莱影城", "博纳影城", "百老汇影城")
MOUNTAINS = ("香山", "八达岭", "莫干山", "黄山", "泰山", "梧桐山", "白云山", "青城山")
COMPANIES = ("腾讯", "阿里", "字节跳动", "美团", "京东", "华为", "小米", "网易")
HOSPITALS = ("协和医院", "人民医院", "中医院", "妇幼保健院", "市一医院", "爱康国宾")
SINGERS = ("周杰伦", "五月天", "陈奕迅", "林俊杰", "薛之谦", "邓紫棋", "张学友", "李健")
DISTRICTS = ("望京", "徐汇", "滨江", "南山", "天河", "高新区", "江宁", "光谷", "雁塔", "园区")
VENUES = ("体育中心", "奥体中心", "区文化馆的球馆", "公司楼下的球馆", "大学城体育馆")
MUSEUMS = ("国家博物馆", "美术馆", "科技馆", "自然博物馆", "艺术中心")
SCHOOLS = ("实验小学", "第一小学", "外国语学校", "育才小学", "阳光幼儿园")

EVENTS: tuple[EventKind, ...] = (
    EventKind(
        "出差",
        CITIES,
        says=(
            "{P}{D}要去{X}出差",
            "{D}跟{P}一起去{X}出差，得早点订票",
            "记一下：{P}{D}去{X}出公差",
            "{P}被派去{X}跑项目，{D}走",
            "{D}{P}飞{X}，公司的事",
        ),
        ask_place=("{Q}出差去哪个城市来着？", "{Q}这趟出差是去哪儿？", "{Q}要去哪边出差？"),
        ask_when=("{Q}什么时候去{X}出差？", "{Q}哪天动身去{X}？"),
        verb="出差",
        not_for=CHILDREN,
        ask_who=("谁要去{X}出差来着？", "是谁说要去{X}出差？"),
    ),
    EventKind(
        "聚餐",
        RESTAURANTS,
        says=(
            "{D}约了{P}在{X}吃饭",
            "{P}请客，{D}去{X}",
            "{D}晚上和{P}去{X}撮一顿",
            "跟{P}说好了{D}去{X}聚一聚",
            "{D}和{P}的饭局定在{X}",
        ),
        ask_place=("我跟{Q}约在哪家店吃饭？", "和{Q}吃饭的地方定的哪儿？", "{Q}那顿饭去哪吃？"),
        ask_when=("我和{Q}什么时候去{X}吃饭？", "跟{Q}约的{X}是哪天？"),
        verb="吃饭",
        ask_who=("我跟谁约了在{X}吃饭？", "去{X}吃饭是和谁？"),
    ),
    EventKind(
        "婚礼",
        CITIES,
        says=(
            "{P}{D}结婚，婚礼在{X}办",
            "{D}要去{X}喝{P}的喜酒",
            "{P}的婚宴定在{D}，地点在{X}",
            "收到{P}的请帖了，{D}在{X}办酒",
        ),
        ask_place=("{Q}的婚礼在哪个城市办？", "去参加{Q}婚礼要去哪里？"),
        ask_when=("{Q}什么时候办婚礼？", "{Q}在{X}的喜酒是哪天？"),
        verb="结婚",
        not_for=CHILDREN | {"老婆", "老公"},
        ask_who=("谁的婚礼在{X}办？", "要去{X}喝谁的喜酒？"),
    ),
    EventKind(
        "生日",
        RESTAURANTS,
        says=(
            "{D}是{P}生日，打算在{X}给{H}过",
            "{P}{D}过生日，订了{X}",
            "{D}给{P}庆生，地方选的{X}",
        ),
        ask_place=("给{Q}过生日的地方订在哪？", "{Q}的生日聚会在哪家店？"),
        ask_when=("{Q}的生日聚会是哪天？", "哪天给{Q}庆祝生日？"),
        verb="过生日",
    ),
    EventKind(
        "看电影",
        CINEMAS,
        says=(
            "{D}和{P}去{X}看电影",
            "买好了{D}的电影票，跟{P}去{X}",
            "{P}约我{D}去{X}看新片",
        ),
        ask_place=("我跟{Q}去哪个影院看片？", "和{Q}看电影是在哪家电影院？"),
        ask_when=("我跟{Q}哪天去看电影？", "和{Q}去{X}是什么时候？"),
        verb="看电影",
        ask_who=("我要跟谁去{X}看电影？",),
    ),
    EventKind(
        "爬山",
        MOUNTAINS,
        says=(
            "{D}跟{P}去爬{X}",
            "{P}约我{D}一起登{X}",
            "{D}和{P}去{X}徒步",
        ),
        ask_place=("我和{Q}去爬哪座山？", "{Q}约的爬山是去哪儿？"),
        ask_when=("和{Q}爬{X}是哪天？", "{Q}约我什么时候去{X}？"),
        verb="爬山",
        ask_who=("跟谁约了去爬{X}？", "谁约我去{X}？"),
    ),
    EventKind(
        "面试",
        COMPANIES,
        says=(
            "{P}{D}去{X}面试",
            "{P}{D}有个{X}的面试，挺紧张的",
            "{P}拿到了{X}的面试机会，约在{D}",
        ),
        ask_place=("{Q}去哪家公司面试？", "{Q}面的是哪家？"),
        ask_when=("{Q}去{X}面试是什么时候？", "{Q}哪天面{X}？"),
        verb="面试",
        not_for=CHILDREN,
        ask_who=("谁要去{X}面试？", "是谁拿到了{X}的面试？"),
    ),
    EventKind(
        "体检",
        HOSPITALS,
        says=(
            "{D}带{P}去{X}体检",
            "给{P}约了{D}在{X}做体检",
            "{P}{D}要去{X}查身体，空腹去",
        ),
        ask_place=("{Q}在哪家医院做检查？", "给{Q}约的体检是哪家？"),
        ask_when=("{Q}去{X}做检查是哪天？", "{Q}的体检约的什么时候？"),
        verb="体检",
        ask_who=("谁要去{X}做体检？",),
    ),
    EventKind(
        "演唱会",
        SINGERS,
        says=(
            "{D}和{P}去看{X}的演唱会",
            "{P}抢到了{X}演唱会的票，{D}一起去",
            "{D}陪{P}去听{X}",
        ),
        ask_place=("我跟{Q}去看谁的演唱会？", "{Q}抢的是哪个歌手的票？"),
        ask_when=("和{Q}看{X}是哪天？", "{X}那场演唱会我和{Q}什么时候去？"),
        verb="看演唱会",
        ask_who=("我跟谁去看{X}？", "和谁一起去听{X}的演唱会？"),
    ),
    EventKind(
        "搬家",
        DISTRICTS,
        says=(
            "{P}{D}搬家，新房子在{X}",
            "{D}去帮{P}搬家，搬到{X}那边",
            "{P}在{X}租了新房，{D}搬过去",
        ),
        ask_place=("{Q}搬到哪儿去了？", "{Q}的新家在哪一片？"),
        ask_when=("{Q}哪天搬去{X}？", "帮{Q}搬家是什么时候？"),
        verb="搬家",
        not_for=CHILDREN | {"老婆", "老公"},
        ask_who=("谁搬去{X}了？", "谁的新家在{X}？"),
    ),
    EventKind(
        "打球",
        VENUES,
        says=(
            "{D}和{P}去{X}打羽毛球",
            "{P}订了{X}的场地，{D}打球",
            "{D}跟{P}约了{X}打两小时球",
        ),
        ask_place=("我和{Q}在哪儿打球？", "{Q}订的场地是哪个球馆？"),
        ask_when=("跟{Q}去{X}打球是哪天？", "和{Q}约的球什么时候打？"),
        verb="打球",
    ),
    EventKind(
        "看展",
        MUSEUMS,
        says=(
            "{D}陪{P}去{X}看展",
            "{P}想去{X}看新展览，约了{D}",
            "{D}和{P}逛{X}",
        ),
        ask_place=("我陪{Q}去哪儿看展？", "{Q}想看的展在哪个馆？"),
        ask_when=("和{Q}去{X}是哪天？", "陪{Q}看展约的什么时候？"),
        verb="看展",
    ),
)

DAYS: dict[str, tuple[str, ...]] = {
    "明天": ("明天",),
    "后天": ("后天",),
    "下周五": ("下周五", "下礼拜五", "下星期五"),
    "下周六": ("下周六", "下个周六", "下礼拜六", "下星期六"),
    "下周日": ("下周日", "下周天", "下礼拜天", "下星期日"),
    "下周三": ("下周三", "下礼拜三", "下星期三"),
}
"""Relative days a message may name, each in several surface forms (the date is absolute in the answer)."""

TIMES = ("早上八点", "上午九点半", "上午十点", "中午十二点", "下午两点", "下午三点半", "晚上六点", "晚上七点半")

FOLLOW_UPS = (
    "对了，{H}说{T}碰头",
    "{H}刚发消息说改到{T}了",
    "时间定了，{T}，别迟到",
    "{H}让我{T}到，提前一点",
)
ASK_TIME = ("我和{Q}{V}约的几点？", "{Q}{V}那天几点见？", "跟{Q}{V}是几点钟？")

TRAITS: tuple[TraitKind, ...] = (
    TraitKind(
        "职业",
        ("程序员", "护士", "律师", "会计", "中学老师", "设计师", "销售", "牙医", "厨师", "记者"),
        says=("{P}是做{X}的", "{P}现在当{X}", "听说{P}转行做{X}了"),
        asks=("{Q}是干什么工作的？", "{Q}在哪一行？"),
        adults_only=True,
    ),
    TraitKind(
        "老家",
        ("山东", "四川", "湖南", "东北", "河南", "福建", "广西", "江西", "山西", "云南"),
        says=("{P}老家是{X}的", "{P}是{X}人", "{P}过年要回{X}老家"),
        asks=("{Q}是哪里人？", "{Q}老家在哪？"),
    ),
    TraitKind(
        "过敏",
        ("芒果", "花生", "海鲜", "牛奶", "鸡蛋", "猫毛", "花粉", "青霉素"),
        says=("{P}对{X}过敏", "{P}不能碰{X}，会过敏", "{P}一碰{X}就起疹子"),
        asks=("{Q}对什么过敏？", "{Q}有什么过敏的东西？"),
    ),
    TraitKind(
        "忌口",
        ("香菜", "辣椒", "葱", "肥肉", "内脏", "苦瓜", "羊肉", "榴莲"),
        says=("{P}不吃{X}", "{P}最讨厌{X}了", "点菜别放{X}，{P}不吃"),
        asks=("{Q}有什么不吃的？", "给{Q}点菜要注意什么？"),
    ),
    TraitKind(
        "饮品",
        ("美式咖啡", "拿铁", "乌龙茶", "珍珠奶茶", "酸梅汤", "椰汁", "柠檬水", "豆浆"),
        says=("{P}最爱喝{X}", "{P}每天都要来一杯{X}", "{P}只喝{X}"),
        asks=("给{Q}带喝的买什么好？", "{Q}平时喝什么？"),
    ),
    TraitKind(
        "爱好",
        ("钓鱼", "滑雪", "摄影", "练书法", "打网球", "弹吉他", "做烘焙", "玩桌游"),
        says=("{P}最近迷上了{X}", "{P}周末都在{X}", "{P}的爱好是{X}"),
        asks=("{Q}业余时间喜欢干嘛？", "{Q}有什么爱好？"),
    ),
    TraitKind(
        "座驾",
        ("特斯拉", "比亚迪", "丰田凯美瑞", "大众帕萨特", "本田雅阁", "蔚来", "宝马三系", "理想"),
        says=("{P}开的是{X}", "{P}刚提了一辆{X}", "{P}换车了，换成{X}"),
        asks=("{Q}开什么车？", "{Q}的车是什么牌子？"),
        adults_only=True,
    ),
)

ITEMS = ("护照", "身份证", "备用钥匙", "户口本", "充电器", "保修卡", "体检报告", "银行卡", "合同", "相机")
PLACES = ("书房抽屉", "衣柜最上层", "床头柜", "玄关鞋柜", "车里的手套箱", "办公室柜子", "电视柜下面", "行李箱夹层")
STORE_SAYS = ("我把{P}的{I}放在{X}了", "{P}的{I}收在{X}", "{P}的{I}我塞{X}里了")
STORE_ASKS = ("{Q}的{I}我放哪了？", "{Q}的{I}收哪儿去了？")

LENDABLES = ("充电宝", "自行车", "帐篷", "投影仪", "电钻", "单反", "行李箱", "《三体》", "吸尘器", "吉他")
LEND_SAYS = ("我把{I}借给了{P}", "{P}借走了我的{I}", "{I}先借{P}用几天")
LEND_ASKS = ("{Q}从我这儿借了什么？", "我借给{Q}什么东西了？")
LEND_WHO = ("我的{I}借给谁了？", "谁借走了我的{I}来着？")

GIFTS = ("一条围巾", "一块手表", "一个保温杯", "一双运动鞋", "一个蓝牙音箱", "一套茶具", "一个包", "一台按摩仪")
BUY_SAYS = ("给{P}买了{I}，花了{N}块", "{I}是给{P}买的，{N}元", "给{P}挑了{I}，{N}块钱")
BUY_ASKS = ("给{Q}买的礼物花了多少钱？", "我给{Q}买东西花了多少？")
BUY_COMPARE = ("我给{Q}买的和给{R}买的，哪个更贵？", "给{Q}和给{R}买的礼物，哪份花得多？")
DISCOUNT_SAYS = ("给{P}买了{I}，原价{N}，打{M}折", "{I}给{P}的，标价{N}，{M}折入手")
DISCOUNT_ASKS = ("给{Q}买的东西实际付了多少？", "给{Q}那份礼物最后花了多少钱？")

CONDITIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "下雨",
        ("要是下雨", "如果下雨", "万一下雨"),
        ("下雨的话", "碰上下雨"),
        ("改成去看电影", "就在家吃火锅", "改去商场逛逛", "改天再约"),
    ),
    (
        "加班",
        ("要是我加班", "如果临时加班", "万一要加班"),
        ("我要是加班", "加班的话"),
        ("改成视频聊", "改到周末", "晚两个小时再碰头"),
    ),
    (
        "堵车",
        ("要是堵车", "如果路上堵", "万一堵车"),
        ("堵车的话", "路上堵的话"),
        ("改坐地铁", "直接在门口碰头", "往后推一小时"),
    ),
    (
        "没票",
        ("要是没抢到票", "如果票卖完了", "万一买不到票"),
        ("买不到票的话", "票没了的话"),
        ("改看下一场", "换成去看话剧", "在家看直播"),
    ),
    (
        "生病",
        ("要是孩子发烧", "如果孩子生病", "万一孩子不舒服"),
        ("孩子病了的话", "孩子要是发烧"),
        ("直接取消", "改到下个月", "请老人帮忙带孩子"),
    ),
    (
        "降温",
        ("要是降温", "如果突然变冷", "万一大降温"),
        ("天冷了的话", "降温的话"),
        ("换个室内的地方", "改成去泡温泉", "改去吃涮羊肉"),
    ),
)
CONDITION_SAYS = ("跟{P}说好了，{C}就{X}", "{C}，我和{P}就{X}", "和{P}商量过：{C}就{X}")
CONDITION_ASKS = ("{C2}，我和{Q}打算怎么办？", "{C2}，跟{Q}的安排怎么改？", "我跟{Q}说的，{C2}怎么弄？")

COMPARE_WHEN = ("{Q}{V}和{R}{W}，哪个在前？", "是{Q}{V}早，还是{R}{W}早？", "{Q}{V}跟{R}{W}，哪个日子更早？")
COMPARE_SELF = ("{Q}是先{V}还是先{W}？", "{Q}{V}和{W}哪个在前？")
AGGREGATE_EVENTS = ("{Q}接下来都有哪些安排？", "我记过{Q}的哪些计划？", "{Q}接下来要忙哪些事？")
AGGREGATE_TRAITS = ("关于{Q}的饮食，我该注意哪些？", "{Q}吃东西有哪些讲究？")
FOOD_TRAITS = frozenset({"过敏", "忌口", "饮品"})

DURATION_SAYS = ("{P}{D}去{X}出差，要待{N}天", "{D}{P}去{X}，出差{N}天")
DURATION_ASKS = ("{Q}出差哪天能回来？", "{Q}那趟出差回来是几号？")
AGE_SAYS = ("{P}今年{N}岁了", "{P}都{N}岁了，时间真快")
AGE_ASKS = ("{Q}是哪一年出生的？", "{Q}属于几零后？")
COUNT_SAYS = ("帮{P}订了{N}箱矿泉水，每箱{M}瓶", "给{P}家里买了{N}箱饮料，一箱{M}瓶")
COUNT_ASKS = ("帮{Q}订的那些水加起来多少瓶？", "给{Q}买的喝的总共几瓶？")
ALLERGY_GIFTS: dict[str, tuple[str, ...]] = {
    "芒果": ("杨枝甘露", "芒果班戟"),
    "花生": ("宫保鸡丁", "花生酥"),
    "海鲜": ("蟹黄包", "虾饺"),
    "牛奶": ("奶茶", "芝士蛋糕"),
    "鸡蛋": ("蛋挞", "戚风蛋糕"),
}
ALLERGY_ASKS = ("给{Q}带{X}当伴手礼合适吗？", "请{Q}吃{X}行不行？")
WEEKDAY_ASKS = ("{Q}{V}那天是星期几？", "{Q}{V}是周几来着？")

CHATTER = (
    "今天好累啊",
    "地铁又挤爆了",
    "中午吃了黄焖鸡米饭",
    "下午开了三个会，头都大了",
    "晚上想吃火锅",
    "今天跑了五公里",
    "外面下雨了，没带伞",
    "刚交了房租",
    "天气终于暖和了",
    "困死了，昨晚没睡好",
    "又胖了两斤",
    "快递到了，晚点去拿",
    "老板今天心情不错",
    "电脑又卡了",
    "周报还没写",
    "买了杯咖啡续命",
    "今天的晚霞好好看",
    "楼下新开了家面馆",
    "手机快没电了",
    "健身房办了张卡",
    "最近在追一部剧",
    "猫把花盆打翻了",
    "记得交水电费",
    "明早要早起",
    "今天加了会儿班",
    "外卖又送晚了",
    "空调好像坏了",
    "最近睡得太晚了",
    "路上堵了半小时",
    "午休被电话吵醒",
)
CHATTER_ABOUT = (
    "{P}今天请我喝了奶茶",
    "和{P}聊了会儿天",
    "{P}发了好多朋友圈",
    "{P}又迟到了",
    "{P}推荐了一部电视剧",
    "给{P}回了个电话",
    "{P}问我周报的事",
    "{P}最近心情不太好",
)
NOISE_BEFORE = (
    "唉今天真是忙晕了，",
    "哈哈刚才笑死我了，",
    "先说个正事，",
    "哎呀差点忘了，",
    "吃完饭躺着刷手机，突然想起来，",
)
NOISE_AFTER = (
    "，晚上吃啥还没想好",
    "，好了我去洗澡了",
    "，最近事情太多了",
    "，手机要没电了先这样",
    "，对了今天天气不错",
)
NOISY_QUESTION = ("哎我这记性，{S}", "问你个事，{S}", "一直在想，{S}", "{S}我有点想不起来了")

ZH = Vocab(
    relations=RELATIONS,
    relations_en=RELATIONS_EN,
    female_only=FEMALE_ONLY,
    male_only=MALE_ONLY,
    children=CHILDREN,
    names=(NAMES_MALE, NAMES_FEMALE),
    kids=(KIDS_MALE, KIDS_FEMALE),
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

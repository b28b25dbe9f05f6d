"""Texts about unrelated everyday things: what "no match" looks like to an embedder (``memory.calibration``).

Short ones stand for chat messages; long ones, several paragraphs each, for the long answers
of an assistant. A long text's vector is the mean of many tokens' states (and, past one window
of the model, of several windows' means): it lies nearer the middle of the space than a
sentence's, so any query, noise included, sits closer to it. Each length gets its own
background. Changing any text here measures the reference again (its file's name hashes them).
"""

from __future__ import annotations

UNRELATED = (
    "The train to the airport leaves every twenty minutes.",
    "She painted the kitchen a pale shade of green last spring.",
    "Our team lost the basketball game by three points.",
    "How much flour goes into a loaf of sourdough bread?",
    "The invoice is due at the end of the month.",
    "My grandfather grew tomatoes and beans in his garden.",
    "The server restarts automatically after a kernel update.",
    "We watched a documentary about deep sea creatures.",
    "明天上午十点在三楼会议室开周会。",
    "这家火锅店的毛肚特别新鲜。",
    "孩子的钢琴课改到周六下午了。",
    "我把旧自行车卖给了楼下的邻居。",
    "今年冬天北京下了好几场大雪。",
    "请把报销单据在周五前交给财务。",
    "他最近在学做意大利面。",
    "手机屏幕摔碎了，得去换一块。",
)
"""Eight English and eight Chinese sentences (Latin half first)."""

UNRELATED_LONG = (
    """We spent the first week of August driving a loop through the Scottish Highlands, and the trip went better than the rain forecast suggested. From Inverness we followed the road along the shore of Loch Ness, stopping at a small village where the bakery sold oat cakes still warm from the oven. The children wanted to see the castle ruins, so we walked down the hill in the late afternoon when most of the coach tours had already left. The stones were wet and slippery, and my son kept asking whether anyone had really lived there in winter.

The second day took us west towards Skye. The bridge is less dramatic than the old ferry must have been, but the view from the middle is worth slowing down for. We stayed in a cottage near Portree with a wood stove and a kitchen window that looked straight at the harbour. Every evening the fishing boats came in around seven, and the gulls followed them so closely that my daughter started counting them. We cooked simple meals: smoked salmon, new potatoes, and a lot of bread from the shop on the square.

Walking on Skye is serious even in summer. We chose the shorter routes, the Fairy Pools and the coastal path below the Old Man of Storr, and still came back soaked twice. Good boots and a spare pair of socks in a plastic bag mattered more than any other piece of equipment. The light changes every few minutes there; a grey sky turns silver, then blue, then grey again before you have found your camera.

On the way back we drove through Glencoe, which my wife had wanted to see since she read about its history as a teenager. We stopped at the visitor centre, read about the massacre, and then sat quietly in the car for a while before going on. The last night we spent in a guest house in Pitlochry, where the owner showed us the salmon ladder by the dam and recommended a walk along the river the next morning. We will go back, but next time in June, when the days are longer and the midges are fewer.""",
    """Looking after a vegetable garden through the whole year is mostly about timing. In early spring, before anything is planted, the beds need to be cleared of the old stems and weeds, and a layer of compost spread over the soil. I turn it in lightly with a fork rather than digging deep, because the worms do most of the work if you leave them alone. Peas and broad beans can go in as soon as the ground is no longer frozen; they like the cold and will climb quickly once the days warm up.

Tomatoes, peppers and courgettes are started indoors on a sunny windowsill about eight weeks before the last frost. The seedlings grow leggy if the light is weak, so I turn the trays every day and move them outside for a few hours on mild afternoons to harden them off. Planting them out too early is the most common mistake: one cold night can stop them for weeks. I wait until the nights stay above ten degrees.

Summer is watering and picking. A deep soak twice a week is better than a little every evening, because it sends the roots down instead of keeping them near the surface. Mulching with straw keeps the soil moist and the weeds down. Courgettes must be picked small and often, or a single plant will give you marrows the size of a forearm. Beans too: the more you pick, the more the plant produces. Slugs are the main enemy in a wet summer, and a torch walk after dark to collect them works better than anything you can buy.

In autumn the garden slows down. The last tomatoes can ripen on a windowsill wrapped in newspaper. Garlic and onion sets go in for next year, and the empty beds get a green manure such as clover or winter rye, which is dug in the following spring. Winter is for planning: looking at what grew well, ordering seeds, and repairing the tools and the fence before the cycle starts again.""",
    """The harbour town of Kelmoor grew up around its fishing fleet, and for most of its history almost every family had someone at sea. In the early nineteenth century the boats were small open vessels rowed and sailed by crews of four or five, going out before dawn for herring and coming back in the afternoon to sell the catch on the quay. Women gutted and salted the fish in long wooden troughs, and barrels were shipped along the coast to the cities.

The arrival of the railway in the 1870s changed everything. Fresh fish could now reach the markets inland within a day, and the town built a new stone pier, an ice house and a row of curing sheds. The population doubled in twenty years. Steam drifters replaced the sailing boats around the turn of the century, bigger and faster but expensive, and many fishermen went into debt to buy shares in them. A storm in 1894 sank three boats and drowned eleven men, and a memorial by the lifeboat station still lists their names.

The herring shoals declined after the First World War, and the fleet turned to white fish, cod and haddock, caught further out in deeper water. The town's fortunes rose and fell with the quotas set far away. By the 1970s there were only a dozen boats left, and the curing sheds had become warehouses or stood empty.

Today Kelmoor lives mainly from visitors. The old ice house is a museum where children can try on oilskins and hear recordings of the last fishermen describing their work. Two boats still land crab and lobster, and the restaurant on the pier buys most of what they catch. Every summer the town holds a festival with a procession of decorated boats, and older residents say it is the only day the harbour looks the way it did when they were young.""",
    """The Riverside amateur football club finished its season in fourth place, one position higher than last year and only three points behind the team that won promotion. The season started badly, with two defeats and a draw in the first three matches, mostly because half of the regular squad was still on holiday and the new goalkeeper had not yet trained with the defence. After a team meeting in September the coach changed the formation to three at the back, and the results improved almost at once.

The best run came in October and November, when the team went eight matches without losing. Our captain scored in five of them, including a long-range shot against the league leaders that people were still talking about at the Christmas dinner. The younger players gained confidence, and two of them from the under-eighteen side became regular starters by the end of the year.

Injuries were the main problem in the second half of the season. We lost both central midfielders for a month, one with an ankle sprain and one with a broken wrist from a fall at work, and the squad was too thin to cover for them. The cup run ended in the quarter final after extra time, and the league form dipped with three defeats in a row in February. The pitch at the park was waterlogged for most of January, so several home matches were postponed and played in a crowded April.

For next season the committee wants to recruit at least four new players, find a second pitch for training on Tuesday evenings and raise money for new kits through a sponsored walk in the spring. Membership fees stay the same. The annual general meeting is in June, and everyone who played or helped this year is invited to come, vote on the new committee and share ideas.""",
    """去年十月我们一家三口去了云南，从昆明出发，一路到大理和丽江，前后一共九天。

第一天在昆明只是休息，去翠湖边走了走，看了看刚飞来的红嘴鸥，晚上吃了一碗过桥米线，汤很烫，孩子吃得满头大汗。第二天上午去了云南省博物馆，青铜器和贝币让孩子很感兴趣，讲解员说古滇国的人用海贝当钱，他一路都在问海贝是从哪里来的。

第三天坐高铁到大理，住在古城附近的一家民宿，老板是本地白族人，特别热情，给我们推荐了好几家小馆子，酸辣鱼和乳扇都很好吃。我们租了电动车沿着洱海骑了半圈，风很大，但是湖水蓝得让人不想回去。路过一个小村子，正好赶上有人在晒扎染的布，孩子蹲在旁边看了很久，还自己动手染了一块手帕。傍晚在双廊看日落，天边的云一会儿是金色，一会儿变成粉红色，大家都安静下来了。

到了丽江以后天气转凉，早晚要穿外套。我们去了玉龙雪山，坐索道上去的时候有点高原反应，头有些晕，只在上面待了二十分钟就下来了。束河古镇比大研古镇安静一些，街边有小溪流过，晚上在院子里喝茶聊天，很舒服。还去看了一场纳西古乐的演出，老艺人们年纪都很大了，演奏得却非常认真。

最后两天回到昆明，去了石林，石头的形状千奇百怪，导游给每一块都编了故事。走之前在花市买了些鲜花饼和普洱茶带回家送给亲戚，还给孩子买了一个手鼓，回来以后他每天都要敲一会儿。

这次旅行最大的体会是行程不要排得太满，留出时间慢慢走，比赶景点有意思得多。另外云南紫外线很强，防晒霜和帽子一定要带。下次想在春天去一次西双版纳，看看热带雨林和泼水节。""",
    """红烧肉是我家过年必做的一道菜，做了十几年，总结了一些经验，写下来给想学的朋友参考。

选肉最重要。最好选带皮的五花肉，肥瘦相间，三层分明，太瘦的肉炖出来发柴，太肥的又腻。买回来以后先检查猪皮上有没有残留的猪毛，可以用火燎一下再刮干净。

处理的时候先把肉切成大约三厘米见方的块，块太小炖久了会散。冷水下锅，加几片姜和一点料酒焯水，水开后撇去浮沫，再煮两三分钟捞出，用温水冲洗干净，沥干水分。这一步能去掉大部分腥味。

炒糖色是关键。锅里放少许油和冰糖，小火慢慢炒，等糖化开变成枣红色、冒小泡的时候马上把肉倒进去翻炒，让每一块都裹上颜色。火太大糖会发苦，宁可慢一点；颜色太浅也没关系，后面还可以用老抽补。不会炒糖色的话，也可以先把肉煸出油，再加冰糖一起炒，成功率更高。

然后加入葱段、姜片、八角、香叶和一小块桂皮，沿锅边淋一点料酒，倒入生抽和一点老抽上色，再加开水没过肉。千万不要加冷水，否则肉会发紧，不容易炖烂。大火烧开后转小火，盖上锅盖炖一个小时左右，中间翻动一两次，防止粘锅。用砂锅炖味道更好，但要注意火不能太大。

最后开大火收汁，一边收一边翻动，汤汁变得浓稠发亮、能挂在肉上就可以出锅了，收汁的时候人不要走开，几分钟就可能糊。有人喜欢在最后加几个煮好的鸡蛋或者一把泡发的干豆角，一起吸收汤汁，也很好吃。

剩下的红烧肉第二天热一热，味道反而更好。如果一次做得多，可以分装冷冻，吃的时候加一点水重新加热就行。""",
    """本年度业主委员会共召开了十二次例会和两次业主大会，现将主要工作总结如下。

第一，完成了小区电梯的更换工作。三号楼和五号楼的电梯使用超过十五年，故障频繁，去年一年报修了二十多次。经过业主投票，超过三分之二的业主同意动用维修基金进行更换。委员会比较了三家厂商的方案，最终选定的电梯在五月安装完毕，目前运行平稳，没有再出现困人的情况。

第二，重新选聘了物业公司。原物业合同到期后，委员会组织了公开招标，有四家公司参加。我们请了两位有经验的业主一起评审，重点看保洁、安保和维修响应时间，最终由业主代表投票选出了现在的物业。服务费标准保持不变，但增加了夜间巡逻和垃圾分类指导，门岗也改成了二十四小时有人值守。

第三，改造了小区停车位。通过重新划线和利用部分绿化带边角，新增了三十个车位，并安装了十二个充电桩，缓解了停车难的问题。车位采用先登记后抽签的方式分配，结果在公告栏和业主群里都做了公示。

第四，组织了多次社区活动，包括春节联欢、端午包粽子、中秋赏月和儿童暑期手工课，参加的业主比往年多了不少。很多新搬来的住户通过这些活动认识了邻居，也有热心业主主动报名当志愿者。

当然，工作中也存在不足。部分业主反映信息公开不够及时，维修基金的使用明细公布得比较晚；二号楼地下室的渗水问题拖了很久才开始处理；绿化的养护也有业主提出意见。

明年我们计划建立业主公众号，每月公布收支情况，推进外墙防水和地下室排水的维修工作，并对小区的监控设备进行升级。欢迎大家多提意见，也欢迎更多业主参与到委员会的工作中来。""",
    """我从三十五岁开始学钢琴，到现在刚好三年，想把这段时间的体会写下来，也许对同样想学琴的成年人有点帮助。

刚开始的时候最难的是手指不听话。左右手分开弹都还可以，一合起来就乱了，经常是右手弹对了左手忘了，左手跟上了右手又停下来。老师让我每天先练十五分钟音阶和哈农，再练曲子，虽然枯燥，但是半年以后明显感觉手指独立了很多，小拇指也比以前有力了。

第二个难关是看谱。小时候没有学过乐理，一开始每个音都要数线，低音谱号更是完全陌生，速度很慢。后来我每天睡前花十分钟做识谱练习，用卡片反复认，慢慢就熟了。现在拿到一首新曲子，至少能先慢慢弹下来。

第一年我弹完了拜厄，第二年开始弹车尔尼和一些简单的小奏鸣曲，也弹了几首流行歌曲的改编，给家里人弹的时候他们都很惊讶。第三年终于能弹肖邦的一首夜曲，虽然还不够流畅，踏板也用得不太干净，但是自己听着很满足。

成年人学琴最大的问题是时间。工作忙的时候一周只能练两三次，出差的时候更是一周都碰不到琴。我的办法是把练琴安排在早上上班前，哪怕只有二十分钟，也比晚上累了再练效果好。周末的时候再集中练一个小时，把一周的问题解决掉。

还有就是要录音。弹的时候觉得自己还不错，一听录音才知道哪里节奏不稳，哪里强弱没有做出来。老师说成年人理解力强，但是容易着急，总想一下子弹快，其实慢练才是最快的办法。

最重要的一点是不要和小孩子比进度，也不要给自己定太高的目标，享受音乐本身就好。明年我想试着参加一次成人业余考级，主要是给自己一个练琴的动力。""",
)
"""Four English and four Chinese texts of several paragraphs (Latin half first): a trip, a garden, a
town's history, a football season; a trip, a recipe, a residents' committee's year, learning the piano."""

"""The facts ``huichat bench loop`` seeds and asks about, the questions memory cannot answer,
and the unrelated turns around the facts.

The facts alternate Chinese and English; each question can only be answered from its fact,
said once in an earlier session, and names what a right answer must contain (``keys``: each
entry is a set of alternatives, ``|``-separated, compared without case). The questions whose
answer is not in memory sit next to seeded topics, so that a weak model is tempted to answer
with the neighbouring fact.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    """Something the user said once (and the assistant's reply), and a later question about it."""

    said: str
    reply: str
    question: str
    keys: tuple[str, ...]
    """What a right answer says: every entry, each one of its ``|`` alternatives."""


FACTS: tuple[Fact, ...] = (
    Fact("我家里的 VPN 用的是 WireGuard，端口改成了 51820。", "记下了：WireGuard，端口 51820。", "我家里的 VPN 用的是什么协议、哪个端口？", ("WireGuard", "51820")),
    Fact("My laptop is a ThinkPad X1 Carbon Gen 11 with 32 GB of RAM.", "Noted: ThinkPad X1 Carbon Gen 11, 32 GB.", "How much RAM does my laptop have?", ("32",)),
    Fact("我女儿的钢琴课在每周六上午十点，老师姓周。", "好的，周六上午十点，周老师。", "我女儿的钢琴课是什么时候上？", ("周六|星期六|礼拜六|Saturday", "十点|10点|10:00|10 点")),
    Fact("The staging server runs on port 8443 behind nginx.", "Got it: staging on 8443 behind nginx.", "Which port does the staging server run on?", ("8443",)),
    Fact("我们把公司的数据库从 MySQL 迁到了 PostgreSQL 16。", "了解，迁到了 PostgreSQL 16。", "公司的数据库迁到哪个数据库了？", ("PostgreSQL|Postgres",)),
    Fact("My dentist appointment is on March 14 at 9:30 with Dr. Patel.", "Noted: March 14, 9:30, Dr. Patel.", "Who is my dentist?", ("Patel",)),
    Fact("我对花生过敏，点外卖要避开花生。", "记住了，你对花生过敏。", "我对什么食物过敏？", ("花生|peanut",)),
    Fact("Our team standup moved to 10:15 every weekday.", "OK, standup at 10:15.", "What time is the team standup now?", ("10:15",)),
    Fact("我的车是 2019 年的白色卡罗拉，车牌尾号 37。", "好的，白色卡罗拉，尾号 37。", "我的车牌尾号是多少？", ("37",)),
    Fact("I keep my backups on a Synology DS920+ with two 8 TB drives.", "Noted: DS920+, two 8 TB drives.", "Which NAS do I keep my backups on?", ("DS920",)),
    Fact("家里路由器的管理地址改成了 192.168.50.1。", "记下了：192.168.50.1。", "家里路由器的管理地址是多少？", ("192.168.50.1",)),
    Fact("My sister's birthday is on July 2nd; she likes orchids.", "I'll remember: July 2nd, orchids.", "What flowers does my sister like?", ("orchid|兰",)),
    Fact("下个月去成都出差，住在春熙路附近的酒店。", "好的，成都春熙路附近。", "我去成都出差住在哪里？", ("春熙路",)),
    Fact("The guest Wi-Fi password is blue-harbor-42.", "Stored: blue-harbor-42.", "What is the guest Wi-Fi password?", ("blue-harbor-42",)),
    Fact("我每天早上跑步五公里，周日休息。", "很好的习惯。", "我每天早上跑多远？", ("五公里|5 公里|5公里|5 km|5km|five",)),
    Fact("I switched my editor from VS Code to Neovim with LazyVim.", "Nice: Neovim with LazyVim.", "Which editor do I use now?", ("Neovim|nvim",)),
    Fact("项目代号叫青鸟，负责人是李明。", "记住了，青鸟项目由李明负责。", "青鸟项目的负责人是谁？", ("李明",)),
    Fact("Our cat Miso needs her thyroid pill twice a day.", "Got it: Miso, thyroid pill twice daily.", "How often does Miso take her thyroid pill?", ("twice|two times|2 times|两次",)),
    Fact("体检报告说我维生素 D 偏低，医生建议每天补充 2000 IU。", "好的，每天 2000 IU 维生素 D。", "医生建议我每天补多少维生素 D？", ("2000",)),
    Fact("The quarterly report is due on the last Friday of the month.", "Noted.", "When is the quarterly report due?", ("last Friday",)),
)  # fmt: skip

ABSENT: tuple[str, ...] = (
    "我儿子的游泳课是星期几？",
    "Which port does the production server run on?",
    "我们家的狗叫什么名字？",
    "What is the admin password of my home router?",
    "我的眼科医生姓什么？",
)
"""Questions whose answer is in no memory, each beside a seeded fact (the daughter's piano lesson,
the staging server, the cat, the router's address and the Wi-Fi password, the dentist)."""

FILLER: tuple[tuple[str, str], ...] = (
    ("今天天气不错。", "是啊，适合出去走走。"),
    ("Can you recommend a book for the weekend?", "Try 'The Remains of the Day'."),
    ("帮我想一个周末的晚饭菜单。", "番茄炒蛋、清蒸鱼和一个青菜汤。"),
    ("What's a good stretch after sitting all day?", "A standing hamstring stretch for thirty seconds."),
    ("给我讲个笑话吧。", "程序员最讨厌的季节是什么？——冬天，因为有很多 bug 冻不住。"),
    ("How do I say thank you in Japanese?", "Arigatou gozaimasu."),
    ("最近睡得不太好。", "睡前少看手机，试试固定作息。"),
    ("Give me a word that rhymes with orange.", "Nothing rhymes perfectly; 'door hinge' comes close."),
    ("推荐一部老电影。", "《城南旧事》值得一看。"),
    ("What's the capital of Australia?", "Canberra."),
    ("明天提醒我买牛奶。", "我没法主动提醒，但我会记住你想买牛奶。"),
    ("Any tips for learning to juggle?", "Start with two balls and count the throws."),
)  # fmt: skip

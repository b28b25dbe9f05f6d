"""The questions ``huichat bench abstain`` asks every haystack whose answers no memory holds:
off-topic questions in English and Chinese, and keyboard noise, generated deterministically."""

from __future__ import annotations

import random

_EN_OFF_TOPIC = (
    "How do I configure a VPN on Ubuntu 22.04?",
    "What is the boiling point of tungsten?",
    "Explain the difference between TCP and UDP.",
    "Which Kubernetes ingress controller handles gRPC best?",
    "What is the capital of Kazakhstan?",
    "How many moons does Neptune have?",
    "Write a haiku about database indexes.",
    "What year did the Byzantine empire fall?",
    "How do I reset the BIOS password on a ThinkPad?",
    "What is the derivative of x to the power of x?",
    "Compare the torque of diesel and petrol engines.",
    "Is the printer on floor 3 fixed yet?",
    "How do I rotate an SSH key on a bastion host?",
    "Translate 'quarterly earnings report' into German.",
    "What are the side effects of ibuprofen?",
    "Recommend a mechanical keyboard with brown switches.",
    "Why does my Rust borrow checker complain about lifetimes?",
    "What is the half-life of carbon-14?",
    "How does a Bloom filter work?",
    "Summarise the plot of Moby Dick in one line.",
    "What is the exchange rate between yen and rupees?",
    "How long should I boil a duck egg?",
    "What's the airspeed velocity of an unladen swallow?",
    "Steps to migrate Postgres 12 to 16 without downtime.",
    "Who won the 1974 Formula One championship?",
    "How do transformers use positional encodings?",
    "What is the best fertiliser for orchids?",
    "Convert 350 Fahrenheit to Kelvin.",
    "How do I file VAT returns as a freelancer?",
    "Which telescope is best for viewing Saturn's rings?",
)
_ZH_OFF_TOPIC = (
    "怎么在 Ubuntu 上配置 VPN？",
    "钨的熔点是多少度？",
    "TCP 和 UDP 有什么区别？",
    "哈萨克斯坦的首都是哪里？",
    "光合作用的化学方程式怎么写？",
    "海王星有几颗卫星？",
    "拜占庭帝国是哪一年灭亡的？",
    "怎么重置 ThinkPad 的 BIOS 密码？",
    "布隆过滤器的原理是什么？",
    "碳十四的半衰期是多久？",
    "布洛芬有哪些副作用？",
    "推荐一款茶轴机械键盘。",
    "Rust 的借用检查器为什么报生命周期错误？",
    "量子纠缠能用来超光速通信吗？",
    "Postgres 12 怎么不停机升级到 16？",
    "1974 年 F1 的总冠军是谁？",
    "兰花用什么肥料最好？",
    "自由职业者怎么申报增值税？",
    "哪种望远镜适合看土星环？",
    "三楼的打印机修好了吗？",
    "如何计算圆周率的前一百位？",
    "牛顿第三定律举个例子。",
    "唐朝的科举考试考什么？",
    "怎么给 Kubernetes 配置 ingress？",
    "北极熊的皮肤是什么颜色？",
    "鸭蛋要煮多久？",
    "日元兑卢比的汇率是多少？",
    "《白鲸记》讲了什么故事？",
    "变压器的工作原理是什么？",
    "华氏三百五十度是多少开尔文？",
)
_GARBAGE_PARTS = ("zxqv", "!!@@##$$", "🤖🤖", "///", "qwrtp", "asdfgh", "嗯嗯嗯", "啊啊", "？？？", "lorem", "ipsum")


def garbage_queries(count: int = 100, seed: int = 0) -> list[str]:
    """``count`` off-topic questions (English and Chinese) and keyboard noise, deterministically."""
    rng = random.Random(seed)
    off_topic = [*_EN_OFF_TOPIC, *_ZH_OFF_TOPIC]
    rng.shuffle(off_topic)
    noise_count = max(0, count - len(off_topic))
    noise = []
    for _ in range(noise_count):
        kind = rng.random()
        if kind < 0.4:
            noise.append(" ".join(rng.choice(_GARBAGE_PARTS) for _ in range(rng.randint(2, 5))))
        elif kind < 0.7:
            noise.append("".join(rng.choice("qwertyuiopasdfghjklzxcvbnm") for _ in range(rng.randint(4, 14))))
        else:
            noise.append("".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(2, 8))))
    return (off_topic + noise)[:count]

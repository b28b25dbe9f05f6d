"""What huichat says to the model: the seed's memory rules, the current time, the loop's notes.

The system prompt holds no example that a model could take for a memory (no made-up ids,
file names or topics): the result format is described in words. It is the same for every
request of a session, so a server's prompt cache can reuse it and the conversation after it;
what changes per request (the current time) rides on the newest user message, at the end.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huichat.memory.results import SearchResults
    from huichat.memory.turns import Turn

_CJK = re.compile(r"[\u3400-\u9fff]")
_ASKS = re.compile(
    r"[?？]|吗|什么|哪|谁|几[点时天个号岁次]|多少|怎么|为什么|是否|有没有|是不是|告诉我|呢\W*$"
    r"|tell me|(?:^|[.!;:]\s+)(?:what|when|where|who|whom|whose|which|why|how|do|does|did|is|are|was|were|can|could|"
    r"would|will|should|have|has|had|am)\b",
    re.IGNORECASE,
)

_ZH = """你是一个拥有长期记忆的 AI 助手。你可以通过 `recall_memory` 工具检索历史对话。

## 记忆检索规则

1. **关键词检索**：当用户提到过去聊过的具体内容时，用其中的关键词调用 `recall_memory`，参数 query 写关键词，top_k 写想要的条数（默认 5）。问题涉及几件事（比较、几个人、几次经历）时，query 里每行写一个检索，一次调用分别检索。
2. **时间过滤**：当用户提到时间范围时，加上参数 filter_expr，写法是 timestamp >= '开始日期' AND timestamp <= '结束日期'，日期格式 YYYY-MM-DD，按消息开头方括号里的当前时间推算；只按时间找时 query 可以为空。
3. **分段扫描**：当时间模糊（"前段时间""之前"）时，不用写时间，系统会从最近一周开始逐周向前扫描。
4. **轮次导航**：需要某条结果的上下文时，用它的 prev 或 next 值作为 turn_id 调用 `recall_by_id`；只用检索结果里出现过的 ID，所以先用 `recall_memory` 检索。

## 检索结果的格式

每条结果的第一行在方括号里依次给出：id（这一轮的 6 位编号）、prev 和 next（同一会话里上一轮和下一轮的编号，none 表示没有）、相似度（0 到 1，越大越相关，不同检索之间可比）。第二行以 📁 开头：会话文件、话题和时间。之后是这一轮的原文。命中按相关度排列；每个命中后面跟着它的上下文，上下文以"↳ 上下文，属于命中 <id>"开头、没有相似度：它不是命中，引用时用命中的 id。检索不到相关记忆时，结果只用一行说明这一点。

## 回答

- 用户问到自己的情况或以前聊过的事时，先调用 `recall_memory`；看到检索结果之前，不要说没有记忆或无法回答。
- 检索系统只负责"捞"候选，由你来判断哪些相关；不相关的结果不要用。
- 拿到结果后就直接回答用户，注明所依据的记忆的 id；同样的检索不要重复。
- 只根据结果里真实出现的内容回答，不要编造记忆；不要把工具调用或整段检索结果写进回答。
- 记忆原文保持原样引用，不要翻译。回答时使用用户的语言。
- 最新一条用户消息开头的方括号是当前时间，不是用户说的话。"""

_EN = """You are an AI assistant with a long-term memory. You can search past conversations with the `recall_memory` tool.

## Memory rules

1. **Keyword search**: when the user mentions something specific from the past, call `recall_memory` with its key words as query, and top_k for how many results you want (default 5). When a question involves several things (a comparison, several people or events), write one search per line in query: each is searched on its own, in one call.
2. **Time filter**: when the user names a time range, add filter_expr, written as timestamp >= 'start date' AND timestamp <= 'end date' with dates as YYYY-MM-DD, worked out from the current time in brackets at the start of the message; to search by time alone, query may be empty.
3. **Progressive scan**: when the time is vague ("a while ago", "before"), give no time: the system scans week by week, starting with the most recent.
4. **Turn navigation**: to see the context of a result, call `recall_by_id` with its prev or next value as turn_id; only ids that a result showed exist, so search with `recall_memory` first.

## Result format

The first line of each result gives, in square brackets: id (the turn's 6-character id), prev and next (the ids of the turns before and after it in the same session; none when there is none), and 相似度 (similarity, 0 to 1, higher is closer, comparable between searches). The second line starts with 📁: the session file, the topic (话题) and the time. Then comes the turn's text. Hits come in order of relevance; each is followed by its context, which starts with "↳ 上下文，属于命中 <id> (context for hit <id>)" and has no similarity: it is not a hit, so cite the hit's id. A hit with a line "🔗 与命中 <id> 相连 (linked to hit <id> by <names>)" under its 📁 line is far from the question itself but names what that hit names: read the two together (the next step of the same story). When no memory is relevant, the result says so in one line.

## Answering

- When the user asks about themselves or about something discussed before, call `recall_memory` first; never say you have no memory of it before you have searched.
- Retrieval only finds candidates; you judge which are relevant, and ignore the rest.
- Once you have results, answer the user, naming the id of each memory you used; do not repeat a search.
- Answer only from what the results really say; never make up a memory; never write tool calls or whole results into your answer.
- Quote memories as they were written — never translate them. Answer in the user's language.
- The brackets at the start of the newest user message give the current time; they are not the user's words."""

_ZH_FIRST = """你是一个拥有长期记忆的 AI 助手。

每条消息之前，系统会先检索以前的对话，找到的记忆放在 <memory> 块里，每行一轮：[id:编号 | 时间] 然后是当时说的话。

- 有一行能回答问题，而且说的正是问到的那个人、那件事或那个地方，就按它回答，并注明它的 id。
- 用户问到自己的情况或以前说过的事，而没有一行能回答，就回答说你不记得了。说的是别的人或别的事的那一行不算回答。不要猜，不要编造记忆或 id。
- 其他问题照常回答；回答简短，使用用户的语言；记忆原文照原样引用。
- 最新一条用户消息开头的方括号是当前时间，不是用户说的话。"""

_EN_FIRST = """You are an AI assistant with a long-term memory.

Before each message, the system searches past conversations and puts what it finds in a <memory> block, one turn a line: [id:… | when] and what was said.

- When a line answers the question — about the very person, thing or place asked about — answer from it and name its id.
- When the user asks about themselves or something said before and no line answers it, reply that you do not remember it. A line about something else (another person, another server) does not answer it. Never guess, never make up a memory or an id.
- Answer other questions as usual, briefly, in the user's language; quote memories as they were written.
- The brackets at the start of the newest user message give the current time; they are not the user's words."""
"""The rules of a request without tools (memory-first): how to read the ``<memory>`` block, nothing
about tools. Small models read this prompt before every answer: it is a third of the full rules."""

ANSWER_NOW = {
    "zh": "工具调用已经用完。请根据上面已有的检索结果直接回答我，不要再调用任何工具；如果没有找到相关记忆，就如实说没有找到。",
    "en": "No more tool calls. Answer me now from the results above, without calling any tool; "
    "if no relevant memory was found, say so.",
}
"""The last message of a reply whose tool rounds are used up (or whose calls only repeat)."""

IN_WORDS = {
    "zh": "（用一句话回答上面的问题；不要把带 [id:…] 和时间的整行记忆照抄出来。）",
    "en": "(Answer the question above in one short sentence; do not copy whole memory lines with their [id:…] and time.)",
}
"""Asked once more after an answer that was nothing but a copy of memory lines (cut, so nothing was
shown): Qwen2.5-Coder-0.5B answered 3 of 20 memory-first questions by copying the line that held the
answer."""

ALREADY_HAVE = "你已经有这次调用的结果（见上文），不要重复调用，请直接回答。(You already have the result of this exact call above; do not call it again — answer now.)"
"""The tool result of a call repeated within one reply (it is not run again)."""

NO_ANSWER = {
    "zh": "（没有得到回答：模型用完工具轮次后仍在调用工具。）",
    "en": "(No answer: the model kept calling tools after its last tool round.)",
}
"""Stored in place of an answer that was only a tool call."""

CUT_SHORT = {
    "zh": "（这条回复被用户中途停止了，以上是停止前已经说出的部分。）",
    "en": "(The user stopped this reply here: above is what was said before the stop.)",
}
"""Follows a stopped reply in later context: it stays part of the conversation, marked as cut short."""

EMPTY_ANSWER = {"zh": "（没有得到回答：模型没有返回任何内容。）", "en": "(No answer: the model returned nothing.)"}
"""Stored in place of an answer that was empty."""

MEMORY_OPEN, MEMORY_CLOSE = "<memory>", "</memory>"
"""Around the memories huichat found before the model was asked (memory-first, both, auto_recall)."""
MEMORY_NOTE = (
    "以下是系统按用户这条消息预先检索到的历史记忆，可能相关；用到哪条就注明它的 [id:…]，都不相关就照常回答。"
    "(Memories found for this message before you were asked; cite the [id:…] of one you use; if none fits, answer as usual.)"
)
MEMORY_NONE = {
    "zh": "（没有找到与这条消息相关的记忆。）",
    "en": "(No memory was found for this message.)",
}
"""An explained block with nothing in it: what was found, in words."""
ASK_NONE = {
    "zh": "（记忆里没有这件事。问的若是用户自己的事或以前说过的话，就回答“我不记得了”，不要猜。）",
    "en": "(Memory holds nothing about this. If it asks about the user's own life or something said before, "
    'answer "I don\'t remember" and do not guess.)',
}
"""After the question, when the memory-first block is empty: what to answer about the user's own life.
Said last because small models follow the last instruction: inside the block, before the question, it
did not stop Qwen2.5-Coder-1.5B making up an eye doctor's surname; after it, it did."""
MEMORY_UNSURE = {
    "zh": "（没有找到确定相关的记忆。最接近的一条如下，它说的可能是别的事：）",
    "en": "(No memory clearly matches this message. The closest one follows; it may be about something else:)",
}
"""Before the one candidate under the threshold that still stands out (``SearchHit.stands_out``)."""
_CLIP = 280
"""Characters of one message shown in the block: enough for a fact, little for a small model to read."""


def prompt_results(results: SearchResults) -> SearchResults:
    """What a recall-first prompt shows of a search: its hits, or with none the one candidate that
    still stands out (``SearchHit.stands_out``) as the only result, so the memory panel and the
    reply's recalled turns show what the model was given."""
    below = results.below
    if results.results or below is None or not below.stands_out:
        return results
    return replace(results, results=(below,), below=None)


def memory_block(results: SearchResults, zone: tzinfo, language: str, *, explained: bool = False) -> str:
    """The hits of ``prompt_results`` (context left out) as one compact, delimited block: each turn
    on one line with its anchor id and when it was said; a candidate that only stands out comes
    after a line saying it is uncertain. With none, "" — or, when ``explained`` (the system prompt
    says what the block is: memory-first, so it carries no note), a block saying in ``language``
    that nothing was found."""
    hits = [hit for hit in results.results if hit.role == "hit"]
    if not hits:  # said in words: a small model guesses less when told (an empty block did not stop the 1.5B)
        return f"{MEMORY_OPEN}\n{MEMORY_NONE[language]}\n{MEMORY_CLOSE}" if explained else ""
    lines = [MEMORY_OPEN] if explained else [MEMORY_OPEN, MEMORY_NOTE]
    if any(hit.stands_out for hit in hits):
        lines.append(MEMORY_UNSURE[language])
    for hit in hits:
        turn = hit.turn
        lines.append(
            f"[id:{turn.id} | {turn.timestamp.astimezone(zone):%Y-%m-%d %H:%M}] {turn_text(turn, speakers=True)}"
        )
    lines.append(MEMORY_CLOSE)
    return "\n".join(lines)


def question_note(results: SearchResults, language: str, text: str) -> str:
    """What a memory-first request says after the user's message ``text``: ``ASK_NONE`` when it is a
    question (``asks``) and ``prompt_results`` holds no hit; else nothing. A statement gets no note:
    told "if it asks about the user's own life, answer I don't remember", Qwen2.5-Coder-1.5B answered
    "我不记得了。" to 我女儿的游泳课在每周四下午四点 and to 今天天气不错 alike."""
    if any(hit.role == "hit" for hit in results.results) or not asks(text):
        return ""
    return ASK_NONE[language]


def asks(text: str) -> bool:
    """True when ``text`` reads as a question: a question mark, a Chinese question word or particle, or
    an English sentence that opens like a question."""
    return bool(_ASKS.search(text))


def turn_text(turn: Turn, *, speakers: bool = False) -> str:
    """What was said in ``turn`` on one line, each message clipped (``speakers``: each after its speaker)."""
    return " / ".join(
        f"{m.who}: {_clipped(m.text)}" if speakers else _clipped(m.text) for m in turn.messages if m.is_chat
    )


def _clipped(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 1].rstrip() + "…"


def uses_chinese(text: str) -> bool:
    """True when ``text`` contains Chinese characters."""
    return bool(_CJK.search(text))


_LATIN_WORD = re.compile(r"[A-Za-z]+")


def language_of_message(text: str) -> str:
    """The language one message is written in: "zh" when it holds at least as many Chinese characters
    as Latin words ("What did 李雪 say?" is English, 我用VPN连公司 Chinese), else "en"."""
    return "zh" if len(_CJK.findall(text)) >= max(1, len(_LATIN_WORD.findall(text))) else "en"


def system_prompt(language: str, role: str = "", *, tools: bool = True) -> str:
    """The system prompt: the session's ``role`` text (if any), then the memory rules in ``language``
    (``zh`` or ``en``), which are always there: those of the tools, or without ``tools`` those of the
    ``<memory>`` block alone. It never changes within a session unless the role or the mode does."""
    chinese = language == "zh"
    rules = (_ZH if chinese else _EN) if tools else (_ZH_FIRST if chinese else _EN_FIRST)
    return f"{role.strip()}\n\n{rules}" if role.strip() else rules


def time_note(language: str, now: datetime, zone_name: str, *, weeks: bool = True) -> str:
    """The bracketed line that starts the newest user message: the time, and with ``weeks`` this week
    and last week (what a time filter of the tools is worked out from; a request without tools has none)."""
    monday = now.date() - timedelta(days=now.weekday())
    last_monday, last_sunday = monday - timedelta(days=7), monday - timedelta(days=1)
    if language == "zh":
        weekday = "一二三四五六日"[now.weekday()]
        said = f"[现在是 {now:%Y-%m-%d} 周{weekday} {now:%H:%M}（{zone_name}）"
        return f"{said}；本周一是 {monday}；上周是 {last_monday} 到 {last_sunday}]" if weeks else f"{said}]"
    said = f"[It is now {now:%Y-%m-%d %a %H:%M} ({zone_name})"
    if not weeks:
        return f"{said}]"
    return f"{said}; this week began on {monday}; last week ran from {last_monday} to {last_sunday}]"


_DATE = r"\d{4}-\d{2}-\d{2}"
_TIME_NOTE = re.compile(
    # the note in its brackets, to the closing one (or the end of the line, when cut short)
    rf"\[\s*(?:It is now|现在是)\s*{_DATE}[^\]\n]*\]?"
    # without brackets: the note's own parts, as far as they were copied
    rf"|It is now {_DATE}(?: [A-Za-z]{{3}})?(?: \d{{1,2}}:\d{{2}})?(?: \([^)\n]*\))?"
    rf"(?:; this week began on {_DATE})?(?:; last week ran from {_DATE} to {_DATE})?\]?"
    rf"|现在是 {_DATE}(?: 周[一二三四五六日])?(?: \d{{1,2}}:\d{{2}})?(?:（[^）\n]*）)?"
    rf"(?:；本周一是 {_DATE})?(?:；上周是 {_DATE} 到 {_DATE})?\]?"
)


def without_time_note(text: str) -> str:
    """``text`` without any copy of ``time_note``'s line, whole or cut short.

    Models pass the user's message as a search query, and with it the time line the app
    put in front of it: read as time words it would confine the search to today. What the
    app wrote is never searched for; a query that was only the note is left empty.
    """
    return _TIME_NOTE.sub(" ", text).strip() if ("It is now" in text or "现在是" in text) else text


def tool_response(contents: list[str]) -> str:
    """Tool results as the observation block of a user message (``tool_results: observation``)."""
    return "\n".join(f"<tool_response>\n{content}\n</tool_response>" for content in contents)

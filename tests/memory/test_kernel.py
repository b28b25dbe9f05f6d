"""The kernel against a real LanceDB in a temp dir: write, anchor, search, recall, reconcile."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.errors import KernelError
from huichat.memory.filters import FilterError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel as open_memory
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, TurnDraft, is_turn_id
from tests.conftest import NOW, ZONE, open_kernel

ROOT = Path(__file__).resolve().parents[2]


def _say(
    kernel: MemoryKernel,
    session,
    user: str,
    assistant: str,
    when: datetime,
    topic: str = "",
    speaker: str = "",
):  # type: ignore[no-untyped-def]
    messages = (Message("user", user, speaker), Message("assistant", assistant))
    return kernel.append_turn(session, TurnDraft(messages, when, topic))


@pytest.fixture
def conversation(kernel: MemoryKernel):  # type: ignore[no-untyped-def]
    last_wednesday = datetime(2026, 11, 18, 14, 30, tzinfo=ZONE)
    first = kernel.new_session(last_wednesday)
    turns = [
        _say(
            kernel,
            first,
            "我们讨论一下本地模型部署的问题",
            "可以用 llama.cpp 部署量化模型。",
            last_wednesday,
            "本地模型部署",
        ),
        _say(
            kernel,
            first,
            "显存只有 8G 够吗",
            "7B 的 4-bit 模型够用。",
            last_wednesday + timedelta(minutes=5),
            "本地模型部署",
        ),
        _say(
            kernel,
            first,
            "那推理速度呢",
            "大约每秒二十个 token。",
            last_wednesday + timedelta(minutes=9),
            "本地模型部署",
        ),
    ]
    second = kernel.new_session(NOW - timedelta(hours=2))
    turns += [
        _say(
            kernel,
            second,
            "The VPN keeps dropping every evening",
            "Check the WireGuard keepalive setting.",
            NOW - timedelta(hours=2),
        ),
        _say(
            kernel,
            second,
            "What about DNS leaks?",
            "Use the tunnel's resolver.",
            NOW - timedelta(hours=1),
        ),
    ]
    kernel.maintain(force=True)
    return turns


def test_turns_get_ids_and_are_linked_both_ways(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    ids = [t.id for t in conversation]
    assert all(is_turn_id(i) for i in ids) and len(set(ids)) == len(ids)
    first = [kernel.recall_by_id(i).turn for i in ids[:3]]
    assert [t.prev_id for t in first if t] == [None, ids[0], ids[1]]
    assert [t.next_id for t in first if t] == [ids[1], ids[2], None]
    assert [t.turn_index for t in first if t] == [0, 1, 2]
    assert first[0] is not None and first[0].session_file.startswith("2026-W47/2026-11-18/chat_20261118-143000-")
    assert first[0].timestamp.utcoffset() == timedelta(0)


def test_chinese_turns_are_found_by_full_text_and_by_vector(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    by_text = kernel.search(SearchRequest("部署", NOW, mode="text"))
    assert by_text.hits and by_text.hits[0].turn.id == conversation[0].id
    by_vector = kernel.search(SearchRequest("本地模型部署", NOW, mode="vector"))
    assert by_vector.hits[0].turn.id == conversation[0].id
    english = kernel.search(SearchRequest("WireGuard VPN", NOW))
    assert english.hits[0].turn.id == conversation[3].id
    assert all(0.0 <= h.similarity <= 1.0 for h in english)


def test_time_words_filter_and_neighbours_are_marked(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    results = kernel.search(SearchRequest("上周三下午 显存", NOW, top_k=1, context_window=1))
    assert results.time_range is not None and results.time_range.phrase == "上周三下午"
    assert results.keywords == "显存"
    assert [(r.turn.id, r._context_role) for r in results] == [
        (conversation[0].id, "neighbor"),
        (conversation[1].id, "hit"),
        (conversation[2].id, "neighbor"),
    ]
    assert all(r.turn.session_id == conversation[0].session_id for r in results)


def test_format_is_exactly_the_seeds(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    results = kernel.search(SearchRequest("显存", NOW, top_k=1))
    hit = results[0]
    text = kernel.format_results(results)
    t = conversation[1]
    assert text == (
        f"[id:{t.id} | prev: {conversation[0].id} | next: {conversation[2].id} | 相似度: {hit.similarity:.3f}]\n\n"
        f"📁 {t.session_file} | 话题: 本地模型部署 | 2026-11-18 Wed 14:35:00\n\n"
        "user: 显存只有 8G 够吗\nassistant: 7B 的 4-bit 模型够用。"
    )
    stored = kernel.recall_by_id(conversation[0].id).turn
    assert stored is not None
    first = kernel.format_turn(stored)
    # fetched by id, not searched for: no similarity is made up
    assert first.startswith(f"[id:{conversation[0].id} | prev: none | next: {conversation[1].id}]\n")


def test_filter_expressions_from_the_llm(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    results = kernel.search(
        SearchRequest(
            "", NOW, 10, filter_expr="timestamp >= '2026-11-16' AND timestamp <= '2026-11-22'", resolve_time=False
        )
    )
    assert {r.turn.id for r in results} == {t.id for t in conversation[:3]}
    with pytest.raises(FilterError):
        kernel.search(SearchRequest("x", NOW, filter_expr="1; DROP TABLE turns"))
    assert kernel.count() == 5


def test_recall_by_id_errors_are_values(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    assert kernel.recall_by_id(conversation[2].id).ok
    assert kernel.recall_by_id(f"  id:{conversation[2].id.upper()} ").ok
    unknown = kernel.recall_by_id("zzzzz9")
    assert not unknown.ok and "no turn with id zzzzz9" in unknown.error
    malformed = kernel.recall_by_id("'; DROP TABLE turns; --")
    assert not malformed.ok and "not a turn id" in malformed.error


def test_access_statistics_are_counted_and_persisted(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turn = _say(kernel, session, "VPN notes", "WireGuard", NOW)
    kernel.search(SearchRequest("VPN", NOW))
    kernel.search(SearchRequest("VPN", NOW + timedelta(minutes=3)))
    kernel.close()
    reopened = open_kernel(tmp_path)
    stored = reopened.recall_by_id(turn.id).turn
    assert stored is not None and stored.access_count == 2
    assert stored.last_accessed_at == NOW + timedelta(minutes=3)
    # editing the transcript re-embeds the turn and keeps its statistics
    path = tmp_path / "sessions" / turn.session_file
    path.write_text(
        path.read_text(encoding="utf-8").replace("WireGuard", "WireGuard with keepalive 25"),
        encoding="utf-8",
    )
    report = reopened.reconcile()
    assert report.updated == 1 and report.added == 0
    again = reopened.recall_by_id(turn.id).turn
    assert again is not None and again.access_count == 2 and "keepalive 25" in again.text
    assert reopened.count() == 1


def test_reconcile_indexes_turns_missing_from_the_index_without_duplicates(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    written = [_say(kernel, session, f"message {i}", f"reply {i}", NOW + timedelta(minutes=i)) for i in range(3)]
    kernel.close()
    (tmp_path / "index-manifest.json").unlink()
    kernel.store.delete([written[1].id])  # as if the index write had been lost
    assert kernel.count() == 2
    reopened = open_kernel(tmp_path)  # reconciles at open
    assert reopened.count() == 3
    assert reopened.reconcile().files_parsed == 0  # unchanged files are skipped
    assert reopened.reconcile(full=True).added == 0
    assert reopened.count() == 3


def _run_writer(root: Path, count: int, tag: str, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.memory.writer_process", str(root), str(count), tag, *extra],
        cwd=ROOT,
    )


def test_two_processes_writing_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    open_kernel(tmp_path).close()  # create the table first
    writers = [_run_writer(tmp_path, 15, tag) for tag in ("a", "b")]
    assert [w.wait(timeout=180) for w in writers] == [0, 0]
    kernel = open_kernel(tmp_path)
    assert kernel.count() == 30
    for tag in ("a", "b"):
        turns = kernel.session_turns(f"proc-{tag}")
        assert [t.turn_index for t in turns] == list(range(15))
        assert [t.prev_id for t in turns[1:]] == [t.id for t in turns[:-1]]
    assert kernel.reconcile(full=True).added == 0


def test_a_process_killed_between_transcript_and_index_loses_no_turn(tmp_path: Path) -> None:
    open_kernel(tmp_path).close()
    writer = _run_writer(tmp_path, 1, "k", "--die-before-index")
    assert writer.wait(timeout=120) == -9
    kernel = open_kernel(tmp_path)  # reconciles at open: the turn is indexed from its transcript
    assert kernel.count() == 1
    assert kernel.reconcile().added == 0
    turns = kernel.session_turns("proc-k")
    assert len(turns) == 1 and turns[0].messages[0].text == "k message 0 记忆"


def test_a_model_with_another_dimension_is_refused_until_reindex(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turn = _say(kernel, session, "remember this", "ok", NOW)
    kernel.search(SearchRequest("remember", NOW))
    kernel.close()
    with pytest.raises(KernelError, match="huichat reindex"):
        open_kernel(tmp_path, HashEmbedder(32))
    rebuilt = open_memory(
        MemoryLocation.under(tmp_path), HashEmbedder(32), kernel.config, ZONE, now=NOW, for_rebuild=True
    )
    report = rebuilt.reindex()
    assert report.added == 1
    reopened = open_kernel(tmp_path, HashEmbedder(32))
    found = reopened.recall_by_id(turn.id).turn
    assert found is not None and found.access_count == 1


def test_progressive_scan_walks_back_week_by_week(kernel: MemoryKernel) -> None:
    session = kernel.new_session(NOW - timedelta(weeks=6))
    for week in range(6, 0, -1):
        topic = "Kubernetes ingress certificate renewal" if week == 3 else f"weekly chat about gardening {week}"
        _say(kernel, session, topic, "noted", NOW - timedelta(weeks=week))
    kernel.maintain(force=True)
    seen: list[tuple[str, int]] = []
    results = kernel.retriever.search_with_progress(
        "前段时间 Kubernetes ingress certificate",
        lambda week, found: seen.append((week, len(found))),
        now=NOW,
    )
    assert results.time_range is not None and results.time_range.fuzzy
    assert results.hits and "Kubernetes" in results.hits[0].turn.text
    assert len(seen) == len(results.rounds) >= 2
    assert seen[0][0] > seen[-1][0]  # most recent week first
    via_search = kernel.search(SearchRequest("前段时间 Kubernetes ingress certificate", NOW))
    assert via_search.rounds and via_search.hits[0].turn.id == results.hits[0].turn.id


def test_maintenance_builds_the_indexes(kernel: MemoryKernel, conversation) -> None:  # type: ignore[no-untyped-def]
    kinds = {i.index_type for i in kernel.store._table.list_indices()}
    assert "FTS" in kinds and "BTree" in kinds


def test_turns_indexed_without_vectors_are_found_by_words_then_by_meaning(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    drafts = [
        TurnDraft((Message("user", f"第 {i} 件事：WireGuard keepalive 设成 {i} 秒"),), NOW + timedelta(minutes=i))
        for i in range(5)
    ]
    written = kernel.append_turns(session, drafts, embed=False)
    assert kernel.pending_vectors == 5
    by_words = kernel.search(SearchRequest("keepalive", NOW + timedelta(hours=1), 5, mode="text"))
    assert {h.turn.id for h in by_words.hits} == {t.id for t in written}
    # placeholder vectors never pass for matches
    assert kernel.search(SearchRequest("keepalive", NOW + timedelta(hours=1), 5, mode="vector")).hits == []
    assert kernel.embed_pending(limit=3) == 3
    assert kernel.embed_pending(limit=3) == 2
    assert kernel.embed_pending() == 0 and kernel.pending_vectors == 0
    by_meaning = kernel.search(SearchRequest("keepalive", NOW + timedelta(hours=1), 5, mode="vector"))
    assert {h.turn.id for h in by_meaning.hits} == {t.id for t in written}
    # the vector is the one an immediate write would have given: the predecessor's tail included
    again = open_kernel(tmp_path / "again")
    fresh = again.append_turns(again.new_session(NOW), drafts)
    np.testing.assert_allclose(
        kernel.store.vectors([written[2].id])[written[2].id], again.store.vectors([fresh[2].id])[fresh[2].id], atol=1e-6
    )
    again.close()
    kernel.close()
    assert open_kernel(tmp_path).pending_vectors == 0


def test_turns_without_vectors_are_hits_on_their_own_words_at_the_threshold(tmp_path: Path) -> None:
    # imported with --no-embed: the README promises they are found by their words at once
    kernel = open_kernel(tmp_path, config=RetrieverConfig(min_similarity=0.43))
    session = kernel.new_session(NOW)
    said = ["I installed Termux on the old phone", "Termux needs storage permission first", "午饭吃了兰州拉面"]
    drafts = [TurnDraft((Message("user", text),), NOW + timedelta(minutes=i)) for i, text in enumerate(said)]
    written = kernel.append_turns(session, drafts, embed=False)
    later = NOW + timedelta(hours=1)
    for query, wanted in [
        ("termux", written[:2]),
        ("Termux storage permission", written[1:2]),
        ("兰州拉面", written[2:]),
    ]:
        results = kernel.search(SearchRequest(query, later, 5, record_access=False))
        assert {h.turn.id for h in results.hits} >= {t.id for t in wanted}, query
        assert results.hits[0].turn.id == wanted[0].id or len(wanted) > 1, query
        assert all((h.similarity or 0.0) >= 0.43 for h in results.hits), query
    nothing = kernel.search(SearchRequest("qwxz flurbo 8812", later, 5, record_access=False))
    assert nothing.hits == []
    kernel.close()


def test_turns_waiting_for_their_vector_are_not_ranked_as_far_in_meaning(tmp_path: Path) -> None:
    # a chat with vectors, then an import with --no-embed that says one thing many times: the same
    # BM25 for every copy, so the full text alone lifts none of them above the others; a turn
    # without its vector used to take the vector list's lowest score, as if its meaning were far
    # from the query, and the embedded turns that hold none of the query's words ranked above it
    kernel = open_kernel(tmp_path)
    chat = kernel.new_session(NOW - timedelta(days=1))
    said = ["我下周六要干嘛？", "Cindy 对什么过敏?", "My dentist is Dr. Zhao", "客户 Cindy 对花生过敏"]
    kernel.append_turns(
        chat, [TurnDraft((Message("user", text),), NOW - timedelta(days=1, minutes=-i)) for i, text in enumerate(said)]
    )
    imported = kernel.new_session(NOW - timedelta(days=300))
    drafts = [
        TurnDraft(
            (Message("user", "我们明天去杭州开会"), Message("assistant", f"第 {i} 个回答")),
            NOW - timedelta(days=300 - i),
        )
        for i in range(40)
    ]
    written = {t.id for t in kernel.append_turns(imported, drafts, embed=False)}
    results = kernel.search(SearchRequest("杭州开会", NOW, 5, record_access=False))
    kernel.close()
    assert len(results.hits) == 5 and {h.turn.id for h in results.hits} <= written


def test_a_wanted_id_is_kept_where_it_is_free_and_replaced_where_it_is_taken(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    first = kernel.append_turns(kernel.new_session(NOW), [TurnDraft((Message("user", "one"),), NOW)])[0]
    drafts = [
        TurnDraft((Message("user", "two"),), NOW + timedelta(minutes=1), wanted_id="keep01"),
        TurnDraft((Message("user", "three"),), NOW + timedelta(minutes=2), wanted_id=first.id),  # taken
        TurnDraft((Message("user", "four"),), NOW + timedelta(minutes=3), wanted_id="keep01"),  # taken just now
        TurnDraft((Message("user", "five"),), NOW + timedelta(minutes=4), wanted_id="NOT AN ID"),
    ]
    ids = [t.id for t in kernel.append_turns(kernel.new_session(NOW), drafts)]
    kernel.close()
    assert ids[0] == "keep01" and len({first.id, *ids}) == 5 and all(is_turn_id(i) for i in ids)


def test_a_session_header_keeps_its_facts_and_later_updates_win(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turn = kernel.append_turns(
        session, [TurnDraft((Message("user", "hi"),), NOW)], session_meta={"title": "旧标题", "source": "chatgpt"}
    )[0]
    kernel.transcripts.update_session(turn.session_file, {"title": "新标题"})
    parsed = TurnChunker.parse(
        (tmp_path / "sessions" / turn.session_file).read_text(encoding="utf-8"), turn.session_file
    )
    assert parsed.meta["title"] == "新标题" and parsed.meta["source"] == "chatgpt"
    assert parsed.meta["session_id"] == session.session_id
    assert [t.id for t in parsed.turns] == [turn.id]
    kernel.close()


def test_turns_whose_ids_a_hand_edit_mangled_are_read_without_an_empty_sql_list(tmp_path: Path) -> None:
    # found by the full chaos run: every id malformed made "prev_id IN ()", which LanceDB cannot parse
    from dataclasses import replace

    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turn = kernel.append_turn(session, TurnDraft((Message("user", "VPN"),), NOW))
    mangled = [replace(turn, id="ed?t01"), replace(turn, id="")]
    assert kernel.store.with_next(mangled) == mangled
    assert kernel.store.with_next([turn])[0].next_id is None
    kernel.close()


def test_access_statistics_of_many_searches_reach_the_index_in_one_commit(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    turns = [_say(kernel, session, f"VPN note {i}", f"WireGuard port {51820 + i}", NOW) for i in range(8)]
    kernel.flush_access()
    kernel.maintain(force=True)
    fragments = kernel.store.fragments()
    for minute in range(40):  # ~8 hits each: several hundred accesses, once a commit every 64 before
        kernel.search(SearchRequest("VPN WireGuard", NOW + timedelta(minutes=minute)))
    assert kernel.store.fragments() == fragments
    kernel.flush_access()
    assert kernel.store.fragments() <= fragments + 1
    counts = [kernel.recall_by_id(t.id).turn.access_count for t in turns]  # type: ignore[union-attr]
    assert max(counts) == 40
    kernel.close()


def test_the_vectors_held_for_search_follow_this_process_commits_and_are_read_again_after_another_s(
    tmp_path: Path,
) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    _say(kernel, session, "VPN keepalive", "25 seconds", NOW)
    pasta = _say(kernel, session, "pasta recipe", "garlic and oil", NOW)
    kernel.search(SearchRequest("VPN", NOW))  # the first search also builds the indexes (new versions)
    kernel.search(SearchRequest("VPN", NOW))
    reads = kernel.store.vector_reads
    kernel.flush_access()  # a commit of this process that changes no vector
    assert kernel.search(SearchRequest("pasta", NOW)).hits
    assert kernel.store.vector_reads == reads
    said = _say(kernel, session, "new fact", "with a new vector", NOW)  # held vectors extended by its own
    found = kernel.search(SearchRequest("new fact", NOW, mode="vector", resolve_time=False)).hits
    assert found[0].turn.id == said.id
    assert kernel.store.vector_reads == reads
    assert kernel.recall_by_id(pasta.id).turn.next_id == said.id  # type: ignore[union-attr]
    other = open_kernel(tmp_path)  # another writer (here: another kernel on the same folder)
    theirs = _say(other, other.new_session(NOW), "their fact", "from elsewhere", NOW)
    other.close()
    hits = kernel.search(SearchRequest("their fact", NOW, mode="vector", resolve_time=False)).hits
    assert hits[0].turn.id == theirs.id
    assert kernel.store.vector_reads == reads + 1
    kernel.close()


def test_a_turns_similarity_does_not_depend_on_how_many_hits_were_asked_for(tmp_path: Path) -> None:
    # similarity is made non-increasing along the ranking: judged over the first top_k only, a
    # turn took the chance of a likelier candidate ranked below it at top_k 5 and not at top_k 2
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=3))
    texts = [
        "VPN 晚上总是断", "三楼的打印机坏了", "午饭吃饺子", "My dentist is Dr. Patel", "The printer on floor three jams",
        "WireGuard keepalive 25 seconds", "dentist appointment moved to Friday", "饺子馆在公司楼下",
        "打印机的墨盒没了", "VPN keeps dropping at night",
    ]  # fmt: skip
    for i, text in enumerate(texts):
        kernel.append_turn(session, TurnDraft((Message("user", text),), NOW - timedelta(days=3, minutes=-30 * i)))
    seen: dict[tuple[str, str], set[float]] = {}
    for query in ("打印机", "VPN", "dentist", "饺子", "printer jams", "night"):
        for top_k in (1, 2, 3, 5, 10):
            for hit in kernel.search(SearchRequest(query, NOW, top_k, record_access=False)).hits:
                seen.setdefault((query, hit.turn.id), set()).add(round(hit.similarity or 0.0, 6))
    kernel.close()
    assert {key: values for key, values in seen.items() if len(values) > 1} == {}

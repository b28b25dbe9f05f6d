"""``DELETE /v1/memory/turn/{id}``: a forgotten turn leaves search, the turn route and the model's tool results."""

from __future__ import annotations

import httpx
import pytest

from tests.serve.conftest import Server

pytestmark = pytest.mark.slow


def _said(http: httpx.Client, text: str) -> str:
    response = http.post(
        "/v1/chat/completions", json={"model": "fake", "messages": [{"role": "user", "content": text}]}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["huichat"]["turn_id"])


def _found(http: httpx.Client, query: str) -> list[str]:
    response = http.post("/v1/memory/search", json={"query": query, "max_results": 10, "context_window": 1})
    assert response.status_code == 200, response.text
    return [r["id"] for r in response.json()["results"]]


def test_forgetting_over_http_hides_a_turn_at_once_and_undo_brings_it_back(server: Server) -> None:
    with server.client(server.key("quill")) as http:
        passport = _said(http, "我的护照号是 E12345678")
        assert passport in _found(http, "护照号 E12345678")

        forgotten = http.delete(f"/v1/memory/turn/{passport}")
        assert forgotten.status_code == 200, forgotten.text
        assert forgotten.json() == {"user": "quill", "id": passport, "forgotten": True, "changed": True}

        assert passport not in _found(http, "护照号 E12345678")
        assert http.get(f"/v1/memory/turn/{passport}").status_code == 404
        # the model's memory tool no longer sees it either
        answer = http.post(
            "/v1/chat/completions", json={"model": "fake", "messages": [{"role": "user", "content": "remember 护照号"}]}
        ).json()
        assert passport not in answer["choices"][0]["message"]["content"]
        assert http.delete(f"/v1/memory/turn/{passport}").json()["changed"] is False

        restored = http.delete(f"/v1/memory/turn/{passport}", params={"undo": "true"})
        assert restored.json() == {"user": "quill", "id": passport, "forgotten": False, "changed": True}
        assert passport in _found(http, "护照号 E12345678")


def test_forgetting_answers_in_the_apis_error_shapes(server: Server) -> None:
    with server.client(None) as anonymous:
        assert anonymous.delete("/v1/memory/turn/a3f2c7").status_code == 401
    with server.client(server.key("rhea")) as http:
        _said(http, "hello")
        malformed = http.delete("/v1/memory/turn/not-an-id")
        assert malformed.status_code == 400
        assert "is not a turn id" in malformed.json()["error"]["message"]
        unknown = http.delete("/v1/memory/turn/zzzzzz")
        assert unknown.status_code == 404
        assert unknown.json()["error"]["message"] == "no turn with id zzzzzz"


def test_a_forgotten_turn_leaves_the_transcript_the_file_route_serves(server: Server) -> None:
    # as it leaves exports: GET /v1/memory/file gave its words to any client after the forget
    with server.client(server.key("sten")) as http:
        kept = _said(http, "my bike is green")
        secret = http.post(
            "/v1/chat/completions",
            json={
                "model": "fake",
                "messages": [
                    {"role": "user", "content": "my bike is green"},
                    {"role": "assistant", "content": "收到：my bike is green"},
                    {"role": "user", "content": "my bank PIN is 9931"},
                ],
            },
        ).json()["huichat"]
        assert http.delete(f"/v1/memory/turn/{secret['turn_id']}").status_code == 200
        path = http.get("/v1/memory/sessions").json()["sessions"][0]["session_file"]
        hidden = http.get("/v1/memory/file", params={"path": path}).text
        assert "9931" not in hidden and "my bike is green" in hidden and f"[id:{kept} |" in hidden
        assert http.delete(f"/v1/memory/turn/{secret['turn_id']}", params={"undo": "true"}).status_code == 200
        assert "9931" in http.get("/v1/memory/file", params={"path": path}).text


def test_forgetting_a_sessions_first_turn_takes_its_words_out_of_the_title_and_topics(server: Server) -> None:
    with server.client(server.key("selma")) as http:
        first = {"model": "fake", "messages": [{"role": "user", "content": "my bank PIN is 4711"}]}
        opened = http.post("/v1/chat/completions", json=first).json()
        later = first["messages"] + [
            {"role": "assistant", "content": opened["choices"][0]["message"]["content"]},
            {"role": "user", "content": "what about the weather"},
        ]
        second = http.post("/v1/chat/completions", json={"model": "fake", "messages": later}).json()
        assert second["huichat"]["session_id"] == opened["huichat"]["session_id"]
        assert http.delete(f"/v1/memory/turn/{opened['huichat']['turn_id']}").status_code == 200

        [session] = http.get("/v1/memory/sessions").json()["sessions"]
        hit = http.post("/v1/memory/search", json={"query": "weather"}).json()["results"][0]
        assert hit["id"] == second["huichat"]["turn_id"]
        shown = [session["title"], session["first_message"], hit["topic"], hit["formatted"]]
        assert not any("4711" in text for text in shown), shown
        assert session["title"] == "what about the weather"

        # brought back, the first turn gives the session its title again
        assert (
            http.delete(f"/v1/memory/turn/{opened['huichat']['turn_id']}", params={"undo": "true"}).status_code == 200
        )
        [session] = http.get("/v1/memory/sessions").json()["sessions"]
        assert session["title"] == "my bank PIN is 4711"

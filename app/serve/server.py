"""uvicorn's server for ``huichat serve``: it ends the replies in flight before it shuts down."""

from __future__ import annotations

import socket

import uvicorn

from huichat.app.serve.service import Service


class Server(uvicorn.Server):
    """uvicorn's server, which first ends the replies in flight when it shuts down: their answers
    (a stream's last event says the server is stopping) end before their connections must
    close, instead of being cancelled mid-answer with a traceback in the log."""

    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self.service = service

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop the replies, then close the connections as uvicorn does."""
        await self.service.stop_replies()
        await super().shutdown(sockets)

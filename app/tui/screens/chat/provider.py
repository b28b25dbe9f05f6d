"""Which provider answers, in the status line, and what to configure when none can."""

from __future__ import annotations

import os

from rich.markup import escape

from huichat.app.tui.screens.chat.base import ChatBase
from huichat.memory.errors import KernelError
from huichat.providers.config import key_problem


class ChatProvider(ChatBase):
    """The provider and role part of the chat screen."""

    def refresh_provider_status(self) -> None:
        """The status line's provider part: its name, model and memory mode."""
        self._provider_changed(self.huichat.provider_name)

    def _provider_changed(self, name: str | None) -> None:
        providers = self.huichat.runtime.loaded.config.providers.named
        if name not in providers:
            self.provider_status = "no provider"
            return
        choice = self.huichat.memory_modes.choose(name, providers[name])
        # the role stays with the provider's name: a crowded status line keeps the part before " · "
        head = f"{name}, role {self.role}" if self.role else name
        self.provider_status = f"{head} · {providers[name].model} · memory: {choice.mode}"

    def watch_role(self) -> None:
        self._provider_changed(self.huichat.provider_name)

    async def choose_role(self, name: str) -> None:
        """Palette: answer in role ``name`` ('' : none) from the next reply on, in this session."""
        if self.session is not None:
            try:
                await self.session.choose_role(name)
            except KernelError as exc:
                self.notify(str(exc), title="Role", severity="error")
                return
        self.role = name
        self.notify(f"Role: {name}." if name else "No role: huichat's own prompt.", timeout=3)

    def welcome(self) -> str:
        """The first screen when a provider is ready: what to do and which keys matter."""
        return (
            "Ask anything — earlier conversations are searched when they help "
            "(try [i]what did we decide about … last week?[/i]). "
            "[b]ctrl+f[/b] searches memory yourself · [b]F2[/b] shows what was recalled · "
            "[b]ctrl+o[/b] reopens a session · [b]F1[/b] lists every key."
        )

    def provider_problem(self) -> str:
        """Why no reply can be asked for, in one line; '' when a provider can be used."""
        app = self.huichat
        providers = app.runtime.loaded.config.providers
        if not providers.named:
            return "No LLM provider is configured."
        name = app.provider_name
        if name is None:
            return ""
        problem = key_problem(name, providers.named[name], os.environ)
        return f"{problem}." if problem else ""

    def provider_notice(self) -> str:
        """What to configure when no provider can be used (Rich markup); '' when one can."""
        app = self.huichat
        providers = app.runtime.loaded.config.providers
        config_file = escape(str(app.runtime.loaded.paths.config_file))
        problem = self.provider_problem()
        if not problem:
            return ""
        if not providers.named:
            return (
                f"[b]{problem}[/b] Add one to [b]{config_file}[/b]:\n\n"
                "[dim]  providers:\n    named:\n      deepseek:\n        model: deepseek/deepseek-chat\n"
                "        api_key_env: DEEPSEEK_API_KEY[/dim]\n\nthen set [b]DEEPSEEK_API_KEY[/b] in your environment "
                "(any litellm model works; [b]api_base[/b] reaches llama.cpp, vLLM, LM Studio or Ollama). "
                "Search (ctrl+f) and sessions (ctrl+o) work without it."
            )
        variable = providers.named[app.provider_name or ""].api_key_env
        return (
            f"[b]{escape(problem)}[/b] Set it in the environment that starts huichat "
            f"([b]export {escape(str(variable))}=…[/b]), or pick another provider with ctrl+p. "
            f"Config: [b]{config_file}[/b]. Search and sessions still work."
        )

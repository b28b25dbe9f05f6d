"""The whole configuration: defaults in code, the user's YAML merged over them.

Bad configuration stops huichat before any UI starts, naming the file, the key path and
the reason (``ConfigError``); the CLI turns that into exit status 2.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from huichat.memory.config import (
    ArchiveConfig,
    ConsolidationConfig,
    EmbeddingConfig,
    ImportsConfig,
    LifecycleConfig,
    RetrieverConfig,
    StorageConfig,
    SyncConfig,
)
from huichat.memory.location import MemoryLocation
from huichat.providers.config import ProvidersConfig


class ChatConfig(BaseModel):
    """How a reply is produced."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    max_tool_rounds: int = Field(default=4, ge=0, le=20)
    """Rounds of memory tool calls the model may make before it must answer."""
    auto_recall: bool = False
    """Search memory before every call and put the top hits in the prompt (for models without tools)."""
    auto_recall_top_k: int = Field(default=3, ge=1, le=20)
    """Hits put into the prompt when huichat recalls first (auto_recall, memory-first, both)."""
    context_token_budget: int = Field(default=6000, ge=256)
    """Approximate tokens of the current session's recent turns sent with each request."""
    prompt_language: Literal["auto", "zh", "en"] = "auto"
    """Language of the memory rules in the system prompt; auto follows the user's message."""
    titles: Literal["model", "local"] = "model"
    """Who titles a session: the model, after the first exchange, in the user's language; local: its first message's leading clause (no request)."""
    retitle_every: int = Field(default=8, ge=0, le=10_000)
    """The model looks at a session's title again after this many more turns (0: never)."""
    max_message_chars: int = Field(default=32_000, ge=100, le=10_000_000)
    """A longer message is refused in one line and kept where it was typed (nothing is sent)."""
    roles: dict[str, str] = Field(default_factory=dict)
    """Named system prompts (``huichat --role NAME``, or the palette), chosen per session; huichat's memory rules always follow them."""

    def message_problem(self, text: str) -> str | None:
        """Why ``text`` cannot be sent as a message (one line), or None."""
        if len(text) <= self.max_message_chars:
            return None
        return f"the message is {len(text)} characters long; at most {self.max_message_chars} characters are sent (chat.max_message_chars)"


class UIConfig(BaseModel):
    """How the terminal app looks and behaves."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    theme: str = "textual-dark"
    """Textual theme name; one picked in the command palette is kept (data/theme.json) until this changes."""
    memory_panel: Literal["auto", "open", "closed"] = "auto"
    """auto opens the memory panel whenever a reply recalled something."""
    snippet_chars: int = Field(default=160, ge=20, le=2000)
    """Characters of a recalled turn shown in the memory panel list."""
    cursor_blink: bool = True
    """Whether the text cursor in the prompt and the search box blinks."""
    on_start: Literal["continue", "new"] = "continue"
    """continue shows the most recent session and continues it; new starts an empty one."""


class ServeConfig(BaseModel):
    """``huichat serve``: the HTTP face (OpenAI-compatible chat, the memory API, the dashboard)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    host: str = "127.0.0.1"
    """Address to listen on (--host overrides); anything but loopback exposes memory to the network."""
    port: int = Field(default=8000, ge=1, le=65535)
    """Port to listen on (--port overrides)."""
    allow_loopback_without_keys: bool = False
    """While no API key exists, let clients on this machine in without one (as the owner).

    Off by default: any local program or web page could otherwise read your memory; never
    turn it on behind a reverse proxy, where every request comes from loopback."""
    owner: str = Field(default="default", pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    """The user whose memory is the terminal app's own (<data_dir>); others get <data_dir>/users/<name>."""
    requests_per_minute: int = Field(default=60, ge=1)
    """Requests each API key may make per minute (a moving window); more get 429 and Retry-After."""
    key_checks_per_minute: int = Field(default=10, ge=1)
    """Failed API key checks (argon2, the slow way) allowed per minute for each key id and for each
    client address; a key that verifies costs nothing. Once used up, checks get 429 and Retry-After."""
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    """Largest request body accepted; bigger ones get 413."""
    cors_origins: tuple[str, ...] = ()
    """Web origins allowed to call the API from a browser (CORS); empty turns CORS off."""
    memory_retry_seconds: float = Field(default=30.0, gt=0)
    """While a user's memory is degraded, how often a request tries to reopen it."""


class AppConfig(BaseModel):
    """Every section of huichat's configuration."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    embedding: EmbeddingConfig = EmbeddingConfig()
    storage: StorageConfig = StorageConfig()
    archive: ArchiveConfig = ArchiveConfig()
    retriever: RetrieverConfig = RetrieverConfig()
    lifecycle: LifecycleConfig = LifecycleConfig()
    consolidation: ConsolidationConfig = ConsolidationConfig()
    sync: SyncConfig = SyncConfig()
    imports: ImportsConfig = ImportsConfig()
    providers: ProvidersConfig = ProvidersConfig()
    chat: ChatConfig = ChatConfig()
    ui: UIConfig = UIConfig()
    serve: ServeConfig = ServeConfig()


_SECRET_KEYS = {"api_key", "key", "apikey", "token", "secret", "password"}


class ConfigError(Exception):
    """A configuration problem; ``str()`` names the file, the key path and the reason."""


USERS_DIR = "users"
"""The folder (under the data dir, or ``storage.uri``) of every user's memory but the owner's own."""


@dataclass(frozen=True)
class Paths:
    """Where huichat keeps things, resolved from the config and the XDG directories."""

    config_file: Path
    data_dir: Path
    sessions_dir: Path
    db_uri: str
    cache_dir: Path
    models_dir: Path


@dataclass(frozen=True)
class LoadedConfig:
    """A validated configuration and the files it was merged from (in order)."""

    config: AppConfig
    files: tuple[Path, ...]
    paths: Paths
    user: str = ""
    """Whose memory ``location`` is: '' for the owner's (the chat's own), else a user of ``huichat
    serve`` (a command's ``--user``)."""

    @property
    def location(self) -> MemoryLocation:
        """The owner's memory: the configured transcripts and index (reached with ``storage.options``),
        or with ``storage.uri`` the owner's memory in the shared store (what every command then reads);
        ``user``'s when one is named."""
        paths = self.paths
        if self.user and self.user != self.config.serve.owner:
            return self.user_location(self.user)
        if self.config.storage.uri:
            return self.user_location(self.config.serve.owner)
        return MemoryLocation(paths.data_dir, paths.sessions_dir, paths.db_uri, self.config.storage.options)

    def user_location(self, user: str) -> MemoryLocation:
        """Where a user other than the owner lives: ``<data_dir>/users/<name>/``, or with ``storage.uri``
        every user (the owner too) in ``<uri>/users/<name>/`` (index and transcripts), this machine
        keeping a working copy of the transcripts and its caches in ``<data_dir>/users/<name>/``."""
        local = self.paths.data_dir / USERS_DIR / user
        storage = self.config.storage
        if not storage.uri:
            return MemoryLocation.under(local)
        shared = f"{storage.uri.rstrip('/')}/{USERS_DIR}/{user}"
        return MemoryLocation(
            local, local / "sessions", f"{shared}/index.lancedb", storage.options, f"{shared}/sessions"
        )


def _xdg(var: str, fallback: str, env: dict[str, str]) -> Path:
    value = env.get(var, "")
    return Path(value) if value else Path(env.get("HOME", str(Path.home()))) / fallback


def default_config_file(env: dict[str, str] | None = None) -> Path:
    """The user's config file in the XDG config dir (it need not exist)."""
    env = dict(os.environ) if env is None else env
    return _xdg("XDG_CONFIG_HOME", ".config", env) / "huichat" / "config.yaml"


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "named":
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _describe(error: Any, raw: dict[str, Any]) -> str:
    loc = [str(part) for part in error["loc"]]
    path = ".".join(loc) or "(top level)"
    if error["type"] == "extra_forbidden":
        parent: Any = AppConfig
        for part in loc[:-1]:
            field = (
                parent.model_fields.get(part) if isinstance(parent, type) and issubclass(parent, BaseModel) else None
            )
            parent = field.annotation if field is not None else None
        hint = ""
        if loc[-1] in _SECRET_KEYS:
            hint = (
                " — keys never go in the config file: put it in an environment variable and name that "
                "variable with 'api_key_env' (e.g. api_key_env: DEEPSEEK_API_KEY)"
            )
        elif isinstance(parent, type) and issubclass(parent, BaseModel):
            close = difflib.get_close_matches(loc[-1], list(parent.model_fields), n=1)
            hint = f" — did you mean '{close[0]}'?" if close else ""
        return f"unknown key '{path}'{hint}"
    if error["type"] in ("model_type", "dict_type"):  # a section given as one value ("ui:\n  theme dark")
        return f"'{path}': should be a section of 'key: value' lines, not {_what(error.get('input'))}"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"'{path}': {message}"


def _what(value: object) -> str:
    """A value the file gave, as a user reads it: "the text 'theme dark'", "the number 3", "a list"."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"the text {shown!r}"
    if isinstance(value, bool) or value is None:
        return f"'{str(value).lower() if value is not None else 'null'}'"
    if isinstance(value, int | float):
        return f"the number {value}"
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


class _Loader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping: the second would replace the
    first without a word (a second 'providers:' at the end of the file dropped every provider above it).
    Keys brought in by a merge (``<<: *defaults``) may still be given again: that is what merging is for."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, yaml.Mark] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"'{key}' is given twice (first at line {seen[key].line + 1})", key_node.start_mark
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


MAX_DEPTH = 16
"""Levels of nesting a config file may have (the deepest real key is 4 levels down)."""
MAX_NODES = 100_000
"""Values a config file may hold, counting each use of a YAML alias again."""


def _check_shape(path: Path, data: object) -> None:
    """Refuse a file nested too deeply or too large before anything recurses into it."""
    stack: list[tuple[object, int]] = [(data, 0)]
    visited = 0
    while stack:
        node, depth = stack.pop()
        visited += 1
        if depth > MAX_DEPTH:
            raise ConfigError(f"{path}: nested too deeply (at most {MAX_DEPTH} levels)")
        if visited > MAX_NODES:
            raise ConfigError(f"{path}: too large for a config file (more than {MAX_NODES:,} values)")
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc})") from None
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader that refuses a key given twice
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply (at most {MAX_DEPTH} levels)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    if data is None:
        return {}
    _check_shape(path, data)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, not {type(data).__name__}")
    return data


def resolve_paths(config: AppConfig, config_file: Path, env: dict[str, str]) -> Paths:
    """Resolve the data, session, index, cache and model locations."""
    storage = config.storage
    data_dir = (
        Path(storage.data_dir).expanduser()
        if storage.data_dir
        else _xdg("XDG_DATA_HOME", ".local/share", env) / "huichat"
    )
    cache_dir = (
        Path(storage.cache_dir).expanduser() if storage.cache_dir else _xdg("XDG_CACHE_HOME", ".cache", env) / "huichat"
    )
    sessions = Path(config.archive.base_dir).expanduser() if config.archive.base_dir else data_dir / "sessions"
    db_uri = storage.db_path or str(data_dir / "index.lancedb")
    if "://" not in db_uri:
        db_uri = str(Path(db_uri).expanduser())
    return Paths(config_file, data_dir, sessions, db_uri, cache_dir, data_dir / "models")


def load_config(path: Path | None = None, env: dict[str, str] | None = None) -> LoadedConfig:
    """Merge the user's YAML over the defaults and validate it.

    ``path`` is an explicit ``--config`` file (it must exist); otherwise ``$HUICHAT_CONFIG``
    or the XDG config file is used when present.
    """
    env = dict(os.environ) if env is None else env
    if path is None and env.get("HUICHAT_CONFIG"):
        path = Path(env["HUICHAT_CONFIG"])
    explicit = path is not None
    config_file = path if path is not None else default_config_file(env)
    files: list[Path] = []
    raw: dict[str, Any] = {}
    if explicit or config_file.exists():
        raw = _read_yaml(config_file)
        files.append(config_file)
    defaults = AppConfig().model_dump()
    try:
        config = AppConfig.model_validate(_deep_merge(defaults, raw))
    except ValidationError as exc:
        reasons = "; ".join(_describe(err, raw) for err in exc.errors())
        raise ConfigError(f"{config_file}: {reasons}") from None
    return LoadedConfig(config, tuple(files), resolve_paths(config, config_file, env))

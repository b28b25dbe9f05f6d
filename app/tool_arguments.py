"""The memory tools' arguments as models: the schemas the LLM is shown are generated from them,
and a call's arguments are read through them, each problem one line the model can act on.

The schemas are the seed's (names, descriptions, types, required fields, ``top_k``'s default
of 5; a test pins them). Reading is more forgiving than the schema and stricter about
meaning: small models send numbers as strings, ``null`` for what they leave out and the
schema itself for arguments, and echo a parameter's description as the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

RECALL_MEMORY = "recall_memory"
RECALL_BY_ID = "recall_by_id"
TOP_K_MAX = 20
"""The most hits a model may ask for (and at least 1)."""
SEARCHES_MAX = 5
"""The most searches one ``query`` may hold, one a line; a query of more lines is one text (a pasted message)."""

_SCHEMA_KEYS = {"type", "properties", "required", "description", "default", "items"}
_PLACEHOLDERS = {"搜索关键词或问题", "关键词", "query", "keywords", "keyword", "search query", "<query>", "..."}
_WORD = re.compile(r"[^\W_]")


class ArgumentError(ValueError):
    """A tool call's arguments cannot be run: one line telling the model what to send instead."""


def argument_problem(message: str) -> PydanticCustomError:
    """A tool argument problem: one line for the model (raise it in a validator)."""
    # the message goes in as context: a template would read braces in a quoted argument as fields
    return PydanticCustomError("tool_argument", "{problem}", {"problem": message})


def _whole_number(value: Any, info: core_schema.ValidationInfo) -> int:
    """An integer, also written as a string or a float without a fraction (``"5"``, ``5.0``)."""
    key = info.field_name
    if isinstance(value, bool):
        raise argument_problem(f"{key} must be a whole number, not {json.dumps(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        written = value.strip()
        digits = written[1:] if written.startswith(("+", "-")) else written
        if digits.isdecimal():  # not isdigit: '²' is a digit int() refuses; fullwidth '３' is a number
            return int(written)
    raise argument_problem(f"{key} must be a whole number, not {json.dumps(value, ensure_ascii=False)[:40]}")


def _text(value: Any, info: core_schema.ValidationInfo) -> str:
    """A string without surrounding space; a number is taken as its digits."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise argument_problem(f"{info.field_name} must be a string, not {type(value).__name__}")


def _query_text(value: Any, info: core_schema.ValidationInfo) -> str:
    """``_text``, and a list of strings (several searches: the schema wants them one a line) as its lines."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value)
    ):
        return "\n".join(str(v).strip() for v in value)
    return _text(value, info)


def _bare_id(turn_id: str) -> str:
    """The id as copied from an anchor line, ``[id:A3F2C7`` included."""
    return turn_id.lower().removeprefix("[").removeprefix("id:").strip()


Text = Annotated[str, BeforeValidator(_text)]
OptionalText = Annotated[str | None, BeforeValidator(_text)]
OptionalWholeNumber = Annotated[int | None, BeforeValidator(_whole_number)]
QueryText = Annotated[str, BeforeValidator(_query_text)]


class _ToolSchema(GenerateJsonSchema):
    """JSON schema as the seed writes it: no titles, keys in the order written, and a parameter
    left out reads as not given (no ``null`` type, no ``null`` default)."""

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        generated = super().generate(schema, mode)
        generated.pop("title", None)
        generated.pop("description", None)  # the model's docstring is for readers of this code
        return generated

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if schema.get("default") is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value


class ToolArguments(BaseModel):
    """One memory tool: its name and description for the model, and its parameters as fields."""

    model_config = ConfigDict(frozen=True)

    name: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    def tool_schema(cls) -> dict[str, Any]:
        """The tool as offered to the model (OpenAI's ``tools`` entry)."""
        parameters = cls.model_json_schema(schema_generator=_ToolSchema)
        return {
            "type": "function",
            "function": {"name": cls.name, "description": cls.description, "parameters": parameters},
        }

    @classmethod
    def read(cls, arguments: Mapping[str, Any]) -> Self:
        """The arguments as the tool runs them; raises ``ArgumentError``.

        Known keys only, the right types, then what the tool itself needs. The first problem
        in the parameters' order is the one reported.
        """
        try:
            return cls.model_validate(arguments)
        except ValidationError as exc:
            errors = exc.errors()
            problems = [e["msg"] for e in errors if e["type"] != "missing"]
            missing = [str(e["loc"][0]) for e in errors if e["type"] == "missing"]
            raise ArgumentError(problems[0] if problems else f"{cls.name} needs {', '.join(missing)}") from None

    @model_validator(mode="before")
    @classmethod
    def _given(cls, data: Any) -> Any:
        """Only this tool's parameters; ``null``, and ``""`` for an optional one, mean not given."""
        expected = ", ".join(cls.model_fields)
        unknown = sorted(set(data) - set(cls.model_fields))
        if unknown and set(data) <= _SCHEMA_KEYS:
            raise argument_problem(f"these are the tool's schema, not its arguments; call {cls.name} with {expected}")
        if unknown:
            raise argument_problem(f"{cls.name} has no parameter {', '.join(unknown)} (its parameters: {expected})")
        given = {
            key: value
            for key, value in data.items()
            if value is not None and not (value == "" and not cls.model_fields[key].is_required())
        }
        return cls._completed(given)

    @classmethod
    def _completed(cls, given: dict[str, Any]) -> dict[str, Any]:
        """The given arguments with what the tool infers from them."""
        return given


class RecallMemory(ToolArguments):
    """``recall_memory``: a search. A time filter alone is a search too (everything said then)."""

    name = RECALL_MEMORY
    description = (
        "检索历史对话记忆。支持关键词搜索、时间过滤、分段扫描。"
        "结果按相关度排列，条目之间用 --- 分隔。命中条目：一行 [id | prev | next | 相似度]"
        "（相似度 0–1，各次检索可比），一行 📁 会话文件 | 话题 | 时间，然后是那一轮的原文。"
        "每个命中后面紧跟它的上下文条目（按对话顺序），上下文条目第一行是"
        " ↳ 上下文，属于命中 <id> (context for hit <id>)，其 [id | prev | next] 行没有相似度："
        "它不是命中，只用来理解命中，引用时请用命中的 id。"
        "没有相关记忆时，结果只有一行说明，可能附上最接近但低于阈值的一条（不算命中）。"
        f"问题涉及几件事时可以拆开：query 里每行写一个检索（最多 {SEARCHES_MAX} 行），一次调用分别检索，"
        "结果按检索分节，同一轮只出现一次。"
        "先检索再下结论：没有检索之前，不要说没有记忆。"
    )

    query: QueryText = Field(description="搜索关键词或问题")
    filter_expr: OptionalText = Field(None, description="时间过滤表达式，如 \"timestamp >= '2026-04-06'\"")
    # the seed's default, shown to the model; a call without top_k gets retriever.default_top_k
    top_k: OptionalWholeNumber = Field(None, description="返回结果数量，默认 5", json_schema_extra={"default": 5})

    @classmethod
    def _completed(cls, given: dict[str, Any]) -> dict[str, Any]:
        if "query" not in given and "filter_expr" in given:
            return {"query": "", **given}
        return given

    @property
    def searches(self) -> list[str]:
        """The searches ``query`` asks for: one a line when it holds 2–``SEARCHES_MAX`` lines that are
        searches (words, not the parameter's description; each once), else the whole query as one."""
        lines = [line.strip() for line in self.query.splitlines()]
        lines = list(dict.fromkeys(line for line in lines if line and not _query_problem(line, has_filter=False)))
        return lines if 2 <= len(lines) <= SEARCHES_MAX else [self.query]

    @model_validator(mode="after")
    def _searchable(self) -> Self:
        if self.top_k is not None and not 1 <= self.top_k <= TOP_K_MAX:
            raise argument_problem(f"top_k must be between 1 and {TOP_K_MAX}, not {self.top_k}")
        problem = _query_problem(self.query, self.filter_expr is not None)
        if problem:
            raise argument_problem(problem)
        return self


class RecallById(ToolArguments):
    """``recall_by_id``: one turn by the id an anchor line showed."""

    name = RECALL_BY_ID
    description = (
        "根据轮次 ID 检索特定对话。用于导航到相邻轮次。"
        "只用 recall_memory 结果里出现过的 ID（下面的 'a3f2c7' 只是格式示例）。"
    )

    turn_id: Annotated[Text, AfterValidator(_bare_id)] = Field(description="轮次 ID，如 'a3f2c7'")


def _query_problem(query: str, has_filter: bool) -> str:
    if not query:
        return "" if has_filter else "query is empty: give the words to search for (or a filter_expr)"
    if query.lower() in _PLACEHOLDERS:
        return f"query {query!r} is the parameter's description, not a search: give the words to search for"
    if query[0] in "{[":
        try:
            json.loads(query)
        except ValueError:
            pass
        else:
            return "query must be the words to search for, not JSON"
    if not _WORD.search(query):
        return "query has no words to search for"
    return ""


TOOL_ARGUMENTS: dict[str, type[RecallMemory] | type[RecallById]] = {
    RECALL_MEMORY: RecallMemory,
    RECALL_BY_ID: RecallById,
}
TOOL_NAMES = tuple(TOOL_ARGUMENTS)
TOOLS = [model.tool_schema() for model in TOOL_ARGUMENTS.values()]
"""The tools as offered to the model (the seed's schemas)."""


def read_arguments(name: str, arguments: Mapping[str, Any]) -> RecallMemory | RecallById:
    """A call's arguments for tool ``name``, ready to run; raises ``ArgumentError``."""
    model = TOOL_ARGUMENTS.get(name)
    if model is None:
        raise ArgumentError(f"unknown tool {name!r} (available: {', '.join(TOOL_NAMES)})")
    return model.read(arguments)

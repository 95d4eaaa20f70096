"""What real OpenAI-compatible servers accept: named quirk profiles, one per server family.

Chat Completions is one wire format, but servers differ in what they accept. Two of those
differences silently break an agent: llama-cpp-python (``--chat_format
chatml-function-calling``) leaves the tools out of the prompt unless the request names
``tool_choice``, and Ollama, Mistral's server and llama-cpp-python reject an assistant turn
whose ``content`` is ``null``. So the defaults are the forms every server takes:
``tool_choice`` is sent whenever tools are, and an assistant turn that only calls tools
carries ``content: ""``. A profile (``compat = "vllm"`` in a model's settings) changes only
what one family needs differently; single fields can be overridden per model.

Under ``request_style = "paper"`` (``econbench.agents.models.paper_wire``) the wire forms
above are the paper's instead, and a profile decides only which of the paper's ``RawChat``
branches the requests follow (``paper_branch``): ``openai`` (``openai/`` models, and
``compat = "openai"``), ``ollama`` (``compat = "ollama"``: ``reasoning_effort: "none"`` on
requests without tools) or ``vllm`` (every other profile: no effort sent for local names).

What no profile needs to say, because the provider tolerates it for every server: a reply
without ``usage`` (or with some of its fields missing) counts 0 tokens, and a tool call
without an ``id`` gets a deterministic one (``openai_provider``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal

ToolChoice = Literal["auto", "required", "none"]
ToolCallContent = Literal["empty", "omit"]
"""How an assistant turn with tool calls and no text carries its content: ``""`` or no
``content`` key. ``null`` is never sent (Ollama: "invalid message content type: <nil>")."""
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
PaperBranch = Literal["openai", "ollama", "vllm"]


@dataclass(frozen=True)
class Compat:
    """The request forms one server family takes (see the module docstring)."""

    name: str
    tool_choice: ToolChoice | None = "auto"
    """Sent with every request that offers tools; ``None`` leaves it to the server."""
    tool_call_content: ToolCallContent = "empty"
    max_tokens_field: MaxTokensField = "max_tokens"
    parallel_tool_calls: bool | None = None
    """Sent with every request that offers tools when set; ``None`` sends nothing (many
    servers reject or ignore the field)."""
    strict_tools: bool = False
    """Offer each tool in OpenAI's strict mode where it has a strict form
    (``econbench.agents.strict_schema``: every argument required, an optional one nullable):
    the model's arguments are then held to the schema. Off by default (requests unchanged)."""
    refuses: tuple[tuple[str, Any], ...] = ()
    """(field, value) pairs the server answers with an error: an override choosing one is a
    configuration error before the run, not a failed request (often an HTTP 500, retried)."""
    checked: str = "documentation"
    """How the profile was established: against a real server, or from its documentation."""
    notes: str = ""
    paper_branch: PaperBranch = "vllm"
    """The paper's ``RawChat`` branch its requests follow under ``request_style = "paper"``."""

    def with_overrides(self, **overrides: Any) -> Compat:
        """This profile with the given fields replaced; ``None`` values are left as they are."""
        fixed = {"name", "refuses", "checked", "notes", "paper_branch"}
        known = {f.name for f in fields(self)} - fixed
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown compat field(s): {', '.join(sorted(unknown))}")
        chosen = {k: v for k, v in overrides.items() if v is not None}
        refused = [f"{k} = {v!r}" for k, v in chosen.items() if (k, v) in self.refuses]
        if refused:
            raise ValueError(f"the {self.name} server does not accept {', '.join(refused)}")
        return replace(self, **chosen) if chosen else self


PROFILES: dict[str, Compat] = {
    profile.name: profile
    for profile in (
        Compat(
            "generic",
            notes="The default for openai-compatible/ models: forms every server below takes.",
        ),
        Compat(
            "llama.cpp",
            refuses=(("tool_choice", "required"), ("tool_call_content", "omit")),
            checked="real server: llama-cpp-python 0.3.36, --chat_format chatml-function-calling",
            notes=(
                "Without tool_choice the tools never reach the prompt; content null and a "
                "missing content are HTTP 500s, as is tool_choice 'required'; "
                "max_completion_tokens and parallel_tool_calls are ignored (max_tokens is read). "
                "Its chatml-function-calling template renders no tool messages and HTML-escapes "
                "replayed arguments, so the model sees neither results nor clean JSON."
            ),
        ),
        Compat(
            "vllm",
            notes=(
                "tool_choice 'auto' needs the server started with --enable-auto-tool-choice "
                "and a --tool-call-parser (else HTTP 400); 'required' works without them. "
                "Replayed tool-call arguments must be valid JSON."
            ),
        ),
        Compat(
            "ollama",
            notes=(
                "content null is rejected ('invalid message content type: <nil>'); tool_choice "
                "is accepted and ignored; usage may be missing."
            ),
            paper_branch="ollama",
        ),
        Compat(
            "openai",
            max_tokens_field="max_completion_tokens",
            notes="api.openai.com: max_tokens is refused by reasoning models.",
            paper_branch="openai",
        ),
    )
}
DEFAULT_COMPATIBLE = "generic"
DEFAULT_OPENAI = "openai"


def profile(name: str | None, *, compatible: bool) -> Compat:
    """The named profile, or the default for an OpenAI-compatible server or for OpenAI."""
    if name is None:
        name = DEFAULT_COMPATIBLE if compatible else DEFAULT_OPENAI
    found = PROFILES.get(name)
    if found is None:
        raise ValueError(f"unknown compat profile {name!r}; known: {', '.join(PROFILES)}")
    return found


def resolve(compat: Compat | str | None = None, *, compatible: bool, **overrides: Any) -> Compat:
    """A profile (by name or as is) with a model's individual overrides applied."""
    base = compat if isinstance(compat, Compat) else profile(compat, compatible=compatible)
    return base.with_overrides(**overrides)

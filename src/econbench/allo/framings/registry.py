"""The framing registry: every framing by its key, in ladder order.

A framing declares, as class attributes next to its code, its key (``name``, what ``--framing``
takes), its place on the ladder (``order``), its ``title``, its ``reply_style`` (what a
scripted actor sends) and its report ``label``, and registers with ``@register``. The CLI, the
runner, the report, the transfer tables and the scripted actors read them from here, so a new
framing is listed nowhere else; a key that is not registered is an error, not "sorts last".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeVar, get_args

from econbench.suggest import did_you_mean

if TYPE_CHECKING:
    from econbench.allo.framings.base import Framing

ReplyStyle = Literal["text", "keep", "claim", "code", "build"]
"""What a scripted actor (``econbench.allo.episodes.actors.PolicyActor``) sends on a decision turn:
``text`` a ``DECISION: KEEP|PASS`` line (R0), ``keep`` a ``keep``/``pass`` tool call (the R0
probe), ``claim`` ``claim_solver``/``skip_solver`` (R1), ``code`` ``claim_solver(code)`` (R2),
``build`` ``write_script``/``run_script``/``submit_answer`` (R3)."""
REPLY_STYLES: tuple[str, ...] = get_args(ReplyStyle)
DECLARED = ("name", "order", "title", "reply_style", "label")
"""What every framing class declares (``Framing`` documents each)."""

FRAMINGS: dict[str, type[Framing]] = {}
"""Every registered framing by key, in ladder order (``order``, then key)."""

F = TypeVar("F", bound="type[Framing]")


def register(cls: F) -> F:
    """Class decorator: add the framing ``cls`` to :data:`FRAMINGS` under ``cls.name``.

    Raises ``TypeError`` when it leaves one of :data:`DECLARED` undeclared or declares an
    unknown reply style, ``ValueError`` when another class holds its key or its order."""
    missing = [a for a in DECLARED if not hasattr(cls, a)]
    if missing:
        raise TypeError(f"framing {cls.__name__} does not declare {', '.join(missing)}")
    if cls.reply_style not in REPLY_STYLES:
        raise TypeError(
            f"framing {cls.name!r}: unknown reply_style {cls.reply_style!r}; "
            f"choose one of {', '.join(REPLY_STYLES)}"
        )
    for key, other in FRAMINGS.items():
        if other is cls:
            continue
        if key == cls.name:
            raise ValueError(f"framing key {key!r} is taken by {other.__name__}")
        if other.order == cls.order:
            raise ValueError(f"framings {key!r} and {cls.name!r} share order {cls.order}")
    ranked = sorted({**FRAMINGS, cls.name: cls}.items(), key=lambda kv: (kv[1].order, kv[0]))
    FRAMINGS.clear()
    FRAMINGS.update(ranked)
    return cls


def unregister(name: str) -> None:
    """Drop the framing ``name`` (a test's throwaway framing); unknown names are ignored."""
    FRAMINGS.pop(name, None)


def framing_class(name: str) -> type[Framing]:
    """The framing class registered as ``name``; ``ValueError`` (with a suggestion) if none."""
    try:
        return FRAMINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown framing {name!r}{did_you_mean(name, FRAMINGS)}; "
            f"choose one of {', '.join(FRAMINGS)}"
        ) from None


def ladder_order(name: str) -> int:
    """The place of framing ``name`` on the ladder (R0 first); unknown names raise."""
    return framing_class(name).order


def takes_skin(name: str) -> bool:
    """Whether framing ``name`` shows the urn's skins (R0 and its keep/pass probe); ``False``
    for a name that is not registered (which is refused where the framing is built)."""
    cls = FRAMINGS.get(name)
    return cls is not None and cls.takes_skin


def framing_label(name: str) -> str:
    """How tables name framing ``name`` (``"R2 code"``); unknown names raise."""
    return framing_class(name).label

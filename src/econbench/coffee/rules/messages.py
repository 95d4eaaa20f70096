"""Private messages (docs/coffeebench.md §4): one firm writes to another, the recipient wakes.

A message moves nothing: no goods, no money, no commitment. Its title is folded into one line
(the recipient's inbox shows titles only; bodies are read one at a time, which marks them read).
"""

from __future__ import annotations

from typing import Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.quoting import one_line, quoted
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Message,
)


# ------------------------------------------------------------------ tools
@tool("write")
def send_message(
    self: FirmToolkit,
    recipient: str,
    title: str,
    body: str,
    ref_listing_id: str | None = None,
    ref_offer_id: str | None = None,
) -> dict[str, Any]:
    """Send a private message to another agent. It wakes the recipient.

    Not to yourself or to a bankrupt agent.

    Args:
        recipient: the recipient agent's id.
        title: REQUIRED short subject line (≤80 chars hard cap, ≤60
            recommended). Must summarize the message intent — empty
            or whitespace-only titles are rejected; line breaks are
            folded into one line.
        body: free-form message text (≤4,000 chars).
        ref_listing_id: optionally tag this message to a specific listing.
        ref_offer_id: optionally tag this message to a specific offer.
    """
    world, econ = self.world, self.world.econ
    self._firm(recipient, "recipient")
    if recipient == self.firm_id:
        raise ToolError("you cannot send a message to yourself")
    if world.firm(recipient).bankrupt:
        raise ToolError(f"{recipient} is bankrupt and has left the market")
    sent_title, title = title, one_line(title)  # the recipient reads it as one line
    if not title.strip():
        raise ToolError("title must not be empty")
    if len(title) > econ.max_title_chars:
        raise ToolError(f"title is {len(title)} characters; the limit is {econ.max_title_chars}")
    if len(body) > econ.max_body_chars:
        raise ToolError(f"body is {len(body)} characters; the limit is {econ.max_body_chars}")
    if ref_listing_id is not None:
        self._lookup(world.state.listings, ref_listing_id, "ref_listing_id")
    if ref_offer_id is not None:
        self._lookup(world.state.offers, ref_offer_id, "ref_offer_id")
    msg = Message(
        id=world.next_id("message", "M"),
        sender=self.firm_id,
        recipient=recipient,
        title=title,
        body=body,
        day=world.day,
        minute=world.now,
        ref_listing_id=ref_listing_id,
        ref_offer_id=ref_offer_id,
    )
    world.state.messages[msg.id] = msg
    world.log(
        events.MessageSent(
            message_id=msg.id, sender=self.firm_id, recipient=recipient, title=title, body=body
        )
    )
    world.wake(recipient, f"message {msg.id} from {self.firm_id}: {quoted(title, len(title))}")
    result: dict[str, Any] = {"message_id": msg.id, "recipient": recipient}
    if title != sent_title:
        result["title"] = title  # as the recipient sees it
    return result


@tool("read")
def view_messages(
    self: FirmToolkit,
    counterparty: str | None = None,
    since_day: int | None = None,
    limit: int = 10,
) -> dict[str, Any]:
    """Return a compact INBOX of messages visible to you (sent by you
    or sent to you), most-recent first. Each row carries the message
    id, direction, sender, recipient, day, the **title** (subject line)
    and a read flag. The body is NOT included in the listing view — call
    `read_message(message_id)` to fetch the body of a specific message.

    This title-only format keeps your context window small even on long
    runs — bodies are fetched on demand only for messages you care
    about.

    Args:
        counterparty: filter to messages exchanged with one specific
            agent (sender or recipient = this agent). None = all your
            messages in/out.
        since_day: only messages sent on or after this day.
        limit: max rows to return (default 10, 1-100, most-recent first).
            Increase explicitly when you need to scan further back.
    """
    if counterparty is not None:
        self._firm(counterparty, "counterparty")
    limit = self._limit(limit)
    me = self.firm_id
    msgs = [
        m
        for m in self.world.state.messages.values()
        if me in (m.sender, m.recipient)
        and (counterparty is None or counterparty in (m.sender, m.recipient))
        and (since_day is None or m.day >= since_day)
    ]
    msgs.sort(key=lambda m: -int(m.id[1:]))
    unread = sum(1 for m in msgs if m.recipient == me and not m.read)
    return {
        "messages": [
            {
                "message_id": m.id,
                "direction": "received" if m.recipient == me else "sent",
                "from": m.sender,
                "to": m.recipient,
                "title": m.title,
                "day": m.day,
                "read": m.read,
            }
            for m in msgs[:limit]
        ],
        "unread": unread,
        "total": len(msgs),
    }


@tool("read")
def read_message(self: FirmToolkit, message_id: str) -> dict[str, Any]:
    """Fetch the full body of a single message previously seen via
    `view_messages` (the inbox carries the id). The message must be
    one you sent or one sent to you. Marks it read.

    Args:
        message_id: id from a `view_messages` inbox row.
    """
    msg: Message = self._lookup(self.world.state.messages, message_id, "message_id")
    if self.firm_id not in (msg.sender, msg.recipient):
        raise ToolError(f"message {message_id} is not yours")
    if msg.recipient == self.firm_id and not msg.read:
        msg.read = True
        self.me.messages_read += 1
    return {
        "message_id": msg.id,
        "from": msg.sender,
        "to": msg.recipient,
        "day": msg.day,
        "title": msg.title,
        "body": msg.body,
        "ref_listing_id": msg.ref_listing_id,
        "ref_offer_id": msg.ref_offer_id,
    }


RULE = Rule(
    name="messages",
    tools=(send_message, view_messages, read_message),
    events=(events.MessageSent,),
    state=("messages", "Firm.messages_read"),
)

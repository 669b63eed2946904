"""Tools of the support desk, and the shape of a triage decision.

Three executor features at work (their settings are in crew.yaml, under ``tools:``):

- ``lookup_order`` has a custom ``cache_function``: only orders in a final state are
  cached, since an order "in transit" may have moved on by the next lookup.
- ``issue_refund`` has ``max_usage_count: 1``: one refund per run, however many
  agents or retries ask for one.
- ``escalate_to_human`` has ``result_as_answer: true``: the ticket it files is the
  task's answer as is, with no further model call to paraphrase it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from crew import tool

_ORDERS: dict[str, dict[str, Any]] = {
    "A1001": {"status": "delivered", "item": "kettle", "paid": 39.0},
    "A1002": {"status": "delivered", "item": "teapot", "paid": 24.5, "note": "customer reported damage"},
    "A1003": {"status": "in transit", "item": "tea set", "paid": 82.0},
    "A1004": {"status": "refunded", "item": "mugs", "paid": 18.0},
}
FINAL_STATES = {"delivered", "refunded", "cancelled"}


class Triage(BaseModel):
    """The triage of one ticket (the triage task's structured output)."""

    category: Literal["damaged", "late", "refund", "question", "other"]
    urgency: Literal["low", "normal", "urgent"]
    order_id: str | None = Field(default=None, description="the order the ticket is about, if any")
    summary: str = Field(description="one sentence for the next agent")


def cache_final_states(arguments: dict[str, Any], result: Any) -> bool:
    """Cache a lookup only when the order can no longer change."""
    return isinstance(result, dict) and result.get("status") in FINAL_STATES


@tool(parse_docstring=True)
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order: status, item, amount paid and notes.

    Args:
        order_id: The order number, e.g. "A1002".
    """
    order = _ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"order_id": order_id, "status": "not found"}
    return {"order_id": order_id.strip().upper(), **order}


@tool(parse_docstring=True)
def issue_refund(order_id: str, amount: float, reason: str) -> str:
    """Refund an order (money goes back to the customer's card in 3-5 days).

    Args:
        order_id: The order to refund.
        amount: The amount to refund, at most what was paid.
        reason: Why, in a few words (kept in the audit log).
    """
    order = _ORDERS.get(order_id.strip().upper())
    if order is None:
        return f"refused: no order {order_id}"
    if amount <= 0 or amount > order["paid"]:
        return f"refused: amount must be between 0 and {order['paid']}"
    return f"refunded {amount:.2f} on {order_id.strip().upper()} ({reason})"


@tool(parse_docstring=True)
def escalate_to_human(summary: str, priority: Literal["low", "normal", "urgent"] = "normal") -> str:
    """File a hand-off ticket for a human agent; its text is the final answer.

    Args:
        summary: What happened so far and what the human should do next.
        priority: How soon a human must look at it.
    """
    return f"[handoff · {priority}] {summary.strip()}"

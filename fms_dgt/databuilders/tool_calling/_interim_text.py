"""The record's text writer over the first text module, until the plan-aware writers land (text.py)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan
from fms_dgt.databuilders.tool_calling.text import make_text_writer

__all__ = ["PlanText", "make_plan_text"]


class PlanText:
    """The turns of a planned record, written by the first text module's writers."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.inner: Any = make_text_writer(config)

    def user_turn(self, plan: RecordPlan, rng: random.Random) -> str:
        """The user's request."""
        if plan.topic is not None:
            return str(self.inner.user_turn([plan.topic], [], [{}], rng))
        calls = plan.calls
        if plan.missing is not None:
            return str(self.inner.user_turn([plan.missing[0]], [], [plan.stated], rng))
        return str(
            self.inner.user_turn(
                [c.tool for c in calls], [c.call for c in calls], [c.given for c in calls], rng
            )
        )

    def final_turn(self, plan: RecordPlan, rng: random.Random) -> str:
        """The assistant's answer."""
        if plan.topic is not None:
            return "I'm sorry, none of the tools I have can do that."
        if plan.missing is not None:
            return f"I can do that, but I need the {plan.missing[1].replace('_', ' ')} first. What is it?"
        results = [c.result for c in plan.calls if c.result is not None and c.approval != "declined"]
        if not results:
            return "All right, I won't do that."
        return str(self.inner.final_turn([c.call for c in plan.calls], results, rng))

    def approval_question(self, plan: RecordPlan, call: PlannedCall, rng: random.Random) -> str:
        """The assistant asking to confirm a call."""
        return f"This will run {call.tool.name.replace('_', ' ')}. Shall I go ahead?"

    def approval_reply(self, plan: RecordPlan, call: PlannedCall, rng: random.Random) -> str:
        """The user's decision."""
        return "Yes, go ahead." if call.approval == "approved" else "No, don't do that."

    def close(self) -> None:
        """Close the inner writer's client, if any."""
        closer = getattr(self.inner, "close", None)
        if callable(closer):
            closer()


def make_plan_text(config: Mapping[str, Any]) -> PlanText:
    """The writer a ``generation.text`` block asks for."""
    return PlanText(config)

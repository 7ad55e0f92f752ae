"""``tc/fan_in``: ``k - 1`` tools whose outputs feed one sink tool (sink last)."""

from __future__ import annotations

from fms_dgt.core.tools.samplers.fan_out import HubSampler
from fms_dgt.plugins import register_tool_sampler

__all__ = ["FanInSampler"]


@register_tool_sampler("tc/fan_in")
class FanInSampler(HubSampler):
    """Sample a sink tool and ``k - 1`` distinct tools whose outputs can feed it (sink last)."""

    feeds = False
    shortage = "no tool is fed by {n} distinct tools (the most is {most})"

"""Tool samplers: the tools of one scenario (``tc/random``, ``tc/chain``, ``tc/fan_out``, ...).

One plug-in per module, registered with :func:`~fms_dgt.plugins.register_tool_sampler` under
``tc/<module name>``. Samplers read only the contracts of :mod:`fms_dgt.core.tools.artifacts`,
never the enrichments that compute them. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fms_dgt._lazy import lazy_exports

if TYPE_CHECKING:
    from fms_dgt.core.tools.samplers.base import (
        GraphToolSampler,
        ToolSample,
        ToolSampler,
        derive_seed,
        get_tool_sampler,
    )
    from fms_dgt.core.tools.samplers.chain import ChainSampler
    from fms_dgt.core.tools.samplers.dag import DagSampler
    from fms_dgt.core.tools.samplers.fan_in import FanInSampler
    from fms_dgt.core.tools.samplers.fan_out import FanOutSampler
    from fms_dgt.core.tools.samplers.neighbor import NeighborSampler
    from fms_dgt.core.tools.samplers.random import RandomSampler
    from fms_dgt.plugins import get_tool_sampler_class, register_tool_sampler

__all__ = [
    "ChainSampler",
    "DagSampler",
    "FanInSampler",
    "FanOutSampler",
    "GraphToolSampler",
    "NeighborSampler",
    "RandomSampler",
    "ToolSample",
    "ToolSampler",
    "derive_seed",
    "get_tool_sampler",
    "get_tool_sampler_class",
    "register_tool_sampler",
]

_S = "fms_dgt.core.tools.samplers"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            ("GraphToolSampler", "ToolSample", "ToolSampler", "derive_seed", "get_tool_sampler"), f"{_S}.base"
        ),
        "ChainSampler": f"{_S}.chain",
        "DagSampler": f"{_S}.dag",
        "FanInSampler": f"{_S}.fan_in",
        "FanOutSampler": f"{_S}.fan_out",
        "NeighborSampler": f"{_S}.neighbor",
        "RandomSampler": f"{_S}.random",
        "get_tool_sampler_class": "fms_dgt.plugins",
        "register_tool_sampler": "fms_dgt.plugins",
    },
)

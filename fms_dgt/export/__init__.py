"""Trainer-ready records: one canonical record, many exporters, and the checks around them.

* :mod:`~fms_dgt.export.records`: :func:`export_record` (canonical -> any format, template family,
  layout), :func:`read_record` (any lossless format -> canonical), :func:`convert_record`;
* :mod:`~fms_dgt.export.layout`: the arrow-safe layout and its inverse;
* :mod:`~fms_dgt.export.templates`: rendering a record through a chat template and reporting what
  it lost (needs the ``templates`` extra);
* :mod:`~fms_dgt.export.folder`: ``fms-dgt export``, a run's folder in another format, as JSON Lines
  or Parquet, with a dataset card;
* :mod:`~fms_dgt.export.lines`: the lines of an export, converted one by one and written as JSON
  Lines, by several processes for a large input; :mod:`~fms_dgt.export.fast` (with
  :mod:`~fms_dgt.export.bodies` and the encoders of :mod:`fms_dgt.core.tools._json`): the fast
  path, the same bytes as :func:`convert_record` for the records runs write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fms_dgt._lazy import lazy_exports

if TYPE_CHECKING:
    from fms_dgt.export.folder import ExportSummary, export_folder
    from fms_dgt.export.layout import ARROW_SAFE, from_arrow_safe, to_arrow_safe
    from fms_dgt.export.records import CanonicalRecord, convert_record, export_record, read_record
    from fms_dgt.export.templates import check_record, render_record

__all__ = [
    "ARROW_SAFE",
    "CanonicalRecord",
    "ExportSummary",
    "check_record",
    "convert_record",
    "export_folder",
    "export_record",
    "from_arrow_safe",
    "read_record",
    "render_record",
    "to_arrow_safe",
]

_E = "fms_dgt.export"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            ("CanonicalRecord", "convert_record", "export_record", "read_record"), f"{_E}.records"
        ),
        **dict.fromkeys(("ARROW_SAFE", "from_arrow_safe", "to_arrow_safe"), f"{_E}.layout"),
        **dict.fromkeys(("check_record", "render_record"), f"{_E}.templates"),
        **dict.fromkeys(("ExportSummary", "export_folder"), f"{_E}.folder"),
    },
)

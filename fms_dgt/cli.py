"""The ``fms-dgt`` command line.

::

    fms-dgt tools list SOURCE [--namespace NS] [--json]
    fms-dgt tools show SOURCE QUALIFIED_NAME
    fms-dgt tools validate SOURCE [--strict]
    fms-dgt tools export SOURCE [--format openai|openai-responses|anthropic|gemini] [--strict]
    fms-dgt run CONFIG [-n N] [--seed S] [--out DIR] [--format F] [--resume | --overwrite]
                [--template-family X] [--layout arrow-safe] [--check-template FILE]
                [--concurrency N] [--executor local|processes|ray] [--workers N]
    fms-dgt inspect OUT_DIR [--json]
    fms-dgt graph SOURCE (--tool QUALIFIED_NAME [--top N] | --dot FILE [--namespace NS])
    fms-dgt export OUT_DIR --format F [--template-family X] [--layout L] [--to jsonl|parquet] [--out DIR]

SOURCE is a config file (a YAML mapping with a ``tools:`` block) or a tool file. Errors print one
message, not a traceback, and exit with status 1 (2 for usage errors). ``run`` also exits with 1,
after writing its summary, when it wrote no record or rejected more than ``max_reject_rate``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fms_dgt import __version__
from fms_dgt.core.tools.wire import wire_formats
from fms_dgt.errors import DGTError, LoadError
from fms_dgt.secrets import install_log_filter, redact

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    formats = list(wire_formats())
    parser = argparse.ArgumentParser(prog="fms-dgt", description="Synthetic tool-calling data.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    tools = commands.add_parser("tools", help="inspect tool sources").add_subparsers(
        dest="tools_command", required=True
    )
    listing = tools.add_parser("list", help="list the tools of a config or tool file")
    listing.add_argument("source", help=_SOURCE_HELP)
    listing.add_argument("--namespace", help="only this namespace")
    listing.add_argument("--json", action="store_true", help="print a JSON array of tools")
    show = tools.add_parser("show", help="print one tool as JSON")
    show.add_argument("source", help=_SOURCE_HELP)
    show.add_argument("qualified_name", help="the tool, as namespace::name")
    validate = tools.add_parser("validate", help="load a source and report every problem")
    validate.add_argument("source", help=_SOURCE_HELP)
    validate.add_argument("--strict", action="store_true", help="warnings also fail")
    export = tools.add_parser("export", help="print tools in a provider's tool format")
    export.add_argument("source", help=_SOURCE_HELP)
    export.add_argument("--format", choices=formats, default="openai", help=_FORMAT_HELP)
    export.add_argument("--strict", action="store_true", help="OpenAI strict-mode schemas")
    export.add_argument("--namespace", help="only this namespace")
    _run_parser(commands, formats)
    inspect = commands.add_parser("inspect", help="print the summary and quality report of a run's output")
    inspect.add_argument("out_dir", help="the output folder of a run (its --out)")
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")
    _graph_parser(commands)
    _export_parser(commands, formats)
    return parser


_SOURCE_HELP = "a config (YAML/JSON mapping with a tools: block) or a tool file (.yaml, .yml, .json, .jsonl)"
_FORMAT_HELP = "provider layout of the tools and messages (default: openai)"


def _run_parser(commands: Any, formats: list[str]) -> None:
    run = commands.add_parser("run", help="generate tool-calling records from a config")
    run.add_argument("config", help="the run's config file (tools: and generation: blocks)")
    run.add_argument("-n", "--count", type=int, help="number of records (overrides generation.count)")
    run.add_argument("--seed", type=int, help="run seed (overrides generation.seed)")
    run.add_argument("--out", help="output directory (overrides generation.output_dir)")
    run.add_argument("--format", choices=formats, help=_FORMAT_HELP.replace("openai)", "generation.format)"))
    run.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    run.add_argument("--overwrite", action="store_true", help="replace earlier output in --out")
    run.add_argument(
        "--template-family",
        help="with --format hf: adapt records to a chat-template family (qwen, llama3, mistral, hermes...)",
    )
    run.add_argument(
        "--layout", choices=["plain", "arrow-safe"], help="arrow-safe: varying shapes as JSON text"
    )
    run.add_argument(
        "--check-template",
        help="a chat template file (.jinja or tokenizer config) every record must render in",
    )
    run.add_argument(
        "--concurrency",
        type=int,
        help="records in flight per process (run.concurrency; default 8, 2 with --executor processes)",
    )
    run.add_argument(
        "--executor", choices=["local", "processes", "ray"], help="where records are built (run.executor)"
    )
    run.add_argument(
        "--workers",
        type=int,
        help="run.workers: processes beside this one (default: cores - 1), or Ray actors (default 2)",
    )


def _graph_parser(commands: Any) -> None:
    graph = commands.add_parser("graph", help="show the dataflow graph: a tool's edges, or Graphviz")
    graph.add_argument("source", help=_SOURCE_HELP + "; without a dataflow enrichment, the defaults are used")
    graph.add_argument("--tool", help="print this tool's best outgoing and incoming edges, and why")
    graph.add_argument("--top", type=int, default=10, help="edges shown per direction (default: 10)")
    graph.add_argument("--dot", help="write the tool-level graph as Graphviz to this file")
    graph.add_argument("--namespace", help="with --dot: only this namespace's tools")


def _cmd_graph(args: argparse.Namespace) -> int:
    from fms_dgt.core.tools.enrichments.dataflow_view import describe_tool, graph_of, to_dot

    with _registry(args.source) as registry:
        graph = graph_of(registry)
        if args.tool:
            try:
                lines = describe_tool(graph, args.tool, args.top)
            except KeyError:
                raise LoadError(
                    f"unknown tool {args.tool!r}: it is not in the source. List them with fms-dgt tools list",
                    source=args.source,
                ) from None
            print("\n".join(printable(line) for line in lines))
        if args.dot:
            Path(args.dot).write_text(to_dot(graph, args.namespace), encoding="utf-8")
            print(f"wrote {args.dot}", file=sys.stderr)
    return 0


def _export_parser(commands: Any, formats: list[str]) -> None:
    from fms_dgt.core.tools.wire.families import FAMILIES

    export = commands.add_parser(
        "export", help="convert a run's records to another format, JSON Lines or Parquet"
    )
    export.add_argument("out_dir", help="the run's output folder (holding records.jsonl)")
    export.add_argument("--format", required=True, choices=formats, help="the target format")
    export.add_argument(
        "--template-family", choices=list(FAMILIES), help="adapt hf records to a template family"
    )
    export.add_argument(
        "--layout", choices=["plain", "arrow-safe"], help="default: plain (jsonl), arrow-safe (parquet)"
    )
    export.add_argument(
        "--to", choices=["jsonl", "parquet"], default="jsonl", help="file type (default: jsonl)"
    )
    export.add_argument("--out", help="destination folder (default: OUT_DIR/export-FORMAT[-FAMILY])")
    export.add_argument("--license", default="other", help="the dataset card's license id (default: other)")
    export.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")


def _cmd_export_records(args: argparse.Namespace) -> int:
    from fms_dgt.export.folder import export_folder

    summary = export_folder(
        args.out_dir,
        fmt=args.format,
        to=args.to,
        destination=args.out,
        family=args.template_family,
        layout=args.layout,
        license_id=args.license,
        overwrite=args.overwrite,
    )
    print(f"written {summary.written} records to {summary.destination} ({', '.join(summary.files)})")
    for reason, count in sorted(summary.skipped.items()):
        print(f"  skipped {count}: {printable(reason)}")
    return 0


def _config_data(path: Path) -> Any:
    """The parsed document when ``path`` holds a config, else None (it is a tool file).

    A config is one mapping whose ``tools`` value is a mapping with a ``registry`` list, or that
    declares ``mcp_servers``; that is decided on the parsed content, whatever the file's syntax
    (block or flow YAML, JSON).
    """
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        return None
    from fms_dgt.io import read_document

    docs = read_document(path)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        return None
    tools = docs[0].get("tools")
    if isinstance(tools, dict) and "registry" in tools:
        return docs[0]
    return docs[0] if isinstance(docs[0].get("mcp_servers"), dict) else None


def _registry(source: str) -> Any:
    from fms_dgt.config import config_from_data
    from fms_dgt.core.tools.registry import ToolRegistry

    path = Path(source)
    if not path.is_file():
        raise LoadError("source not found: give a config or tool file that exists", source=source)
    data = _config_data(path)
    if data is not None:
        return ToolRegistry.from_config(config_from_data(data, path))
    return ToolRegistry.from_file(path)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters shown as escapes, so nothing read from a source can
    drive the terminal (escape sequences in a tool's description)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode(), text)


def _tool_json(tool: Any) -> dict[str, Any]:
    return {"qualified_name": tool.qualified_name, "fingerprint": tool.fingerprint, **tool.to_dict()}


def _cmd_list(args: argparse.Namespace) -> int:
    with _registry(args.source) as registry:
        tools = registry.tools(args.namespace)
        if args.json:
            print(json.dumps([_tool_json(t) for t in tools], indent=2, ensure_ascii=False))
            return 0
        for tool in tools:
            summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            print(f"{tool.qualified_name}  {printable(summary[:80])}")
        print(f"{len(tools)} tools", file=sys.stderr)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    with _registry(args.source) as registry:
        tools = registry.overloads(args.qualified_name)
        payload: Any = _tool_json(tools[0]) if len(tools) == 1 else [_tool_json(t) for t in tools]
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    try:
        registry = _registry(args.source)
    except LoadError as exc:
        for problem in exc.problems or [exc]:
            print(f"error: {printable(redact(str(problem)))}")
        print(f"FAILED: {len(exc.problems) or 1} error(s) in {args.source}")
        return 1
    with registry:
        problems = [p for loader in registry.loaders for p in loader.report.problems]
        for problem in problems:
            print(printable(redact(str(problem))))
        folded = sum(loader.report.folded for loader in registry.loaders)
        failing = [p for p in problems if p.severity != "warning" or args.strict]
        status = "FAILED" if failing else "OK"
        print(
            f"{status}: {len(registry)} tools in {len(registry.namespaces())} namespaces, "
            f"{len(problems)} problem(s), {folded} repeated definition(s) folded"
        )
    return 1 if failing else 0


def _cmd_run(args: argparse.Namespace) -> int:
    from fms_dgt.databuilders.tool_calling.job import GenerationJob

    with GenerationJob(
        args.config,
        count=args.count,
        seed=args.seed,
        out=args.out,
        fmt=args.format,
        resume=args.resume,
        overwrite=args.overwrite,
        progress=sys.stderr,
        template_family=args.template_family,
        layout=args.layout,
        check_template=args.check_template,
        concurrency=args.concurrency,
        executor=args.executor,
        workers=args.workers,
    ) as job:
        summary = job.run()
        limit = job.settings.max_reject_rate
        where = job.settings.output_dir
    total = sum(summary.timing.values()) or 1e-9
    split = ", ".join(f"{k} {v / total:.0%}" for k, v in summary.timing.items())
    done = summary.written + summary.rejected - summary.skipped
    rate = done / summary.elapsed if summary.elapsed else 0.0
    print(
        f"written {summary.written}, rejected {summary.rejected}"
        + (f", {summary.skipped} already done" if summary.skipped else "")
    )
    print(f"tools covered: {len(summary.tool_coverage)}, edges covered: {len(summary.edge_coverage)}")
    print(f"time {summary.elapsed:.2f} s, {rate:.0f} records/s (of the work: {split})")
    for reason, count in sorted(summary.reasons.items()):
        print(f"  rejected for {reason}: {count}")
    print(f"quality report: fms-dgt inspect {where}")
    verdict = summary.verdict(limit)
    if verdict is not None:
        print(f"error: {verdict} (in {where})", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _cmd_inspect(args: argparse.Namespace) -> int:
    from fms_dgt.databuilders.tool_calling.inspect import inspect_folder, report_lines

    summary = inspect_folder(args.out_dir)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        print("\n".join(printable(line) for line in report_lines(summary)))
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    from fms_dgt.core.tools.wire import project_tools

    with _registry(args.source) as registry:
        payload, codec = project_tools(registry.tools(args.namespace), args.format, strict=args.strict)
        print(json.dumps({"tools": payload, "name_map": codec.name_map}, indent=2, ensure_ascii=False))
    return 0


_TOOLS_COMMANDS = {"list": _cmd_list, "show": _cmd_show, "validate": _cmd_validate, "export": _cmd_export}


#: Exit statuses: success, an error (message on stderr), a usage error, interrupted (Ctrl-C).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Flag combinations argparse cannot express; each exits with :data:`EXIT_USAGE`."""
    if args.command == "graph":
        if not args.tool and not args.dot:
            parser.error("graph needs --tool NAME or --dot FILE")
        if args.top < 1:
            parser.error(f"--top must be at least 1, got {args.top}")
        return
    if args.command != "run":
        return
    if args.resume and args.overwrite:
        parser.error(
            "--resume and --overwrite exclude each other: resume continues the output, overwrite replaces it"
        )
    if args.count is not None and args.count < 0:
        parser.error(f"-n/--count must be 0 or more, got {args.count}")
    for flag in ("concurrency", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag} must be 1 or more, got {value}")
    if args.seed is not None and not 0 <= args.seed < 2**63:
        parser.error(f"--seed must be between 0 and 2**63 - 1, got {args.seed}")


def _handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    if args.command == "tools":
        return _TOOLS_COMMANDS[args.tools_command]
    top = {"run": _cmd_run, "inspect": _cmd_inspect, "graph": _cmd_graph, "export": _cmd_export_records}
    return top[args.command]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fms-dgt`` console script; returns the exit status.

    Errors print one line on stderr (no traceback): 1 for an error of the run or its inputs, 2 for a
    usage error, 130 when interrupted.
    """
    install_log_filter()
    parser = _parser()
    args = parser.parse_args(argv)
    _check_usage(parser, args)
    handler = _handler(args)
    try:
        return handler(args)
    except DGTError as exc:
        print(f"error: {printable(redact(str(exc)))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted: stopped before finishing; run again with --resume to continue", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

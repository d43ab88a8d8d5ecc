"""Graph files that are empty, padded, garbled or nested without end: one sentence, exit 2."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.ge_text import format_text_graph
from fpinspect.dumps.formats.graph import load_graph

SAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression"))


def _sample_text() -> str:
    with open(f"{SAMPLE}/dumpgraph_af_open/Build.json", encoding="utf-8") as f:
        return format_text_graph(json.load(f))


def _compare(open_graph) -> tuple[int, str]:
    r = CliRunner().invoke(
        main,
        [
            "compare",
            "--af-open-graph",
            str(open_graph),
            "--af-close-graph",
            f"{SAMPLE}/dumpgraph_af_close/Build.json",
            "--af-open-data",
            f"{SAMPLE}/datadump_af_open",
            "--af-close-data",
            f"{SAMPLE}/datadump_af_close",
            "--format",
            "json",
        ],
    )
    return r.exit_code, r.output


def _nested_attr(levels: int) -> str:
    """An op attribute holding a function whose attribute holds a function ..., ``levels`` deep,
    one field per line as GE prints it."""
    return 'attr {\nkey: "f"\nvalue {\nfunc {\nname: "f"\n' * levels + "}\n}\n}\n" * levels


def test_an_attribute_nested_500_levels_is_one_sentence(tmp_path):
    lines = _sample_text().splitlines()
    first_op = next(i for i, line in enumerate(lines) if line.strip() == "op {")
    lines.insert(first_op + 1, _nested_attr(500))
    path = tmp_path / "ge_proto_nested.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply") as err:
        load_graph(path)
    assert err.value.code == "GRAPH_LOAD_ERROR"
    code, output = _compare(path)
    assert code == 2 and "Traceback" not in output and str(path) in output


def test_a_text_graph_nested_500_levels_on_one_line_is_called_a_text_graph(tmp_path):
    path = tmp_path / "ge_proto_nested.txt"
    path.write_text("graph { op { " + "attr { key: 'f' value { func { " * 500 + "} } } " * 500 + "} }")
    with pytest.raises(InputError) as err:
        load_graph(path)
    assert "nested too deeply to be a text graph" in str(err.value) and "JSON" not in str(err.value)


def test_blank_lines_before_a_text_graph_are_read_past(tmp_path):
    text = _sample_text()
    (tmp_path / "plain.txt").write_text(text, encoding="utf-8")
    (tmp_path / "padded.txt").write_text("\n" * 100 + "  \t\r\n" * 20 + text, encoding="utf-8")
    assert load_graph(tmp_path / "padded.txt").graphs == load_graph(tmp_path / "plain.txt").graphs
    assert _compare(tmp_path / "padded.txt")[0] == 0


@pytest.mark.parametrize("content", ["", "\n\n  \n", "\ufeff"])
def test_an_empty_graph_file_is_called_empty(tmp_path, content):
    path = tmp_path / "ge_proto_empty.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="is empty") as err:
        load_graph(path)
    assert "JSON" not in str(err.value)
    code, output = _compare(path)
    assert code == 2 and "is empty" in output


@pytest.mark.parametrize("content", ["hello world\n", "abc", "graph {\n}\n}\n"])
def test_a_garbled_text_graph_names_line_and_column(tmp_path, content):
    path = tmp_path / "ge_proto_garbage.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_graph(path)
    message = str(err.value)
    assert "protobuf text format (line " in message and "\n" not in message and "()" not in message
    assert "''" not in message


def test_a_text_graph_that_is_not_utf8_is_not_called_json(tmp_path):
    path = tmp_path / "ge_proto_latin1.txt"
    path.write_bytes(b'graph {\nname: "\xe9"\n}\n')
    with pytest.raises(InputError, match="not UTF-8") as err:
        load_graph(path)
    assert "JSON" not in str(err.value)


@pytest.mark.parametrize("one_line", [False, True])
def test_deep_nesting_is_refused_whatever_the_recursion_limit(tmp_path, one_line):
    """torch and Inductor raise the interpreter's recursion limit: the refusal must not rest on it."""
    import sys

    if one_line:
        text = "graph { op { " + "attr { key: 'f' value { func { " * 500 + "} } } " * 500 + "} }"
    else:
        lines = _sample_text().splitlines()
        first_op = next(i for i, line in enumerate(lines) if line.strip() == "op {")
        lines.insert(first_op + 1, _nested_attr(500))
        text = "\n".join(lines) + "\n"
    path = tmp_path / "ge_proto_nested.txt"
    path.write_text(text, encoding="utf-8")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)
    try:
        with pytest.raises(InputError, match="nested too deeply to be a text graph"):
            load_graph(path)
    finally:
        sys.setrecursionlimit(limit)

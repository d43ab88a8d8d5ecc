"""Messages about inputs say what is wrong with them: a link loop is not a missing file, an
invalid origin index is not an absent one, a device is not a missing config, a type filter that
matched nothing is not a graph without fused ops."""

import os

import numpy as np
import pytest
from click.testing import CliRunner
from gefixtures import GraphBuilder, tensor, write_dump

from fpinspect.cli import main
from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.graph import load_graph

SAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression"))


def _flags(**given):
    paths = {
        "af_open_graph": f"{SAMPLE}/dumpgraph_af_open/Build.json",
        "af_close_graph": f"{SAMPLE}/dumpgraph_af_close/Build.json",
        "af_open_data": f"{SAMPLE}/datadump_af_open",
        "af_close_data": f"{SAMPLE}/datadump_af_close",
        **given,
    }
    return [x for k, v in paths.items() for x in ("--" + k.replace("_", "-"), str(v))]


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def links(tmp_path):
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    return tmp_path


def test_a_symbolic_link_loop_is_not_called_missing(links):
    np.save(links / "ok.npy", np.ones(3, np.float16))
    r = _run("diff", links / "loop", links / "ok.npy")
    assert r.exit_code == 2 and "is a symbolic link loop" in r.output and "does not exist" not in r.output
    r = _run("diff", links / "dangling", links / "ok.npy")
    assert r.exit_code == 2 and "is a symbolic link to a file that does not exist" in r.output
    r = _run("compare", *_flags(af_open_data=links / "loop"))
    assert r.exit_code == 2 and "is a symbolic link loop" in r.output
    with pytest.raises(InputError, match="is a symbolic link loop"):
        load_graph(links / "loop")


def test_a_device_as_config_is_not_called_missing():
    r = _run("compare", *_flags(), "--config", os.devnull)
    assert r.exit_code == 2 and "not a regular file" in r.output and "does not exist" not in r.output


def test_fused_types_that_match_nothing_say_so_and_list_the_types():
    r = _run("compare", *_flags(), "--fused-types", "NoSuchType")
    assert r.exit_code == 0
    assert "--fused-types matched none of the fusion-on graph's fused ops (5 AscBackend)" in r.stdout
    assert "has no fused op" not in r.stdout


def _origin_run(root, index):
    t = [2, 3]
    on = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .fused(
            "autofuse_0",
            inputs=["x:0"],
            outputs=[tensor(t, origin_name="Add_1", origin_index=index)],
            original=[("Add_1", "Add")],
        )
    )
    off = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .op("Add_1", "Add", inputs=["x:0"], outputs=[tensor(t)])
    )
    write_dump(root / "on", "AscBackend", "autofuse_0", "output", 0, np.ones(t, np.float16))
    write_dump(root / "off", "Add", "Add_1", "output", 0, np.ones(t, np.float16))
    return DumpComparison(
        str(on.write(root / "on.json")),
        str(off.write(root / "off.json")),
        str(root / "on"),
        str(root / "off"),
    )


def test_an_invalid_origin_index_is_named_not_called_absent(tmp_path):
    record = _origin_run(tmp_path, -1).run().records[0]
    assert record.status == ["NO_MAPPING"]
    message = record.fields()["message"]
    assert "_datadump_origin_output_index -1, which is not an output number" in message
    assert "carries no" not in message


def test_an_origin_index_past_the_original_outputs_is_named(tmp_path):
    record = _origin_run(tmp_path, 7).run().records[0]
    assert record.status == ["ORIGIN_NOT_FOUND"]
    assert (
        record.fields()["message"] == "original op Add_1 has no output 7 (it has 1 in the fusion-off graph)"
    )

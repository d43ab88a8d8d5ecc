"""What the capture tests share: the planted regression and how a pair is compared."""

from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.inspection.pipeline import Inspection
from fpinspect.inspection.settings import CompareSettings

#: The regression the tests (and ``sample_dumps/regression``) plant: region 2 is the
#: residual add + LayerNorm of the Transformer block, mid-graph.
INJECTED = "2=bf16"
INJECTED_REGION = "autofuse_2_Add_LayerNorm"


def compare(pair, replay: str = "failing"):
    """``fpinspect compare`` on a dump pair, with its replay of the ``replay`` ops (the CLI's
    default: failing and warned ones); inputs are compared too (localisation needs them)."""
    paths = (pair.open_graph, pair.close_graph, pair.open_data, pair.close_data)
    return Inspection(DumpComparison(*map(str, paths)), CompareSettings(replay=replay)).report(
        compare_input=True
    )

"""The adapter extension: ``model-explorer GRAPH --extensions=fpinspect.explorer`` opens GE graphs
(Model Explorer loads an extension's ``main`` module)."""

from __future__ import annotations

from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs

from ..dumps.errors import InputError
from .graphs import collections_of, collector_paused

#: The adapter's id, which a model source names to choose it.
ADAPTER_ID = "fpinspect_ge"


class GeAdapter(Adapter):
    """GE dump graphs: atc's JSON, ``ge_proto_*.txt``, ``capture``'s ``Build.json``, folders of them."""

    metadata = AdapterMetadata(
        id=ADAPTER_ID,
        name="GE graph (fpinspect)",
        description="Ascend GE dump graphs: atc's JSON, ge_proto_*.txt, fpinspect capture's Build.json",
        fileExts=["json", "txt"],
    )

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        try:
            with collector_paused():
                return {"graphCollections": collections_of(model_path)}
        except InputError as exc:
            # Model Explorer shows the message of what convert raises, in its page
            raise ValueError(str(exc)) from None

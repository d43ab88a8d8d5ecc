"""The comparison engine: which tensors pair up (:mod:`.plan`), loading a pair's sides
(:mod:`.sides`), one record per pair (:mod:`.pair`, :mod:`.records`) and where many are computed
(:mod:`.executing`), verdicts (:mod:`.verdict`), localisation (:mod:`.localise`), the report
(:mod:`.report`, :mod:`.report_types`), tied together by :class:`~.compare.DumpComparison`."""

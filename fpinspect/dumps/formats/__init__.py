"""Readers (and writers) of the Ascend tool chain's files: GE dump graphs (atc JSON, ``ge_proto``
text: :mod:`.graph`) and their fusion mapping (:mod:`.fusion`), datadump folders (``.npy`` and raw
dumps: :mod:`.datadump`, :mod:`.rawdump`), storage layouts (:mod:`.layouts`)."""

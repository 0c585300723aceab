"""The fast paths: a result served from a record when nothing it depends on changed.

Every record (the validate replay, the python sources' contracts, the run gate's decision)
decides "unchanged" with one key, `wfops.fastpath.snapshot`. These modules sit on hot paths
(a pre-commit `validate`, a run of an unchanged deployment), so an import-linter contract
keeps heavy libraries out of them, and a test checks what a hit loads.
"""

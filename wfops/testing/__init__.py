"""Workflow tests (`wfops test`, docs/testing.md): run `*.wftest.yaml` cases in-process,
with capabilities mocked through a resolver and an in-memory checkpoint sink.

This layer sits between the runner and the core API: it may use the engine, sources,
lock and compiler; the engine knows nothing of tests.
"""

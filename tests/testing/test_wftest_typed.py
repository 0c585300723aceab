"""`wfops test` drives typed retries and catches: a mock's error `type` is what `retry.on` and
`catch.errors` match."""

from __future__ import annotations

from pathlib import Path

import pytest

import wfops
from tests.testing.conftest import FILES, add_test

TYPED = """
    name: typed
    input: {type: object, properties: {q: {type: string}, notify: {type: boolean}}}
    state:
      value: {type: integer, default: 0}
      err: {type: object}
    output: {value: $state.value}
    steps:
      - id: fetch
        uses: nodes.fetch
        with: {q: $input.q}
        retry: {attempts: 3, backoff: 0, on: [Timeout]}
        save: {value: state.value}
        catch:
          - {errors: [Timeout], next: slow}
          - {next: broken, save: state.err}
        next: end
      - {id: slow, end: slow}
      - {id: broken, end: broken}
    """


@pytest.fixture
def typed(make_project) -> Path:
    root = make_project({**FILES, "workflows/typed.yaml": TYPED})
    assert wfops.Project(root).compile().written
    return root


def test_retry_on_and_catch_errors_match_a_mocks_error_type(typed: Path) -> None:
    add_test(typed, """
        workflow: typed
        cases:
          - name: two timeouts then a value
            mocks: {fetch: [{error: {type: Timeout, message: slow}}, {error: {type: Timeout, message: slow}},
                            {output: {value: 4}}]}
            expect: {status: completed, outcome: ok, output: {value: 4}}
          - name: timeouts to the end
            mocks: {fetch: [{error: {type: Timeout, message: a}}, {error: {type: Timeout, message: b}},
                            {error: {type: Timeout, message: c}}]}
            expect: {outcome: slow, path: [fetch, slow]}
          - name: a bad input fails at once and is caught by the catch-all
            mocks: {fetch: [{error: {type: InvalidInput, message: no q}}]}
            expect: {outcome: broken, path: [fetch, broken], state: {err: {type: InvalidInput, message: no q,
                                                                               step: fetch}}}
        """)
    report = wfops.Project(typed).test()
    assert [c.status for c in report.cases] == ["passed"] * 3, [c.message for c in report.cases]

"""The project the browser tests run: std capabilities only, one workflow per thing a page
shows (a slow run to watch live, an interrupt to answer, a failure to redrive, an echo of
whatever input it is given)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write
from tests.harness import run_cli

FILES = {
    "sources.yaml": "sources: {}\n",
    "workflows/echo.yaml": """
        name: echo
        description: Say back what it is given.
        input:
          type: object
          properties:
            text: {type: string}
            blob: {type: string}
        state:
          said: {type: object}
        output:
          said: $state.said
        steps:
          - id: say
            uses: std.echo
            with: {value: {text: $input.text, blob: $input.blob}}
            save: state.said
            next: end
        """,
    "workflows/slow.yaml": """
        name: slow
        description: Three steps that take their time.
        input:
          type: object
          properties:
            seconds: {type: number}
        steps:
          - id: first
            uses: std.sleep
            with: {seconds: $input.seconds}
            next: second
          - id: second
            uses: std.sleep
            with: {seconds: $input.seconds}
            next: third
          - id: third
            uses: std.sleep
            with: {seconds: $input.seconds}
            next: end
        """,
    "workflows/approve.yaml": """
        name: approve
        description: Ask a person, then say who answered.
        input:
          type: object
          properties:
            change: {type: string}
        state:
          decision: {type: object}
          message: {type: string}
        output:
          message: $state.message
        steps:
          - id: ask
            interrupt: approval
            request: {question: "Approve this change?", change: $input.change}
            resume_schema:
              type: object
              required: [by]
              additionalProperties: false
              properties:
                by: {type: string, minLength: 1}
                comment: {type: string}
            save: state.decision
            on: {approved: announce, rejected: refused}
          - id: announce
            uses: std.format
            with: {template: "Approved by {by}", values: {by: $state.decision.by}}
            save: {text: state.message}
            next: end
          - id: refused
            end: rejected
        """,
    "workflows/boom.yaml": """
        name: boom
        description: Echo, then fail.
        input:
          type: object
          properties:
            message: {type: string}
        steps:
          - id: before
            uses: std.echo
            with: {value: $input.message}
            next: explode
          - id: explode
            uses: std.fail
            with: {message: $input.message}
            next: end
        """,
    "workflows/lanes.yaml": """
        name: lanes
        description: A foreach of three items, then a call that fails twice and is caught.
        input:
          type: object
          properties:
            items: {type: array, items: {type: string}}
        state:
          said: {type: array}
          error: {type: object}
        steps:
          - id: each
            foreach: $input.items
            uses: std.echo
            with: {value: $item}
            mode: parallel
            save: state.said
            next: shaky
          - id: shaky
            uses: std.fail
            with: {message: no luck}
            retry: {attempts: 2, backoff: 0}
            catch: {next: end, save: state.error}
            next: end
        """,
    "deployments/lanes.local.yaml": "name: lanes.local\nworkflow: lanes\ninput: {items: [a, b, c]}\n",
    "workflows/secretive.yaml": """
        name: secretive
        description: Echo a secret (the store keeps it masked).
        state:
          said: {type: object}
        output:
          said: $state.said
        steps:
          - id: say
            uses: std.echo
            with: {value: {token: $secret.UI_TEST_TOKEN}}
            save: state.said
            next: end
        """,
    "deployments/secretive.local.yaml": "name: secretive.local\nworkflow: secretive\nsecrets: [UI_TEST_TOKEN]\n",
    "deployments/echo.local.yaml": "name: echo.local\nworkflow: echo\ninput: {text: hello}\n"
                                   "schedule:\n  - {name: nightly, cron: '30 2 * * *', timezone: Europe/Berlin}\n",
    "deployments/slow.local.yaml": "name: slow.local\nworkflow: slow\ninput: {seconds: 0.01}\n",
    "deployments/approve.local.yaml": "name: approve.local\nworkflow: approve\ninput: {change: ship it}\n",
    "deployments/boom.local.yaml": "name: boom.local\nworkflow: boom\ninput: {message: kaboom}\n",
}


def make(root: Path) -> Path:
    """The project at `root`, compiled (its wfops.lock written)."""
    write(root, FILES)
    done = run_cli("compile", cwd=root)
    assert done.code == 0, done.stdout + done.stderr
    return root

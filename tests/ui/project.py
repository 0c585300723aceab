"""The project the browser tests run: std capabilities only, one workflow per thing a page
shows (a slow run to watch live, an interrupt to answer, a failure to redrive, an echo of
whatever input it is given, a python node that prints)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write
from tests.harness import run_cli

FILES = {
    "sources.yaml": "sources:\n  talk: {kind: python, module: nodes.talk}\n",
    "nodes/__init__.py": "",
    "nodes/talk.py": """
        from __future__ import annotations

        import logging
        import os

        from pydantic import BaseModel, Field

        import wfops


        class SayIn(BaseModel):
            n: int = Field(description="How many lines to print; negative fails.")


        class SayOut(BaseModel):
            n: int = Field(description="The lines printed.")


        @wfops.node
        def say(payload: SayIn) -> SayOut:
            \"\"\"Print a line with markup and the secret, then n more lines; fail on a negative n.\"\"\"
            print("printed <script>window.__pwned = 3</script> token=" + os.environ.get("UI_TEST_TOKEN", "unset"))
            for i in range(abs(payload.n)):
                print(f"line {i}")
            logging.getLogger("talk").warning("said %s lines", payload.n)
            if payload.n < 0:
                raise ValueError(f"refused {payload.n}")
            return SayOut(n=payload.n)
        """,
    "workflows/talk.yaml": """
        name: talk
        description: A python node that prints, logs, and fails on a negative count.
        input:
          type: object
          properties:
            n: {type: integer}
        steps:
          - id: speak
            uses: talk.say
            with: {n: $input.n}
            next: end
        """,
    "deployments/talk.local.yaml": "name: talk.local\nworkflow: talk\nbindings: {talk: talk}\n"
                                   "input: {n: 2}\nsecrets: [UI_TEST_TOKEN]\n",
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
        description: Three steps that take their time; the middle one prints.
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
            uses: talk.say
            with: {n: 1}
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

"""`$secret.NAME` must be listed in the `secrets:` of every deployment that runs the workflow."""

from __future__ import annotations

from wfops.compiler.checks.context import Env, Sink
from wfops.compiler.checks.scope import safe_parse, sites
from wfops.loader.project import Loaded
from wfops.model.paths import iter_paths


def check_secrets(loaded: Loaded, env: Env, sink: Sink) -> None:
    if env.secrets is None:
        return  # no deployment: nothing declares secrets
    for site in sites(loaded):
        for inner, text in iter_paths(site.value):
            path = safe_parse(text)
            if path is None or path.root != "secret" or not path.parts:
                continue
            name = str(path.parts[0])
            if name not in env.secrets:
                sink.warning("undeclared-secret", f"`{text}` is not listed in the deployment's `secrets:`, so it "
                             "will be empty", loaded, (*site.at, *inner),
                             hint=f"add `{name}` to the `secrets:` list of the deployment file")

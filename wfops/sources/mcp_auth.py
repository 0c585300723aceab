"""OAuth client credentials for a `url:` MCP source (`auth:` in sources.yaml).

The MCP SDK runs the grant (`ClientCredentialsOAuthProvider`, an httpx2 `Auth`): on the server's
401 it reads the server's protected resource metadata, then the authorization server's metadata,
posts the client's id and secret to its token endpoint, and sends the token as a bearer header,
asking again when it expires. wfops adds three things around it:

- the token lives in this process's memory only (`MemoryTokens`), declared to the redactor the
  moment it arrives, so no channel shows it and nothing writes it to the store, lock or trace;
- `issuer` is required and pins the authorization server: the SDK refuses metadata naming any
  other issuer, and the HTTP client refuses any request to an origin other than the MCP server's
  and the issuer's, so the secret cannot be led to a host the project did not name;
- a refused grant becomes one line naming the source and the authorization server's answer.

Imported only when such a source opens: it pulls in the MCP SDK.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp.client.auth import OAuthFlowError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from wfops.model.objects import OAuthClientCredentials
from wfops.redact import declare, mask
from wfops.sources.envrefs import expand, expand_all, referenced
from wfops.sources.http import same_host_client

#: How much of an authorization server's refusal a message quotes.
_QUOTED = 200


class MemoryTokens:
    """The SDK's `TokenStorage`, in memory: a token never outlives the session that obtained it."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        # Declared before the SDK sends it anywhere: an error quoting a request shows a mask.
        declare([tokens.access_token, tokens.refresh_token or ""])
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info


def oauth_client(source_id: str, url: str, headers: dict[str, str], auth: OAuthClientCredentials) -> httpx2.AsyncClient:
    """The HTTP client of the session: the grant as its `auth`, requests only to `url`'s origin and the
    issuer's, `headers` only to `url`'s."""
    owner = f"mcp source {source_id!r}"
    provider = ClientCredentialsOAuthProvider(
        server_url=url, storage=MemoryTokens(),
        client_id=expand(owner, "auth.client_id", auth.client_id),
        client_secret=expand(owner, "auth.client_secret", auth.client_secret),
        token_endpoint_auth_method=auth.token_endpoint_auth_method,
        scope=auth.scope, issuer=auth.issuer)
    return same_host_client(url, expand_all(owner, "headers", headers), timeout=None,
                            also=(auth.issuer,), auth=provider, owner=owner)


def oauth_failure(source_id: str, auth: Any, leaf: BaseException) -> tuple[str, str] | None:
    """(message, hint) for a failed grant, or None when `leaf` is not one."""
    if auth is None or not isinstance(leaf, OAuthFlowError):
        return None
    where = f"mcp source {source_id!r}: OAuth with {auth.issuer}"
    text = str(leaf)
    if isinstance(leaf, OAuthTokenError) and text.startswith("Token exchange failed"):
        message = f"{where}: the authorization server refused the client credentials ({_refusal(text)})"
    else:
        message = f"{where} failed: {text.splitlines()[0][:_QUOTED] if text else type(leaf).__name__}"
    names = referenced(auth.client_secret)
    secret = f"the variable {names[0]}" if names else "`client_secret`"
    hint = (f"check `auth.client_id` and {secret} against the client registered at {auth.issuer}, "
            "and that the MCP server's metadata names that issuer")
    return mask(message), hint


def _refusal(text: str) -> str:
    """`Token exchange failed (401): {"error": ...}` as `401 invalid_client: why`."""
    head, _, body = text.partition(": ")
    status = head[head.find("(") + 1:head.find(")")] if "(" in head else ""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        said = answer["error"]
        if isinstance(answer.get("error_description"), str):
            said += f": {answer['error_description']}"
    else:
        said = " ".join(body.split())
    return f"{status} {said[:_QUOTED]}".strip()

"""Who is asking: an API key (hashed at rest), or the owner on loopback when the config allows it.

Every route depends on ``principal``: it authenticates, then counts the request against
the caller's rate limit. ``user_for`` decides whose memory a request may touch: a key
opens its own user's memory only; an admin key (or the keyless loopback owner) may name
any user. ``KeyCheckGate`` answers a caller with no failed key checks to spare before routing.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from huichat.app.serve.errors import REFUSAL_PAUSE, ApiError, keys_refusal, send_error
from huichat.app.serve.service import Service, service_of
from huichat.app.users.keys import ApiKey, KeyRing, KeyRingError
from huichat.app.users.memories import UnknownUser, check_user_name

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    user: str
    identity: str
    """What the rate limit counts: the key id, or 'loopback'."""
    admin: bool = False


_BEARER = HTTPBearer(auto_error=False, description="an API key from `huichat keys create --user NAME`")
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]


def _loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def principal(request: Request, credentials: Bearer) -> Principal:
    """Authenticate the request and apply the caller's rate limit (401, 429)."""
    service = service_of(request)
    token = credentials.credentials.strip() if credentials is not None and credentials.credentials.strip() else None
    if token is not None:
        # a key verified before costs a hash and a stat; argon2 runs once per key (``_check``)
        key = service.keys.remembered(token) or await _check(service, request, token)
        if key is None:
            raise ApiError(401, "invalid or revoked API key", _CHALLENGE)
        caller = Principal(key.user, key.id, key.admin)
    elif service.keys.any_active():
        raise ApiError(401, "an API key is required: send 'Authorization: Bearer <key>'", _CHALLENGE)
    elif service.settings.allow_loopback_without_keys and _loopback(request):
        caller = Principal(service.settings.owner, "loopback", admin=True)
    else:
        raise ApiError(
            401,
            "no API key exists yet: create one with `huichat keys create --user NAME` "
            "(or set serve.allow_loopback_without_keys for this machine only)",
            _CHALLENGE,
        )
    wait = service.limiter.retry_after(caller.identity)
    if wait is not None:
        raise ApiError(429, f"rate limit reached; retry in {wait} s", {"Retry-After": str(wait)})
    return caller


async def _check(service: Service, request: Request, token: str) -> ApiKey | None:
    """argon2 for a key not verified yet: admitted while the key id and the client address have
    failures to spare (429 before any work), then run in the service's key-check thread, one at
    a time at a lower priority, so a flood of wrong secrets costs the server a bounded amount
    and never holds the event loop. A check that runs no argon2 (an unknown or revoked key, a
    wrong secret resent) is counted against its key id only: one client resending a stale key
    must not lock the others behind its address (a proxy) out."""
    key_id = KeyRing.key_id(token)
    if key_id is None:
        return None  # malformed: refused without argon2
    costly = service.keys.checkable(token)
    identities = _identities(key_id, _client(request.scope) if costly else None)
    refused = service.key_checks.admit(*identities)
    if refused is not None:
        raise await _too_many_failures(key_id, *refused)
    key: ApiKey | None = None
    try:
        if costly:
            key = await asyncio.get_running_loop().run_in_executor(service.key_checker, service.keys.verify, token)
        else:  # verified meanwhile by another request, or refused: no argon2 on the event loop
            key = service.keys.remembered(token)
    finally:
        service.key_checks.finish(*identities, failed=key is None)
    return key


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _identities(key_id: str, client: str | None) -> tuple[str, ...]:
    """What failed key checks are counted against: the key id, and the client's address (when given)."""
    return (f"key:{key_id}",) if client is None else (f"key:{key_id}", f"client:{client}")


async def _too_many_failures(key_id: str, wait: int, full: list[str]) -> ApiError:
    """The 429 of a caller with no failed key checks to spare, after the refusal's pause."""
    await asyncio.sleep(min(wait, REFUSAL_PAUSE))
    spent = " and ".join(
        f"for key {key_id}" if identity.startswith("key:") else "from this address" for identity in full
    )
    return ApiError(
        429,
        f"too many failed API key checks {spent}; retry in {wait} s",
        {"Retry-After": str(wait)},
    )


class KeyCheckGate:
    """Pure ASGI middleware: a token not verified yet whose key id or client address has used
    up its failed key checks is answered 429 here, before routing, dependencies and exception
    handlers, so a flood of wrong secrets costs the event loop a header lookup per request. A
    verified key passes whatever others send; everything else is decided by ``principal``."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refusal := await self._refusal(scope)) is not None:
            await send_error(send, refusal.status_code, str(refusal.detail), refusal.headers)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, scope: Scope) -> ApiError | None:
        authorization = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, token = authorization.decode("latin-1").partition(" ")
        key_id = KeyRing.key_id(token) if scheme.lower() == "bearer" else None
        try:
            if key_id is None or self.service.keys.remembered(token) is not None:
                return None
            costly = self.service.keys.checkable(token)
        except KeyRingError as exc:  # outside the app's handlers: answered here as they would
            return keys_refusal(exc, self.service.settings.memory_retry_seconds)
        client = _client(scope) if costly else None
        refused = self.service.key_checks.refusal(*_identities(key_id, client))
        return None if refused is None else await _too_many_failures(key_id, *refused)


Caller = Annotated[Principal, Depends(principal)]
"""A route parameter of this type is the authenticated, rate-limited caller."""


def user_for(
    request: Request, caller: Principal, requested: str | None, *, may_create: bool = False, named_by: str = "?user="
) -> str:
    """Whose memory the request touches: the caller's own, or (admins only) the one it names
    (``named_by``: where the request named it, for the messages)."""
    if not requested or requested == caller.user:
        return caller.user
    if not caller.admin:
        raise ApiError(
            403,
            f"this key belongs to user '{caller.user}' and cannot act for user '{requested[:40]}' "
            f"(named by {named_by}): leave it out, or use an admin key to keep one memory per user",
        )
    try:
        name = check_user_name(requested)
    except UnknownUser as exc:
        raise ApiError(400, f"{named_by}: {exc}") from None
    service = service_of(request)
    if not may_create and name not in service.stores.users(k.user for k in service.keys.entries()):
        raise ApiError(404, f"no user '{name}'")
    return name

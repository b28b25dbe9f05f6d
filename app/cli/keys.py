"""``huichat keys``: create, list and revoke the API keys of ``huichat serve``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from huichat.app.errors import CommandError
from huichat.app.users.keys import KeyRing, KeyRingError
from huichat.app.users.memories import UnknownUser

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "API keys of huichat serve: create, list, revoke"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The keys sub-commands."""
    actions = parser.add_subparsers(dest="keys", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a key for a user (shown once)")
    create.add_argument("--user", required=True, metavar="NAME", help="whose memory the key opens (a-z, 0-9, - _)")
    create.add_argument("--admin", action="store_true", help="may act for any user and list every user")
    listing = actions.add_parser("list", help="every key: id, user, created, revoked")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = actions.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id", metavar="ID")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Run one keys action."""
    ring = KeyRing.configured(runtime.loaded)
    try:
        if args.keys == "create":
            key, token = ring.create(args.user, runtime.clock(), admin=args.admin)
            role = "admin key" if key.admin else "key"
            print(f"created {role} {key.id} for user '{key.user}'. It is shown only now; keep it safe:\n")
            print(token)
            print("\nuse it as: Authorization: Bearer <key>", file=sys.stderr)
            return 0
        if args.keys == "list":
            rows = ring.describe()
            if args.json:
                print(json.dumps(rows, indent=2))
                return 0
            if not rows:
                print("no API keys (create one with: huichat keys create --user NAME)")
            for row in rows:
                state = f"revoked {row['revoked']}" if row["revoked"] else "active"
                admin = " admin" if row["admin"] else ""
                print(f"{row['id']}  {row['user']:<16} created {row['created']}  {state}{admin}")
            return 0
        earlier = next((k for k in ring.entries() if k.id == args.key_id.strip()), None)
        key = ring.revoke(args.key_id, runtime.clock())
        if earlier is not None and not earlier.active:  # revoke keeps the first time
            print(f"key {key.id} of user '{key.user}' was already revoked ({key.revoked})")
            return 0
        print(f"revoked key {key.id} of user '{key.user}'")
        return 0
    except (KeyRingError, UnknownUser) as exc:
        raise CommandError(str(exc)) from None

"""The bodies of accounts and their tokens (issue 35): create an account, mint, list and revoke
tokens. Requests refuse unknown fields (``Strict``); answers carry only what is declared."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.bodies import NAME, NAME_DESCRIPTION, Strict

SCOPES = ("play", "history:read", "webhooks:write", "tokens:write")
SCOPES_DESCRIPTION = (
    "What the token may do: `play` (take seats and act for them, challenges, quick match, the"
    " account's stream), `history:read` (the account's private games in its history),"
    " `webhooks:write` (the account's webhooks), `tokens:write` (mint, list and revoke the"
    " account's tokens). A route outside them answers `403 insufficient_scope`."
)
TOKEN_DESCRIPTION = (
    "The bearer token (`cardroom_pat_` and 43 characters: 256 random bits). **Shown only this"
    " once**: the service keeps only its hash. Send it as `Authorization: Bearer <token>`."
)
LABEL = fields.String(
    load_default="",
    validate=validate.Length(max=100),
    metadata={"description": "What the token is for, for you to recognise it (≤ 100 characters)."},
)


class NewAccountRequest(Strict):
    """POST /accounts."""

    name = fields.String(
        required=True,
        validate=NAME,
        metadata={
            "description": "The account's name, unique across accounts: no two accounts have"
            f" names that look alike. {NAME_DESCRIPTION}"
        },
    )


class NewTokenRequest(Strict):
    """POST /accounts/me/tokens."""

    scopes = fields.List(
        fields.String(validate=validate.OneOf(SCOPES)),
        required=True,
        validate=validate.Length(min=1, max=len(SCOPES)),
        metadata={"description": SCOPES_DESCRIPTION + " At most the scopes of the token asking."},
    )
    label = LABEL


class TokenSummary(Schema):
    """A token as listed: never its secret."""

    token_id = fields.UUID(required=True)
    scopes = fields.List(fields.String(metadata={"enum": list(SCOPES)}), required=True)
    label = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(
        allow_none=True,
        required=True,
        metadata={"description": "When it was last presented (to the minute); null: never."},
    )
    revoked_at = fields.DateTime(
        allow_none=True, required=True, metadata={"description": "null while it works."}
    )


class TokenGranted(TokenSummary):
    """A new token, with its secret (shown once)."""

    token = fields.String(required=True, metadata={"description": TOKEN_DESCRIPTION})
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})


class TokenList(Schema):
    tokens = fields.List(fields.Nested(TokenSummary), required=True)


class AccountSummary(Schema):
    """An account as anyone may see it."""

    account_id = fields.String(
        required=True,
        metadata={
            "description": "The account's id: a UUID for people and programs, `bot:<kind>` for"
            " the service's built-in bots (`bot:greedy`, `bot:random`)."
        },
    )
    name = fields.String(required=True)
    bot = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "The built-in bot's kind; null for everyone else."},
    )
    created_at = fields.DateTime(required=True)


class Me(AccountSummary):
    """GET /accounts/me: the account, and the token that asks."""

    token = fields.Nested(TokenSummary, required=True)


class AccountCreated(AccountSummary):
    """POST /accounts: the new account and its first token (every scope)."""

    token = fields.String(required=True, metadata={"description": TOKEN_DESCRIPTION})
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})
    token_id = fields.UUID(required=True)
    scopes = fields.List(fields.String(metadata={"enum": list(SCOPES)}), required=True)

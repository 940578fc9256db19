"""The responses a client checks things with: a game's audit report, the JSON Web Key Set that
verifies receipts, and the service's health, readiness and liveness probes."""

from __future__ import annotations

from marshmallow import Schema, fields


class AuditReport(Schema):
    """domain/audit.py's report; its sections are described in openapi.yaml (AuditReport)."""

    class Meta:
        description = (
            "The audit of one game (domain/audit.py). Each check section has `ok` and\n"
            "`first_bad_version` (null when it passed); `provenance` lists, per scoring event and\n"
            "seat, each category's points, the rules (S-numbers) that gave them and the cards "
            "that\n"
            "earned them with the versions of the events that picked and revealed each. A Sushi "
            "Go!\nnigiri on a wasabi has `wasabi: {picked, revealed}` (the wasabi's versions, "
            "S8/S9); one\nwhose owner kept it off a free wasabi has `declined_wasabi: true` "
            "(zoch, S9)."
        )

    game_id = fields.String(allow_none=True)
    game = fields.String(allow_none=True)
    events = fields.Integer()
    seats = fields.List(
        fields.String(allow_none=True),
        allow_none=True,
        metadata={"description": "The seats' names (and `dummy`, S17)."},
    )
    ok = fields.Boolean(
        required=True,
        metadata={
            "description": (
                "True only for a finished game that passes every check; false when a check\n"
                "fails, a receipt contradicts the history, or a receipt given is refused\n"
                "(`receipts.refused`: forged or altered, another game's, an unknown key)."
            )
        },
    )
    complete = fields.Boolean()
    redacted = fields.List(
        fields.Integer(),
        metadata={
            "description": (
                "Versions of events redacted in the export (an export made before the end)."
            )
        },
    )  # versions of redacted events
    reason = fields.String(
        allow_none=True,
        metadata={"description": "Why the game could not be replayed, if it could not."},
    )
    error = fields.String(allow_none=True)
    points = fields.Dict(
        keys=fields.String(),
        metadata={"description": "Whether the provenance's points add up to the recorded scores."},
    )
    recorded_totals = fields.List(
        fields.Dict(keys=fields.String()),
        allow_none=True,
        metadata={
            "description": (
                "The `totals` of the recorded `game_ended`, in its current schema (Sushi Go!:\n"
                "`[{seat, total}]`; Sequence: `[{team, total}]`)."
            )
        },
    )
    recorded_winners = fields.List(fields.Integer(), allow_none=True)
    chain = fields.Dict(keys=fields.String())
    seed = fields.Dict(keys=fields.String())
    deals = fields.Dict(keys=fields.String())
    scores = fields.Dict(keys=fields.String())
    replay = fields.Dict(keys=fields.String())
    totals = fields.List(
        fields.Dict(keys=fields.String()),
        allow_none=True,
        metadata={"description": "The `totals` the replay gives, shaped as `recorded_totals`."},
    )
    winners = fields.List(fields.Integer(), allow_none=True)
    provenance = fields.List(fields.Dict(keys=fields.String()), allow_none=True)
    signature = fields.Dict(
        keys=fields.String(),
        metadata={"description": "the export's signed checkpoint checked with the public keys"},
    )
    receipts = fields.Dict(
        keys=fields.String(),
        metadata={"description": "the players' receipts checked against the export"},
    )


class Jwk(Schema):
    kty = fields.String(required=True, metadata={"description": "`OKP` (RFC 8037)"})
    crv = fields.String(required=True, metadata={"description": "`Ed25519`"})
    x = fields.String(required=True, metadata={"description": "the public key, base64url"})
    kid = fields.String(required=True, metadata={"description": "its RFC 7638 thumbprint"})
    use = fields.String(required=True, metadata={"description": "`sig`"})
    alg = fields.String(required=True, metadata={"description": "`EdDSA`"})


class Jwks(Schema):
    """GET /.well-known/cardroom-keys: the keys receipts are signed with, the active one last."""

    keys = fields.List(
        fields.Nested(Jwk), required=True, metadata={"description": "every valid signing key"}
    )


class Health(Schema):
    status = fields.String(required=True, metadata={"enum": ["ok"]})
    database = fields.String(required=True, metadata={"enum": ["ok"]})


class Readiness(Schema):
    """``GET /readyz``: every check passed."""

    status = fields.String(required=True, metadata={"enum": ["ok"]})
    database = fields.String(required=True, metadata={"enum": ["ok"]})
    checks = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "Each check's result: `ok` (or why not, for a check that"
            " does not fail the probe)."
        },
    )


class Liveness(Schema):
    """``GET /livez``: the process answers (the database is not asked)."""

    status = fields.String(required=True, metadata={"enum": ["ok"], "description": "Always `ok`."})

"""Webhooks (issue 36): Standard Webhooks deliveries, signed, sent only to public endpoints."""
